"""Helpers built on inflection (a bench task)."""
import inflection


def human_list(words):
    words = list(words)
    if len(words) < 2:
        return ''.join(words)
    return ', '.join(words[:-1]) + ' and ' + words[-1]
