//! The base oracle (issue 42): with a reviewer that approves anything, every way of making the
//! task's failing test "pass" by changing the test instead of the code is refused by the runner
//! itself, naming the test; honest work lands; a test the task allows to change is shown, not
//! refused; a base whose tests do not run stops before the first turn.
//!
//! The project is Python with the standard library's unittest (`-v`, so every test is named),
//! which every machine with python3 has: `add` is wrong at the base, so `test_add` fails there
//! and `test_sub` passes.

use crate::loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

const CHECK: &str = "python3 -m unittest discover -v -s tests -t .";
const ADD: &str = "tests.test_calc.CalcTest.test_add";
const SUB: &str = "tests.test_calc.CalcTest.test_sub";

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + -b\n";

const TESTS: &str = r#"import unittest

from calc import add, sub


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)

    def test_sub(self):
        self.assertEqual(sub(5, 3), 2)
"#;

fn task(front: &str) -> String {
    format!(
        "---\nid: TASK-1\ntitle: Fix add\ntask_type: feature\n{front}---\n# Fix add\n\n\
         `add(a, b)` returns the difference; it must return the sum.\n\n\
         ## Acceptance Criteria\n- [ ] AC-001: `add(2, 3)` is 5\n"
    )
}

/// The project, with a lenient coach and `player` (a shell script run in the worktree).
fn project(player: &str, task_front: &str, config: &str) -> Project {
    project_in(Project::new(), player, task_front, config)
}

/// [`project`] on `project` (a sandbox mode set).
fn project_in(project: Project, player: &str, task_front: &str, config: &str) -> Project {
    let project = project
        .coach("coach_lenient.sh")
        .test_cmd(CHECK)
        .config(config);
    project.write("calc.py", CALC);
    project.write("tests/__init__.py", "");
    project.write("tests/test_calc.py", TESTS);
    project.write(".gitignore", "__pycache__/\n");
    project.write(".autobuild/tasks/TASK-1.md", &task(task_front));
    project.write(".autobuild/agents/player.sh", player);
    project.commit()
}

const FIX_ADD: &str = "sed -i 's/return a - b/return a + b/' calc.py\n";

/// Rewrites `tests/test_calc.py` by the sed expression `expr`.
fn edit_tests(expr: &str) -> String {
    format!("set -eu\nsed -i '{expr}' tests/test_calc.py\necho gamed\n")
}

/// The `test` check of turn 1's verify record.
fn test_check(project: &Project) -> serde_json::Value {
    project.record("verify", 1)["checks"][0].clone()
}

#[test]
fn honest_work_lands_and_the_record_compares_it_with_the_base() {
    let project = project(&format!("set -eu\n{FIX_ADD}"), "", "");

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let check = test_check(&project);
    assert_eq!(check["status"], "passed", "{check}");
    assert_eq!(check["oracle"]["base"]["counts"]["failed"], 1, "{check}");
    assert_eq!(check["oracle"]["base"]["counts"]["passed"], 1, "{check}");
    assert_eq!(
        check["oracle"]["separate"], false,
        "no test changed: {check}"
    );
    assert!(project.show("main", "calc.py").contains("a + b"));
    let baseline = loop_fixture::json(&project.run_dir().join("baseline.json"));
    assert_eq!(baseline["runs"][0]["check"], "test", "{baseline}");
    // Cached by base tree for the next run from the same base.
    let cached = std::fs::read_dir(project.root.join(".autobuild/runs/.baselines"))
        .unwrap()
        .count();
    assert_eq!(cached, 1);
}

#[test]
fn every_way_of_gaming_the_failing_test_is_refused_by_the_runner() {
    let tricks: &[(&str, String)] = &[
        ("deletes it", edit_tests("/def test_add/,/assertEqual(add/d")),
        (
            "skips it",
            edit_tests("s/    def test_add/    @unittest.skip(\"later\")\\n    def test_add/"),
        ),
        (
            "asserts nothing",
            edit_tests("s/self.assertEqual(add(2, 3), 5)/self.assertTrue(True)/"),
        ),
        (
            "rigs the test infrastructure",
            "set -eu\nprintf 'import unittest\\nunittest.TestCase.assertEqual = lambda *a, **k: None\\n' > tests/__init__.py\n"
                .to_string(),
        ),
        (
            "deletes the test file",
            "set -eu\nrm tests/test_calc.py\nprintf 'import unittest\\n\\n\\nclass T(unittest.TestCase):\\n    def test_ok(self):\\n        pass\\n' > tests/test_other.py\n"
                .to_string(),
        ),
    ];
    // In the default mode (confined where bwrap works) and unconfined.
    let runs = tricks.iter().flat_map(|(what, player)| {
        [
            (*what, project(player, "", "")),
            (
                *what,
                project_in(Project::new().unconfined(), player, "", ""),
            ),
        ]
    });
    for (what, project) in runs {
        let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

        assert_exit(&output, 3);
        let check = test_check(&project);
        assert_eq!(check["status"], "failed", "{what}: {check}");
        let findings = &check["oracle"]["judgement"]["findings"];
        assert_eq!(findings[0]["test"], ADD, "{what}: {check}");
        assert_eq!(findings[0]["rule"], "weakened", "{what}: {check}");
        assert!(
            check["advice"].as_str().unwrap().contains(ADD),
            "{what}: the feedback names the test: {check}"
        );
        assert_eq!(project.record("gate", 1)["approved"], false, "{what}");
        assert!(project.show("main", "calc.py").contains("a - b"), "{what}");
    }
}

