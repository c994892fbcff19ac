#!/usr/bin/env bash
# Regenerates the fixtures of crates/model/src/steps/test_results/ from the real test runners.
#
# Each runner runs a small example project (written below into a temporary directory) with
# passing, failing, skipped, deselected/filtered, xfail and erroring tests, and its output is
# saved as a fixture file. Nothing in the repository other than the fixtures directory is
# written.
#
# What it installs, and where (everything under $CACHE, default /work/.cache; set CACHE to
# move it):
#   - pytest from PyPI into the venv $CACHE/venv-pytest (python3 -m venv + pip install pytest)
#   - jest, jest-junit and vitest from the npm registry into $CACHE/js (npm install)
#   - cargo-nextest from crates.io into $CACHE/cargo-nextest (cargo install, which builds it for
#     several minutes; INSTALL_NEXTEST=no skips that, and the nextest fixtures are skipped when
#     it is not there)
# and it uses what is already on the machine: python3 (unittest), cargo, node/npm, and go
# (Debian's golang-go: `apt-get install -y golang-go`; the go fixtures are skipped without it).
#
# The projects' temporary paths are replaced by /tmp/project in the fixtures (and $CACHE by
# /cache); durations, dates and host names are left as the runners printed them. Run it from anywhere:
#   bash scripts/capture-test-results.sh
# Not `set -e`: the example projects fail on purpose, and the runners exit non-zero.
set -uo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/crates/model/src/steps/test_results/fixtures"
CACHE="${CACHE:-/work/.cache}"
WORK="$(mktemp -d /tmp/capture-test-results.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$OUT" "$CACHE"

# Saves stdin as fixture $1 with the project path $2 replaced by /tmp/project and $CACHE by
# /cache.
save() {
    sed -e "s#$2#/tmp/project#g" -e "s#$CACHE#/cache#g" >"$OUT/$1"
    echo "wrote $1" >&2
}

# ---------------------------------------------------------------------------------- pytest --
if [ ! -x "$CACHE/venv-pytest/bin/pytest" ]; then
    python3 -m venv "$CACHE/venv-pytest" && "$CACHE/venv-pytest/bin/pip" install -q pytest
fi
P="$WORK/py"
mkdir -p "$P/tests"
cat >"$P/tests/test_a.py" <<'EOF'
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture failed")


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    assert 1 + 1 == 3


@pytest.mark.skip(reason="not today")
def test_skip():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_xpass():
    pass


def test_error(broken):
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_param(n):
    assert n > 0


def test_slow_deselected():
    pass
EOF
cat >"$P/tests/test_b.py" <<'EOF'
def test_other():
    assert True
EOF
PYTEST=("$CACHE/venv-pytest/bin/python" -m pytest -p no:cacheprovider)
export PYTEST_DISABLE_PLUGIN_AUTOLOAD=1
(cd "$P" && "${PYTEST[@]}" -q -k "not slow" 2>&1) | save pytest_q.txt "$P"
(cd "$P" && "${PYTEST[@]}" -v -rA -k "not slow" 2>&1) | save pytest_verbose.txt "$P"
(cd "$P" && "${PYTEST[@]}" -k "not slow" --color=yes 2>&1) | save pytest_color.txt "$P"
(cd "$P" && "${PYTEST[@]}" -q -k "no_such_test" 2>&1) | save pytest_none.txt "$P"
mkdir -p "$WORK/py-broken/tests"
cp "$P/tests/test_b.py" "$WORK/py-broken/tests/"
printf 'import nonexistent_module\n\n\ndef test_x():\n    pass\n' >"$WORK/py-broken/tests/test_broken.py"
(cd "$WORK/py-broken" && "${PYTEST[@]}" -q 2>&1) | save pytest_collect_error.txt "$WORK/py-broken"
mkdir -p "$WORK/py-warning"
printf 'import warnings\n\nwarnings.warn("careful")\n' >"$WORK/py-warning/conftest.py"
(cd "$WORK/py-warning" && "${PYTEST[@]}" 2>&1) | save pytest_warning_only.txt "$WORK/py-warning"
mkdir -p "$WORK/py-empty"
(cd "$WORK/py-empty" && "${PYTEST[@]}" 2>&1) | save pytest_empty.txt "$WORK/py-empty"
(cd "$P" && "${PYTEST[@]}" -q -k "not slow" --junitxml="$WORK/pytest.xml" >/dev/null 2>&1)
save pytest_junit.xml "$P" <"$WORK/pytest.xml"
unset PYTEST_DISABLE_PLUGIN_AUTOLOAD

