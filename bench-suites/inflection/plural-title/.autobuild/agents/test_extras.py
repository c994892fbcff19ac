import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_plural_title(self):
        self.assertEqual(extras.plural_title('octopus'), 'Octopi')
