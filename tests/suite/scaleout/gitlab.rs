//! The emitted GitLab pipeline on a real engine: gitlab-ci-local 4.70.1 in shell mode
//! (`--shell-isolation=false`: every job runs in the one clone, as on a shell runner that
//! keeps its directory), with a bare repository as `origin`; validated first with
//! check-jsonschema's GitLab CI schema. The same checks as the act tests. Needs the tools:
//! run scripts/ci-engines.sh.

use std::fs;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::engine::{self, emit, local_tree, path_with_autobuild, project, run_logged, tree};
use super::engine::{BRANCH, FEAT};
use super::feature_fixture::{git, Project};

struct Pipeline {
    remote: PathBuf,
    workdir: PathBuf,
}

impl Pipeline {
    fn new(project: &Project) -> Pipeline {
        Pipeline::cloned(project.bare_remote(), project, "gitlab-workdir")
    }

    /// Another runner's directory: a fresh clone of `remote` named `name`.
    fn cloned(remote: PathBuf, project: &Project, name: &str) -> Pipeline {
        let workdir = project.temp().join(name);
        git(
            project.temp(),
            &[
                "clone",
                "-q",
                remote.to_str().unwrap(),
                workdir.to_str().unwrap(),
            ],
        );
        fs::write(
            workdir.join(".git/info/exclude"),
            ".gitlab-ci.yml\n.gitlab-ci-local/\n.autobuild-bin/\nrecords/\n",
        )
        .unwrap();
        emit(project, "gitlab-ci", &workdir.join(".gitlab-ci.yml"));
        Pipeline { remote, workdir }
    }

    /// Runs the whole pipeline with `variables` (as "Run pipeline" would); its success and
    /// its output.
    fn run(&self, project: &Project, variables: &[(&str, &str)]) -> (bool, String) {
        let mut command =
            Command::new(engine::tool("AUTOBUILD_GITLAB_CI_LOCAL", "gitlab-ci-local"));
        command.current_dir(&self.workdir).args([
            "--shell-isolation=false",
            "--variable",
            "CI_PIPELINE_SOURCE=web",
        ]);
        for (key, value) in variables {
            command.arg("--variable").arg(format!("{key}={value}"));
        }
        for (key, value) in project.environment() {
            command.env(key, value);
        }
        command
            .env("PATH", path_with_autobuild())
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        run_logged(command)
    }
}

#[test]
#[ignore = "needs check-jsonschema: run scripts/ci-engines.sh"]
fn the_gitlab_pipeline_matches_gitlabs_schema() {
    // The plain feature, and one whose task job provides the sandbox (hidden paths).
    for project in [project(), engine::hidden_project()] {
        let file = project.temp().join("gitlab-ci.yml");
        emit(&project, "gitlab-ci", &file);
        let mut command = Command::new(engine::tool(
            "AUTOBUILD_CHECK_JSONSCHEMA",
            "check-jsonschema",
        ));
        command
            .args(["--builtin-schema", "vendor.gitlab-ci"])
            .arg(&file);
        let (ok, output) = run_logged(command);
        assert!(ok, "{output}");
    }
}

/// A feature under a hidden acceptance test (issue 26) on gitlab-ci-local: the task job
/// provides the sandbox, its run is confined, and the feature lands with the hidden test's
/// blob unchanged.
#[test]
#[ignore = "needs gitlab-ci-local and bubblewrap: run scripts/ci-engines.sh"]
fn a_feature_with_a_hidden_acceptance_check_lands_with_the_hidden_test_unchanged() {
    super::feature_fixture::require_sandbox();
    let project = engine::hidden_project();
    let pipeline = Pipeline::new(&project);

    let (ok, log) = pipeline.run(&project, &[("MAX_TURNS", "2"), ("AUTO_MERGE", "true")]);

    assert!(ok, "{log}");
    assert!(log.contains("bubblewrap is installed"), "{log}");
    assert_eq!(project.starts("TASK-A"), 1);
    let blob = |repo: &std::path::Path| {
        git(
            repo,
            &["rev-parse", &format!("main:{}", engine::HIDDEN_TEST)],
        )
    };
    assert_eq!(blob(&pipeline.remote), blob(&project.root));
    assert_eq!(git(&pipeline.remote, &["show", "main:lib/a.txt"]), "a\n");
}

