"""Helpers built on inflection (a bench task)."""
import inflection


def identifier(text):
    name = inflection.parameterize(text, separator='_')
    return '_' + name if name[:1].isdigit() else name
