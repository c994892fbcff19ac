//! Is a failed check the code's fault or the environment's, and what should be done about it?
//!
//! Telling the player "tests failed" when `pytest` is not even installed in the environment the
//! runner uses sends it chasing a bug that does not exist, turn after turn. The classifier reads
//! the output of a failed check (and its exit code) and recognizes infrastructure failures: a
//! missing command or module, an unreachable service or host, a failed dependency download, a
//! full disk, a failed `[env] setup` prelude. Everything else is a code failure. Each class
//! comes with specific advice naming the missing piece and where to fix it.
//!
//! A missing Python module is infrastructure unless it is evidently the project's own package
//! (`src.…`, `tests.…`, a relative import): a module the player forgot to write is code.
//!
//! Code failures are told apart as failing tests or code that does not compile. Test evidence
//! (a runner's failure tally, `panicked at`, `--- FAIL:`) is looked for first, and compile
//! evidence only in compiler-specific shapes (`error[E0308]`, `could not compile`,
//! `SyntaxError`, `error TS2322:`, `file.go:3:5:`): a test or script may print any line starting
//! with `error: `, and calling that a compile error sends the player after the wrong problem.

use regex::Captures;

use crate::project::env::{SETUP_FAILED_EXIT, SETUP_FAILED_MARKER};
use crate::steps::check::FailureClass;

const SHARED_ENV: &str = "the runner and the agents share that environment";

/// Top-level Python packages that are the project's own by convention.
const PROJECT_PACKAGES: &[&str] = &["src", "tests", "test", "app"];

/// The class of a failed check's output and advice for whoever fixes it.
pub fn classify(output: &str, exit_code: Option<i32>) -> (FailureClass, String) {
    infrastructure(output, exit_code)
        .map(|advice| (FailureClass::Infrastructure, advice))
        .unwrap_or_else(|| code(output, exit_code))
}

base::regexes! {
    COMMAND_NOT_FOUND = concat!(
        r"(?m)^(?:\S*sh: )?(?:line \d+: |\d+: )?(?P<name>[^\s:]+): (?:command )?not found\s*$",
        r"|command not found: (?P<zsh>\S+)",
        r"|(?m)^(?:env|\S*sh): (?:line \d+: |\d+: )?'?(?P<missing>[^\s':]+)'?: No such file or directory",
    );
    NOT_EXECUTABLE = r"(?m)^\S*sh: (?:line \d+: |\d+: )?(?P<name>[^\s:]+): Permission denied";
    PYTHON_MODULE = r"No module named '?(?P<module>[\w.]+)'?";
    NODE_MODULE = r"Cannot find module '(?P<module>[^']+)'";
    NO_SPACE = r"No space left on device|ENOSPC|Disk quota exceeded";
    NO_MEMORY = r"Cannot allocate memory|ENOMEM|memory allocation of \d+ bytes failed";
    CONNECTION_REFUSED = r"Connection refused|ECONNREFUSED";
    NETWORK = concat!(
        r"(?i)could not resolve host|Temporary failure in name resolution",
        r"|Name or service not known|getaddrinfo (ENOTFOUND|EAI_AGAIN)|Network is unreachable",
        r"|dial tcp|ETIMEDOUT|ECONNRESET",
    );
    DOWNLOAD = concat!(
        r"failed to download|failed to get `[^`]+` as a dependency",
        r"|failed to load source for dependency|Unable to update registry|spurious network error",
        r"|Could not find a version that satisfies the requirement|No matching distribution found",
        r"|npm (ERR!|error) network|ERR_SOCKET_TIMEOUT",
    );
    PERMISSION_DENIED = r"Permission denied";

    /// Evidence that tests ran and some failed. Checked before [`COMPILE_ERROR`]: a failing test
    /// may print anything, including lines that start with `error: `.
    TEST_FAILURE = concat!(
        "(?m)",
        // cargo test, and Rust panics and assertions in general.
        r"test result: FAILED|panicked at|assertion `[^`]*` failed",
        // pytest (`FAILED tests/x.py::test_y`, `=== 1 failed, 2 passed in 0.1s ===`).
        r"|^FAILED \S+::|\b\d+ failed\b[^\n]* in \d+(?:\.\d+)?s\b",
        // unittest (`FAIL: test_x (…)`, `FAILED (failures=1)`), and assertion errors.
        r"|^FAIL: |^FAILED \((?:failures|errors)=|AssertionError",
        // go test (`--- FAIL: TestX`, `FAIL\tpkg\t0.01s`).
        r"|^\s*--- FAIL: |^FAIL\s+\S+\s+\d+(?:\.\d+)?s\s*$",
        // jest, vitest (`Tests:       1 failed, 2 total`) and mocha (`1 failing`).
        r"|^\s*Tests:?\s+\d+ failed|\b\d+ failing\b",
        // Any runner's one-line tally: `1 passed, 1 failed`, `2 failed; 3 passed`.
        r"|\b\d+ passed\b[^\n]*\b\d+ failed\b|\b\d+ failed\b[^\n]*\b\d+ passed\b",
    );

    /// Evidence from a compiler or interpreter that the code does not build or parse. Only
    /// compiler-specific shapes: a bare `error: ` line is what any script prints.
    COMPILE_ERROR = concat!(
        "(?m)",
        // rustc and cargo.
        r"^error\[E\d+\]|could not compile|error: aborting due to",
        // Python.
        r"|^(?:E\s+)?(?:SyntaxError|IndentationError|TabError)\b",
        // go build (`./main.go:5:2: undefined: x`, `FAIL pkg [build failed]`).
        r"|^\S*\.go:\d+:\d+: |\[build failed\]",
        // tsc (`src/a.ts(3,5): error TS2322:`, `src/a.ts:3:5 - error TS2322:`).
        r"|\berror TS\d+:",
        // gcc, clang, javac (`file.c:3:5: error: …`), maven and gradle.
        r"|^[^\s:]+:\d+(?::\d+)?: (?:fatal )?error: |COMPILATION ERROR|(?i:compilation failed)",
    );
}

