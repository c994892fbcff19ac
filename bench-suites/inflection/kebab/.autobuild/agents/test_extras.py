import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_kebab(self):
        self.assertEqual(extras.kebab('DeviceType'), 'device-type')
