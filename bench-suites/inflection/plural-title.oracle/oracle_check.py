# The bench's own check of TASK-07; never shown to a run.
from inflection import extras
assert extras.plural_title('octopus') == 'Octopi'
assert extras.plural_title('raw_score') == 'Raw Scores'