/// Whether `output` reports failing tests (a runner's failure tally, a panic, an assertion).
pub fn shows_failing_tests(output: &str) -> bool {
    TEST_FAILURE.is_match(output)
}

base::regexes! {
    /// Collection errors: the tests could not even be gathered (pytest, jest).
    COLLECTION_ERROR = r"(?m)error during collection|^ERROR collecting |Test suite failed to run";
}

/// Whether `output` shows code that does not compile, a syntax error or tests that cannot be
/// collected: an error before any test ran, not a failing test.
pub fn shows_error_not_failure(output: &str) -> bool {
    COMPILE_ERROR.is_match(output) || COLLECTION_ERROR.is_match(output)
}

fn infrastructure(output: &str, exit_code: Option<i32>) -> Option<String> {
    if exit_code == Some(SETUP_FAILED_EXIT) || output.contains(SETUP_FAILED_MARKER) {
        return Some(format!(
            "the project environment's setup prelude (`[env] setup` in .autobuild/config.toml) \
             failed before the check ran; run it by hand in the worktree to see why and fix it — \
             {SHARED_ENV}"
        ));
    }
    if let Some(found) = COMMAND_NOT_FOUND.captures(output) {
        return Some(missing_command(&found));
    }
    if let Some(found) = NOT_EXECUTABLE.captures(output) {
        let name = &found["name"];
        return Some(format!(
            "`{name}` is not executable: make it executable (`chmod +x {name}`) or run it through \
             its interpreter (e.g. `sh {name}`)"
        ));
    }
    if exit_code == Some(127) {
        return Some(format!(
            "a command the check runs was not found (exit 127); install it or add its directory \
             to [env] path_prepend in .autobuild/config.toml — {SHARED_ENV}"
        ));
    }
    if exit_code == Some(126) {
        return Some(
            "a command the check runs could not be executed (exit 126): it is not executable \
             or not a valid program"
                .to_string(),
        );
    }
    if let Some(found) = PYTHON_MODULE.captures(output) {
        return python_module(&found["module"]);
    }
    if let Some(found) = NODE_MODULE.captures(output) {
        return node_module(&found["module"]);
    }
    if NO_SPACE.is_match(output) {
        return Some(
            "the disk is full (no space left on device): free space (old worktrees under \
             .autobuild/worktrees, build caches) and re-run"
                .to_string(),
        );
    }
    if NO_MEMORY.is_match(output) {
        return Some(
            "the machine ran out of memory while running the check: free memory or run fewer \
             things in parallel"
                .to_string(),
        );
    }
    if DOWNLOAD.is_match(output) {
        return Some(format!(
            "a dependency could not be downloaded: fetch dependencies ahead of time in [env] setup \
             (e.g. `cargo fetch`, `pip install -r requirements.txt`, `npm ci`) or make them \
             available offline — {SHARED_ENV}"
        ));
    }
    if CONNECTION_REFUSED.is_match(output) {
        return Some(format!(
            "a service the check needs is not running (connection refused): start it before the \
             run, or in [env] setup, and point the check at it through [env] vars — {SHARED_ENV}"
        ));
    }
    if NETWORK.is_match(output) {
        return Some(
            "the check needs network access that is not available (host lookup or connection \
             failed): make the check work offline or provide the network"
                .to_string(),
        );
    }
    if PERMISSION_DENIED.is_match(output) {
        return Some(
            "the check was denied access to a file or directory (permission denied): fix the \
             permissions, or point the check at a writable location"
                .to_string(),
        );
    }
    None
}

