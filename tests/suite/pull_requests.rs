//! `--pr` (docs/pull-requests.md): an approved run is pushed to a real bare
//! remote and its pull request opened or updated through a scripted GitHub / GitLab API on
//! 127.0.0.1 that records every request; nothing is merged locally, the token reaches no agent.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;

use crate::loop_fixture::{assert_exit, Project, TASK};
use crate::native_fixture::{Response, Server};

const TOKEN: &str = "forge-token-123";

/// The loop fixture's project with `origin`, a bare repository beside it that has `main`, and
/// `[forge]` pointing at `server` with `kind`.
fn project(server: &Server, kind: &str) -> (Project, PathBuf) {
    project_with(server, kind, Some(TOKEN))
}

fn project_with(server: &Server, kind: &str, token: Option<&str>) -> (Project, PathBuf) {
    let project = Project::new().player("player_checks_token.sh");
    let report = project.outside("token-report");
    let project = project
        .config(&format!(
            "\n[forge]\nkind = {kind:?}\nrepository = \"acme/widgets\"\napi_url = {:?}\ntoken_env = \"ACME_FORGE_TOKEN\"\n",
            server.url()
        ))
        .env("ACME_FORGE_TOKEN", token.unwrap_or(""))
        .env("TOKEN_REPORT", report.to_str().unwrap())
        .commit();
    let remote = project.root.parent().unwrap().join("origin.git");
    git(
        project.root.parent().unwrap(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    project.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    project.git(&["push", "-q", "origin", "main"]);
    (project, remote)
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn remote_tip(remote: &Path, branch: &str) -> Option<String> {
    let out = std::process::Command::new("git")
        .args([
            "rev-parse",
            "--verify",
            "-q",
            &format!("refs/heads/{branch}"),
        ])
        .current_dir(remote)
        .output()
        .unwrap();
    out.status
        .success()
        .then(|| String::from_utf8(out.stdout).unwrap().trim().to_string())
}

/// The files under `dir` whose bytes hold `text`.
fn files_holding(dir: &Path, text: &str) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_holding(&path, text));
        } else if fs::read(&path).is_ok_and(|b| b.windows(text.len()).any(|w| w == text.as_bytes()))
        {
            found.push(path);
        }
    }
    found
}

fn github_pr(number: u64) -> serde_json::Value {
    json!({"number": number, "html_url": format!("https://github.example/acme/widgets/pull/{number}")})
}

#[test]
fn an_approved_run_is_pushed_and_its_pull_request_opened_then_updated() {
    let server = Server::scripted(vec![
        Response::json(200, json!([])),
        Response::json(201, github_pr(42)),
        // `complete --pr` later: the pull request is open, so it is updated.
        Response::json(200, json!([github_pr(42)])),
        Response::json(200, github_pr(42)),
    ]);
    let (project, remote) = project(&server, "github");
    let main_before = project.git(&["rev-parse", "main"]);

    let output = project.run(&["task", TASK, "--pr"]);

    assert_exit(&output, 0);
    let state = project.state();
    let approved = state["last_checkpoint"].as_str().unwrap().to_string();
    assert_eq!(
        remote_tip(&remote, "autobuild/TASK-1").as_deref(),
        Some(approved.as_str())
    );
    assert_eq!(state["status"], "approved");
    assert_eq!(state["pr"]["number"], 42);
    assert_eq!(
        state["pr"]["url"],
        "https://github.example/acme/widgets/pull/42"
    );
    assert_eq!(state["pr"]["head"], approved.as_str());
    // Nothing merged locally.
    assert_eq!(project.git(&["rev-parse", "main"]), main_before);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].path,
        "/repos/acme/widgets/pulls?state=open&head=acme%3Aautobuild%2FTASK-1&base=main"
    );
    assert_eq!(requests[1].method, "POST");
    assert_eq!(requests[1].path, "/repos/acme/widgets/pulls");
    assert_eq!(
        requests[1].header("authorization"),
        Some(format!("Bearer {TOKEN}").as_str())
    );
    let body = &requests[1].body;
    assert_eq!(body["head"], "autobuild/TASK-1");
    assert_eq!(body["base"], "main");
    assert_eq!(body["title"], "TASK-1: Add a greeting function");
    let text = body["body"].as_str().unwrap();
    assert!(
        text.starts_with("# TASK-1: Add a greeting function"),
        "{text}"
    );
    assert!(text.contains("## Turns"), "{text}");
    assert!(!text.contains("Worktree"), "{text}");
    // The token reached no agent, and is in no record.
    assert_eq!(
        fs::read_to_string(project.outside("token-report")).unwrap(),
        "absent"
    );
    assert_eq!(
        files_holding(&project.root.join(".autobuild/runs"), TOKEN),
        Vec::<PathBuf>::new()
    );
    let status = project.run(&["status", TASK]);
    let shown = String::from_utf8_lossy(&status.stdout);
    assert!(
        shown.contains("#42 https://github.example/acme/widgets/pull/42"),
        "{shown}"
    );

    let again = project.run(&["complete", TASK, "--pr", "--json"]);

    assert_exit(&again, 0);
    let landed: serde_json::Value = serde_json::from_slice(&again.stdout).unwrap();
    assert_eq!(landed["pr"]["number"], 42);
    assert_eq!(landed["pr"]["opened"], false);
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "{requests:#?}");
    assert_eq!(
        (requests[3].method.as_str(), requests[3].path.as_str()),
        ("PATCH", "/repos/acme/widgets/pulls/42")
    );
    assert_eq!(
        remote_tip(&remote, "autobuild/TASK-1").as_deref(),
        Some(approved.as_str())
    );
}

