"""Helpers built on inflection (a bench task)."""
import inflection


def snake_keys(mapping):
    return {inflection.underscore(k): v for k, v in mapping.items()}
