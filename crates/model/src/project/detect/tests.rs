use super::*;
use crate::project::config::CheckConfig;

fn files(entries: &[&str], contents: &[(&str, &str)], tests_dir: &[&str]) -> ProjectFiles {
    ProjectFiles {
        root_entries: entries.iter().map(|s| s.to_string()).collect(),
        contents: contents
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        tests_dir_files: tests_dir.iter().map(|s| s.to_string()).collect(),
    }
}

fn cmd(files: &ProjectFiles) -> Option<&'static str> {
    detect_test(files).map(|d| d.cmd)
}

#[test]
fn detects_each_ecosystem() {
    assert_eq!(cmd(&files(&["Cargo.toml"], &[], &[])), Some("cargo test"));
    assert_eq!(cmd(&files(&["go.mod"], &[], &[])), Some("go test ./..."));
    let npm = r#"{"scripts": {"test": "vitest run"}}"#;
    assert_eq!(
        cmd(&files(&["package.json"], &[("package.json", npm)], &[])),
        Some("npm test")
    );
    let make = "build:\n\tcc main.c\n\ntest: build\n\t./run-tests\n";
    assert_eq!(
        cmd(&files(&["Makefile"], &[("Makefile", make)], &[])),
        Some("make test")
    );
    assert_eq!(cmd(&files(&["README.md", "src"], &[], &[])), None);
}

#[test]
fn detects_pytest_from_any_of_its_configs() {
    let pytest = Some("python -m pytest -q");
    assert_eq!(cmd(&files(&["pytest.ini"], &[], &[])), pytest);
    assert_eq!(cmd(&files(&["conftest.py"], &[], &[])), pytest);
    let pyproject = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n";
    assert_eq!(
        cmd(&files(
            &["pyproject.toml"],
            &[("pyproject.toml", pyproject)],
            &[]
        )),
        pytest
    );
    assert_eq!(
        cmd(&files(
            &["setup.cfg"],
            &[("setup.cfg", "[tool:pytest]\n")],
            &[]
        )),
        pytest
    );
    assert_eq!(
        cmd(&files(&["tox.ini"], &[("tox.ini", "[pytest]\n")], &[])),
        pytest
    );
    assert_eq!(cmd(&files(&["tests"], &[], &["test_utils.py"])), pytest);
    assert_eq!(cmd(&files(&["tests"], &[], &["utils_test.py"])), pytest);
    assert_eq!(
        cmd(&files(&["tests"], &[], &["helpers.py", "data.json"])),
        None
    );
    let plain_pyproject = "[project]\nname = \"x\"\n";
    assert_eq!(
        cmd(&files(
            &["pyproject.toml"],
            &[("pyproject.toml", plain_pyproject)],
            &[]
        )),
        None
    );
}

#[test]
fn ignores_npm_placeholder_and_non_targets() {
    let placeholder = r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#;
    assert_eq!(
        cmd(&files(
            &["package.json"],
            &[("package.json", placeholder)],
            &[]
        )),
        None
    );
    assert_eq!(
        cmd(&files(
            &["package.json"],
            &[("package.json", "{not json")],
            &[]
        )),
        None
    );
    let make = ".PHONY: test\ntest := 1\n\tsome recipe with test: inside\n# test: commented\n";
    assert_eq!(cmd(&files(&["Makefile"], &[("Makefile", make)], &[])), None);
    let multi = "lint test: deps\n\ttrue\n";
    assert_eq!(
        cmd(&files(&["makefile"], &[("makefile", multi)], &[])),
        Some("make test")
    );
}

