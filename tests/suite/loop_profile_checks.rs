//! Profiles choose their checks (`checks = [...]`): a documentation task runs none of the
//! project's checks; a configured check is required whether the profile names it or not, and
//! one that says `required = false` is reported as advisory instead of failing the turn (in the
//! records, the reviewer's prompt and report.md); a profile naming a check that does not exist
//! stops the run before it starts.

use crate::loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

/// A `lint` check that always fails, besides the fixture's passing `test` check.
const FAILING_LINT: &str = "\n[checks.lint]\ncmd = \"echo 'lint: 3 warnings'; exit 1\"\n";

/// [`FAILING_LINT`], opted out of the gate.
const ADVISORY_LINT: &str =
    "\n[checks.lint]\ncmd = \"echo 'lint: 3 warnings'; exit 1\"\nrequired = false\n";

fn task(task_type: &str) -> String {
    format!(
        "---\nid: TASK-1\ntitle: Add a greeting function\ntask_type: {task_type}\n---\n\
         # Add a greeting function\n\nAdd `greeting NAME` to `lib/greet.sh`; it prints `Hello, NAME!`.\n\n\
         ## Acceptance Criteria\n- [ ] AC-001: `greeting Ada` prints \"Hello, Ada!\" \
         `verify: sh -c '. ./lib/greet.sh && test \"$(greeting Ada)\" = \"Hello, Ada!\"'`\n"
    )
}

#[test]
fn a_documentation_task_runs_no_project_check() {
    let project = Project::new().config(FAILING_LINT);
    project.write(".autobuild/tasks/TASK-1.md", &task("documentation"));
    let project = project.commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    let verify = project.record("verify", 1);
    assert_eq!(verify["checks"].as_array().unwrap().len(), 0, "{verify}");
    assert_eq!(verify["criteria"].as_array().unwrap().len(), 1);
}

#[test]
fn a_failing_configured_check_blocks_though_the_profile_does_not_name_it() {
    let project = Project::new().config(FAILING_LINT).commit();

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert_eq!(verify["passed"], false, "{verify}");
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert!(!project.show("main", "lib/greet.sh").contains("greeting()"));
}

#[test]
fn a_failing_check_that_says_required_false_is_advisory() {
    let project = Project::new().config(ADVISORY_LINT).commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    let verify = project.record("verify", 1);
    assert_eq!(verify["passed"], true, "{verify}");
    let lint = verify["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lint")
        .unwrap();
    assert_eq!(lint["status"], "failed");
    assert_eq!(lint["advisory"], true);
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_1_coach.md")).unwrap();
    assert!(
        prompt.contains("exit code 1 (advisory: `required = false`"),
        "{prompt}"
    );
    assert!(project.report().contains("failed: lint (advisory)"));
}

#[test]
fn a_profile_naming_a_missing_check_stops_the_run_before_it_starts() {
    let project = Project::new();
    project.write(
        ".autobuild/profiles/feature.toml",
        "checks = [\"tset\"]\nrequire = [\"criteria\", \"coach\"]\n",
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("runs check `tset` (did you mean `test`?)"),
        "{text}"
    );
    assert!(!project.run_dir().exists());
}

#[test]
fn the_dry_run_marks_the_checks_that_do_not_block() {
    let project = Project::new().config(ADVISORY_LINT).commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 0);
    let text = String::from_utf8_lossy(&output.stdout);
    let line = |name: &str| {
        text.lines()
            .find(|line| line.trim_start().starts_with(name))
            .unwrap_or_else(|| panic!("no line for check {name}: {text}"))
            .to_string()
    };
    assert!(line("lint").contains("advisory"), "{text}");
    assert!(!line("test ").contains("advisory"), "{text}");
}
