# The bench's own check of TASK-06; never shown to a run.
from inflection import extras
assert extras.swap_style('device_type') == 'DeviceType'
assert extras.swap_style('DeviceType') == 'device_type'
