//! What stops a run from starting, found by preflight ([`super::preflight`]): one variant per
//! kind of problem, with its wording in one `Display`. A dry run lists them; a real run refuses
//! to start with all of them (exit 2). Problems other layers word themselves (an adapter's own
//! preflight, the sandbox, `[worktree]`, `[context] files`) are carried as their text.

use std::fmt;

use model::workflow::model::AgentKind;

#[derive(Debug, Clone, PartialEq)]
pub enum Blocker {
    /// A role names an adapter this build does not provide.
    NoAdapter { role: String, agent: AgentKind },
    /// A role's agent program cannot be found; `error` says where it was looked for.
    ProgramNotFound {
        role: String,
        agent: AgentKind,
        error: String,
        /// How to install the program (empty when the adapter has no hint).
        install_hint: String,
        /// Where the role's `command` is set (`.autobuild/config.toml:12`), for a `command`
        /// role.
        declared: Option<String>,
    },
    /// What an adapter's own preflight refuses (a native role's missing key, an unusable
    /// model), in the adapter's words.
    Adapter(String),
    /// A `command` role runs a script that does not exist.
    MissingScript { role: String, why: String },
    /// A `command` role runs a script of the repository that the base branch does not have.
    UncommittedScript {
        role: String,
        script: String,
        base: String,
    },
    /// An agent CLI that roles use is not logged in.
    NotLoggedIn {
        roles: Vec<String>,
        agent: AgentKind,
        detail: String,
        fix: String,
        /// The variable that skips the login check.
        skip_env: &'static str,
    },
    /// With `limits.max_cost_usd`, a role whose cost cannot be counted.
    Unpriced {
        role: String,
        agent: AgentKind,
        what: String,
        limit: f64,
        fix: String,
    },
    /// The profile requires a check that is neither configured nor detected.
    MissingRequiredCheck {
        profile: String,
        check: String,
        close: Option<String>,
    },
    /// The profile's `checks` names a check that is neither configured nor detected.
    UnknownProfileCheck {
        profile: String,
        check: String,
        close: Option<String>,
    },
    /// The profile requires a check its `checks` list leaves out.
    RequiredCheckLeftOut { profile: String, check: String },
    /// A role's prompt cannot be rendered (`when`: "turn 1" or "a later turn").
    Unrenderable {
        role: String,
        prompt: String,
        when: &'static str,
        error: String,
    },
    /// Hidden paths, but the sandbox that hides them is off (`why`).
    HiddenWithoutSandbox { hidden: Vec<String>, why: String },
    /// The task branch exists and neither `--resume` nor `--fresh` says what to do with it.
    BranchExists { branch: String },
    /// `[sandbox] mode = "on"` cannot be honoured, in the sandbox's words.
    Sandbox(sandbox::Unconfinable),
    /// A `[worktree]` link or copy that cannot work, in its words.
    WorktreeFiles(String),
    /// A context file that cannot be shown, in its words.
    ContextFile(String),
}

impl fmt::Display for Blocker {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Blocker::NoAdapter { role, agent } => write!(
                f,
                "role `{role}` uses the `{agent}` adapter, which this build does not provide yet; use `agent = \"command\"` (see README)"
            ),
            Blocker::ProgramNotFound {
                role,
                agent,
                error,
                install_hint,
                declared,
            } => {
                write!(f, "role `{role}`: {error}")?;
                if !install_hint.is_empty() {
                    write!(f, "; {install_hint}")?;
                }
                if let Some(declared) = declared {
                    write!(
                        f,
                        "; fix: install it, or correct `command` in [roles.{role}] ({declared}): \
                         a name is looked up on PATH (with [env] path_prepend), a path is \
                         relative to the repository root"
                    )?;
                }
                if *agent != AgentKind::Command {
                    f.write_str(
                        "; or run a program of your own instead: `agent = \"command\"` in \
                         [roles.<role>] of .autobuild/config.toml (`autobuild init --agents command` \
                         writes example scripts that need no LLM)",
                    )?;
                }
                Ok(())
            }
            Blocker::MissingScript { role, why } => write!(f, "role `{role}` runs {why}"),
            Blocker::UncommittedScript { role, script, base } => write!(
                f,
                "role `{role}` runs `{script}`, which is not committed on {base}, so the task's worktree will not have it: commit it first"
            ),
            Blocker::NotLoggedIn {
                roles,
                agent,
                detail,
                fix,
                skip_env,
            } => write!(
                f,
                "{} ({agent}): {detail}; fix: {fix} — or, when credentials reach it another \
                 way, skip this check with {skip_env}=1",
                role_names(roles)
            ),
            Blocker::Unpriced {
                role,
                agent,
                what,
                limit,
                fix,
            } => write!(
                f,
                "role `{role}` ({agent}): {what}, so limits.max_cost_usd ({limit:.2}) could not \
                 be enforced; fix: {fix}"
            ),
            Blocker::MissingRequiredCheck {
                profile,
                check,
                close,
            } => write!(
                f,
                "the `{profile}` profile requires check `{check}`{}, but no [checks.{check}] is configured and none was detected: add it to .autobuild/config.toml (e.g. [checks.{check}] cmd = \"...\"), or give the task a profile without it",
                did_you_mean(close)
            ),
            Blocker::UnknownProfileCheck {
                profile,
                check,
                close,
            } => write!(
                f,
                "the `{profile}` profile runs check `{check}`{}, but no [checks.{check}] is configured and none was detected: add it to .autobuild/config.toml or remove it from the profile's `checks`",
                did_you_mean(close)
            ),
            Blocker::RequiredCheckLeftOut { profile, check } => write!(
                f,
                "the `{profile}` profile requires check `{check}` but its `checks` list leaves it out: add it to `checks`, or drop `checks.{check}` from `require`"
            ),
            Blocker::Unrenderable {
                role,
                prompt,
                when,
                error,
            } => write!(
                f,
                "role `{role}`: prompt `{prompt}` cannot be rendered for {when}: {error} (guard optional parts with `{{% if … %}}`: on turn 1 there is no `feedback`, `verify` or `player`)"
            ),
            Blocker::HiddenWithoutSandbox { hidden, why } => write!(
                f,
                "hidden paths ({}) need the sandbox, which is off for this run ({why}): without it \
                 agents could read them; enable [sandbox] (bubblewrap) or remove the hidden paths",
                hidden.join(", ")
            ),
            Blocker::BranchExists { branch } => write!(
                f,
                "branch {branch} already exists: add --resume to continue on it, or --fresh to discard it"
            ),
            Blocker::Sandbox(unconfinable) => write!(f, "{unconfinable}"),
            Blocker::Adapter(text)
            | Blocker::WorktreeFiles(text)
            | Blocker::ContextFile(text) => f.write_str(text),
        }
    }
}

