"""Helpers built on inflection (a bench task)."""
import inflection


def count_noun(n, word):
    return f'{n} {word if n == 1 else inflection.pluralize(word)}'
