#!/bin/sh
# Example Player written by `autobuild init --agents command`: a shell stand-in for an LLM agent,
# so you can watch the loop (player, runner's checks, coach, feedback, gate, merge) on your own
# repository without one. It knows only the example task TASK-EXAMPLE. Replace it with your own
# program (anything that reads the prompt on stdin or in $AUTOBUILD_PROMPT_FILE and changes files
# in its working directory, the task's worktree), or delete the [roles.*] sections of
# .autobuild/config.toml to use the workflow's default agents.
#
# Turn 1 makes a plausible but incomplete attempt; a later turn completes it only when the
# coach's feedback in its prompt asks for it.
set -eu
prompt_file=${AUTOBUILD_PROMPT_FILE:?the runner sets AUTOBUILD_PROMPT_FILE}

if [ "${AUTOBUILD_TASK_ID:-}" != "TASK-EXAMPLE" ]; then
    echo "example player: I only know TASK-EXAMPLE, not ${AUTOBUILD_TASK_ID:-this task}; configure a real agent in .autobuild/config.toml [roles.player]" >&2
    exit 1
fi

if grep -q "names nothing to read first" "$prompt_file"; then
    # The first tracked directory, else the first tracked file: something that exists here.
    start=$(git ls-files | sed -n 's#^\([^/.][^/]*\)/.*#\1/#p' | head -n 1)
    [ -n "$start" ] || start=$(git ls-files | grep -v '^\.' | head -n 1)
    [ -n "$start" ] || start=README.md
    cat > GREETING.md <<GREETING
# Welcome

Welcome, new contributor, and thank you for your interest in this project.

Start reading in \`$start\`.
GREETING
    echo "Read the coach's feedback: GREETING.md now says where to start reading (\`$start\`)."
else
    cat > GREETING.md <<'GREETING'
# Welcome

Welcome, new contributor, and thank you for your interest in this project.
GREETING
    echo "Created GREETING.md with a welcome."
fi
echo "AC-001: done — grep -q Welcome GREETING.md exits 0"
echo "AC-002: done — GREETING.md welcomes newcomers"