fn missing_command(found: &Captures<'_>) -> String {
    let name = ["name", "zsh", "missing"]
        .iter()
        .find_map(|group| found.name(group))
        .map_or("a command", |m| m.as_str());
    if name.contains('/') {
        format!(
            "`{name}` does not exist in the worktree: create it, or fix the check command or the \
             [env] setup in .autobuild/config.toml that expects it — {SHARED_ENV}"
        )
    } else {
        format!(
            "`{name}` is not installed in the environment the runner uses; add it to [env] setup \
             or path_prepend in .autobuild/config.toml — {SHARED_ENV}"
        )
    }
}

fn python_module(module: &str) -> Option<String> {
    let top = module.split('.').next().unwrap_or(module);
    if PROJECT_PACKAGES.contains(&top) {
        return None;
    }
    Some(format!(
        "Python module `{top}` is not installed in the environment the runner uses; add it to \
         the project's dependencies and install it in [env] setup (e.g. `pip install -r \
         requirements.txt`) or use the project's virtualenv via [env] path_prepend — {SHARED_ENV}. \
         If `{top}` is part of this project, fix the import or the package layout instead"
    ))
}

fn node_module(module: &str) -> Option<String> {
    if module.starts_with('.') || (module.starts_with('/') && !module.contains("node_modules")) {
        return None;
    }
    Some(format!(
        "the npm package `{module}` is not installed in the worktree; install dependencies in \
         [env] setup (e.g. `npm ci`) — {SHARED_ENV}"
    ))
}

