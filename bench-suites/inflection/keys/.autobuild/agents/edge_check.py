from inflection import extras
assert extras.snake_keys({}) == {}; assert extras.snake_keys({'aB': 2}) == {'a_b': 2}