#[test]
fn a_test_that_passed_at_the_base_must_still_pass() {
    // Fixes `add`, breaks `sub`, and skips `test_sub` so the player's own run is green.
    let player = format!(
        "set -eu\n{FIX_ADD}sed -i 's/return a + -b/return b - a/' calc.py\n\
         sed -i 's/    def test_sub/    @unittest.skip(\"flaky\")\\n    def test_sub/' tests/test_calc.py\n"
    );
    let project = project(&player, "", "");

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let check = test_check(&project);
    let findings = &check["oracle"]["judgement"]["findings"];
    assert_eq!(findings[0]["test"], SUB, "{check}");
    assert_eq!(findings[0]["rule"], "regressed", "{check}");
    assert_eq!(findings[0]["oracle"], "failed", "{check}");
    assert_eq!(findings[0]["player"], "skipped", "{check}");
    assert_eq!(check["oracle"]["separate"], true, "{check}");
}

#[test]
fn a_test_the_task_allows_to_change_is_listed_not_refused() {
    // The requirement changed (`add` counts from one), and so does its test: the base version
    // of `test_add` fails on the new code, the player's passes.
    let player = "set -eu\nsed -i 's/return a - b/return a + b + 1/' calc.py\n\
                  sed -i 's/add(2, 3), 5/add(2, 3), 6/' tests/test_calc.py\n";
    let front = format!("tests_may_change: [\"{ADD}\"]\n");
    let allowed = project(player, &front, "");

    let output = allowed.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let check = test_check(&allowed);
    let findings = &check["oracle"]["judgement"]["findings"];
    assert_eq!(findings[0]["test"], ADD, "{check}");
    assert_eq!(findings[0]["allowed"], true, "{check}");
    // Every reviewer sees it, with both results.
    let prompt =
        std::fs::read_to_string(allowed.run_dir().join("prompts/turn_1_coach.md")).unwrap();
    let line = prompt
        .lines()
        .find(|line| line.starts_with("- check `test`"))
        .unwrap_or_default();
    assert!(
        line.contains("at the base: 1 passed, 1 failed")
            && line.contains(&format!("`{ADD}` is weakened"))
            && line.contains("the task allows this test to change"),
        "{line}"
    );
    // Without the permission, the same change is refused.
    let refused = project(player, "", "");
    let output = refused.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);
    assert_exit(&output, 3);
}

#[test]
fn the_oracle_can_be_turned_off() {
    let project = project(
        &edit_tests("/def test_add/,/assertEqual(add/d"),
        "",
        "\n[tests]\noracle = \"off\"\n",
    );

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    // Only the exit code and the (lenient) reviewer decide: the gamed test lands.
    assert_exit(&output, 0);
    assert!(test_check(&project).get("oracle").is_none());
    assert!(!project.run_dir().join("baseline.json").exists());
}

#[test]
fn a_base_whose_tests_do_not_run_stops_before_the_first_turn() {
    let project = Project::new().coach("coach_lenient.sh").test_cmd(CHECK);
    project.write("calc.py", CALC);
    project.write("tests/__init__.py", "");
    project.write(
        "tests/test_calc.py",
        "import unittest\nfrom calc import mul\n",
    );
    project.write(".autobuild/tasks/TASK-1.md", &task(""));
    project.write(".autobuild/agents/player.sh", "echo player ran\n");
    let project = project.commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_ne!(output.status.code(), Some(0));
    let state = project.state();
    let message = state["outcome"].to_string();
    assert!(message.contains("oracle = \\\"off\\\""), "{message}");
    assert!(
        !project.run_dir().join("player_turn_1.json").exists(),
        "no agent spent a turn"
    );
    // A broken baseline is not cached: fixing the environment is enough.
    assert!(!project.root.join(".autobuild/runs/.baselines").exists());
}

