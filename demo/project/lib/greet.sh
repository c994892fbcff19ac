# greet.sh: greeting helpers, sourced by scripts and tests.

# farewell NAME: prints a goodbye line.
farewell() {
    printf 'Goodbye, %s.\n' "$1"
}
