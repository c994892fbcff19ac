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
        let remote = project.bare_remote();
        let workdir = project.temp().join("gitlab-workdir");
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
