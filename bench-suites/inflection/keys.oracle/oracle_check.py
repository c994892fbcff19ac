# The bench's own check of TASK-02; never shown to a run.
from inflection import extras
assert extras.snake_keys({'FirstName': 1}) == {'first_name': 1}
assert extras.snake_keys({}) == {}; assert extras.snake_keys({'aB': 2}) == {'a_b': 2}
