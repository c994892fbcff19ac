#!/usr/bin/env bash
# Runs the base oracle's pytest tests (tests/suite/loop_oracle.rs, `mod pytest`): installs
# pytest from PyPI into a virtual environment under $CACHE (default /work/.cache; reused when
# there), names its python in AUTOBUILD_TEST_PYTHON, and runs the ignored tests that need it.
#   bash scripts/pytest-oracle.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CACHE:-/work/.cache}"
VENV="$CACHE/venv-pytest"
if [ ! -x "$VENV/bin/pytest" ]; then
    if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q pytest; } >/tmp/autobuild-pytest-install.log 2>&1; then
        echo "base-oracle pytest tests skipped: cannot install pytest from PyPI:"
        tail -n 5 /tmp/autobuild-pytest-install.log | sed 's/^/    /'
        exit 0
    fi
fi
export AUTOBUILD_TEST_PYTHON="$VENV/bin/python"
cd "$ROOT"
cargo test --locked --test suite -- --ignored loop_oracle::pytest
