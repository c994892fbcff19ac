import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_snake_keys(self):
        self.assertEqual(extras.snake_keys({'FirstName': 1}), {'first_name': 1})
