import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_count_noun(self):
        self.assertEqual(extras.count_noun(2, 'person'), '2 people')