#[test]
#[ignore = "needs gitlab-ci-local: run scripts/ci-engines.sh"]
fn a_blocked_task_stops_only_its_dependants_and_a_rerun_resumes_and_merges_it() {
    let expected = local_tree();
    let project = project();
    let pipeline = Pipeline::new(&project);

    let (ok, log) = pipeline.run(&project, &[("MAX_TURNS", "1")]);

    assert_eq!(tree(&pipeline.remote, BRANCH), expected);
    assert!(!ok, "a blocked task fails the pipeline");
    let outcome = log
        .lines()
        .find(|l| l.contains("task(s) did not land"))
        .unwrap_or_else(|| panic!("no outcome line:\n{log}"));
    assert!(outcome.contains("blocked: TASK-B"), "{outcome}");
    assert!(outcome.contains("skipped: TASK-D"), "{outcome}");
    assert_eq!(project.starts("TASK-D"), 0);
    // D's job is not shown as passed: it ends with the skipped exit code, an allowed failure.
    assert!(
        log.contains("TASK-D skipped: it needs TASK-B, which did not land"),
        "{log}"
    );
    let d = log
        .lines()
        .find(|l| l.starts_with("wave-2: [TASK-D] finished in"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(d.trim_end().ends_with("WARN 8"), "{d}");
    for task in ["TASK-A", "TASK-B", "TASK-C", "TASK-E"] {
        assert_eq!(project.starts(task), 1, "{task}");
    }

    // With more turns, B's kept run goes on from turn 2 (the job directory is the same here,
    // so the run record is resumed), D follows, and the feature lands on main.
    let (ok, log) = pipeline.run(&project, &[("MAX_TURNS", "2"), ("AUTO_MERGE", "true")]);

    assert!(ok, "{log}");
    assert!(log.contains("TASK-B: resuming its blocked run"), "{log}");
    assert_eq!(project.starts("TASK-B"), 2, "resumed at turn 2");
    assert_eq!(project.starts("TASK-D"), 1);
    for task in ["TASK-A", "TASK-C", "TASK-E"] {
        assert_eq!(project.starts(task), 1, "{task}");
    }
    let main = git(
        &pipeline.remote,
        &["ls-tree", "-r", "--name-only", "main", "lib"],
    );
    for file in ["a", "b", "c", "d", "e", "never"] {
        assert!(main.contains(&format!("lib/{file}.txt")), "{main}");
    }
    assert!(log.contains(&format!("{FEAT}: every task landed")), "{log}");
}

/// The emitted pipeline beside a project's own: written to a file of its own and run as a
/// child pipeline from a job the project adds, it leaves the project's stages, jobs and
/// workflow rules alone.
#[test]
#[ignore = "needs gitlab-ci-local: run scripts/ci-engines.sh"]
fn beside_the_projects_own_pipeline_it_runs_as_a_child_pipeline() {
    let project = project();
    let pipeline = Pipeline::new(&project);
    fs::remove_file(pipeline.workdir.join(".gitlab-ci.yml")).unwrap();
    fs::create_dir_all(pipeline.workdir.join(".gitlab")).unwrap();
    emit(
        &project,
        "gitlab-ci",
        &pipeline.workdir.join(".gitlab/autobuild.yml"),
    );
    fs::write(
        pipeline.workdir.join(".gitlab-ci.yml"),
        "stages: [test, autobuild]\n\
         unit-tests:\n  stage: test\n  script: [echo \"the project's own unit tests ran\"]\n\
         autobuild:\n  stage: autobuild\n  trigger:\n    include: .gitlab/autobuild.yml\n    strategy: depend\n    forward:\n      pipeline_variables: true\n",
    )
    .unwrap();
    // The project's own pipeline is committed, as it would be (a local include is read from
    // the commit).
    fs::write(
        pipeline.workdir.join(".git/info/exclude"),
        ".gitlab-ci-local/\n.autobuild-bin/\nrecords/\n",
    )
    .unwrap();
    git(&pipeline.workdir, &["add", ".gitlab-ci.yml", ".gitlab"]);
    git(
        &pipeline.workdir,
        &[
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "-m",
            "CI",
        ],
    );

    let (ok, log) = pipeline.run(&project, &[("MAX_TURNS", "2")]);

    assert!(ok, "{log}");
    assert!(log.contains("the project's own unit tests ran"), "{log}");
    for file in ["a", "b", "c", "d", "e"] {
        assert!(
            git(&pipeline.remote, &["ls-tree", "-r", "--name-only", BRANCH])
                .contains(&format!("lib/{file}.txt")),
            "lib/{file}.txt"
        );
    }
}

#[test]
#[ignore = "needs gitlab-ci-local: run scripts/ci-engines.sh"]
fn with_pull_request_the_last_landing_opens_the_features_merge_request() {
    use crate::native_fixture::{Response, Server};
    let server = Server::scripted(vec![
        Response::json(200, serde_json::json!([])),
        Response::json(
            201,
            serde_json::json!({"iid": 4, "web_url": "https://gitlab.example/acme/widgets/-/merge_requests/4"}),
        ),
    ]);
    let project = project();
    let pipeline = Pipeline::new(&project);
    let config = pipeline.workdir.join(".autobuild/config.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        format!(
            "{text}\n[forge]\nkind = \"gitlab\"\nrepository = \"acme/widgets\"\napi_url = {:?}\n",
            server.url()
        ),
    )
    .unwrap();
    git(
        &pipeline.workdir,
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

    let (ok, log) = pipeline.run(
        &project,
        &[
            ("MAX_TURNS", "2"),
            ("PULL_REQUEST", "true"),
            ("GITLAB_TOKEN", "api-token"),
        ],
    );

    assert!(ok, "{log}");
    assert!(log.contains("merge request #4 opened"), "{log}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(requests[1].path, "/projects/acme%2Fwidgets/merge_requests");
    assert_eq!(requests[1].header("private-token"), Some("api-token"));
    assert_eq!(requests[1].body["source_branch"], BRANCH);
    assert_eq!(requests[1].body["target_branch"], "main");
}

/// The runner's cancellation of a task job, which gitlab-ci-local cannot do: once the Player
/// of TASK-A's second turn writes its pid to `mark`, this stops autobuild (its ancestor) with
/// SIGTERM, as a runner stops a cancelled job's processes, waits for it to end, then kills
/// every shell of the job's script above it (up to gitlab-ci-local's node), so the script never
/// reaches its own push. (The Player cannot do it itself: autobuild, a subreaper, stops every
/// process an agent leaves behind.)
/// Gives up when `ended` is set (the pipeline ended first); returns whether it cancelled.
fn cancel_when_marked(
    mark: PathBuf,
    ended: std::sync::Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<bool> {
    std::thread::spawn(move || {
        let player: u32 = loop {
            if let Some(pid) = fs::read_to_string(&mark)
                .ok()
                .and_then(|s| s.trim().parse().ok())
            {
                break pid;
            }
            if ended.load(std::sync::atomic::Ordering::SeqCst) {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        };
        let parent = |pid: u32| -> u32 {
            let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
            after
                .split(' ')
                .nth(1)
                .and_then(|p| p.parse().ok())
                .unwrap_or(1)
        };
        let comm = |pid: u32| fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        let (mut autobuild, mut shells, mut pid) = (None, Vec::new(), player);
        while pid > 1 && comm(parent(pid)).trim() != "node" {
            if comm(pid).trim() == "autobuild" {
                autobuild = Some(pid);
            } else if autobuild.is_some() {
                shells.push(pid);
            }
            pid = parent(pid);
        }
        let autobuild = autobuild
            .expect("the Player runs under autobuild")
            .to_string();
        let kill = |signal: &str, pid: &str| {
            let _ = Command::new("kill").args([signal, pid]).status();
        };
        kill("-TERM", &autobuild);
        while std::path::Path::new(&format!("/proc/{autobuild}")).exists() {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        for shell in shells {
            kill("-KILL", &shell.to_string());
        }
        true
    })
}

/// A task job cancelled in its second turn keeps its branch and run from the after-script,
/// and the next dispatch, on another runner's fresh clone, resumes the run at that turn.
#[test]
#[ignore = "needs gitlab-ci-local: run scripts/ci-engines.sh"]
fn a_cancelled_task_job_keeps_its_run_and_the_next_dispatch_resumes_it() {
    let marks = tempfile::tempdir().unwrap();
    let mark = marks.path().join("cancel-me");
    let project = Project::new()
        .sandbox_mode("off")
        .task(
            "TASK-A",
            "test -f lib/two.txt",
            &format!(
                "echo a > lib/a.txt\n\
                 if [ \"$AUTOBUILD_TURN\" -ge 2 ]; then\n\
                 if [ ! -e {mark:?} ]; then echo $$ > {mark:?}.new; mv {mark:?}.new {mark:?}; sleep 120; fi\n\
                 echo 2 > lib/two.txt\nfi\n"
            ),
        )
        .feature(FEAT, "id: FEAT-S\nname: Cancelled\ntasks:\n  - id: TASK-A\n")
        .logged()
        .commit();
    let pipeline = Pipeline::new(&project);
    let ended = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let cancel = cancel_when_marked(mark, ended.clone());

    let (ok, log) = pipeline.run(&project, &[("MAX_TURNS", "3")]);

    ended.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(
        cancel.join().unwrap(),
        "the job was never cancelled:\n{log}"
    );
    assert!(!ok, "the cancelled job fails the pipeline:\n{log}");
    assert!(log.contains("TASK-A: the job ended"), "{log}");
    let heads = git(&pipeline.remote, &["branch", "--list"]);
    assert!(heads.contains("autobuild-runs/TASK-A"), "{heads}");
    assert!(heads.contains("autobuild/TASK-A"), "{heads}");

    let other = Pipeline::cloned(pipeline.remote.clone(), &project, "gitlab-workdir-2");
    let (ok, log) = other.run(&project, &[("MAX_TURNS", "3")]);

    assert!(ok, "{log}");
    assert!(log.contains("TASK-A: resuming its blocked run"), "{log}");
    let turns: Vec<u32> = project
        .log()
        .iter()
        .filter(|(event, task, _, _)| event == "start" && task == "TASK-A")
        .map(|(_, _, turn, _)| *turn)
        .collect();
    assert_eq!(turns, [1, 2, 2], "turn 1 is not paid for again");
    assert_eq!(
        git(
            &pipeline.remote,
            &["show", &format!("{BRANCH}:lib/two.txt")]
        ),
        "2\n"
    );
}

/// A dispatch after the base gained commits runs its tasks on them: the feature branch takes
/// what main gained (here, a file and a stricter criterion) before TASK-C runs.
#[test]
#[ignore = "needs gitlab-ci-local: run scripts/ci-engines.sh"]
fn a_later_dispatch_runs_its_tasks_on_what_the_base_gained_since() {
    let project = project();
    let pipeline = Pipeline::new(&project);
    let (_, log) = pipeline.run(&project, &[("MAX_TURNS", "1"), ("ONLY_TASKS", "TASK-A")]);
    let landed = git(&pipeline.remote, &["ls-tree", "-r", "--name-only", BRANCH]);
    assert!(landed.contains("lib/a.txt"), "{log}");

    // The base gains a file, and TASK-C's criterion now needs it.
    let task = pipeline.workdir.join(".autobuild/tasks/TASK-C.md");
    let text = fs::read_to_string(&task).unwrap();
    let stricter = "grep -q a lib/c.txt && test -f lib/base.txt";
    fs::write(&task, text.replace("grep -q a lib/c.txt", stricter)).unwrap();
    fs::write(pipeline.workdir.join("lib/base.txt"), "from main\n").unwrap();
    git(&pipeline.workdir, &["add", "-A"]);
    git(&pipeline.workdir, &["commit", "-q", "-m", "main gains"]);
    git(&pipeline.workdir, &["push", "-q", "origin", "HEAD:main"]);

    let (_, log) = pipeline.run(&project, &[("MAX_TURNS", "1"), ("ONLY_TASKS", "TASK-C")]);

    assert!(
        log.contains("takes what main gained since it was made"),
        "{log}"
    );
    let c = log
        .lines()
        .find(|l| l.starts_with("wave-2: [TASK-C] finished in"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(!c.contains("FAIL") && !c.contains("WARN"), "{c}");
    let files = git(&pipeline.remote, &["ls-tree", "-r", "--name-only", BRANCH]);
    for file in ["lib/base.txt", "lib/c.txt", "lib/a.txt"] {
        assert!(files.contains(file), "{file} in {files}");
    }
    let criterion = git(
        &pipeline.remote,
        &["show", &format!("{BRANCH}:.autobuild/tasks/TASK-C.md")],
    );
    assert!(criterion.contains("test -f lib/base.txt"), "{criterion}");
    let subjects = git(
        &pipeline.remote,
        &["log", "--first-parent", "--format=%s", BRANCH],
    );
    assert!(subjects.contains("TASK-A: Task TASK-A"), "{subjects}");
    assert!(subjects.contains("TASK-C: Task TASK-C"), "{subjects}");
}
