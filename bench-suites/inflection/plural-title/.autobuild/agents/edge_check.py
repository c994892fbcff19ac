from inflection import extras
assert extras.plural_title('raw_score') == 'Raw Scores'
