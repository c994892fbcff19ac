//! The emitted GitHub workflow on a real engine: nektos/act in host mode, offline, with the
//! project's stand-ins for the checkout, artifact and cache actions (tests/fixtures/actions/)
//! and a bare repository as the remote. Job scheduling, `needs:`/`if:`, matrices, expressions
//! and step outputs are act's own. Needs act: run scripts/ci-engines.sh.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use super::engine::{self, emit, emit_with, local_tree, path_with_autobuild, project, tree};
use super::engine::{BRANCH, FEAT};
use super::feature_fixture::{git, Project};

/// One `act workflow_dispatch` of the emitted workflow.
struct Dispatch {
    ok: bool,
    log: String,
    /// `job display name → "succeeded" | "failed"`: "failed" when one of its own steps failed
    /// (act's "Job failed" line of a matrix entry reports the whole matrix job, so the entry
    /// that succeeded after its sibling failed says "failed" too; GitHub shows each entry's own).
    results: BTreeMap<String, String>,
    /// `job display name → (seconds from the start it began, seconds it took)`.
    times: BTreeMap<String, (f64, f64)>,
}

struct Act {
    workflow: PathBuf,
    remote: PathBuf,
    /// The clone act is started in (it reads the run's branch and commit from it).
    workdir: PathBuf,
    runs: u32,
    /// The runner's `PATH`.
    path: String,
    /// More of the runner's environment.
    env: Vec<(String, String)>,
    /// The run's secrets (`-s NAME=VALUE`; `GITHUB_TOKEN` is `github.token`).
    secrets: Vec<(String, String)>,
}

impl Act {
    /// The emitted workflow of `project`, on a runner that has the autobuild under test.
    fn new(project: &Project) -> Act {
        let workflow = project.temp().join("autobuild-feat-s.yml");
        emit(project, "github-actions", &workflow);
        Act::of(project, workflow)
    }

    fn of(project: &Project, workflow: PathBuf) -> Act {
        let remote = project.bare_remote();
        let workdir = project.temp().join("act-workdir");
        git(
            project.temp(),
            &[
                "clone",
                "-q",
                remote.to_str().unwrap(),
                workdir.to_str().unwrap(),
            ],
        );
        Act {
            workflow,
            remote,
            workdir,
            runs: 0,
            path: path_with_autobuild(),
            env: Vec::new(),
            secrets: Vec::new(),
        }
    }

