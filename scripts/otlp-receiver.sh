#!/usr/bin/env bash
# Runs the OpenTelemetry tests that decode autobuild's trace export with the official OTLP
# protobuf definitions (tests/suite/otel.rs): installs PyPI's `opentelemetry-proto` into a
# virtual environment under $CACHE (default /work/.cache; reused when there), names its python
# in AUTOBUILD_TEST_OTLP_PYTHON, and runs the ignored tests that need it.
#   bash scripts/otlp-receiver.sh
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
CACHE="${CACHE:-/work/.cache}"
VENV="$CACHE/venv-otlp"
if ! "$VENV/bin/python" -c "import opentelemetry.proto" >/dev/null 2>&1; then
    if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q opentelemetry-proto; } >/tmp/autobuild-otlp-install.log 2>&1; then
        echo "OTLP decoding tests skipped: cannot install opentelemetry-proto from PyPI:"
        tail -n 5 /tmp/autobuild-otlp-install.log | sed 's/^/    /'
        exit 0
    fi
fi
export AUTOBUILD_TEST_OTLP_PYTHON="$VENV/bin/python"
cd "$ROOT"
cargo test --locked --test suite -- --ignored otel::
