#!/bin/sh
# Scripted player: writes inflection/extras.py; gets the edge case wrong on its first turn, right once told
set -eu
mkdir -p tests
if [ "${AUTOBUILD_TURN:-1}" -ge 2 ] || [ 0 = 1 ]; then
    cp .autobuild/agents/good.py inflection/extras.py
else
    cp .autobuild/agents/first.py inflection/extras.py
fi
cp .autobuild/agents/test_extras.py tests/test_extras.py
echo "Added inflection.extras.human_list with a test."
