# The bench's own check of TASK-01; never shown to a run.
from inflection import extras
assert extras.kebab('DeviceType') == 'device-type'
assert extras.kebab('HTTPServer') == 'http-server', extras.kebab('HTTPServer')
