//! The loop with OS confinement (`[sandbox]`, docs/sandbox.md): what a confined player or
//! check cannot write, what a declared `writable` path makes possible, that `mode = "off"`
//! behaves as before, and how `on` and `auto` react to a machine without bwrap. Tests that need
//! a working bwrap are ignored by a plain `cargo test`; `.ci/run` runs them with `--ignored sandbox`.

use crate::loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};
use serde_json::Value;

/// A directory outside `/tmp`, where what lies beside the repository is read-only in the
/// sandbox (under `/tmp` it is hidden behind the private `/tmp` instead).
fn outside_tmp() -> std::path::PathBuf {
    loop_fixture::outside_system_tmp()
}

/// `beside.txt` next to the project's repository.
fn beside(project: &Project) -> std::path::PathBuf {
    project.root.parent().unwrap().join("beside.txt")
}

fn notes(record: &Value) -> String {
    record["agent"]["notes"].to_string()
}

/// A `bwrap` that is not there, for `on` and `auto` on a machine without one; with `[sandbox]
/// backend = "bwrap"` ([`nothing_confines`]), a machine where nothing confines (no Landlock
/// either: macOS, an old kernel).
const NO_BWRAP: (&str, &str) = ("AUTOBUILD_BWRAP", "/nonexistent/bwrap");

/// `project` on a machine where nothing confines (with [`NO_BWRAP`]).
fn nothing_confines(project: Project) -> Project {
    project.sandbox_backend("bwrap")
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_player_writing_beside_the_repository_leaves_no_file_there() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_writes_beside.sh")
        .commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert!(!beside(&project).exists());
    let notes = notes(&project.record("player", 1));
    assert!(notes.contains("beside.txt"), "{notes}");
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_player_under_tmp_writes_beside_the_repository_into_its_private_tmp() {
    crate::support::require_sandbox();
    let project = Project::new()
        .sandbox_mode("on")
        .player("player_writes_beside.sh")
        .commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert!(!beside(&project).exists());
}

/// The setup run that reads `[env] setup`'s exports for an agent is confined like the agent
/// (it may source files an agent wrote): its write beside the repository is refused, and the
/// agent still gets the variables.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn the_setup_run_for_an_agents_exports_is_confined() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_sh_setup.sh")
        .shout_tool();
    let setup = format!(
        "echo setup >> '{}' 2>/dev/null; export FROM_SETUP=yes PATH=\\\"$PWD/tools:$PATH\\\"",
        beside(&project).display()
    );
    let project = project
        .config(&format!("[env]\nsetup = \"{setup}\"\n"))
        .commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    assert!(!beside(&project).exists());
}

#[test]
fn mode_off_behaves_as_without_a_sandbox() {
    let project = Project::new_in(&outside_tmp())
        .unconfined()
        .player("player_writes_beside.sh")
        .commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(
        std::fs::read_to_string(beside(&project)).unwrap(),
        "escaped\n"
    );
    assert_eq!(project.record("player", 1)["agent"]["notes"], Value::Null);
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    assert!(!events.contains("confinement"), "{events}");
    let report = std::fs::read_to_string(project.run_dir().join("report.md")).unwrap();
    assert!(
        report.contains("- Sandbox: none: agents and checks ran unconfined"),
        "{report}"
    );
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_player_cannot_plant_a_hook_or_an_alias_and_is_not_approved() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_plants_hook.sh")
        .commit();
    let initial = project.git(&["rev-parse", "main"]);

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let player = project.record("player", 1);
    assert_eq!(player["agent"]["status"]["status"], "failed", "{player}");
    assert!(notes(&player).contains("post-commit"), "{player}");
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert!(!project.root.join(".git/hooks/post-commit").exists());
    let alias = std::process::Command::new("git")
        .current_dir(&project.root)
        .args(["config", "--get", "alias.st"])
        .output()
        .unwrap();
    assert!(!alias.status.success(), "no alias was set");
    assert_eq!(project.git(&["rev-parse", "main"]), initial);
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_player_can_still_commit_in_its_worktree() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_commits.sh")
        .commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let player = project.record("player", 1);
    assert_eq!(player["changed"], true, "{player}");
    let log = project.git(&["log", "--format=%s", &project.branch()]);
    assert!(log.lines().any(|s| s == "player: greeting"), "{log}");
}

