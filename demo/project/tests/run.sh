#!/bin/sh
# Runs every tests/test_*.sh; each exits non-zero on failure.
failed=0
passed=0
for t in tests/test_*.sh; do
    [ -e "$t" ] || continue
    if sh "$t"; then
        passed=$((passed + 1))
        echo "ok   $t"
    else
        failed=$((failed + 1))
        echo "FAIL $t"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
