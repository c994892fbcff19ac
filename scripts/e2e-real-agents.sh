#!/usr/bin/env bash
# The Player/Coach loop end to end through the REAL `claude` and `codex` CLIs, against the
# scripted model server of tests/real_agents (127.0.0.1 only; no model, no other network).
#
# Installs the versions pinned in scripts/real-agents.versions from the npm registry into a
# cache directory (once; later runs reuse it), then runs
#   cargo test --locked --test real_agents -- --ignored --nocapture --test-threads=1 CLI:: … [ARGS…]
# with AUTOBUILD_REAL_CLAUDE / AUTOBUILD_REAL_CODEX naming the binaries, for the CLIs that are
# available (the scenarios are `#[ignore]`d in a plain `cargo test`). ARGS go to the test harness.
#
# Skips with a message and exit 0 when npm is missing or no pinned CLI can be installed; a CLI
# that cannot be installed is skipped alone. Fails (non-zero) only when a scenario fails.
#
# Environment:
#   AUTOBUILD_E2E_CACHE       install directory (default ~/.cache/autobuild-e2e)
#   AUTOBUILD_REAL_CLAUDE/…   use this binary instead of installing the pinned one
#   AUTOBUILD_E2E_ARTIFACTS   where each scenario's run directory and model-server request log
#                             are kept (default target/real-agents)
set -uo pipefail
cd "$(dirname "$0")/.."

versions=scripts/real-agents.versions
cache=${AUTOBUILD_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/autobuild-e2e}
# Codex's home must not be under the system temp dir (see tests/real_agents/harness.rs).
export AUTOBUILD_E2E_SCRATCH="$cache/scratch"

skip() {
    echo "real-agent suite skipped: $*"
    exit 0
}

command -v npm >/dev/null 2>&1 || skip "npm is not installed (the CLIs are installed with it)"
command -v node >/dev/null 2>&1 || skip "node is not installed"

# An install that hangs (no registry) is given up after ten minutes.
bounded=""
command -v timeout >/dev/null 2>&1 && bounded="timeout 600"

available=0
filters=()
while read -r bin package version; do
    [[ -z ${bin:-} || $bin == \#* ]] && continue
    variable="AUTOBUILD_REAL_$(tr '[:lower:]' '[:upper:]' <<<"$bin")"
    if [[ -n ${!variable:-} ]]; then
        echo "$bin: using $variable=${!variable} ($("${!variable}" --version </dev/null 2>&1 | head -n 1))"
        available=$((available + 1))
        filters+=("$bin::")
        continue
    fi
    prefix="$cache/$bin@$version"
    exe="$prefix/node_modules/.bin/$bin"
    if ! "$exe" --version </dev/null >/dev/null 2>&1; then
        echo "$bin: installing $package@$version into $prefix"
        mkdir -p "$prefix"
        log="$prefix/install.log"
        if ! $bounded npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
            "$package@$version" </dev/null >"$log" 2>&1; then
            echo "$bin: cannot install $package@$version; its scenarios are skipped. npm said:"
            tail -n 20 "$log" | sed 's/^/    /'
            continue
        fi
    fi
    reported=$("$exe" --version </dev/null 2>&1 | head -n 1)
    if [[ $reported != *"$version"* ]]; then
        echo "$bin: $exe reports '$reported', not $version; its scenarios are skipped"
        continue
    fi
    echo "$bin: $reported ($exe)"
    export "$variable=$exe"
    available=$((available + 1))
    filters+=("$bin::")
done <"$versions"

((available > 0)) || skip "none of the pinned CLIs could be installed"

export AUTOBUILD_E2E_ARTIFACTS=${AUTOBUILD_E2E_ARTIFACTS:-$PWD/target/real-agents}
echo "scenario records: $AUTOBUILD_E2E_ARTIFACTS"
exec cargo test --locked --test real_agents -- --ignored --nocapture --test-threads=1 "${filters[@]}" "$@"