# -------------------------------------------------------------------------------- unittest --
U="$WORK/unit"
mkdir -p "$U"
cat >"$U/test_calc.py" <<'EOF'
import unittest


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(1 + 1, 2)

    def test_fail(self):
        self.assertEqual(1 + 1, 3)

    def test_error(self):
        raise RuntimeError("boom")

    @unittest.skip("not today")
    def test_skip(self):
        pass

    @unittest.expectedFailure
    def test_xfail(self):
        self.assertEqual(1, 2)

    @unittest.expectedFailure
    def test_xpass(self):
        pass


class OtherTest(unittest.TestCase):
    def test_ok(self):
        pass
EOF
cat >"$U/test_green.py" <<'EOF'
import unittest


class GreenTest(unittest.TestCase):
    def test_one(self):
        pass

    def test_two(self):
        pass
EOF
(cd "$U" && python3 -m unittest test_calc 2>&1) | save unittest.txt "$U"
(cd "$U" && python3 -m unittest -v test_calc 2>&1) | save unittest_verbose.txt "$U"
(cd "$U" && python3 -m unittest test_green 2>&1) | save unittest_ok.txt "$U"
mkdir -p "$U/empty"
(cd "$U" && python3 -m unittest discover -s empty 2>&1) | save unittest_none.txt "$U"

# ------------------------------------------------------------------------------ cargo test --
C="$WORK/crate"
mkdir -p "$C/src" "$C/tests"
cat >"$C/Cargo.toml" <<'EOF'
[package]
name = "demo"
version = "0.1.0"
edition = "2021"

[workspace]
EOF
cat >"$C/src/lib.rs" <<'EOF'
/// Adds.
///
/// ```
/// assert_eq!(demo::add(1, 2), 3);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(1, 1), 2);
    }

    #[test]
    fn fails() {
        assert_eq!(add(1, 1), 3);
    }

    #[test]
    #[ignore]
    fn ignored() {}

    #[test]
    fn slow_filtered() {}

    mod nested {
        #[test]
        fn inner() {}
    }
}
EOF
cat >"$C/tests/it.rs" <<'EOF'
#[test]
fn integration() {
    assert_eq!(demo::add(2, 2), 4);
}
EOF
export CARGO_TARGET_DIR="$WORK/crate-target" RUST_BACKTRACE=0
(cd "$C" && cargo build --tests -q 2>/dev/null)
(cd "$C" && cargo test --no-fail-fast -- --skip slow --test-threads 1 2>&1) | save cargo_test.txt "$C"
(cd "$C" && cargo test no_such_test 2>&1) | save cargo_test_none.txt "$C"

# ------------------------------------------------------------------------------- nextest --
NEXTEST="$CACHE/cargo-nextest/bin/cargo-nextest"
if [ ! -x "$NEXTEST" ] && [ "${INSTALL_NEXTEST:-yes}" != no ]; then
    cargo install cargo-nextest --locked --root "$CACHE/cargo-nextest" >/dev/null 2>&1 || true
fi
if [ -x "$NEXTEST" ]; then
    mkdir -p "$C/.config"
    cat >"$C/.config/nextest.toml" <<'EOF'
[profile.default.junit]
path = "junit.xml"
EOF
    (cd "$C" && "$NEXTEST" nextest run --no-fail-fast --color never -E 'not test(slow)' 2>&1) |
        save nextest.txt "$C"
    # nextest writes it under the target directory, which it finds itself (it may not be
    # $CARGO_TARGET_DIR when cargo-nextest is run directly).
    junit="$(find "$CARGO_TARGET_DIR" "$C" -path '*/nextest/default/junit.xml' 2>/dev/null | head -n 1)"
    save nextest_junit.xml "$C" <"$junit"
    (cd "$C" && "$NEXTEST" nextest run --color never -E 'test(no_such_test)' 2>&1) |
        save nextest_none.txt "$C"
