import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_acronym(self):
        self.assertEqual(extras.acronym('portable network graphics'), 'PNG')