/// " (did you mean `x`?)" when there is a close name.
fn did_you_mean(close: &Option<String>) -> String {
    close
        .as_ref()
        .map(|close| format!(" (did you mean `{close}`?)"))
        .unwrap_or_default()
}

/// "role `a`" or "roles `a` and `b`".
pub(super) fn role_names(roles: &[String]) -> String {
    let quoted: Vec<String> = roles.iter().map(|r| format!("`{r}`")).collect();
    match quoted.as_slice() {
        [one] => format!("role {one}"),
        many => format!("roles {}", many.join(" and ")),
    }
}

/// The blockers as the lines a person reads.
pub fn lines(blockers: &[Blocker]) -> Vec<String> {
    blockers.iter().map(ToString::to_string).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_blocker_says_what_stops_the_run_and_how_to_fix_it() {
        let cases = [
            (
                Blocker::ProgramNotFound {
                    role: "player".into(),
                    agent: AgentKind::Command,
                    error: "`./play.sh` not found".into(),
                    install_hint: String::new(),
                    declared: None,
                },
                "role `player`: `./play.sh` not found",
            ),
            (
                Blocker::ProgramNotFound {
                    role: "player".into(),
                    agent: AgentKind::Command,
                    error: "`aider` not found on PATH".into(),
                    install_hint: String::new(),
                    declared: Some(".autobuild/config.toml:7".into()),
                },
                "role `player`: `aider` not found on PATH; fix: install it, or correct `command` \
                 in [roles.player] (.autobuild/config.toml:7): a name is looked up on PATH (with \
                 [env] path_prepend), a path is relative to the repository root",
            ),
            (
                Blocker::NotLoggedIn {
                    roles: vec!["player".into(), "coach".into()],
                    agent: AgentKind::ClaudeCode,
                    detail: "not logged in".into(),
                    fix: "run `claude auth login`".into(),
                    skip_env: "SKIP",
                },
                "roles `player` and `coach` (claude-code): not logged in; fix: run `claude auth \
                 login` — or, when credentials reach it another way, skip this check with SKIP=1",
            ),
            (
                Blocker::Unpriced {
                    role: "player".into(),
                    agent: AgentKind::Codex,
                    what: "names no `model`".into(),
                    limit: 2.0,
                    fix: "set one".into(),
                },
                "role `player` (codex): names no `model`, so limits.max_cost_usd (2.00) could not \
                 be enforced; fix: set one",
            ),
            (
                Blocker::RequiredCheckLeftOut {
                    profile: "feature".into(),
                    check: "test".into(),
                },
                "the `feature` profile requires check `test` but its `checks` list leaves it out: \
                 add it to `checks`, or drop `checks.test` from `require`",
            ),
            (
                Blocker::BranchExists {
                    branch: "autobuild/T".into(),
                },
                "branch autobuild/T already exists: add --resume to continue on it, or --fresh \
                 to discard it",
            ),
            (
                Blocker::Sandbox(sandbox::Unconfinable {
                    reason: "bwrap is missing".into(),
                    fix: "install bubblewrap".into(),
                }),
                "[sandbox] mode = \"on\", but agents and checks cannot be confined here: bwrap \
                 is missing; fix: install bubblewrap (or set mode = \"auto\" to run unconfined \
                 with a warning)",
            ),
        ];
        for (blocker, want) in cases {
            assert_eq!(blocker.to_string(), want, "{blocker:?}");
        }
        let not_found = Blocker::ProgramNotFound {
            role: "coach".into(),
            agent: AgentKind::Codex,
            error: "`codex` not found on PATH".into(),
            install_hint: "install it with `npm i -g @openai/codex`".into(),
            declared: None,
        }
        .to_string();
        assert!(
            not_found.starts_with(
                "role `coach`: `codex` not found on PATH; install it with `npm i -g @openai/codex`; or run a program of your own instead"
            ),
            "{not_found}"
        );
    }
}
