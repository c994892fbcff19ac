#!/bin/sh
# Example Coach written by `autobuild init --agents command`: a shell stand-in for an LLM
# reviewer. It only reads (the runner reverts anything a read-only role changes): the prompt in
# $AUTOBUILD_PROMPT_FILE, and the worktree it runs in. It answers with the JSON verdict every
# coach gives (docs/verdicts.md):
# - a criterion with a verify command is `met` when the runner's result in the prompt is passed;
# - a criterion the coach must judge is `not_verified` (this script cannot judge), except the
#   example task's AC-002, which it checks by reading GREETING.md;
# - it approves only when the runner's checks passed and every criterion is `met`.
set -u
prompt_file=${AUTOBUILD_PROMPT_FILE:?the runner sets AUTOBUILD_PROMPT_FILE}

# JSON-safe text: no quotes, backslashes or control characters.
clean() { printf '%s' "$1" | tr -d '"\\' | tr '\t\r\n' '   '; }

decision=approve
issues=""
criteria=""
add_issue() {
    decision=feedback
    [ -z "$issues" ] || issues="$issues, "
    issues="$issues{\"severity\": \"must_fix\", \"category\": \"$1\", \"description\": \"$(clean "$2")\", \"location\": \"$3\", \"suggestion\": \"$(clean "$4")\"}"
}
add_criterion() {
    [ "$2" = met ] || decision=feedback
    [ -z "$criteria" ] || criteria="$criteria, "
    criteria="$criteria{\"id\": \"$(clean "$1")\", \"status\": \"$2\", \"evidence\": \"$(clean "$3")\"}"
}

if ! grep -q '^Overall: passed' "$prompt_file"; then
    add_issue testing "The runner's checks did not pass this turn." "" \
        "Read the check logs named in the prompt and fix the failures."
fi

# The task's criteria are listed as `- **ID**: text` under the prompt's `## Acceptance criteria`
# heading (other sections, such as the quality rubric, use the same list style).
for id in $(sed -n '/^## Acceptance criteria/,/^#/s/^- \*\*\([A-Za-z0-9_.-]*\)\*\*:.*/\1/p' "$prompt_file"); do
    result=$(grep -F -- "- criterion $id (" "$prompt_file" | head -n 1)
    if [ -n "$result" ]; then
        case "$result" in
        *": passed") add_criterion "$id" met "the runner's verify command passed" ;;
        *) add_criterion "$id" not_met "the runner's verify command did not pass" ;;
        esac
    elif [ "${AUTOBUILD_TASK_ID:-}" = TASK-EXAMPLE ] && [ "$id" = AC-002 ]; then
        start=$(sed -n 's/^Start reading in `\(.*\)`\.$/\1/p' GREETING.md 2>/dev/null | head -n 1)
        if [ -n "$start" ] && [ -e "$start" ]; then
            add_criterion "$id" met "GREETING.md says to start reading in $start, which exists"
        else
            add_criterion "$id" not_met "GREETING.md does not name a directory or file to read first"
            add_issue correctness "GREETING.md names nothing to read first." \
                GREETING.md "Add a line: Start reading in \`<a directory of this repository>\`."
        fi
    else
        add_criterion "$id" not_verified "the example coach cannot judge this; configure a real reviewer in .autobuild/config.toml [roles.coach]"
    fi
done

if [ "$decision" = approve ]; then
    summary="The runner's checks pass and every criterion is met."
else
    summary="Not done yet: see the issues and the criteria."
fi
cat <<VERDICT
Review done.

\`\`\`json
{"decision": "$decision", "summary": "$summary", "issues": [$issues], "criteria": [$criteria]}
\`\`\`
VERDICT