    fn dispatch(&mut self, project: &Project, inputs: serde_json::Value) -> Dispatch {
        self.runs += 1;
        let artifacts = project.temp().join(format!("act-artifacts-{}", self.runs));
        fs::create_dir_all(&artifacts).unwrap();
        let event = project.temp().join(format!("act-event-{}.json", self.runs));
        fs::write(&event, serde_json::json!({ "inputs": inputs }).to_string()).unwrap();
        let stand_ins = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/actions");
        let mut command = Command::new(engine::tool("AUTOBUILD_ACT", "act"));
        command
            .current_dir(&self.workdir)
            .args(["workflow_dispatch", "-W"])
            .arg(&self.workflow)
            .arg("-e")
            .arg(&event)
            .args(["-P", "ubuntu-latest=-self-hosted", "--action-offline-mode"]);
        for pin in autobuild::feature::emit::actions::ALL {
            let name = pin.name.trim_start_matches("actions/");
            command.arg("--local-repository").arg(format!(
                "{}={}",
                pin.uses(),
                stand_ins.join(name).display()
            ));
        }
        let mut env = project.environment();
        env.push((
            "AUTOBUILD_TEST_REMOTE".into(),
            self.remote.display().to_string(),
        ));
        env.push((
            "AUTOBUILD_TEST_ARTIFACTS".into(),
            artifacts.display().to_string(),
        ));
        for (key, value) in &env {
            command.arg("--env").arg(format!("{key}={value}"));
            command.env(key, value);
        }
        for (key, value) in &self.secrets {
            command.arg("-s").arg(format!("{key}={value}"));
        }
        command.envs(self.env.iter().map(|(k, v)| (k, v)));
        // act keeps every job's workspace and temp directory under $XDG_CACHE_HOME/act: in the
        // project's temp directory, they go with it.
        command
            .env("XDG_CACHE_HOME", project.temp().join("xdg-cache"))
            .env("PATH", &self.path)
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let start = Instant::now();
        let mut child = command.spawn().unwrap();
        let stderr = child.stderr.take().unwrap();
        let errors = std::thread::spawn(move || {
            let mut text = String::new();
            for line in BufReader::new(stderr).lines() {
                text.push_str(&line.unwrap_or_default());
                text.push('\n');
            }
            text
        });
        let mut log = String::new();
        let mut results = BTreeMap::new();
        let mut started: BTreeMap<String, f64> = BTreeMap::new();
        let mut failed_steps: BTreeMap<String, bool> = BTreeMap::new();
        let mut times = BTreeMap::new();
        for line in BufReader::new(child.stdout.take().unwrap()).lines() {
            let line = line.unwrap_or_default();
            let at = start.elapsed().as_secs_f64();
            eprintln!("{line}");
            if let Some(job) = job_of(&line) {
                if line.contains("⭐ Run Set up job") {
                    started.entry(job.clone()).or_insert(at);
                }
                if line.contains("❌  Failure - ") {
                    failed_steps.insert(job.clone(), true);
                }
                for ending in ["succeeded", "failed"] {
                    if line.ends_with(&format!("Job {ending}")) {
                        let failed = failed_steps.get(&job).copied().unwrap_or(false);
                        let result = if failed { "failed" } else { "succeeded" };
                        results.insert(job.clone(), result.to_string());
                        let began = started.get(&job).copied().unwrap_or(at);
                        times.insert(job.clone(), (began, at - began));
                    }
                }
            }
            log.push_str(&line);
            log.push('\n');
        }
        let status = child.wait().unwrap();
        log.push_str(&errors.join().unwrap());
        Dispatch {
            ok: status.success(),
            log,
            results,
            times,
        }
    }
}

/// `[autobuild FEAT-S/wave 1: TASK-A-1] …` → `wave 1: TASK-A` (act numbers the entries of a
/// matrix of more than one).
fn job_of(line: &str) -> Option<String> {
    let rest = line.strip_prefix('[')?;
    let (inside, _) = rest.split_once(']')?;
    let (_, job) = inside.split_once('/')?;
    let job = job.trim();
    let numbered = job.starts_with("wave ")
        && job
            .rsplit_once('-')
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    Some(match job.rsplit_once('-') {
        Some((name, _)) if numbered => name.to_string(),
        _ => job.to_string(),
    })
}

/// Jobs, the wall time of each wave (its task jobs and its landing) and of the run.
fn figures(dispatch: &Dispatch, name: &str) {
    eprintln!("figures of {name}: {} job(s)", dispatch.times.len());
    for (job, (began, took)) in &dispatch.times {
        eprintln!("  {job:<24} started at {began:>6.1}s, took {took:>6.1}s");
    }
}

