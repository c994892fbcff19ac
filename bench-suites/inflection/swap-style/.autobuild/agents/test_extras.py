import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_swap_style(self):
        self.assertEqual(extras.swap_style('device_type'), 'DeviceType')
