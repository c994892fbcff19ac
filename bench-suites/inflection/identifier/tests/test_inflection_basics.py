import unittest

import inflection


class Basics(unittest.TestCase):
    def test_underscore(self):
        self.assertEqual(inflection.underscore('DeviceType'), 'device_type')