/// A player that points its worktree at a git directory of its own (the `.git` file, the
/// administration directory's `commondir`) does not take the runner's checkpoints with it:
/// bwrap refuses the writes, and under Landlock, which cannot, the runner puts both files back
/// after the turn and says so. The correct work lands either way.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_player_cannot_tie_its_worktree_to_another_repository() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_repoints_git.sh")
        .commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let worktree = project.root.join(".autobuild/worktrees").join(TASK);
    let git_file = std::fs::read_to_string(worktree.join(".git")).unwrap();
    assert!(git_file.contains(".git/worktrees/"), "{git_file}");
    let admin = git_file.trim().trim_start_matches("gitdir: ").to_string();
    let common = std::fs::read_to_string(std::path::Path::new(&admin).join("commondir")).unwrap();
    assert!(!common.contains("fake.git"), "{common}");
    let log = project.git(&["log", "--format=%s", &project.branch()]);
    assert!(!log.is_empty());
    assert!(project
        .show(&project.branch(), "lib/greet.sh")
        .contains("Hello, %s!"));
    let notes = notes(&project.record("player", 1));
    if crate::support::under_landlock() {
        assert!(notes.contains("put back"), "{notes}");
    } else {
        assert!(notes.contains(".git"), "{notes}");
    }
}

