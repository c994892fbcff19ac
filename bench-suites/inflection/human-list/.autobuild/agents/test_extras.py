import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_human_list(self):
        self.assertEqual(extras.human_list(['a', 'b', 'c']), 'a, b and c')