#[test]
fn detects_the_other_common_layouts() {
    let pytest = Some("python -m pytest -q");
    // The flat layout of small libraries (inflection 0.5.1: test_inflection.py at the root).
    let flat = files(
        &["inflection.py", "test_inflection.py", "setup.py"],
        &[],
        &[],
    );
    assert_eq!(cmd(&flat), pytest);
    assert_eq!(
        detect_test(&flat).unwrap().reason,
        "test_*.py files at the root"
    );
    assert_eq!(cmd(&files(&["calc.py", "calc_test.py"], &[], &[])), pytest);
    assert_eq!(cmd(&files(&["testing.py", "setup.py"], &[], &[])), None);
    // `test/` (singular) is read like `tests/` by ProjectFiles::read.
    assert_eq!(cmd(&files(&["test"], &[], &["test_core.py"])), pytest);
    let npm = r#"{"scripts": {"test": "vitest run"}}"#;
    let with = |lock: &str| files(&["package.json", lock], &[("package.json", npm)], &[]);
    assert_eq!(cmd(&with("pnpm-lock.yaml")), Some("pnpm test"));
    assert_eq!(cmd(&with("yarn.lock")), Some("yarn test"));
    assert_eq!(cmd(&with("package-lock.json")), Some("npm test"));
    assert_eq!(cmd(&files(&["go.work"], &[], &[])), Some("go test ./..."));
    let autotools = "all:\n\tcc main.c\n\ncheck: all\n\t./run-tests\n";
    assert_eq!(
        cmd(&files(&["Makefile"], &[("Makefile", autotools)], &[])),
        Some("make check")
    );
    let both = "check:\n\ttrue\ntest:\n\ttrue\n";
    assert_eq!(
        cmd(&files(&["Makefile"], &[("Makefile", both)], &[])),
        Some("make test")
    );
}

#[test]
fn earlier_ecosystems_win() {
    let make = "test:\n\ttrue\n";
    let both = files(&["Cargo.toml", "Makefile"], &[("Makefile", make)], &[]);
    assert_eq!(detect_test(&both).unwrap().reason, "Cargo.toml found");
}

#[test]
fn reads_a_real_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("tests/unit")).unwrap();
    std::fs::write(dir.path().join("tests/unit/test_core.py"), "").unwrap();
    let snapshot = ProjectFiles::read(dir.path());
    assert!(snapshot.root_entries.contains("tests"));
    assert_eq!(cmd(&snapshot), Some("python -m pytest -q"));

    let singular = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(singular.path().join("test")).unwrap();
    std::fs::write(singular.path().join("test/test_core.py"), "").unwrap();
    assert_eq!(
        cmd(&ProjectFiles::read(singular.path())),
        Some("python -m pytest -q")
    );
}

#[test]
fn configured_checks_come_first_with_test_leading() {
    let mut config = Config::default();
    for (name, cmd) in [("lint", "ruff check ."), ("audit", "pip-audit")] {
        config.checks.insert(
            name.to_string(),
            CheckConfig {
                cmd: cmd.to_string(),
                timeout: None,
                hidden: false,
                required: (name == "audit").then_some(false),
                results: None,
            },
        );
    }
    let detected = Some(Detection {
        cmd: "cargo test",
        reason: "Cargo.toml found",
    });
    let checks = combine_checks(&config, detected);
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["test", "audit", "lint"]);
    assert_eq!(checks[0].origin, CheckOrigin::Detected("Cargo.toml found"));
    assert_eq!(checks[0].timeout, DEFAULT_CHECK_TIMEOUT);
    // A detected check gates where the profile says; a configured one unless it opts out.
    let required: Vec<bool> = checks.iter().map(|c| c.required).collect();
    assert_eq!(required, [false, false, true]);

    config.checks.insert(
        "test".to_string(),
        CheckConfig {
            cmd: "make check".to_string(),
            timeout: Some(Duration::from_secs(30)),
            hidden: false,
            required: None,
            results: None,
        },
    );
    let checks = combine_checks(&config, detected);
    assert_eq!(checks.len(), 3);
    assert_eq!(checks[0].cmd, "make check");
    assert_eq!(checks[0].origin, CheckOrigin::Configured);
    assert_eq!(checks[0].timeout, Duration::from_secs(30));
}

#[test]
fn effective_checks_detect_only_without_a_configured_test() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("go.mod"), "module x\n").unwrap();
    let checks = effective_checks(&Config::default(), dir.path());
    assert_eq!(checks.len(), 1);
    assert_eq!(checks[0].cmd, "go test ./...");
    assert!(effective_checks(&Config::default(), &dir.path().join("missing")).is_empty());
}
