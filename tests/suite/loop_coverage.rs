//! Coverage as a profile requirement, end to end: a `[coverage]` command that writes a fixed
//! report (Cobertura XML or LCOV) whose hits depend on whether the player wrote the covering
//! test; a profile with `coverage = 80`. Below the minimum the gate does not approve and the
//! next player prompt names the uncovered lines of the changed files; above it the run is
//! approved; a missing report is never an approval.

use crate::loop_fixture;

use loop_fixture::{assert_exit, stderr, stdout, Project, TASK};

/// The player writes the greeting every turn, and the covering test `tests/test_edge.sh` only
/// once its prompt names the uncovered lines of `lib/greet.sh`.
const PLAYER: &str = r#"prompt=$(cat)
. .autobuild/agents/write_greeting.sh
write_greeting '!'
case "$prompt" in
*"lib/greet.sh lines 5-6"*) printf '. ./lib/greet.sh\n[ "$(greeting Bo)" = "Hello, Bo!" ]\n' > tests/test_edge.sh ;;
esac
echo "implemented"
"#;

/// Writes `coverage.xml` in Cobertura XML: lines 5 and 6 of lib/greet.sh run only when
/// tests/test_edge.sh exists (2 of 4 lines before, 4 of 4 after).
const COBERTURA_CMD: &str = r#"if [ -f tests/test_edge.sh ]; then h=1; else h=0; fi
cat > coverage.xml <<XML
<?xml version="1.0" ?>
<coverage version="7.4.1" line-rate="0.5">
  <sources><source>$PWD</source></sources>
  <packages><package name="lib"><classes>
    <class name="greet.sh" filename="lib/greet.sh">
      <methods/>
      <lines>
        <line number="2" hits="1"/><line number="3" hits="1"/>
        <line number="5" hits="$h"/><line number="6" hits="$h"/>
      </lines>
    </class>
  </classes></package></packages>
</coverage>
XML
"#;

/// The same in LCOV, with absolute file names as cargo-llvm-cov writes them, into
/// `build/lcov.info`.
const LCOV_CMD: &str = r#"if [ -f tests/test_edge.sh ]; then h=1; else h=0; fi
mkdir -p build
printf 'TN:\nSF:%s/lib/greet.sh\nFN:2,farewell\nFNDA:1,farewell\nDA:2,1\nDA:3,1\nDA:5,%s\nDA:6,%s\nLF:4\nLH:2\nend_of_record\n' "$PWD" "$h" "$h" > build/lcov.info
"#;

fn project(script: &str, report: &str) -> Project {
    let project = Project::new().config(&format!(
        "\n[coverage]\ncmd = \"sh tools/coverage.sh\"\nreport = \"{report}\"\n\n[profiles.feature]\ncoverage = 80\n"
    ));
    project.write(".autobuild/agents/player.sh", PLAYER);
    project.write("tools/coverage.sh", script);
    project
}

#[test]
fn cobertura_coverage_below_the_minimum_blocks_and_the_next_prompt_names_the_uncovered_lines() {
    let project = project(COBERTURA_CMD, "coverage.xml").commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    let verify = project.record("verify", 1);
    assert_eq!(verify["passed"], false, "{verify}");
    let coverage = &verify["coverage"];
    assert_eq!(coverage["measurement"]["state"], "measured", "{coverage}");
    assert_eq!(coverage["measurement"]["format"], "cobertura");
    assert_eq!(coverage["measurement"]["covered"], 2);
    assert_eq!(coverage["measurement"]["total"], 4);
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false);
    let reasons = gate["reasons"].to_string();
    assert!(
        reasons.contains(
            "line coverage is 50% (2 of 4 lines), below the required 80%; uncovered lines in \
             the files the branch changed: lib/greet.sh lines 5-6"
        ),
        "{reasons}"
    );
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(
        prompt.contains("Raise line coverage to at least 80%")
            && prompt.contains("lib/greet.sh lines 5-6"),
        "{prompt}"
    );
    let verify = project.record("verify", 2);
    assert_eq!(verify["coverage"]["measurement"]["covered"], 4, "{verify}");
    assert_eq!(project.record("gate", 2)["approved"], true);
    // The report was the command's, kept in the logs, and never landed on the branch.
    assert!(project
        .run_dir()
        .join("logs/turn_1_coverage_report")
        .is_file());
    assert!(!project
        .git(&["ls-tree", "-r", "--name-only", "main"])
        .contains("coverage.xml"));
    let report = project.report();
    assert!(report.contains("Coverage"), "{report}");
    assert!(report.contains("100% (4 of 4 lines)"), "{report}");
    let html = std::fs::read_to_string(project.run_dir().join("report.html")).unwrap();
    assert!(
        html.contains("data-coverage=\"unmet\""),
        "turn 1 in the HTML report"
    );
    assert!(
        html.contains("data-coverage=\"holds\""),
        "turn 2 in the HTML report"
    );
    assert!(
        html.contains("greet.sh lines 5-6"),
        "the uncovered lines in the HTML report"
    );
}

