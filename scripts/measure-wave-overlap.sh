#!/usr/bin/env bash
# Measures what separating tasks that write the same files costs and saves (docs/features.md,
# "Tasks that write the same files"), on a real project: more-itertools' sdist from PyPI with
# its own 817-test unittest suite as the runner's check. A feature of three independent tasks
# each adds a module with a test and a line at the top of docs/versions.rst (the same lines).
#
#   undeclared: the tasks declare nothing, run in one wave, and the second and third conflict
#               at landing; each conflict is resolved as the report says (discard, resume).
#   declared:   each task says `files_to_modify: [docs/versions.rst]`; the plan runs them one
#               wave apart and they land without a conflict.
#
# Prints, for each: waves, conflicts, player runs (task run directories, kept ones included:
# every run is one turn), `autobuild` invocations, and wall time.
#   bash scripts/measure-wave-overlap.sh [path/to/autobuild]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/target/release/autobuild}"
CACHE="${CACHE:-/work/.cache}"
PACKAGE="more-itertools==10.5.0"
SDIST_DIR="$CACHE/sdist-more-itertools"
if [ ! -x "$BIN" ]; then
    echo "no autobuild binary at $BIN (cargo build --release, or pass its path)" >&2
    exit 2
fi
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
if ! ls "$SDIST_DIR"/*.tar.gz >/dev/null 2>&1; then
    mkdir -p "$SDIST_DIR"
    if ! pip download -q --no-deps --no-binary :all: -d "$SDIST_DIR" "$PACKAGE"; then
        echo "skipped: cannot download $PACKAGE from PyPI" >&2
        exit 0
    fi
fi
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# A fresh copy of the package as an autobuild project with three tasks.
project() {
    local dir="$1" declared="$2"
    mkdir -p "$dir"
    tar -xzf "$SDIST_DIR"/*.tar.gz -C "$dir" --strip-components=1
    cd "$dir"
    mkdir -p .autobuild/agents/tasks .autobuild/tasks .autobuild/features
    printf 'runs/\nworktrees/\n' > .autobuild/.gitignore
    cat > .autobuild/config.toml <<'EOF'
[checks.test]
cmd = "python3 -m unittest discover -s tests -q"
timeout = "120s"

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/agents/coach.sh"]
EOF
    cat > .autobuild/agents/player.sh <<'EOF'
#!/bin/sh
set -eu
sh ".autobuild/agents/tasks/$AUTOBUILD_TASK_ID.sh"
echo "Did $AUTOBUILD_TASK_ID."
EOF
    cat > .autobuild/agents/coach.sh <<'EOF'
#!/bin/sh
cat <<'VERDICT'
```json
{"decision": "approve", "summary": "Looks right.", "issues": [], "criteria": [{"id": "AC-001", "status": "met", "evidence": "read the change"}]}
```
VERDICT
EOF
    local n writes=""
    [ "$declared" = yes ] && writes=$'files_to_modify: [docs/versions.rst]\n'
    for n in 1 2 3; do
        cat > ".autobuild/tasks/TASK-E$n.md" <<EOF
---
id: TASK-E$n
title: Add extra_$n
${writes}files_to_create: [more_itertools/extra_$n.py, tests/test_extra_$n.py]
---
# Add extra_$n

Add \`more_itertools.extra_$n.ident_$n\`, with a test, and say so in docs/versions.rst.

## Acceptance Criteria
- [ ] AC-001: ident_$n returns its argument \`verify: python3 -c "from more_itertools.extra_$n import ident_$n; assert ident_$n(7) == 7"\`
EOF
        cat > ".autobuild/agents/tasks/TASK-E$n.sh" <<EOF
printf 'def ident_$n(x):\n    return x\n' > more_itertools/extra_$n.py
printf 'from unittest import TestCase\nfrom more_itertools.extra_$n import ident_$n\n\nclass T(TestCase):\n    def test_ident(self):\n        self.assertEqual(ident_$n(3), 3)\n' > tests/test_extra_$n.py
sed -i 's/^\.\. automodule:: more_itertools\$/* Added extra_$n\n\n&/' docs/versions.rst
EOF
    done
    printf 'id: FEAT-E\nname: Three extras\ntasks:\n  - id: TASK-E1\n  - id: TASK-E2\n  - id: TASK-E3\n' \
        > .autobuild/features/FEAT-E.yaml
    git init -q -b main
    git add -A
    git -c user.name=measure -c user.email=measure@example.com commit -q -m "more-itertools sdist"
    cd - >/dev/null
}

measure() {
    local name="$1" declared="$2"
    local dir="$WORK/$name"
    project "$dir" "$declared"
    local start end code calls=1 conflicts=0
    start=$(date +%s.%N)
    set +e
    (cd "$dir" && "$BIN" feature FEAT-E --max-turns 1 --no-merge >"$WORK/$name.out" 2>&1)
    code=$?
    while [ "$code" -ne 0 ] && [ "$calls" -lt 10 ]; do
        local task
        task=$(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); c=d.get('conflict'); print(c['task'] if c else '')" "$dir/.autobuild/runs/FEAT-E/feature.json")
        [ -n "$task" ] || break
        conflicts=$((conflicts + 1))
        (cd "$dir" && "$BIN" discard "$task" --yes >/dev/null 2>&1 && "$BIN" resume FEAT-E >/dev/null 2>&1)
        code=$?
        calls=$((calls + 2))
    done
    set -e
    end=$(date +%s.%N)
    local waves
    waves=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['waves']))" "$dir/.autobuild/runs/FEAT-E/feature.json")
    printf '%-11s exit %s  waves %s  conflicts %s  player runs %s  autobuild calls %s  wall %.1f s\n' \
        "$name" "$code" "$waves" "$conflicts" "$(ls -d "$dir"/.autobuild/runs/TASK-E* | wc -l)" "$calls" \
        "$(echo "$end - $start" | bc)"
}

measure undeclared no
measure declared yes
