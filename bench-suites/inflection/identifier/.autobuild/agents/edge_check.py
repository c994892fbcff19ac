from inflection import extras
assert extras.identifier('3 little pigs') == '_3_little_pigs', extras.identifier('3 little pigs')