#[test]
fn lcov_coverage_above_the_minimum_is_approved_on_the_first_turn() {
    // A check of the same name keeps its own log.
    let project = project(LCOV_CMD, "build/lcov.info")
        .config("\n[checks.coverage]\ncmd = \"echo CHECK-OF-THAT-NAME\"\n");
    project.write("tests/test_edge.sh", "true\n");
    let project = project.commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    let verify = project.record("verify", 1);
    assert_eq!(
        verify["coverage"]["measurement"]["format"], "lcov",
        "{verify}"
    );
    assert_eq!(verify["coverage"]["measurement"]["covered"], 4);
    assert_eq!(project.record("gate", 1)["approved"], true);
    let log = verify["coverage"]["check"]["log_path"].as_str().unwrap();
    assert!(log.ends_with("turn_1_measure_check_coverage.log"), "{log}");
    let check_log = project.run_dir().join("logs/turn_1_check_coverage.log");
    assert!(std::fs::read_to_string(check_log)
        .unwrap()
        .contains("CHECK-OF-THAT-NAME"));
}

#[test]
fn lcov_coverage_below_the_minimum_blocks_with_absolute_file_names_made_relative() {
    let project = project(LCOV_CMD, "build/lcov.info").commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false);
    assert!(
        gate["reasons"]
            .to_string()
            .contains("lib/greet.sh lines 5-6"),
        "{gate}"
    );
}

#[test]
fn a_coverage_command_that_writes_no_report_is_never_an_approval() {
    let project = project("echo measured\n", "coverage.xml");
    // A report the player could have left behind is removed before the command runs.
    project.write(
        ".autobuild/agents/player.sh",
        &format!("{PLAYER}printf 'SF:lib/greet.sh\\nDA:1,1\\nend_of_record\\n' > coverage.xml\n"),
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert_eq!(
        verify["coverage"]["measurement"]["state"], "not_measured",
        "{verify}"
    );
    let gate = project.record("gate", 1);
    assert!(
        gate["reasons"]
            .to_string()
            .contains("line coverage could not be measured: the coverage command `sh tools/coverage.sh` passed but wrote no report at `coverage.xml`"),
        "{gate}"
    );
}

#[test]
fn coverage_in_a_profile_without_a_coverage_command_is_a_located_error_with_the_fix() {
    let project = Project::new()
        .config("\n[profiles.feature]\ncoverage = 80\n")
        .commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains(".autobuild/config.toml:")
            && err.contains("profile `feature` sets `coverage = 80`, but .autobuild/config.toml has no [coverage] command"),
        "{err}"
    );
    assert!(
        err.contains("[coverage]") && err.contains("report = \"coverage.xml\""),
        "{err}"
    );

    let over = Project::new().config(
        "\n[coverage]\ncmd = \"true\"\nreport = \"c.xml\"\n\n[profiles.feature]\ncoverage = 101\n",
    );
    let over = over.commit();
    let output = over.run(&["task", TASK, "--dry-run"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains(
            ":12: profile `feature` asks for 101% line coverage; a percentage is 0 to 100"
        ),
        "{err}"
    );
}

#[test]
fn the_dry_run_shows_the_coverage_command_and_minimum() {
    let project = project(COBERTURA_CMD, "coverage.xml").commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 0);
    let out = stdout(&output);
    assert!(out.contains("coverage >= 80%"), "{out}");
    assert!(
        out.contains("sh tools/coverage.sh") && out.contains("coverage.xml"),
        "{out}"
    );
}