#[test]
fn gitlab_gets_a_merge_request_and_a_rate_limit_is_waited_out() {
    let server = Server::scripted(vec![
        Response::json(429, json!({"message": "429 Too Many Requests"})).header("retry-after", "0"),
        Response::json(200, json!([])),
        Response::json(
            201,
            json!({"iid": 5, "id": 901, "web_url": "https://gitlab.example/acme/widgets/-/merge_requests/5"}),
        ),
    ]);
    let (project, remote) = project(&server, "gitlab");

    let output = project.run(&["task", TASK, "--pr"]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["pr"]["number"], 5);
    assert_eq!(project.state()["pr"]["forge"], "gitlab");
    assert!(remote_tip(&remote, "autobuild/TASK-1").is_some());
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{requests:#?}");
    assert_eq!(
        requests[0].path, requests[1].path,
        "asked again after the 429"
    );
    assert_eq!(
        requests[1].path,
        "/projects/acme%2Fwidgets/merge_requests?state=opened&source_branch=autobuild%2FTASK-1&target_branch=main"
    );
    assert_eq!(requests[2].path, "/projects/acme%2Fwidgets/merge_requests");
    assert_eq!(requests[2].header("private-token"), Some(TOKEN));
    assert_eq!(requests[2].body["source_branch"], "autobuild/TASK-1");
    assert_eq!(requests[2].body["target_branch"], "main");
}

#[test]
fn without_a_token_nothing_is_pushed_or_opened_and_the_run_stays_approved() {
    let server = Server::scripted(vec![]);
    let (project, remote) = project_with(&server, "github", None);

    let output = project.run(&["task", TASK, "--pr"]);

    // Approved, but the asked-for landing did not happen.
    assert_exit(&output, 7);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("ACME_FORGE_TOKEN"), "{stderr}");
    assert_eq!(project.state()["status"], "approved");
    assert!(project.state().get("pr").is_none());
    assert!(remote_tip(&remote, "autobuild/TASK-1").is_none());
    assert!(server.requests().is_empty());
}

#[test]
fn a_branch_someone_else_pushed_to_is_never_overwritten() {
    let server = Server::scripted(vec![]);
    let (project, remote) = project(&server, "github");
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);

    // Someone pushes their own commit to the branch before the run lands.
    let theirs = project.git(&["rev-parse", "main"]).trim().to_string();
    project.git(&["push", "-q", "origin", "main:refs/heads/autobuild/TASK-1"]);
    let refused = project.run(&["complete", TASK, "--pr"]);

    assert_exit(&refused, 1);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("someone else pushed to it"), "{stderr}");
    assert_eq!(
        remote_tip(&remote, "autobuild/TASK-1").as_deref(),
        Some(theirs.as_str())
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_finished_feature_lands_as_one_pull_request_of_its_branch() {
    let server = Server::scripted(vec![
        Response::json(200, json!([])),
        Response::json(201, github_pr(7)),
    ]);
    let project = crate::feature_fixture::Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .task("TASK-B", "test -f lib/b.txt", "echo b > lib/b.txt")
        .feature(
            "FEAT-P",
            "id: FEAT-P\nname: Two files\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n",
        )
        .env("ACME_FORGE_TOKEN", TOKEN);
    let config = project.root.join(".autobuild/config.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        format!(
            "{text}\n[forge]\nrepository = \"acme/widgets\"\napi_url = {:?}\ntoken_env = \"ACME_FORGE_TOKEN\"\n",
            server.url()
        ),
    )
    .unwrap();
    let project = project.commit();
    let remote = project.root.parent().unwrap().join("origin.git");
    git(
        project.root.parent().unwrap(),
        &["init", "-q", "--bare", remote.to_str().unwrap()],
    );
    project.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    let main_before = project.git(&["rev-parse", "main"]);

    let output = project.run(&["feature", "FEAT-P", "--pr", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-P");
    assert_eq!(state["status"], "approved");
    assert_eq!(state["pr"]["number"], 7);
    assert_eq!(state["pr"]["branch"], "autobuild/FEAT-P");
    let tip = project
        .git(&["rev-parse", "autobuild/FEAT-P"])
        .trim()
        .to_string();
    assert_eq!(
        remote_tip(&remote, "autobuild/FEAT-P").as_deref(),
        Some(tip.as_str())
    );
    // The tasks landed on the feature branch only; no task opened a pull request of its own.
    assert!(remote_tip(&remote, "autobuild/TASK-A").is_none());
    assert_eq!(project.git(&["rev-parse", "main"]), main_before);
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:#?}");
    assert_eq!(requests[1].body["head"], "autobuild/FEAT-P");
    assert_eq!(requests[1].body["title"], "FEAT-P: Two files");
    let text = requests[1].body["body"].as_str().unwrap();
    assert!(text.contains("TASK-A") && text.contains("TASK-B"), "{text}");
    assert!(project.report("FEAT-P").contains("its pull request is #7"));
}
