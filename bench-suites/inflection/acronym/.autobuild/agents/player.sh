#!/bin/sh
# Scripted player: writes inflection/extras.py; right the first time
set -eu
mkdir -p tests
if [ "${AUTOBUILD_TURN:-1}" -ge 2 ] || [ 1 = 1 ]; then
    cp .autobuild/agents/good.py inflection/extras.py
else
    cp .autobuild/agents/first.py inflection/extras.py
fi
cp .autobuild/agents/test_extras.py tests/test_extras.py
echo "Added inflection.extras.acronym with a test."