#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn a_blocked_task_stops_only_its_dependants_and_the_run_fails_naming_them() {
    let expected = local_tree();
    let project = project();
    let mut act = Act::new(&project);

    let run = act.dispatch(&project, serde_json::json!({ "max_turns": "1" }));
    figures(&run, "the first dispatch");

    // Wave 2 and 3 ran although a task of wave 1 failed; what landed is what a local run
    // lands.
    assert_eq!(tree(&act.remote, BRANCH), expected);
    assert!(expected.contains("lib/e.txt"), "{expected}");
    assert_eq!(run.results["wave 1: TASK-B"], "failed", "{:?}", run.results);
    assert_eq!(run.results["wave 1: TASK-A"], "succeeded");
    assert_eq!(run.results["wave 2: TASK-C"], "succeeded");
    assert_eq!(run.results["wave 3: TASK-E"], "succeeded");
    assert_eq!(project.starts("TASK-D"), 0);
    for task in ["TASK-A", "TASK-B", "TASK-C", "TASK-E"] {
        assert_eq!(project.starts(task), 1, "{task}");
    }
    // D, skipped because B did not land, is not shown as passed: its job fails saying why.
    assert_eq!(run.results["wave 2: TASK-D"], "failed", "{:?}", run.results);
    assert!(
        run.log.contains(
            "::error title=TASK-D skipped::TASK-D skipped: it needs TASK-B, which did not land"
        ) || run
            .log
            .contains("TASK-D skipped: it needs TASK-B, which did not land"),
        "{}",
        run.log
    );
    // The run is red, and its last job says which tasks did not land and why.
    assert!(!run.ok);
    assert_eq!(run.results["finish"], "failed");
    let outcome = run
        .log
        .lines()
        .find(|l| l.contains("task(s) did not land"))
        .unwrap_or_else(|| panic!("no outcome line:\n{}", run.log));
    assert!(outcome.contains("blocked: TASK-B"), "{outcome}");
    assert!(outcome.contains("skipped: TASK-D"), "{outcome}");
    // The blocked run is kept to be resumed: its branch and its run directory.
    assert!(!git(&act.remote, &["branch", "--list", "autobuild/TASK-B"]).is_empty());
    assert!(!git(&act.remote, &["branch", "--list", "autobuild-runs/TASK-B"]).is_empty());

    // A second dispatch with more turns resumes B where it stopped, runs its dependant,
    // redoes nothing that landed, and with auto_merge lands the feature on the base.
    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "2", "auto_merge": "true" }),
    );
    figures(&run, "the resuming dispatch");

    assert!(run.ok, "{:?}", run.results);
    assert_eq!(run.results["finish"], "succeeded");
    assert_eq!(run.results["wave 2: TASK-D"], "succeeded");
    for task in ["TASK-A", "TASK-C", "TASK-E"] {
        assert_eq!(project.starts(task), 1, "{task}");
    }
    // B's kept run names the first run's job workspace, which act moves between jobs: the
    // new job takes it over (`--moved-checkout`) and goes on from turn 2, which approves; run
    // afresh it would have needed two more turns.
    assert!(
        run.log.contains("TASK-B: resuming its blocked run"),
        "{}",
        run.log
    );
    assert!(run.log.contains("took over the run kept in"), "{}", run.log);
    assert_eq!(project.starts("TASK-B"), 2, "one turn, then the second");
    let turns: Vec<u32> = project
        .log()
        .into_iter()
        .filter(|(event, task, _, _)| event == "start" && task == "TASK-B")
        .map(|(_, _, turn, _)| turn)
        .collect();
    assert_eq!(turns, [1, 2], "the turn numbers go on");
    assert_eq!(project.starts("TASK-D"), 1);
    let main = git(
        &act.remote,
        &["ls-tree", "-r", "--name-only", "main", "lib"],
    );
    for file in ["a", "b", "c", "d", "e", "never"] {
        assert!(main.contains(&format!("lib/{file}.txt")), "{main}");
    }
    assert!(git(&act.remote, &["branch", "--list", BRANCH]).is_empty());
}

#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn tasks_can_be_skipped_and_abandoned_by_the_dispatch() {
    let project = project();
    let mut act = Act::new(&project);

    // B is given up: it is not run, D (its dependant) neither, and the run is green.
    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "1", "abandon": "TASK-B", "skip": "TASK-E" }),
    );

    assert_eq!(project.starts("TASK-B"), 0);
    assert_eq!(project.starts("TASK-E"), 0);
    assert_eq!(project.starts("TASK-C"), 1);
    // D is given up with B: its job passes.
    assert_eq!(
        run.results["wave 2: TASK-D"], "succeeded",
        "{:?}",
        run.results
    );
    // E was only skipped for this run: it is pending, and that is not success.
    assert_eq!(run.results["finish"], "failed");
    let outcome = run
        .log
        .lines()
        .find(|l| l.contains("task(s) did not land"))
        .unwrap_or_else(|| panic!("no outcome line:\n{}", run.log));
    assert!(outcome.contains("pending: TASK-E"), "{outcome}");
    assert!(outcome.contains("abandoned: TASK-B"), "{outcome}");
    assert!(!outcome.contains("TASK-D"), "{outcome}");

    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "1", "abandon": "TASK-B", "only": "TASK-E" }),
    );

    assert!(run.ok, "{:?}", run.results);
    assert_eq!(project.starts("TASK-E"), 1);
    assert_eq!(project.starts("TASK-A"), 1);
}

