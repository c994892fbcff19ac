"""Helpers built on inflection (a bench task)."""
import inflection


def identifier(text):
    return inflection.parameterize(text, separator='_')
