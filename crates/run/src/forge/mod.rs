//! Landing through a pull request (`--pr`, docs/pull-requests.md): the approved commit is pushed
//! to `[forge] remote` as the run's branch, and a pull request (GitHub) or merge request
//! (GitLab) is opened against the base — or, when one is open for the branch already, its title
//! and text are brought up to date. Nothing is merged locally.
//!
//! What is pushed is exactly the commit the gates approved. The push never overwrites commits
//! someone else put on the remote branch ([`lease`]): it goes ahead only while the remote
//! branch is absent, already at the commit, or at a commit an earlier run of the task pushed.
//! The token is read from `[forge] token_env` by this process only; no child gets it
//! ([`process::secrets::withhold`]), and it is in no record.

pub mod api;

use std::path::Path;
use std::time::{Duration, Instant};

use base::Keyword;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use agents::native::http::{self, Bounds, Request};
use api::{Found, Reading, Target};
use base::error::Error;
use git::Repo;
use model::project::{config::forge::repository_of_url, ForgeConfig, ForgeKind};

/// How long one API call may take.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Calls made for one request at most: the first and two more after a rate limit or a
/// failure of the forge's own.
const ATTEMPTS: u32 = 3;
/// The longest pause a `Retry-After` gets; a longer one fails the call (with the API's words).
const LONGEST_PAUSE: Duration = Duration::from_secs(60);
/// GitHub refuses a pull request text longer than 65,536 characters.
const MAX_BODY_CHARS: usize = 60_000;

/// The pull request a run landed as (`state.json`'s `pr`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PullRequest {
    pub forge: ForgeKind,
    /// The pull request's number (GitLab: the merge request's `iid`).
    pub number: u64,
    pub url: String,
    /// The branch pushed, and the base it asks to be merged into.
    pub branch: String,
    pub base: String,
    /// The commit pushed: the one the gates approved.
    pub head: String,
    /// Whether this landing opened it (else it was open already and was updated).
    pub opened: bool,
}

/// What to land as a pull request.
pub struct PrRequest<'a> {
    pub repo: &'a Repo,
    /// The project's config: its `[forge]`, else the defaults of [`settings`].
    pub config: &'a model::project::Config,
    pub branch: &'a str,
    pub base: &'a str,
    /// The approved commit.
    pub commit: &'a str,
    pub title: &'a str,
    pub body: &'a str,
    /// Commits earlier landings of this task pushed to the branch (its own earlier runs').
    pub pushed_before: &'a [String],
}

