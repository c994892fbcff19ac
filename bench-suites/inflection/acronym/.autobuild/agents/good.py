"""Helpers built on inflection (a bench task)."""
import inflection


def acronym(phrase):
    return ''.join(w[0].upper() for w in phrase.split())