/// The project's test runner also fills a build cache in `~/.cache`, as many builds do.
/// The file names under the shared object store's `pack/`, sorted.
fn packs(project: &Project) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(project.root.join(".git/objects/pack"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_player_cannot_delete_the_shared_object_store_and_its_commit_is_imported() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_deletes_objects.sh")
        .commit();
    project.git(&["gc", "-q"]);
    let before = packs(&project);
    assert!(!before.is_empty());
    let main = project.git(&["rev-parse", "main"]);

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(packs(&project), before, "nothing of the store was deleted");
    assert_eq!(project.git(&["rev-parse", "main"]), main);
    project.git(&["fsck", "--no-dangling"]);
    // The player's own commit reached the shared store: the checkpoint and the log read it.
    let log = project.git(&["log", "--format=%s", &project.branch()]);
    assert!(log.lines().any(|s| s == "player: greeting"), "{log}");
    assert!(project
        .show(&project.branch(), "lib/greet.sh")
        .contains("Hello, %s!"));
    let private = project.run_dir().join("objects");
    assert_eq!(std::fs::read_dir(private).unwrap().count(), 0);
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn an_object_a_confined_player_plants_under_a_future_name_never_reaches_the_store() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_plants_object.sh")
        .commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    assert!(events.contains("do not match their names"), "{events}");
    project.write("user.txt", "user content\n");
    project.git(&["add", "user.txt"]);
    project.git(&["commit", "-q", "-m", "user"]);
    assert_eq!(project.show("HEAD", "user.txt"), "user content\n");
    project.git(&["fsck", "--no-dangling"]);
}

fn cache_building_project(writable: bool) -> Project {
    let project = Project::new_in(&outside_tmp()).sandbox_mode("on");
    let tests = project.read("tests/run.sh");
    project.write(
        "tests/run.sh",
        &format!(
            "mkdir -p \"$HOME/.cache/greet-build\" && date > \"$HOME/.cache/greet-build/stamp\" || exit 1\n{tests}"
        ),
    );
    let home = project.home();
    let project = project.env("HOME", home.to_str().unwrap());
    if writable {
        project.writable("~/.cache").commit()
    } else {
        project.commit()
    }
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_check_that_needs_a_cache_outside_the_worktree_fails_with_the_fix() {
    crate::support::require_sandbox();
    let project = cache_building_project(false);

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let check = &project.record("verify", 1)["checks"][0];
    assert_eq!(check["status"], "failed", "{check}");
    assert_eq!(check["failure_class"], "infrastructure", "{check}");
    assert!(
        check["advice"].to_string().contains("[sandbox] writable"),
        "{check}"
    );
    assert!(!project.home().join(".cache/greet-build").exists());
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_build_that_needs_a_writable_cache_works_with_writable() {
    crate::support::require_sandbox();
    let project = cache_building_project(true);

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert!(project.home().join(".cache/greet-build/stamp").is_file());
}

#[test]
fn mode_on_without_bwrap_is_a_preflight_error_and_creates_nothing() {
    let project = nothing_confines(Project::new().sandbox_mode("on")).commit();

    let output = project.run_with_env(&["task", TASK], &[NO_BWRAP]);

    assert_exit(&output, 2);
    let stderr = loop_fixture::stderr(&output);
    assert!(stderr.contains("install bubblewrap"), "{stderr}");
    assert!(!project.branch_exists(&project.branch()));
    assert!(!project.root.join(".autobuild/worktrees").exists());
    assert!(!project.root.join(".autobuild/runs").exists());
}

#[test]
fn auto_without_bwrap_runs_unconfined_after_one_warning() {
    let project = nothing_confines(Project::new_in(&outside_tmp()))
        .player("player_writes_beside.sh")
        .commit();

    let output = project.run_with_env(&["task", TASK, "--no-merge"], &[NO_BWRAP]);

    assert_exit(&output, 0);
    assert!(beside(&project).exists(), "the run was not confined");
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    let warnings = events
        .lines()
        .filter(|line| line.contains("\"warning\"") && line.contains("OS confinement"))
        .count();
    assert_eq!(warnings, 1, "{events}");
}

#[test]
fn the_dry_run_shows_the_effective_sandbox_and_what_stops_a_run() {
    let off = Project::new().unconfined().commit();
    let output = off.run(&["task", TASK, "--dry-run"]);
    assert_exit(&output, 0);
    let stdout = loop_fixture::stdout(&output);
    assert!(
        stdout.contains("\n  sandbox:    off ([sandbox] mode = \"off\")\n"),
        "{stdout}"
    );

    let on = nothing_confines(Project::new().sandbox_mode("on")).commit();
    let output = on.run_with_env(&["task", TASK, "--dry-run"], &[NO_BWRAP]);
    assert_exit(&output, 2);
    let stdout = loop_fixture::stdout(&output);
    assert!(
        stdout.contains("\n  sandbox:    off (not available: "),
        "{stdout}"
    );
    assert!(
        stdout.contains("CANNOT START: [sandbox] mode = \"on\""),
        "{stdout}"
    );
    assert!(!on.root.join(".autobuild/runs").exists());
}

/// A file in the user's configuration directory that changes a built-in profile or workflow
/// (what an unconfined agent could write to weaken every later run) is named on every run
/// that uses it.
#[test]
fn a_user_file_that_changes_a_builtin_is_named_on_every_run() {
    let project = Project::new().unconfined().commit();
    let user = project.outside("user-config");
    std::fs::create_dir_all(user.join("profiles")).unwrap();
    std::fs::create_dir_all(user.join("workflows")).unwrap();
    std::fs::write(
        user.join("profiles/feature.toml"),
        "require = [\"coach\"]\n",
    )
    .unwrap();
    std::fs::write(
        user.join("workflows/player-coach.toml"),
        "name = \"player-coach\"\nextends = \"player-coach\"\n",
    )
    .unwrap();
    let project = project.env("AUTOBUILD_CONFIG_DIR", user.to_str().unwrap());

    for _ in 0..2 {
        let output = project.run(&["task", TASK, "--dry-run"]);
        assert_exit(&output, 0);
        let text = format!(
            "{}{}",
            loop_fixture::stdout(&output),
            loop_fixture::stderr(&output)
        );
        let profile = user.join("profiles/feature.toml");
        let workflow = user.join("workflows/player-coach.toml");
        assert!(
            text.contains(&format!(
                "profile `feature` is changed by {}",
                profile.display()
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(
                "workflow `player-coach` comes from {}",
                workflow.display()
            )),
            "{text}"
        );
    }
}

/// Where bwrap is missing (or refused), `auto` confines with Landlock, and the dry run and
/// `doctor` say so.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn without_bwrap_auto_confines_with_landlock_and_says_so() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .player("player_writes_beside.sh")
        .commit();

    let dry = project.run_with_env(&["task", TASK, "--dry-run"], &[NO_BWRAP]);
    assert_exit(&dry, 0);
    let stdout = loop_fixture::stdout(&dry);
    assert!(
        stdout.contains("\n  sandbox:    on (landlock: Landlock ABI "),
        "{stdout}"
    );
    assert!(stdout.contains("a private TMPDIR"), "{stdout}");
    let doctor = project.run_with_env(&["doctor"], &[NO_BWRAP]);
    let text = loop_fixture::stdout(&doctor);
    assert!(
        text.contains("ok       sandbox: landlock (Landlock ABI "),
        "{text}"
    );

    let output = project.run_with_env(&["task", TASK, "--no-merge"], &[NO_BWRAP]);
    assert_exit(&output, 0);
    assert!(!beside(&project).exists(), "the run was not confined");
    let notes = notes(&project.record("player", 1));
    assert!(notes.contains("beside.txt"), "{notes}");
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(project.run_dir().join("state.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["sandbox"]["backend"], "landlock", "{state}");
    assert_eq!(state["sandbox"]["network"], "ip", "{state}");
    let report = std::fs::read_to_string(project.run_dir().join("report.md")).unwrap();
    assert!(report.contains("- Sandbox: landlock (ABI "), "{report}");
}

/// Hidden acceptance checks (`[scope] hidden`, docs/verification.md, "Hidden acceptance checks"): a project
/// whose acceptance test `tests/acceptance/<name>` (holding `marker`) no agent may see, run by
/// the hidden check `acceptance` the profile requires, with the seeking player.
struct Hidden {
    project: Project,
    marker: String,
    name: String,
    probe: std::path::PathBuf,
}

fn hidden_project(reveal: &str, sandbox: &str) -> Hidden {
    hidden_project_with(reveal, sandbox, "")
}

/// [`hidden_project`] with more of config.toml.
fn hidden_project_with(reveal: &str, sandbox: &str, extra: &str) -> Hidden {
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode(sandbox)
        .player_timeout("120s")
        .player("player_seeks_hidden.sh");
    // A small HOME, so the player's search of it is quick.
    let home = project.home();
    // Unique per test, so tests running side by side never find each other's files.
    let unique: String = project
        .root
        .parent()
        .unwrap()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let marker = format!("SECRETMARKER{unique}");
    let name = format!("test_hidden_{unique}.sh");
    let test = loop_fixture::fixture("hidden_acceptance.sh").replace("HIDDEN_MARKER_LINE", &marker);
    project.write(&format!("tests/acceptance/{name}"), &test);
    let probe = project.outside("probe.txt");
    let project = project
        .config(&format!(
            "\n[scope]\nhidden = [\"tests/acceptance/**\"]\nreveal = \"{reveal}\"\n\n\
             [checks.acceptance]\ncmd = \"sh tests/acceptance/{name}\"\nhidden = true\n\n\
             [profiles.feature]\n\
             require = [\"checks.test\", \"checks.acceptance\", \"criteria\", \"coach\", \"changes\"]\n{extra}"
        ))
        .env("HOME", &home.display().to_string())
        .env("PROBE", &probe.display().to_string())
        .env("HIDDEN_MARKER", &marker)
        .env("HIDDEN_NAME", &name)
        .commit();
    Hidden {
        project,
        marker,
        name,
        probe,
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_player_searching_everywhere_finds_no_hidden_file_and_lands_only_after_the_hidden_check_passes()
{
    crate::support::require_sandbox();
    let Hidden {
        project,
        marker,
        name,
        probe,
    } = hidden_project("names", "on");
    let hidden_path = format!("tests/acceptance/{name}");
    let original = project.show("main", &hidden_path);

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "3"]);

    assert_exit(&output, 0);
    let probe = std::fs::read_to_string(probe).unwrap();
    assert!(probe.contains("turn 1 searched"), "{probe}");
    assert!(probe.contains("turn 2 searched"), "{probe}");
    assert!(!probe.contains("LEAK"), "{probe}");
    // The user's checkout is masked: under bwrap only the mount points of what the run shows
    // are there; under Landlock it cannot be listed at all.
    if !crate::support::under_landlock() {
        assert!(probe.contains("checkout shows: .autobuild"), "{probe}");
    }
    assert!(!probe.contains("checkout shows: lib"), "{probe}");
    // Turn 1 was wrong: the hidden check failed and blocked approval; the player learned the
    // check's name, never the test.
    let verify = project.record("verify", 1);
    let acceptance = verify["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "acceptance")
        .unwrap()
        .clone();
    assert_eq!(acceptance["status"], "failed", "{verify}");
    assert_eq!(acceptance["summary"], "hidden check `acceptance` failed");
    assert_eq!(project.record("gate", 1)["approved"], false);
    let log = std::fs::read_to_string(acceptance["log_path"].as_str().unwrap()).unwrap();
    assert!(
        log.contains(&marker),
        "the user's log keeps the full output: {log}"
    );
    let player = project.record("player", 1);
    assert!(player.to_string().contains("planted.sh"), "{player}");
    for file in files_under(&project.run_dir().join("prompts")) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&marker), "{} leaks: {text}", file.display());
    }
    let prompt = files_under(&project.run_dir().join("prompts"))
        .into_iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .find(|text| text.contains("turn 2") && text.contains("Player"))
        .unwrap_or_default();
    assert!(
        prompt.contains("hidden check `acceptance` failed"),
        "{prompt}"
    );
    assert!(prompt.contains("you cannot run it"), "{prompt}");
    assert!(
        !prompt.contains(&name),
        "the test's file name is not shown: {prompt}"
    );
    // Landed on the real base: the work, the hidden test untouched, nothing planted.
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    assert_eq!(project.show("main", &hidden_path), original);
    let tree = project.git(&["ls-tree", "-r", "--name-only", "main"]);
    assert!(!tree.contains("planted.sh"), "{tree}");
    assert!(!project
        .root
        .join(".autobuild/worktrees/.repos")
        .join(TASK)
        .exists());
    assert!(!project.run_dir().join("hidden-check").exists());
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn reveal_none_tells_the_agents_only_that_a_hidden_check_failed() {
    crate::support::require_sandbox();
    let Hidden {
        project, marker, ..
    } = hidden_project("none", "on");

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert!(
        verify
            .to_string()
            .contains("a hidden check failed (the project reveals nothing more)"),
        "{verify}"
    );
    assert!(!verify.to_string().contains(&marker), "{verify}");
    // Nor its exit code, failure class or duration: only that it failed.
    let acceptance = verify["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "acceptance")
        .unwrap()
        .clone();
    assert_eq!(acceptance["status"], "failed", "{acceptance}");
    assert_eq!(acceptance["exit_code"], Value::Null, "{acceptance}");
    assert_eq!(acceptance["failure_class"], Value::Null, "{acceptance}");
    assert_eq!(acceptance["duration_ms"], 0, "{acceptance}");
    // The gate's reasons and the stall signature say no more.
    let gate = project.record("gate", 1);
    let reasons: Vec<&str> = gate["reasons"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r.as_str())
        .filter(|r| r.contains("check `acceptance`"))
        .collect();
    assert_eq!(reasons, ["required check `acceptance` failed"], "{gate}");
    let signature = gate["signature"].as_str().unwrap();
    let line = signature
        .lines()
        .find(|l| l.starts_with("check acceptance"))
        .unwrap();
    assert_eq!(
        line,
        "check acceptance failed exit none unclassified: a hidden check failed (the project reveals nothing more)"
    );
    let mut coach_prompt = String::new();
    for file in files_under(&project.run_dir().join("prompts")) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&marker), "{} leaks: {text}", file.display());
        if text.contains("Runner verification") || text.contains("check `acceptance`") {
            coach_prompt.push_str(&text);
        }
    }
    let line = coach_prompt
        .lines()
        .find(|l| l.contains("check `acceptance`"))
        .unwrap_or_default();
    assert!(
        line.contains("failed") && !line.contains("exit code"),
        "{line}"
    );
    // The work is kept in the task repository; the user's repository has no task branch yet.
    assert!(!project.branch_exists(&project.branch()));
    assert!(project
        .root
        .join(".autobuild/worktrees/.repos")
        .join(TASK)
        .exists());
}

#[test]
fn hidden_paths_without_a_sandbox_are_refused_and_the_dry_run_shows_them() {
    let Hidden { project, .. } = hidden_project("names", "off");

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    let stderr = loop_fixture::stderr(&output);
    assert!(stderr.contains("need the sandbox"), "{stderr}");
    assert!(!project.root.join(".autobuild/worktrees").exists());
    assert!(!project.root.join(".autobuild/runs").exists());
    let output = project.run(&["task", TASK, "--dry-run"]);
    let stdout = loop_fixture::stdout(&output);
    assert!(
        stdout.contains("Hidden (no agent can see them; only hidden checks use them; reveal = names): `tests/acceptance/**`"),
        "{stdout}"
    );
    assert!(stdout.contains("configured, hidden"), "{stdout}");
}

#[test]
fn a_worktree_link_to_a_hidden_path_is_refused_before_anything_starts() {
    let Hidden { project, .. } = hidden_project_with(
        "names",
        "off",
        "\n[worktree]\nlink = [\"tests/acceptance\"]\n",
    );

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    let stderr = loop_fixture::stderr(&output);
    assert!(
        stderr.contains("[worktree] link `tests/acceptance` would show hidden paths to the agents"),
        "{stderr}"
    );
    assert!(!project.root.join(".autobuild/worktrees").exists());
}

/// A hidden `acceptance` check running `tests/acceptance/test_oracle.sh`, the only hidden path.
const ORACLE_CHECK: &str = "\n[scope]\nhidden = [\"tests/acceptance/**\"]\n\n\
     [checks.acceptance]\ncmd = \"sh tests/acceptance/test_oracle.sh\"\nhidden = true\n";

/// Issue 42: a hidden check is the task's oracle; a profile that does not name it (the built-in
/// `feature` requires only `checks.test` of the checks) does not make it advisory.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_hidden_check_no_profile_names_still_gates() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp()).sandbox_mode("on");
    project.write(
        "tests/acceptance/test_oracle.sh",
        "echo 'oracle: wrong'; exit 1\n",
    );
    let project = project.config(ORACLE_CHECK).commit();

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    let acceptance = verify["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "acceptance")
        .unwrap_or_else(|| panic!("the hidden check did not run: {verify}"));
    assert_eq!(acceptance["status"], "failed");
    // Written only when true.
    assert_ne!(acceptance["advisory"], true, "{acceptance}");
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert!(!project.show("main", "lib/greet.sh").contains("greeting()"));
}

/// Issue 42: a hidden check runs the player's code beside the hidden files, sealed: that code
/// can neither leave them in the scratch directory the next player reads nor send them over
/// the network (here to a listener on 127.0.0.1), and the run still lands when it passes.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_hidden_check_is_sealed_from_later_steps_and_the_network() {
    crate::support::require_sandbox();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_leaks_oracle.sh")
        .env("LEAK_PORT", &port);
    project.write(
        "tests/acceptance/test_oracle.sh",
        ". ./lib/greet.sh\ntest \"$(greeting Ada)\" = \"Hello, Ada!\"\n",
    );
    let project = project.config(ORACLE_CHECK).commit();

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let verify = project.record("verify", 1);
    assert_eq!(verify["checks"][1]["name"], "acceptance", "{verify}");
    assert_eq!(verify["checks"][1]["status"], "passed", "{verify}");
    assert!(!project.run_dir().join("scratch/stolen").exists());
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the hidden check reached the network"
    );
}