fn code(output: &str, exit_code: Option<i32>) -> (FailureClass, String) {
    let advice = if let Some(found) = PYTHON_MODULE.captures(output) {
        format!(
            "module `{}` cannot be imported: it belongs to this project, so create it (with \
             `__init__.py` files where needed) or fix the import",
            &found["module"]
        )
    } else if let Some(found) = NODE_MODULE.captures(output) {
        format!(
            "module `{}` cannot be found: create it or fix the import path",
            &found["module"]
        )
    } else if TEST_FAILURE.is_match(output) {
        "tests fail: the first failure is shown in the summary; fix the code (or the test, if the \
         test itself is wrong) and re-run the check"
            .to_string()
    } else if COMPILE_ERROR.is_match(output) {
        "the code does not compile: fix the first compiler error shown in the summary, then \
         re-run the check"
            .to_string()
    } else {
        match exit_code {
            Some(code) => format!(
                "the check exited with code {code}: the first error is shown in the summary and \
                 the full log has everything"
            ),
            None => "the check was killed by a signal (a crash, or the system ran out of \
                     memory): see the full log"
                .to_string(),
        }
    };
    (FailureClass::Code, advice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class_of(output: &str, exit: Option<i32>) -> FailureClass {
        classify(output, exit).0
    }

    #[test]
    fn names_the_missing_command() {
        for output in [
            "sh: 1: pytest: not found\n",
            "bash: pytest: command not found\n",
            "/bin/sh: line 1: pytest: command not found\n",
            "zsh: command not found: pytest\n",
            "env: 'pytest': No such file or directory\n",
        ] {
            let (class, advice) = classify(output, Some(127));
            assert_eq!(class, FailureClass::Infrastructure, "{output}");
            assert!(advice.starts_with("`pytest` is not installed"), "{advice}");
            assert!(advice.contains("[env] setup or path_prepend"), "{advice}");
        }
    }

    #[test]
    fn a_missing_path_points_at_the_worktree() {
        let (class, advice) = classify("sh: 1: .venv/bin/pytest: not found\n", Some(127));
        assert_eq!(class, FailureClass::Infrastructure);
        assert!(advice.starts_with("`.venv/bin/pytest` does not exist in the worktree"));
    }

    #[test]
    fn exit_codes_alone_are_enough() {
        assert_eq!(class_of("", Some(127)), FailureClass::Infrastructure);
        assert_eq!(class_of("", Some(126)), FailureClass::Infrastructure);
        assert_eq!(
            class_of("", Some(SETUP_FAILED_EXIT)),
            FailureClass::Infrastructure
        );
        assert_eq!(class_of("", Some(1)), FailureClass::Code);
        assert_eq!(class_of("", None), FailureClass::Code);
    }

    #[test]
    fn a_missing_third_party_module_is_infrastructure() {
        let output = "ModuleNotFoundError: No module named 'yaml'\n";
        let (class, advice) = classify(output, Some(1));
        assert_eq!(class, FailureClass::Infrastructure);
        assert!(advice.starts_with("Python module `yaml` is not installed"));
        let (class, advice) = classify("/usr/bin/python3: No module named pytest\n", Some(1));
        assert_eq!(class, FailureClass::Infrastructure);
        assert!(advice.contains("`pytest`"), "{advice}");
    }

    #[test]
    fn a_missing_project_module_is_code() {
        let output = "ModuleNotFoundError: No module named 'src.utils'\n";
        let (class, advice) = classify(output, Some(1));
        assert_eq!(class, FailureClass::Code);
        assert!(advice.contains("`src.utils`"), "{advice}");
        assert_eq!(
            class_of("Error: Cannot find module './sum'\n", Some(1)),
            FailureClass::Code
        );
        assert_eq!(
            class_of("Error: Cannot find module 'express'\n", Some(1)),
            FailureClass::Infrastructure
        );
    }

    #[test]
    fn environment_failures_are_infrastructure() {
        for output in [
            "psycopg2.OperationalError: connection to server failed: Connection refused",
            "fatal: unable to access 'https://x/': Could not resolve host: x",
            "error: failed to download `serde v1.0.0`",
            "ERROR: No matching distribution found for requests",
            "OSError: [Errno 28] No space left on device",
            "PermissionError: [Errno 13] Permission denied: '/var/lib/app'",
            "sh: 1: ./run_tests.sh: Permission denied",
        ] {
            assert_eq!(
                class_of(output, Some(1)),
                FailureClass::Infrastructure,
                "{output}"
            );
        }
    }

    #[test]
    fn the_setup_marker_is_enough() {
        let output = format!("{SETUP_FAILED_MARKER}\n");
        let (class, advice) = classify(&output, Some(1));
        assert_eq!(class, FailureClass::Infrastructure);
        assert!(advice.contains("`[env] setup`"), "{advice}");
    }

    #[test]
    fn code_failures_get_advice_by_kind() {
        let (class, advice) = classify("error[E0425]: cannot find value `x`\n", Some(101));
        assert_eq!(class, FailureClass::Code);
        assert!(advice.starts_with("the code does not compile"));
        let (_, advice) = classify("E       AssertionError: assert 1 == 2\n", Some(1));
        assert!(advice.starts_with("tests fail"));
        let (_, advice) = classify("something odd\n", Some(3));
        assert!(advice.contains("exited with code 3"));
    }

    #[test]
    fn a_failing_test_that_mentions_a_missing_file_is_code() {
        let output = "FileNotFoundError: [Errno 2] No such file or directory: 'data.json'\n";
        assert_eq!(class_of(output, Some(1)), FailureClass::Code);
    }
}