else
    echo "cargo-nextest not available: nextest fixtures not captured" >&2
fi
unset CARGO_TARGET_DIR RUST_BACKTRACE

# --------------------------------------------------------------------------------- go test --
if command -v go >/dev/null; then
    G="$WORK/go"
    mkdir -p "$G/calc" "$G/green" "$G/cmd/tool"
    cat >"$G/go.mod" <<'EOF'
module example.com/demo

go 1.19
EOF
    cat >"$G/calc/calc.go" <<'EOF'
package calc

func Add(a, b int) int { return a + b }
EOF
    cat >"$G/calc/calc_test.go" <<'EOF'
package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal("bad")
	}
}

func TestFail(t *testing.T) {
	t.Errorf("Add(1, 1) = %d, want 3", Add(1, 1))
}

func TestSkip(t *testing.T) {
	t.Skip("not today")
}

func TestTable(t *testing.T) {
	t.Run("one", func(t *testing.T) {})
	t.Run("two", func(t *testing.T) { t.Error("two failed") })
}
EOF
    cat >"$G/green/green_test.go" <<'EOF'
package green

import "testing"

func TestGreen(t *testing.T) {}
EOF
    cat >"$G/cmd/tool/main.go" <<'EOF'
package main

func main() {}
EOF
    export GOFLAGS=-count=1 GOPATH="$WORK/gopath" GOCACHE="$WORK/gocache"
    (cd "$G" && go test ./... 2>&1) | save go_test.txt "$G"
    (cd "$G" && go test -v ./... 2>&1) | save go_test_verbose.txt "$G"
    (cd "$G" && go test -json ./... 2>&1) | save go_test_json.txt "$G"
    (cd "$G" && go test -run NoSuchTest ./... 2>&1) | save go_test_none.txt "$G"
    mkdir -p "$G/broken"
    printf 'package broken\n\nfunc Broken() int { return "no" }\n' >"$G/broken/broken.go"
    printf 'package broken\n\nimport "testing"\n\nfunc TestBroken(t *testing.T) { Broken() }\n' \
        >"$G/broken/broken_test.go"
    (cd "$G" && go test ./broken ./green 2>&1) | save go_test_build_failed.txt "$G"
    unset GOFLAGS GOPATH GOCACHE
else
    echo "go not available: go fixtures not captured" >&2
fi

# ------------------------------------------------------------------------- jest and vitest --
J="$CACHE/js"
if [ ! -x "$J/node_modules/.bin/jest" ] || [ ! -x "$J/node_modules/.bin/vitest" ]; then
    mkdir -p "$J"
    (cd "$J" && { [ -f package.json ] || npm init -y >/dev/null; } &&
        npm install --no-audit --no-fund jest jest-junit vitest >/dev/null 2>&1)
fi
N="$WORK/js"
mkdir -p "$N"
ln -s "$J/node_modules" "$N/node_modules"
echo '{"name": "demo", "version": "1.0.0", "type": "commonjs"}' >"$N/package.json"
cat >"$N/math.test.js" <<'EOF'
const add = (a, b) => a + b;

describe("add", () => {
  test("adds", () => {
    expect(add(1, 1)).toBe(2);
  });
  test("fails", () => {
    expect(add(1, 1)).toBe(3);
  });
  test.skip("skipped", () => {});
  test.todo("todo");
});

