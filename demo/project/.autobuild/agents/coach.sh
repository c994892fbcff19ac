#!/bin/sh
# Scripted Coach for `autobuild demo` — a stand-in for an LLM reviewer. It only reads: it runs
# the project's tests and the criterion's command itself and answers with a JSON verdict.
set -u

if sh tests/run.sh >/dev/null 2>&1 && sh -c '. ./lib/greet.sh && test "$(greeting Ada)" = "Hello, Ada!"'; then
    ac1='{"id": "AC-001", "status": "met", "evidence": "greeting Ada prints Hello, Ada!"}'
    decision=approve
    summary="greeting matches the requirement and is tested."
    issues='[]'
else
    got=$(sh -c '. ./lib/greet.sh 2>/dev/null && greeting Ada' 2>&1)
    ac1='{"id": "AC-001", "status": "not_met", "evidence": "greeting Ada prints '"$got"'"}'
    decision=feedback
    summary="The greeting does not match the required text."
    issues='[{"severity": "must_fix", "category": "correctness", "description": "greeting Ada must print Hello, Ada! (with the exclamation mark)", "location": "lib/greet.sh", "suggestion": "add the missing punctuation to the printf format"}]'
fi
if [ -f tests/test_greet.sh ] && grep -q greeting tests/test_greet.sh; then
    ac2='{"id": "AC-002", "status": "met", "evidence": "tests/test_greet.sh tests greeting"}'
else
    ac2='{"id": "AC-002", "status": "not_met", "evidence": "no tests/test_greet.sh"}'
fi

cat <<VERDICT
Review done.

\`\`\`json
{"decision": "$decision", "summary": "$summary", "issues": $issues, "criteria": [$ac1, $ac2]}
\`\`\`
VERDICT
