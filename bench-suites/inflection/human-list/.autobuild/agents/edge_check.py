from inflection import extras
assert extras.human_list(['a']) == 'a', extras.human_list(['a']); assert extras.human_list([]) == ''