/// A bare clone of this source tree's repository (its committed HEAD): the git source the
/// install test names, as a user's fork or mirror would be. `(URL, commit)`.
fn git_source(project: &Project) -> (String, String) {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR"));
    let bare = project.temp().join("autobuild-source.git");
    git(
        project.temp(),
        &[
            "clone",
            "-q",
            "--bare",
            tree.to_str().unwrap(),
            bare.to_str().unwrap(),
        ],
    );
    let commit = git(tree, &["rev-parse", "HEAD"]).trim().to_string();
    (format!("file://{}", bare.display()), commit)
}

/// Removes what a kept target directory holds of autobuild's own crates. Cargo takes a crate
/// from a git source as immutable and does not look at its files again, and every revision's
/// workspace crates have the same names and versions: without this, the next commit's root
/// package is compiled against the previous commit's `autobuild-model`. The third-party
/// dependencies, the reason the directory is kept, stay.
fn forget_autobuilds_own_artifacts(target: &Path) {
    for dir in [
        "debug/deps",
        "debug/.fingerprint",
        "debug/build",
        "debug/incremental",
    ] {
        let Ok(entries) = std::fs::read_dir(target.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with("autobuild") || name.starts_with("libautobuild") {
                let path = entry.path();
                let _ = if path.is_dir() {
                    std::fs::remove_dir_all(&path)
                } else {
                    std::fs::remove_file(&path)
                };
            }
        }
    }
}

/// `PATH` without any directory that has an `autobuild`, so the plan job must install it.
fn path_without_autobuild() -> String {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let kept: Vec<PathBuf> = std::env::split_paths(&path)
        .filter(|dir| !dir.join("autobuild").exists())
        .collect();
    std::env::join_paths(kept).unwrap().into_string().unwrap()
}

#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn in_a_repository_that_is_not_autobuilds_the_jobs_install_it_once_from_the_named_git_source() {
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .task("TASK-B", "test -f lib/b.txt", "echo b > lib/b.txt")
        .feature(
            FEAT,
            "id: FEAT-S\nname: Install\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n    dependencies: [TASK-A]\n",
        )
        .logged()
        .commit();
    assert!(!project.root.join("Cargo.toml").exists());
    let (url, commit) = git_source(&project);
    // A debug build keeps the test's compile short; the arguments are the user's to choose.
    let args = format!("--git {url} --rev {commit} --debug autobuild");
    let workflow = project.temp().join("autobuild-feat-s.yml");
    let text = emit_with(&project, "github-actions", &workflow, &args);
    assert!(
        text.contains(&format!("cargo install --locked {args}")),
        "{text}"
    );
    let mut act = Act::of(&project, workflow);
    act.path = path_without_autobuild();
    // The compiled dependencies are kept between runs of this test (scripts/ci-engines.sh's
    // cache), else in the project's temporary directory.
    let target = std::env::var("AUTOBUILD_CI_INSTALL_TARGET")
        .unwrap_or_else(|_| project.temp().join("cargo-target").display().to_string());
    forget_autobuilds_own_artifacts(Path::new(&target));
    act.env.push(("CARGO_TARGET_DIR".into(), target));
    act.env.push(("CARGO_TERM_COLOR".into(), "never".into()));

    let run = act.dispatch(&project, serde_json::json!({ "max_turns": "1" }));
    figures(&run, "the installing dispatch");

    assert!(run.ok, "{:?}", run.results);
    // Installed once, by the plan job, from exactly that commit; the other jobs ran it.
    let installs: Vec<&str> = run
        .log
        .lines()
        .filter(|l| l.contains("Installed") && l.contains("package `autobuild v"))
        .collect();
    assert_eq!(installs.len(), 1, "{installs:?}");
    assert!(
        installs[0].contains("[autobuild FEAT-S/plan]"),
        "{}",
        installs[0]
    );
    assert!(installs[0].contains(&commit[..7]), "{}", installs[0]);
    assert!(
        !run.log.contains("from the cache"),
        "act's cache stand-in always misses"
    );
    for job in ["wave 1: TASK-A", "wave 2: TASK-B", "land wave 2", "finish"] {
        assert_eq!(run.results[job], "succeeded", "{job}");
    }
    let landed = git(
        &act.remote,
        &["ls-tree", "-r", "--name-only", BRANCH, "lib"],
    );
    assert!(
        landed.contains("lib/a.txt") && landed.contains("lib/b.txt"),
        "{landed}"
    );
}

