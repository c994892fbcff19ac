from inflection import extras
assert extras.swap_style('DeviceType') == 'device_type'
