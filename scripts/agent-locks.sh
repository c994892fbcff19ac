#!/usr/bin/env bash
# Regenerates the npm lockfiles the emitted CI workflows install the agent CLIs from
# (crates/run/src/feature/emit/agent_locks/<binary>.json): for each pinned CLI of
# scripts/real-agents.versions, `npm install --package-lock-only` of exactly that version, so
# the jobs run `npm ci` — integrity-checked, nothing resolved at install time. Run it after
# changing a pin (a unit test fails while a lockfile and its pin disagree). Needs npm and the
# registry.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/crates/run/src/feature/emit/agent_locks"
mkdir -p "$OUT"
grep -v '^#' "$ROOT/scripts/real-agents.versions" | while read -r binary package version; do
    [ -n "$binary" ] || continue
    work=$(mktemp -d)
    printf '{"name": "autobuild-agents", "private": true}\n' > "$work/package.json"
    (cd "$work" && npm install --package-lock-only --no-audit --no-fund --save-exact "$package@$version" >/dev/null)
    cp "$work/package-lock.json" "$OUT/$binary.json"
    rm -rf "$work"
    echo "wrote $OUT/$binary.json ($package@$version)"
done