/// A feature under a hidden acceptance test (issue 26) on act: the task job provides the
/// sandbox, its run is confined, and the feature lands with the hidden test byte-identical.
#[test]
#[ignore = "needs act and bubblewrap: run scripts/ci-engines.sh"]
fn a_feature_with_a_hidden_acceptance_check_lands_with_the_hidden_test_unchanged() {
    crate::feature_fixture::require_sandbox();
    let project = engine::hidden_project();
    let original = git(
        &project.root,
        &["show", &format!("main:{}", engine::HIDDEN_TEST)],
    );
    let mut act = Act::new(&project);

    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "2", "auto_merge": "true" }),
    );
    figures(&run, "the hidden feature's dispatch");

    assert!(run.ok, "{:?}\n{}", run.results, run.log);
    assert!(
        run.log.contains(autobuild::feature::emit::sandbox::STEP),
        "{}",
        run.log
    );
    assert_eq!(project.starts("TASK-A"), 1);
    let landed = git(
        &act.remote,
        &["show", &format!("main:{}", engine::HIDDEN_TEST)],
    );
    assert_eq!(landed, original);
    let blob = |repo: &Path| {
        git(
            repo,
            &["rev-parse", &format!("main:{}", engine::HIDDEN_TEST)],
        )
    };
    assert_eq!(blob(&act.remote), blob(&project.root));
    assert_eq!(git(&act.remote, &["show", "main:lib/a.txt"]), "a\n");
    assert!(git(&act.remote, &["branch", "--list", BRANCH]).is_empty());
}

/// Where the task job has no working bubblewrap (here: hidden from autobuild), Landlock
/// confines the task instead: the task that hides paths runs confined and lands.
#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn a_task_that_hides_paths_runs_under_landlock_where_bubblewrap_cannot() {
    let project = engine::hidden_project().env("AUTOBUILD_BWRAP", "/nonexistent/bwrap");
    let mut act = Act::new(&project);

    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "2", "auto_merge": "true" }),
    );

    assert!(run.ok, "{:?}", run.results);
    assert_eq!(project.starts("TASK-A"), 1);
    assert_eq!(
        run.results["wave 1: TASK-A"], "succeeded",
        "{:?}",
        run.results
    );
    assert_eq!(git(&act.remote, &["show", "main:lib/a.txt"]), "a\n");
}

/// Where the sandbox still cannot run after the task job provided it, the run fails naming
/// why, and no agent of the task ever started: a task that hides paths never runs unconfined.
#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn a_task_that_hides_paths_fails_clearly_where_bubblewrap_cannot_run() {
    // A bubblewrap that does not exist stands for one that cannot confine, and only bwrap may
    // be used: a machine without Landlock either.
    let project = engine::hidden_project()
        .env("AUTOBUILD_BWRAP", "/nonexistent/bwrap")
        .env("AUTOBUILD_SANDBOX_BACKEND", "bwrap");
    let mut act = Act::new(&project);

    let run = act.dispatch(&project, serde_json::json!({ "max_turns": "2" }));

    assert!(!run.ok, "{:?}", run.results);
    assert_eq!(run.results["finish"], "failed", "{:?}", run.results);
    assert_eq!(project.starts("TASK-A"), 0);
    // The task job's own `autobuild task` refused the run (exit 2), saying why.
    assert_eq!(run.results["wave 1: TASK-A"], "failed", "{:?}", run.results);
    assert!(
        run.log
            .contains("[autobuild FEAT-S/wave 1: TASK-A] exit status 2"),
        "{}",
        run.log
    );
    assert!(
        run.log.contains("need the sandbox")
            && run
                .log
                .contains("AUTOBUILD_BWRAP names `/nonexistent/bwrap`"),
        "{}",
        run.log
    );
    let landed = git(&act.remote, &["ls-tree", "-r", "--name-only", "main"]);
    assert!(!landed.contains("lib/a.txt"), "{landed}");
}

