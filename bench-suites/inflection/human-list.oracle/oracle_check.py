# The bench's own check of TASK-03; never shown to a run.
from inflection import extras
assert extras.human_list(['a', 'b', 'c']) == 'a, b and c'
assert extras.human_list(['a']) == 'a', extras.human_list(['a']); assert extras.human_list([]) == ''
