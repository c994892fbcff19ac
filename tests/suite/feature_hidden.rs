//! Features whose tasks have hidden paths (`[scope] hidden`, README "Hidden acceptance
//! checks"): every task works in a task repository of its own, lands on the feature branch by
//! transplant, and the integration check after the wave runs the hidden check with the hidden
//! files. Needs bubblewrap (hidden paths need the sandbox): run with `--ignored hidden`.

use crate::feature_fixture::*;

/// The hidden acceptance test `tests/acceptance/<name>` (`body`, with `MARKER` replaced by a
/// unique marker) that the hidden check `acceptance` runs and every task's profile requires,
/// written into `project`'s checkout and config (before [`Project::sandbox_mode`]). Returns the
/// marker and the test's name.
fn hide_acceptance(project: &Project, reveal: &str, body: &str) -> (String, String) {
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
    project.write(
        &format!("tests/acceptance/{name}"),
        &body.replace("MARKER", &marker),
    );
    let config = project.root.join(".autobuild/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let (checks, rest) = text.split_once("[roles.player]").unwrap();
    std::fs::write(
        &config,
        format!(
            "[scope]\nhidden = [\"tests/acceptance/**\"]\nreveal = \"{reveal}\"\n\n{checks}\
             [checks.acceptance]\ncmd = \"sh tests/acceptance/{name}\"\nhidden = true\n\n\
             [profiles.feature]\n\
             require = [\"checks.test\", \"checks.acceptance\", \"criteria\", \"coach\", \"changes\"]\n\n\
             [roles.player]{rest}"
        ),
    )
    .unwrap();
    (marker, name)
}

/// A two-task feature in one wave under a hidden acceptance test ([`hide_acceptance`]).
/// TASK-A's Player searches everywhere for the test and plants files under the hidden path on
/// its first turn; TASK-B's adds a file. Returns the project, the marker, the test's name and
/// the probe file the searcher writes.
fn hidden_feature(reveal: &str) -> (Project, String, String, std::path::PathBuf) {
    let project = Project::new_in(&outside_system_tmp()).player_timeout("120s");
    let probe = project.outside("probe.txt");
    let home = project.outside("home");
    std::fs::create_dir_all(&home).unwrap();
    let (marker, name) = hide_acceptance(
        &project,
        reveal,
        "# MARKER\n. ./lib/greet.sh\n[ \"$(greeting Ada)\" = \"Hello, Ada!\" ] || { echo \"FAILED MARKER\"; exit 1; }\necho \"1 passed\"\n",
    );
    let seek = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/features/agents/seek_hidden.sh"),
    )
    .unwrap();
    let project = project
        .sandbox_mode("on")
        .task(
            "TASK-A",
            "test -f lib/a.txt",
            &format!("{seek}echo a > lib/a.txt\n"),
        )
        .task("TASK-B", "test -f lib/b.txt", "echo b > lib/b.txt\n")
        .feature(
            "FEAT-H",
            "id: FEAT-H\nname: Hidden\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n",
        )
        .env("HOME", &home.display().to_string())
        .env("PROBE", &probe.display().to_string())
        .env("HIDDEN_MARKER", &marker)
        .env("HIDDEN_NAME", &name)
        .commit();
    (project, marker, name, probe)
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_feature_with_a_hidden_acceptance_check_lands_and_its_searching_player_finds_nothing() {
    require_sandbox();
    let (project, marker, name, probe) = hidden_feature("names");
    let hidden_path = format!("tests/acceptance/{name}");
    let original = project.show("main", &hidden_path).unwrap();

    let output = project.run(&["feature", "FEAT-H", "--auto-merge", "--max-turns", "3"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-H");
    assert_eq!(state["status"], "merged", "{}", stdout(&output));
    // The searcher searched on both its turns and found nothing; the user's checkout was masked.
    let probe = std::fs::read_to_string(probe).unwrap();
    assert!(probe.contains("TASK-A turn 1 searched"), "{probe}");
    assert!(probe.contains("TASK-A turn 2 searched"), "{probe}");
    assert!(!probe.contains("LEAK"), "{probe}");
    assert!(!probe.contains("checkout shows: lib"), "{probe}");
    // Its planting was a scope violation on turn 1, reverted.
    let gate = json(&project.run_dir("TASK-A").join("gate_turn_1.json"));
    assert_eq!(gate["approved"], false, "{gate}");
    // Nothing an agent can read holds the hidden test's content (TASK-A's prompt names the
    // file it planted itself, as a reverted scope violation).
    for task in ["TASK-A", "TASK-B"] {
        for file in files_below(&project.run_dir(task).join("prompts")) {
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(!text.contains(&marker), "{} leaks: {text}", file.display());
        }
    }
    let b_prompts: String = files_below(&project.run_dir("TASK-B").join("prompts"))
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect();
    assert!(!b_prompts.contains(&name), "{b_prompts}");
    // Both tasks landed by transplant: their work, the hidden test byte-identical, nothing
    // planted under the hidden path.
    for rev in ["autobuild/FEAT-H", "main"] {
        if rev == "autobuild/FEAT-H" && !project.branch_exists(rev) {
            continue;
        }
        assert_eq!(project.show(rev, "lib/a.txt").as_deref(), Some("a\n"));
        assert_eq!(project.show(rev, "lib/b.txt").as_deref(), Some("b\n"));
        assert_eq!(project.show(rev, &hidden_path).as_deref(), Some(&*original));
        let tree = project.git(&["ls-tree", "-r", "--name-only", rev]);
        assert!(!tree.contains("planted.sh"), "{tree}");
    }
    // The integration check after the wave ran the hidden check, with the hidden files.
    let records = state["integration"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["outcome"], "passed", "{records:?}");
    let names: Vec<&str> = records[0]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"acceptance"), "{names:?}");
    // The task repositories and worktrees are gone.
    for task in ["TASK-A", "TASK-B"] {
        let repos = project.root.join(".autobuild/worktrees/.repos").join(task);
        assert!(!repos.exists(), "{}", repos.display());
        assert!(!project
            .root
            .join(".autobuild/worktrees")
            .join(task)
            .exists());
        assert!(!project.branch_exists(&format!("autobuild/{task}")));
    }
}

/// The CI emitters write a feature with hidden paths, and its task jobs provide the sandbox
/// before `autobuild task` runs (which refuses the run when it still cannot confine it); a
/// feature that hides nothing gets no such step.
#[test]
fn the_ci_emitters_provide_the_sandbox_to_task_jobs_that_hide_paths() {
    use autobuild::feature::emit::sandbox;
    let (project, ..) = hidden_feature("names");
    let plain = Project::new().contract_clash("FEAT-9").commit();

    for (format, file) in [
        ("github-actions", ".github/workflows/autobuild-feat-h.yml"),
        ("gitlab-ci", ".gitlab-ci.yml"),
    ] {
        let install = "--ci-install=autobuild --version =0.1.0";
        let output = project.run(&["feature", "FEAT-H", "--emit", format, install]);
        assert_exit(&output, 0);
        let text = std::fs::read_to_string(project.root.join(file)).unwrap();
        let provide = text
            .find("apt-get install -y -q bubblewrap")
            .unwrap_or_else(|| panic!("{format}: no sandbox in\n{text}"));
        let run = text.find("autobuild task \"$TASK\"").unwrap();
        assert!(provide < run, "{format}:\n{text}");
        assert!(text.contains("kernel.apparmor_restrict_unprivileged_userns=0"));

        let output = plain.run(&["feature", "FEAT-9", "--emit", format, install]);
        assert_exit(&output, 0);
        let file = file.replace("feat-h", "feat-9");
        let text = std::fs::read_to_string(plain.root.join(file)).unwrap();
        assert!(
            !text.contains("bwrap") && !text.contains(sandbox::STEP),
            "{text}"
        );
    }
    let github =
        std::fs::read_to_string(project.root.join(".github/workflows/autobuild-feat-h.yml"))
            .unwrap();
    assert!(
        github.contains(&format!("name: {}", sandbox::STEP)),
        "{github}"
    );
}

/// `integrate` is emitted with a warning: the landing job only checks.
#[test]
fn emitting_a_feature_that_integrates_warns_that_ci_only_checks() {
    let project = Project::new()
        .contract_clash("FEAT-9")
        .integration("integrate")
        .commit();

    let output = project.run(&[
        "feature",
        "FEAT-9",
        "--emit",
        "github-actions",
        "--ci-install=autobuild --version =0.1.0",
    ]);

    assert_exit(&output, 0);
    let err = stderr(&output);
    assert!(
        err.contains("only checks in `autobuild feature --land` (the CI landing job)"),
        "{err}"
    );
    assert!(project
        .root
        .join(".github/workflows/autobuild-feat-9.yml")
        .is_file());
}

/// The dry run names what each task hides.
#[test]
fn the_dry_run_names_each_tasks_hidden_paths() {
    let (project, ..) = hidden_feature("names");

    let output = project.run(&["feature", "FEAT-H", "--dry-run"]);

    assert_exit(&output, 0);
    let out = stdout(&output);
    let hides = out
        .lines()
        .filter(|l| l.contains("· hides tests/acceptance/**"))
        .count();
    assert_eq!(hides, 2, "{out}");
}

/// Tasks that pass the hidden acceptance test alone and fail it together: with `integrate`,
/// the integration task learns of the hidden failure only what `reveal` allows, hides the
/// hidden paths itself, repairs the clash, and the feature lands.
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn an_integration_task_repairs_a_hidden_failure_it_learns_only_by_its_reveal_level() {
    require_sandbox();
    let project = Project::new_in(&outside_system_tmp()).player_timeout("120s");
    let (marker, name) = hide_acceptance(
        &project,
        "summary",
        "# MARKER\n[ -f lib/welcome.sh ] || { echo \"1 passed\"; exit 0; }\n\
         . ./lib/greet.sh\n. ./lib/welcome.sh\n\
         got=$(welcome World)\n\
         [ \"$got\" = \"Hello, World!\" ] || { echo \"FAILED MARKER: got $got\"; exit 1; }\n\
         echo \"1 passed\"\n",
    );
    let project = project
        .sandbox_mode("on")
        .integration("integrate")
        .contract_clash("FEAT-HI")
        .behaviour(
            "FEAT-HI-integration-1",
            "printf 'welcome() {\\n    greeting Hello \"$1\"\\n}\\n' > lib/welcome.sh\n",
        )
        .commit();
    let hidden_path = format!("tests/acceptance/{name}");
    let original = project.show("main", &hidden_path).unwrap();

    let output = project.run(&["feature", "FEAT-HI", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-HI");
    assert_eq!(state["status"], "merged", "{}", stdout(&output));
    let first = &state["integration"][0];
    assert_eq!(first["outcome"], "failed", "{first}");
    let acceptance = first["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "acceptance")
        .unwrap();
    assert_eq!(acceptance["status"], "failed", "{acceptance}");
    assert_eq!(first["repair"]["status"], "merged", "{first}");
    // The integration task's file and every prompt of its run: the hidden failure at the
    // `summary` level, never the test's output; it hid the hidden paths like the wave's tasks.
    let task_file = std::fs::read_to_string(
        project
            .run_dir("FEAT-HI")
            .join("integration/FEAT-HI-integration-1.md"),
    )
    .unwrap();
    assert!(task_file.contains("hidden check failed"), "{task_file}");
    assert!(!task_file.contains(&marker), "{task_file}");
    for file in files_below(&project.run_dir("FEAT-HI-integration-1").join("prompts")) {
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(&marker), "{} leaks: {text}", file.display());
    }
    assert!(project
        .run_dir("FEAT-HI-integration-1")
        .join("state.json")
        .is_file());
    // Landed: the repair, the hidden test byte-identical.
    let welcome = project.show("main", "lib/welcome.sh").unwrap();
    assert!(welcome.contains("greeting Hello"), "{welcome}");
    assert_eq!(
        project.show("main", &hidden_path).as_deref(),
        Some(&*original)
    );
}

/// Tasks with hidden paths run on their own (`task --base <feature branch> --no-merge`) land
/// with `feature --land` from their task repositories, by transplant (the same commit their
/// runs put on their branches in this repository).
#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn tasks_with_hidden_paths_run_on_their_own_land_with_feature_land() {
    require_sandbox();
    let (project, _, name, _) = hidden_feature("names");
    let hidden_path = format!("tests/acceptance/{name}");
    let original = project.show("main", &hidden_path).unwrap();
    project.git(&["branch", "autobuild/FEAT-H", "main"]);
    for task in ["TASK-A", "TASK-B"] {
        let output = project.run(&[
            "task",
            task,
            "--base",
            "autobuild/FEAT-H",
            "--no-merge",
            "--max-turns",
            "3",
        ]);
        assert_exit(&output, 0);
        // Its approved change, transplanted onto where it started, is on its branch in this
        // repository too (for a landing from another checkout, as in CI), hidden test as it was.
        let branch = format!("autobuild/{task}");
        assert_eq!(
            project.show(&branch, &hidden_path).as_deref(),
            Some(&*original)
        );
    }

    let output = project.run(&["feature", "FEAT-H", "--land"]);

    assert_exit(&output, 0);
    let rev = "autobuild/FEAT-H";
    assert_eq!(project.show(rev, "lib/a.txt").as_deref(), Some("a\n"));
    assert_eq!(project.show(rev, "lib/b.txt").as_deref(), Some("b\n"));
    assert_eq!(project.show(rev, &hidden_path).as_deref(), Some(&*original));
    let tree = project.git(&["ls-tree", "-r", "--name-only", rev]);
    assert!(!tree.contains("planted.sh"), "{tree}");
    for task in ["TASK-A", "TASK-B"] {
        assert_eq!(project.task_status("FEAT-H", task), "merged");
        assert!(!project.branch_exists(&format!("autobuild/{task}")));
        assert!(!project
            .root
            .join(".autobuild/worktrees/.repos")
            .join(task)
            .exists());
    }
}
