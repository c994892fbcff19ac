#!/bin/sh
# Scripted coach: approves when its own check of the edge case passes, else names it.
if PYTHONPATH=. PYTHONDONTWRITEBYTECODE=1 python3 .autobuild/agents/edge_check.py >/dev/null 2>&1; then
    decision=approve; issues='[]'; status=met
else
    decision=feedback; status=not_met
    issues='[{"severity": "must_fix", "category": "correctness", "description": "snake_keys is wrong at the edge: extras.snake_keys({}) == {}", "location": "inflection/extras.py", "suggestion": "handle the edge case"}]'
fi
cat <<VERDICT
\`\`\`json
{"decision": "$decision", "summary": "review", "issues": $issues, "criteria": [{"id": "AC-001", "status": "$status", "evidence": "ran it"}]}
\`\`\`
VERDICT