test("top level", () => {});
EOF
cat >"$N/green.test.js" <<'EOF'
test("green", () => {});
EOF
cp "$N/math.test.js" "$WORK/math.test.js"
JEST=("$J/node_modules/.bin/jest" --ci)
VITEST=("$J/node_modules/.bin/vitest" run --color=false)
(cd "$N" && "${JEST[@]}" 2>&1) | save jest.txt "$N"
(cd "$N" && "${JEST[@]}" --verbose 2>&1) | save jest_verbose.txt "$N"
(cd "$N" && JEST_JUNIT_OUTPUT_DIR="$WORK" "${JEST[@]}" --reporters=jest-junit >/dev/null 2>&1)
save jest_junit.xml "$N" <"$WORK/junit.xml"
(cd "$N" && "${JEST[@]}" -t no_such_test 2>&1) | save jest_none.txt "$N"
mkdir -p "$WORK/js-empty"
ln -s "$J/node_modules" "$WORK/js-empty/node_modules"
cp "$N/package.json" "$WORK/js-empty/"
(cd "$WORK/js-empty" && "${JEST[@]}" 2>&1) | save jest_no_files.txt "$WORK/js-empty"
(cd "$WORK/js-empty" && NO_COLOR=1 "${VITEST[@]}" 2>&1) | save vitest_no_files.txt "$WORK/js-empty"
# A test file that does not load, beside one that passes.
mkdir -p "$WORK/js-broken"
ln -s "$J/node_modules" "$WORK/js-broken/node_modules"
cp "$N/package.json" "$N/green.test.js" "$WORK/js-broken/"
echo 'require("./nope"); test("never", () => {});' >"$WORK/js-broken/broken.test.js"
(cd "$WORK/js-broken" && "${JEST[@]}" 2>&1) | save jest_suite_error.txt "$WORK/js-broken"

# vitest wants ES modules with its own imports.
V="$WORK/vitest"
mkdir -p "$V"
ln -s "$J/node_modules" "$V/node_modules"
echo '{"name": "demo", "version": "1.0.0", "type": "module"}' >"$V/package.json"
{
    echo 'import { describe, test, expect } from "vitest";'
    cat "$WORK/math.test.js"
} >"$V/math.test.js"
{
    echo 'import { test } from "vitest";'
    cat "$N/green.test.js"
} >"$V/green.test.js"
(cd "$V" && NO_COLOR=1 "${VITEST[@]}" 2>&1) | save vitest.txt "$V"
(cd "$V" && NO_COLOR=1 "${VITEST[@]}" --reporter=verbose 2>&1) | save vitest_verbose.txt "$V"
mkdir -p "$WORK/vitest-broken"
ln -s "$J/node_modules" "$WORK/vitest-broken/node_modules"
cp "$V/package.json" "$V/green.test.js" "$WORK/vitest-broken/"
printf 'import "./nope.js";\nimport { test } from "vitest";\ntest("never", () => {});\n' \
    >"$WORK/vitest-broken/broken.test.js"
(cd "$WORK/vitest-broken" && NO_COLOR=1 "${VITEST[@]}" 2>&1) |
    save vitest_suite_error.txt "$WORK/vitest-broken"
(cd "$V" && NO_COLOR=1 "${VITEST[@]}" --reporter=junit --outputFile="$WORK/vitest.xml" >/dev/null 2>&1)
save vitest_junit.xml "$V" <"$WORK/vitest.xml"

# ------------------------------------------------------------------------------ versions --
{
    echo "# Versions of the runners that printed these fixtures (scripts/capture-test-results.sh)."
    echo "pytest $("$CACHE/venv-pytest/bin/python" -m pytest --version 2>&1 | awk '{print $2}')"
    echo "python $(python3 --version 2>&1 | awk '{print $2}') (unittest)"
    echo "$(cargo --version)"
    [ -x "$NEXTEST" ] && "$NEXTEST" nextest --version 2>/dev/null | head -n 1
    command -v go >/dev/null && go version
    echo "jest $("$J/node_modules/.bin/jest" --version)"
    echo "jest-junit $(node -p "require('$J/node_modules/jest-junit/package.json').version")"
    echo "vitest $("$J/node_modules/.bin/vitest" --version | awk '{print $1}' | sed 's#^vitest/##')"
    echo "node $(node --version)"
} >"$OUT/VERSIONS.txt"
echo "wrote VERSIONS.txt" >&2