/// Issue 42: a hidden check runs with the base's test-runner configuration, never the
/// player's: a `conftest.py` the player adds (here one the test command loads after the code,
/// redefining what the oracle calls) cannot turn the oracle's failure into a pass.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_hidden_check_runs_without_the_players_test_configuration() {
    crate::support::require_sandbox();
    let project = Project::new_in(&outside_tmp())
        .sandbox_mode("on")
        .player("player_rigs_conftest.sh")
        .coach("coach_lenient.sh");
    project.write(
        "tests/acceptance/test_oracle.sh",
        ". ./lib/greet.sh\nif [ -f conftest.py ]; then . ./conftest.py; fi\n\
         test \"$(greeting Ada)\" = \"Hello, Ada!\"\n",
    );
    project.write(
        ".autobuild/tasks/TASK-1.md",
        &loop_fixture::task_file().replace(
            " `verify: sh -c '. ./lib/greet.sh && test \"$(greeting Ada)\" = \"Hello, Ada!\"'`",
            "",
        ),
    );
    let project = project.config(ORACLE_CHECK).commit();

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert_eq!(verify["checks"][0]["status"], "passed", "{verify}");
    assert_eq!(verify["checks"][1]["name"], "acceptance", "{verify}");
    assert_eq!(verify["checks"][1]["status"], "failed", "{verify}");
    assert!(!project.show("main", "lib/greet.sh").contains("greeting()"));
}

/// A machine where bwrap confines but cannot take the network away (some containers refuse a
/// network namespace): a run with hidden checks, which run sealed, does not start, and says why.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_sandbox_without_network_namespaces_refuses_hidden_checks_before_the_run() {
    let bwrap = crate::support::require_bwrap();
    let project = Project::new_in(&outside_tmp()).sandbox_mode("on");
    let wrapper = project.outside("bwrap-without-netns");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = --unshare-net ] && {{ echo 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted' >&2; exit 1; }}; done\nexec {} \"$@\"\n",
            bwrap.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    project.write("tests/acceptance/test_oracle.sh", "exit 0\n");
    let project = project
        .env("AUTOBUILD_BWRAP", wrapper.to_str().unwrap())
        .config(ORACLE_CHECK)
        .commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(
        text.contains("cannot take a hidden check's network away"),
        "{text}"
    );
    assert!(!project.run_dir().exists());
}