/// Why no pull request was opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForgeError {
    #[error("no token for the {forge} API: `{var}` is not set")]
    NoToken { forge: &'static str, var: String },
    #[error("this repository has no remote `{0}` to push to")]
    NoRemote(String),
    #[error("cannot tell the repository from remote `{remote}`'s URL `{url}`")]
    NoRepository { remote: String, url: String },
    #[error("`{branch}` on `{remote}` is at {theirs}, a commit no run of this task pushed: someone else pushed to it")]
    Diverged {
        remote: String,
        branch: String,
        theirs: String,
    },
    #[error("pushing `{branch}` to `{remote}` was refused: {why}")]
    Push {
        remote: String,
        branch: String,
        why: String,
    },
    #[error("the {forge} API refused the token ({url})")]
    Unauthorized { forge: &'static str, url: String },
    #[error("the {forge} API has no repository `{repository}` for this token ({url})")]
    NotFound {
        forge: &'static str,
        repository: String,
        url: String,
    },
    #[error("the {forge} API answered {method} {url} with {message}")]
    Refused {
        forge: &'static str,
        method: &'static str,
        url: String,
        message: String,
    },
    #[error("cannot reach the {forge} API: {why}")]
    Unreachable { forge: &'static str, why: String },
}

impl ForgeError {
    /// The fix, shown under the message.
    pub fn help(&self) -> Option<String> {
        Some(match self {
            ForgeError::NoToken { var, .. } => format!(
                "export {var} (a token that may push and open pull requests), or name another \
                 variable with `[forge] token_env` in .autobuild/config.toml"
            ),
            ForgeError::NoRemote(remote) => format!(
                "add it with `git remote add {remote} URL`, or name another with `[forge] remote`"
            ),
            ForgeError::NoRepository { .. } => {
                "set `[forge] repository = \"owner/name\"` in .autobuild/config.toml".to_string()
            }
            ForgeError::Diverged { branch, .. } => format!(
                "fetch it and look (`git fetch origin {branch}`); delete the remote branch to \
                 push anew; nothing was overwritten"
            ),
            ForgeError::Unauthorized { .. } => {
                "check the token's scopes: it must push and open pull requests".to_string()
            }
            ForgeError::NotFound { .. } => {
                "check `[forge] repository` and `api_url`, and that the token can see the repository"
                    .to_string()
            }
            ForgeError::Push { .. } | ForgeError::Refused { .. } | ForgeError::Unreachable { .. } => {
                return None
            }
        })
    }
}

impl From<ForgeError> for Error {
    fn from(error: ForgeError) -> Error {
        let help = error.help();
        let error = Error::runtime(error.to_string());
        match help {
            Some(help) => error.with_help(help),
            None => error,
        }
    }
}

/// What a push does, given where the remote branch is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lease {
    /// The remote branch is at the commit already.
    UpToDate,
    /// Push while the remote branch is at this commit (`None`: while it does not exist).
    Push(Option<String>),
    /// Someone else's commit is there: push nothing.
    Refuse(String),
}

/// The push to make when the remote branch is at `theirs`.
pub fn lease(theirs: Option<&str>, commit: &str, pushed_before: &[String]) -> Lease {
    match theirs {
        None => Lease::Push(None),
        Some(theirs) if theirs == commit => Lease::UpToDate,
        Some(theirs) if pushed_before.iter().any(|c| c == theirs) => {
            Lease::Push(Some(theirs.to_string()))
        }
        Some(theirs) => Lease::Refuse(theirs.to_string()),
    }
}

/// The pull request text: `body` cut to what every forge takes, saying so.
pub fn body_text(body: &str) -> String {
    let footer = "\n\n---\nOpened by autobuild: the checks, criteria and reviewers above approved exactly this branch's head.";
    if body.chars().count() <= MAX_BODY_CHARS {
        return format!("{body}{footer}");
    }
    let cut: String = body.chars().take(MAX_BODY_CHARS).collect();
    format!("{cut}\n\n… (cut: the whole report is the run's `report.md`){footer}")
}

/// Pushes the approved commit and opens (or updates) its pull request.
pub fn open_or_update(request: &PrRequest<'_>) -> Result<PullRequest, ForgeError> {
    let forge = &settings(request.config);
    let kind = forge.kind;
    let var = forge.token_env();
    let token = std::env::var(var)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| ForgeError::NoToken {
            forge: kind.as_str(),
            var: var.to_string(),
        })?;
    let remote = forge.remote();
    let url = request
        .repo
        .remote_url(remote)
        .map_err(|e| push_error(remote, request.branch, &e))?
        .ok_or_else(|| ForgeError::NoRemote(remote.to_string()))?;
    let repository = match &forge.repository {
        Some(repository) => repository.clone(),
        None => repository_of_url(&url).ok_or_else(|| ForgeError::NoRepository {
            remote: remote.to_string(),
            url: url.clone(),
        })?,
    };
    let theirs = request
        .repo
        .remote_branch_tip(remote, request.branch)
        .map_err(|e| push_error(remote, request.branch, &e))?;
    match lease(theirs.as_deref(), request.commit, request.pushed_before) {
        Lease::UpToDate => {}
        Lease::Push(expected) => request
            .repo
            .push_commit(remote, request.commit, request.branch, expected.as_deref())
            .map_err(|e| push_error(remote, request.branch, &e))?,
        Lease::Refuse(theirs) => {
            return Err(ForgeError::Diverged {
                remote: remote.to_string(),
                branch: request.branch.to_string(),
                theirs,
            })
        }
    }
    let target = Target {
        kind,
        api: forge.api_url(),
        repository: &repository,
        branch: request.branch,
        base: request.base,
    };
    let client = Client {
        target: &target,
        token: &token,
    };
    let body = body_text(request.body);
    let (found, opened) = match client
        .call(&target.find())?
        .and_then(|a| target.read_found(&a))
    {
        Some(open) => {
            let call = target.update(open.number, request.title, &body);
            let answer = client.call(&call)?;
            (
                answer.and_then(|a| target.read_one(&a)).unwrap_or(open),
                false,
            )
        }
        None => {
            let call = target.create(request.title, &body);
            let answer = client.call(&call)?;
            let found = answer
                .and_then(|a| target.read_one(&a))
                .ok_or_else(|| unreadable(&target, &call))?;
            (found, true)
        }
    };
    let Found { number, url } = found;
    Ok(PullRequest {
        forge: kind,
        number,
        url,
        branch: request.branch.to_string(),
        base: request.base.to_string(),
        head: request.commit.to_string(),
        opened,
    })
}

fn unreadable(target: &Target<'_>, call: &api::Call) -> ForgeError {
    ForgeError::Refused {
        forge: target.kind.as_str(),
        method: call.method,
        url: call.url.clone(),
        message: format!("an answer that names no {}", target.kind.request_name()),
    }
}

fn push_error(remote: &str, branch: &str, error: &git::GitError) -> ForgeError {
    let why = match error {
        git::GitError::Io { source, .. } => source.to_string(),
        other => other.to_string(),
    };
    ForgeError::Push {
        remote: remote.to_string(),
        branch: branch.to_string(),
        why,
    }
}

struct Client<'a> {
    target: &'a Target<'a>,
    token: &'a str,
}

