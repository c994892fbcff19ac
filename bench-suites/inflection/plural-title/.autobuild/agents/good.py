"""Helpers built on inflection (a bench task)."""
import inflection


def plural_title(word):
    return inflection.titleize(inflection.pluralize(word))