/// The pytest player's tricks: hooks, configuration and marks. Needs pytest, which
/// scripts/pytest-oracle.sh installs from PyPI into a cache and names in
/// `AUTOBUILD_TEST_PYTHON` (a Python that has it).
mod pytest {
    use super::*;

    const PY_TESTS: &str =
        "from calc import add, sub\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n\
                            def test_sub():\n    assert sub(5, 3) == 2\n";
    const PY_ADD: &str = "tests/test_calc.py::test_add";
    const FLIP: &str = "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\n\
                        def pytest_runtest_makereport(item, call):\n    outcome = yield\n    \
                        outcome.get_result().outcome = \"passed\"\n";

    fn python() -> String {
        std::env::var("AUTOBUILD_TEST_PYTHON").expect(
            "AUTOBUILD_TEST_PYTHON names a python with pytest: run scripts/pytest-oracle.sh",
        )
    }

    fn project(player: &str) -> Project {
        let project = Project::new()
            .coach("coach_lenient.sh")
            .test_cmd(&format!("{} -m pytest -v -p no:cacheprovider", python()));
        project.write("calc.py", CALC);
        project.write("tests/test_calc.py", PY_TESTS);
        project.write(
            "pyproject.toml",
            "[project]\nname = \"calc\"\nversion = \"0.1\"\n",
        );
        project.write(".gitignore", "__pycache__/\n");
        project.write(".autobuild/tasks/TASK-1.md", &task(""));
        project.write(".autobuild/agents/player.sh", player);
        project.commit()
    }

    fn writes(path: &str, text: &str) -> String {
        format!("set -eu\ncat > {path} <<'EOF'\n{text}EOF\n")
    }

    #[test]
    #[ignore = "needs pytest: scripts/pytest-oracle.sh installs it and runs these"]
    fn every_pytest_trick_is_refused_by_the_runner() {
        let tricks: &[(&str, String)] = &[
            ("a conftest hook that flips failures", writes("conftest.py", FLIP)),
            (
                "a -k in pytest.ini",
                writes("pytest.ini", "[pytest]\naddopts = -k \"not test_add\"\n"),
            ),
            (
                "a conftest that drops the test",
                writes(
                    "tests/conftest.py",
                    "def pytest_collection_modifyitems(config, items):\n    \
                     items[:] = [i for i in items if i.name != \"test_add\"]\n",
                ),
            ),
            (
                "pytest.skip() in the test",
                edit_tests("s/    assert add(2, 3) == 5/    import pytest; pytest.skip(\"later\")/"),
            ),
            (
                "an xfail mark",
                edit_tests("s/^def test_add/import pytest\\n@pytest.mark.xfail\\ndef test_add/"),
            ),
            (
                "a plugin loaded from pyproject.toml",
                format!(
                    "{}{}",
                    writes("plug.py", FLIP),
                    "cat >> pyproject.toml <<'EOF'\n\n[tool.pytest.ini_options]\naddopts = \"-p plug\"\npythonpath = [\".\"]\nEOF\n"
                ),
            ),
        ];
        for (what, player) in tricks {
            let project = project(player);

            let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

            assert_exit(&output, 3);
            let check = test_check(&project);
            assert_eq!(check["status"], "failed", "{what}: {check}");
            let findings = &check["oracle"]["judgement"]["findings"];
            assert_eq!(findings[0]["test"], PY_ADD, "{what}: {check}");
            assert_eq!(findings[0]["rule"], "weakened", "{what}: {check}");
            assert!(project.show("main", "calc.py").contains("a - b"), "{what}");
        }
        // And the honest fix lands.
        let project = project(&format!("set -eu\n{FIX_ADD}"));
        assert_exit(
            &project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]),
            0,
        );
    }
}

#[test]
fn the_baseline_runs_once_per_base_tree() {
    let project = project("set -eu\necho '# a note' >> calc.py\n", "", "");
    assert_exit(&project.run(&["task", TASK, "--max-turns", "1"]), 3);
    let first_log = project.run_dir().join("logs/baseline_check_test.log");
    assert!(first_log.is_file());
    // A second task added to the same base: its tests are the same, so is the baseline.
    project.write(
        ".autobuild/tasks/TASK-2.md",
        &task("").replace("TASK-1", "TASK-2"),
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-qm", "a second task"]);

    assert_exit(&project.run(&["task", "TASK-2", "--max-turns", "1"]), 3);

    let second = project.root.join(".autobuild/runs/TASK-2");
    assert!(second.join("baseline.json").is_file());
    assert!(
        !second.join("logs/baseline_check_test.log").exists(),
        "the cached baseline was used"
    );
    let cached = std::fs::read_dir(project.root.join(".autobuild/runs/.baselines"))
        .unwrap()
        .count();
    assert_eq!(cached, 1);
}
