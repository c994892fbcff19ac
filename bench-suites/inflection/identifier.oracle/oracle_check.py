# The bench's own check of TASK-08; never shown to a run.
from inflection import extras
assert extras.identifier('Donald E. Knuth') == 'donald_e_knuth'
assert extras.identifier('3 little pigs') == '_3_little_pigs', extras.identifier('3 little pigs')
