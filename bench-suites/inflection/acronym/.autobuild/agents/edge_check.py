from inflection import extras
assert extras.acronym('  as   soon as possible ') == 'ASAP'
