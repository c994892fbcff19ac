//! CI credentials (module `autobuild::sandbox::secrets`): a GitLab job's token and the
//! emitted pipeline's push token are in the environment of the job that runs autobuild, and
//! an agent must not find them — not in its own environment, and, confined, not in the
//! `/proc/<pid>/environ` of the runner or the job's shell either (a process namespace of its
//! own). docs/scale-out.md says what remains unconfined.

use crate::loop_fixture::{assert_exit, outside_system_tmp, Project, TASK};

const JOB_TOKEN: &str = "glcbt-job-token-4b1d";
const PUSH_TOKEN: &str = "glpat-push-token-9e7c";
/// Forge tokens a user keeps for their CLIs, each with a value of its own.
const FORGE_TOKENS: [(&str, &str); 5] = [
    ("GITLAB_TOKEN", "glpat-user-token-1a2b"),
    ("GH_TOKEN", "ghp-user-token-3c4d"),
    ("GITEA_TOKEN", "gitea-user-token-5e6f"),
    ("FORGEJO_TOKEN", "forgejo-user-token-7a8b"),
    ("BITBUCKET_TOKEN", "bb-user-token-9c0d"),
];

/// A project whose player writes what it can see to a file; autobuild runs with both tokens.
fn project(mode: &str) -> (Project, std::path::PathBuf) {
    let project = Project::new_in(&outside_system_tmp())
        .sandbox_mode(mode)
        .player("player_reads_secrets.sh");
    let seen = project.outside("seen.txt");
    let project = project
        .env("SEEN_FILE", seen.to_str().unwrap())
        .env("CI_JOB_TOKEN", JOB_TOKEN)
        .env("AUTOBUILD_PUSH_TOKEN", PUSH_TOKEN)
        .env(
            "CI_REPOSITORY_URL",
            &format!("https://gitlab-ci-token:{JOB_TOKEN}@gitlab.example/g/p.git"),
        );
    let project = FORGE_TOKENS
        .iter()
        .fold(project, |project, (name, value)| project.env(name, value))
        .commit();
    (project, seen)
}

/// The `env` part and the `/proc` part of what the player wrote.
fn seen(file: &std::path::Path) -> (String, String) {
    let text = std::fs::read_to_string(file).unwrap();
    let (env, proc) = text.split_once("\n== read /proc/").unwrap_or((&text, ""));
    (env.to_string(), proc.to_string())
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_sandboxed_agent_finds_no_ci_token_in_its_environment_or_in_proc() {
    crate::support::require_sandbox();
    let (project, file) = project("on");

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let (env, proc) = seen(&file);
    // It did look: its own environment, and at least its own processes' environ files.
    assert!(env.contains("SEEN_FILE="), "{env}");
    assert!(!proc.is_empty(), "the player read no /proc/<pid>/environ");
    let forge = FORGE_TOKENS.iter().map(|(_, value)| *value);
    for token in [JOB_TOKEN, PUSH_TOKEN].into_iter().chain(forge) {
        assert!(!env.contains(token), "{token} in the agent's environment");
        assert!(!proc.contains(token), "{token} in a /proc environ:\n{proc}");
    }
    assert!(!env.contains("CI_REPOSITORY_URL="), "{env}");
}

#[test]
fn an_unconfined_agent_finds_no_ci_token_in_its_environment() {
    let (project, file) = project("off");

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let (env, _) = seen(&file);
    assert!(env.contains("SEEN_FILE="), "{env}");
    let forge = FORGE_TOKENS.iter().map(|(_, value)| *value);
    for token in [JOB_TOKEN, PUSH_TOKEN].into_iter().chain(forge) {
        assert!(
            !env.contains(token),
            "{token} in the agent's environment:\n{env}"
        );
    }
}
