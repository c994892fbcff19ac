# The bench's own check of TASK-04; never shown to a run.
from inflection import extras
assert extras.count_noun(2, 'person') == '2 people'
assert extras.count_noun(0, 'person') == '0 people', extras.count_noun(0, 'person'); assert extras.count_noun(1, 'person') == '1 person'
