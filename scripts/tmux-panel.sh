#!/usr/bin/env bash
# The live panel under a real terminal: runs the tmux test of tests/suite/log_colour.rs (ignored by a
# plain `cargo test` because it needs tmux). Installs tmux with apt when it can; otherwise says
# why it skips.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v tmux >/dev/null 2>&1; then
    sudo=""
    if [[ $(id -u) != 0 ]] && command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        sudo="sudo -n"
    fi
    if command -v apt-get >/dev/null 2>&1 && { [[ $(id -u) == 0 ]] || [[ -n $sudo ]]; }; then
        { timeout 300 $sudo apt-get update -qq &&
            timeout 300 $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq tmux; } \
            >/tmp/autobuild-ci-tmux.log 2>&1 || true
    fi
fi
if ! command -v tmux >/dev/null 2>&1; then
    echo "skipped: the live-panel test needs tmux, which is not installed and could not be"
    exit 0
fi
cargo test --locked --test suite -- --ignored log_colour::the_live_panel_leaves_no_residue
