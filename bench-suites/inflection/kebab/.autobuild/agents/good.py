"""Helpers built on inflection (a bench task)."""
import inflection


def kebab(word):
    return inflection.dasherize(inflection.underscore(word))