#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn a_later_dispatch_runs_its_tasks_on_what_the_base_gained_since() {
    let project = project();
    let mut act = Act::new(&project);
    let first = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "1", "only": "TASK-A" }),
    );
    assert_eq!(
        first.results["wave 1: TASK-A"], "succeeded",
        "{:?}",
        first.results
    );

    // The base gains a file, and TASK-C's criterion now needs it.
    let task = act.workdir.join(".autobuild/tasks/TASK-C.md");
    let text = fs::read_to_string(&task).unwrap();
    fs::write(
        &task,
        text.replace(
            "grep -q a lib/c.txt",
            "grep -q a lib/c.txt && test -f lib/base.txt",
        ),
    )
    .unwrap();
    fs::write(act.workdir.join("lib/base.txt"), "from main\n").unwrap();
    git(&act.workdir, &["add", "-A"]);
    git(
        &act.workdir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "main gains",
        ],
    );
    git(&act.workdir, &["push", "-q", "origin", "HEAD:main"]);

    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "1", "only": "TASK-C" }),
    );

    assert!(
        run.log.contains("takes what main gained since it was made"),
        "{}",
        run.log
    );
    assert_eq!(
        run.results["wave 2: TASK-C"], "succeeded",
        "{:?}",
        run.results
    );
    let files = git(&act.remote, &["ls-tree", "-r", "--name-only", BRANCH]);
    assert!(
        files.contains("lib/base.txt")
            && files.contains("lib/c.txt")
            && files.contains("lib/a.txt"),
        "{files}"
    );
    let criterion = git(
        &act.remote,
        &["show", &format!("{BRANCH}:.autobuild/tasks/TASK-C.md")],
    );
    assert!(criterion.contains("test -f lib/base.txt"), "{criterion}");
    // The landed tasks are still the feature branch's first-parent history.
    let subjects = git(
        &act.remote,
        &["log", "--first-parent", "--format=%s", BRANCH],
    );
    assert!(subjects.contains("TASK-A: Task TASK-A"), "{subjects}");
    assert!(subjects.contains("TASK-C: Task TASK-C"), "{subjects}");
}

#[test]
#[ignore = "needs act: run scripts/ci-engines.sh"]
fn with_pull_request_the_last_landing_opens_the_features_pull_request() {
    use crate::native_fixture::{Response, Server};
    let server = Server::scripted(vec![
        Response::json(200, serde_json::json!([])),
        Response::json(
            201,
            serde_json::json!({"number": 9, "html_url": "https://github.example/acme/widgets/pull/9"}),
        ),
    ]);
    let project = project();
    let mut act = Act::new(&project);
    // The project names its forge (the test's remote is a path, not a GitHub URL).
    let config = act.workdir.join(".autobuild/config.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        format!(
            "{text}\n[forge]\nrepository = \"acme/widgets\"\napi_url = {:?}\n",
            server.url()
        ),
    )
    .unwrap();
    git(
        &act.workdir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-qam",
            "forge",
        ],
    );
    git(&act.workdir, &["push", "-q", "origin", "HEAD:main"]);
    act.secrets
        .push(("GITHUB_TOKEN".into(), "job-token".into()));

    let run = act.dispatch(
        &project,
        serde_json::json!({ "max_turns": "2", "pull_request": "true" }),
    );

    assert!(run.ok, "{:?}", run.results);
    assert!(run.log.contains("pull request #9 opened"), "{}", run.log);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(requests[1].method, "POST");
    assert_eq!(requests[1].body["head"], BRANCH);
    assert_eq!(requests[1].body["base"], "main");
    assert_eq!(
        requests[1].header("authorization"),
        Some("Bearer job-token")
    );
    // Nothing merged into main: the pull request is the landing.
    let main = git(
        &act.remote,
        &["ls-tree", "-r", "--name-only", "main", "lib"],
    );
    assert!(!main.contains("lib/a.txt"), "{main}");
}