#[test]
fn a_coverage_tool_that_is_not_installed_is_not_measured_and_blocks() {
    let project = project("no-such-coverage-tool --xml\n", "coverage.xml").commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    let coverage = &verify["coverage"];
    assert_eq!(coverage["check"]["status"], "failed", "{coverage}");
    assert_eq!(coverage["check"]["exit_code"], 127);
    let gate = project.record("gate", 1);
    let reasons = gate["reasons"].to_string();
    assert!(
        reasons.contains(
            "line coverage could not be measured: the coverage command `sh tools/coverage.sh` \
             failed (exit 127), so its report is not trusted"
        ),
        "{reasons}"
    );
    // The command's output reaches the player like a failing check's.
    let failing = gate["feedback"]["failing_checks"].to_string();
    assert!(failing.contains("\"name\":\"coverage\""), "{failing}");
}

#[test]
fn tdd_measures_coverage_only_once_the_implementation_runs_never_on_the_red_witness() {
    let project = project(COBERTURA_CMD, "coverage.xml").config(
        "\n[roles.tester]\nagent = \"command\"\ncommand = [\"sh\", \".autobuild/agents/tester.sh\"]\ntimeout = \"20s\"\n\n[roles.test_coach]\nagent = \"command\"\ncommand = [\"sh\", \".autobuild/agents/test_coach.sh\"]\ntimeout = \"20s\"\n",
    );
    project.write(
        ".autobuild/agents/tester.sh",
        "cat > /dev/null\nprintf '. ./lib/greet.sh\\n[ \"$(greeting Ada 2>/dev/null)\" = \"Hello, Ada!\" ] || { echo \"error: expected Hello, Ada!\"; exit 1; }\\n' > tests/test_greet.sh\n",
    );
    project.write(
        ".autobuild/agents/test_coach.sh",
        "cat > /dev/null\nprintf '```json\\n{\"decision\": \"approve\", \"summary\": \"ok\", \"issues\": [], \"criteria\": [{\"id\": \"AC-001\", \"status\": \"met\", \"evidence\": \"tests/test_greet.sh\"}]}\\n```\\n'\n",
    );
    // Implements without touching the locked test; writes the covering test on feedback.
    project.write(
        ".autobuild/agents/player.sh",
        r#"prompt=$(cat)
printf 'farewell() { printf "Goodbye, %%s.\\n" "$1"; }\ngreeting() { printf "Hello, %%s!\\n" "$1"; }\n' > lib/greet.sh
case "$prompt" in
*"lib/greet.sh lines 5-6"*) printf 'true\n' > tests/test_edge.sh ;;
esac
"#,
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "tdd", "--auto-merge"]);

    assert_exit(&output, 0);
    let red = project.record("verify", 1);
    assert_eq!(red["expect_fail"], true);
    assert!(
        red.get("coverage").is_none(),
        "not measured on the red witness: {red}"
    );
    assert_eq!(project.record("gate", 1)["approved"], true);
    let first = project.record("cycle_verify", 1);
    assert_eq!(first["coverage"]["measurement"]["covered"], 2, "{first}");
    assert_eq!(project.record("cycle_gate", 1)["approved"], false);
    assert_eq!(project.record("cycle_gate", 2)["approved"], true);
}

/// Issue 49, item 3: a coverage command that also runs the tests (`pytest --cov`) exits
/// non-zero when a test fails, yet the report it wrote measures the run: coverage is measured,
/// and the player is told about the failing test, not to make the command write its report.
#[test]
fn a_failing_test_does_not_make_the_coverage_it_measured_unmeasured() {
    let failing = format!("{LCOV_CMD}echo 'FAILED tests/test_edge.sh::edge - assert'\nexit 1\n");
    let project = project(&failing, "build/lcov.info");
    project.write("tests/test_edge.sh", "true\n");
    let project = project.commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert_eq!(verify["coverage"]["measurement"]["covered"], 4, "{verify}");
    let gate = project.record("gate", 1);
    assert_eq!(
        gate["approved"], false,
        "the failing test still blocks: {gate}"
    );
    let gate = gate.to_string();
    assert!(!gate.contains("could not be measured"), "{gate}");
    assert!(!gate.contains("below the required"), "{gate}");
    assert!(
        gate.contains("required check `coverage` failed (exit 1"),
        "{gate}"
    );
    // The feedback for the next turn is about the failing test, not the report.
    assert!(!gate.contains("write its report"), "{gate}");
    assert!(gate.contains("FAILED tests/test_edge.sh::edge"), "{gate}");
}
