"""Helpers built on inflection (a bench task)."""
import inflection


def swap_style(word):
    if '_' in word:
        return inflection.camelize(word)
    return inflection.underscore(word)