impl Client<'_> {
    /// Makes `call`, again after a rate limit or the forge's own failure (at most [`ATTEMPTS`]
    /// times, pausing as `Retry-After` says, else 1 s, then 2 s); the answer's JSON.
    fn call(&self, call: &api::Call) -> Result<Option<Value>, ForgeError> {
        let forge = self.target.kind.as_str();
        let mut attempt = 1;
        loop {
            let request = Request {
                method: call.method,
                url: call.url.clone(),
                headers: self.target.headers(self.token),
                body: call
                    .body
                    .as_ref()
                    .map(|body| http::Body::json(body.to_string())),
            };
            let bounds = Bounds {
                deadline: Instant::now() + CALL_TIMEOUT,
                idle: None,
            };
            let answer = http::exchange(request, &bounds, &process::CancelToken::new()).map_err(
                |failure| ForgeError::Unreachable {
                    forge,
                    why: match failure {
                        http::Failure::Transport(e) => e.to_string(),
                        http::Failure::Stopped(_) => {
                            format!(
                                "{} {} took over {}s",
                                call.method,
                                call.url,
                                CALL_TIMEOUT.as_secs()
                            )
                        }
                    },
                },
            )?;
            match api::read_status(answer.status, &answer.body) {
                Reading::Ok => return Ok(serde_json::from_str(&answer.body).ok()),
                Reading::Retry if attempt < ATTEMPTS => {
                    let pause = answer
                        .retry_after
                        .unwrap_or(Duration::from_secs(u64::from(attempt)));
                    if pause <= LONGEST_PAUSE {
                        std::thread::sleep(pause);
                        attempt += 1;
                        continue;
                    }
                }
                Reading::Retry => {}
                Reading::Unauthorized => {
                    return Err(ForgeError::Unauthorized {
                        forge,
                        url: call.url.clone(),
                    })
                }
                Reading::NotFound => {
                    return Err(ForgeError::NotFound {
                        forge,
                        repository: self.target.repository.to_string(),
                        url: call.url.clone(),
                    })
                }
                Reading::Refused(message) => {
                    return Err(ForgeError::Refused {
                        forge,
                        method: call.method,
                        url: call.url.clone(),
                        message,
                    })
                }
            }
            let message = match api::message_of(&answer.body) {
                m if m.is_empty() => format!("HTTP {}", answer.status),
                m => format!("HTTP {}: {m}", answer.status),
            };
            return Err(ForgeError::Refused {
                forge,
                method: call.method,
                url: call.url.clone(),
                message: format!("{message} (asked {attempt} times)"),
            });
        }
    }
}

/// The commits earlier runs of `task_id` pushed (`pr.head` of each `<ID>@<N>` run kept in
/// `runs_dir`), for [`lease`].
pub fn pushed_before(runs_dir: &Path, task_id: &str) -> Vec<String> {
    let prefix = format!("{task_id}@");
    let Ok(entries) = std::fs::read_dir(runs_dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .filter_map(|e| crate::engine::state::RunState::load(&e.path().join("state.json")).ok())
        .filter_map(|state| state.pr.map(|pr| pr.head))
        .collect()
}

/// The forge settings of a project: `[forge]`; else, in a GitLab CI job, the GitLab it runs on
/// (`CI_API_V4_URL`, `CI_PROJECT_PATH`); else GitHub's defaults.
pub fn settings(config: &model::project::Config) -> ForgeConfig {
    if let Some(forge) = &config.forge {
        return forge.clone();
    }
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    match (
        var("GITLAB_CI"),
        var("CI_API_V4_URL"),
        var("CI_PROJECT_PATH"),
    ) {
        (Some(_), Some(api), Some(project)) => ForgeConfig {
            kind: ForgeKind::Gitlab,
            api_url: Some(api),
            repository: Some(project),
            ..ForgeConfig::default()
        },
        _ => ForgeConfig {
            kind: ForgeKind::Github,
            ..ForgeConfig::default()
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_push_never_overwrites_a_commit_no_run_of_the_task_pushed() {
        let ours = vec!["old".to_string()];
        let cases = [
            (None, Lease::Push(None)),
            (Some("new"), Lease::UpToDate),
            (Some("old"), Lease::Push(Some("old".into()))),
            (Some("theirs"), Lease::Refuse("theirs".into())),
        ];
        for (theirs, expected) in cases {
            assert_eq!(lease(theirs, "new", &ours), expected, "{theirs:?}");
        }
    }

    #[test]
    fn a_long_report_is_cut_and_says_so() {
        let short = body_text("# TASK-1");
        assert!(short.starts_with("# TASK-1\n\n---\nOpened by autobuild"));
        let long = body_text(&"x".repeat(MAX_BODY_CHARS + 10));
        assert!(long.chars().count() < MAX_BODY_CHARS + 300);
        assert!(long.contains("(cut: the whole report is the run's `report.md`)"));
    }
}
