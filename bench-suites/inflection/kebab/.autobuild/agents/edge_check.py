from inflection import extras
assert extras.kebab('HTTPServer') == 'http-server', extras.kebab('HTTPServer')
