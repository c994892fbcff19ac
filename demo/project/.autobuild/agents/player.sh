#!/bin/sh
# Scripted Player for `autobuild demo` — a stand-in for an LLM agent.
# Turn 1 makes a plausible but wrong attempt (no exclamation mark) and claims success.
# A later turn fixes it only if the runner's feedback in its prompt shows the real failure.
set -eu
prompt_file=${AUTOBUILD_PROMPT_FILE:?}

cat > tests/test_greet.sh <<'TEST'
. ./lib/greet.sh
got=$(greeting Ada)
[ "$got" = "Hello, Ada!" ] || { echo "error: greeting Ada: expected \"Hello, Ada!\", got \"$got\""; exit 1; }
TEST

if grep -q 'expected "Hello, Ada!", got "Hello, Ada"' "$prompt_file"; then
    punctuation='!'
    echo "Read the runner's feedback: the greeting lacked the exclamation mark. Fixed lib/greet.sh."
else
    punctuation=''
    echo "Implemented greeting in lib/greet.sh and added tests/test_greet.sh. All tests pass."
fi

cat > lib/greet.sh <<IMPL
# greet.sh: greeting helpers, sourced by scripts and tests.

# farewell NAME: prints a goodbye line.
farewell() {
    printf 'Goodbye, %s.\\n' "\$1"
}

# greeting NAME: prints a hello line.
greeting() {
    printf 'Hello, %s$punctuation\\n' "\$1"
}
IMPL
