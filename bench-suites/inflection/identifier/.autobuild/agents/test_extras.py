import unittest

from inflection import extras


class Extras(unittest.TestCase):
    def test_identifier(self):
        self.assertEqual(extras.identifier('Donald E. Knuth'), 'donald_e_knuth')
