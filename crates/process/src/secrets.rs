//! CI and forge credentials that no agent, check, `run` step or set-up command may see.
//!
//! A CI engine puts its own tokens in the environment of every job: GitLab's job token (also
//! inside `CI_REPOSITORY_URL`), its registry and deploy passwords, GitHub's runtime and OIDC
//! request tokens, and the push token an emitted workflow is given
//! (`AUTOBUILD_PUSH_TOKEN`, docs/scale-out.md). Every process autobuild starts gets an
//! environment without them ((`process::run`)), and so do the forge tokens users keep for
//! their CLIs (`GH_TOKEN`, `GITLAB_TOKEN`, Gitea's, Forgejo's, Bitbucket's). A confined process
//! cannot read them from its ancestors' `/proc/<pid>/environ` either: under bwrap it runs in a
//! user namespace of its own, under Landlock outside its ancestors' domain, where the kernel
//! refuses that read, and while any of them is in autobuild's own
//! environment it also gets a process namespace of its own (`--unshare-pid`), so the runner
//! and the job's shell are not even listed (nor their command lines). Unconfined (`[sandbox]
//! mode = "off"`), a process of the same user can still read them there.

/// The variables removed from every child's environment.
pub const CI_SECRETS: &[&str] = &[
    // GitLab CI (predefined variables that carry credentials).
    "CI_JOB_TOKEN",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V1",
    "CI_JOB_JWT_V2",
    "CI_REPOSITORY_URL",
    "CI_REGISTRY_PASSWORD",
    "CI_DEPENDENCY_PROXY_PASSWORD",
    "CI_DEPLOY_PASSWORD",
    // GitHub Actions (a step's `GITHUB_TOKEN` when a workflow passes it, the runner's own).
    "GITHUB_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_URL",
    // The emitted workflows' push token.
    "AUTOBUILD_PUSH_TOKEN",
    "PUSH_TOKEN",
    // Forge tokens a user keeps in the environment for their CLIs (gh, glab, tea, …): a
    // credential for the repository's host, which the model should never see.
    "GH_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
    "GITLAB_TOKEN",
    "GL_TOKEN",
    "GITLAB_PRIVATE_TOKEN",
    "GITEA_TOKEN",
    "FORGEJO_TOKEN",
    "BITBUCKET_TOKEN",
    "BITBUCKET_ACCESS_TOKEN",
    "BITBUCKET_APP_PASSWORD",
];

/// Variables named by the project (`[forge] token_env`) withheld like [`CI_SECRETS`].
static WITHHELD: std::sync::RwLock<Vec<String>> = std::sync::RwLock::new(Vec::new());

/// Withholds `name` from every child started from now on, like [`CI_SECRETS`]: the reader of
/// a config that names a credential's variable calls it, so no path that loads the config can
/// start a child without it first.
pub fn withhold(name: &str) {
    if CI_SECRETS.contains(&name) {
        return;
    }
    if let Ok(mut names) = WITHHELD.write() {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
}

/// Every variable a child never gets: [`CI_SECRETS`] and those [`withhold`] added.
pub fn withheld() -> Vec<String> {
    let extra = WITHHELD.read().map(|n| n.clone()).unwrap_or_default();
    CI_SECRETS
        .iter()
        .map(|name| name.to_string())
        .chain(extra)
        .collect()
}

/// Whether `is_set` finds any of [`CI_SECRETS`] (autobuild runs in a CI job with credentials).
pub fn any_present(is_set: impl Fn(&str) -> bool) -> bool {
    CI_SECRETS.iter().any(|name| is_set(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_token_or_a_push_token_counts_and_ordinary_variables_do_not() {
        let cases: [(&[&str], bool); 5] = [
            (&[], false),
            (
                &["PATH", "HOME", "CI", "GITLAB_CI", "ANTHROPIC_API_KEY"],
                false,
            ),
            (&["CI_JOB_TOKEN"], true),
            (&["AUTOBUILD_PUSH_TOKEN"], true),
            (&["PATH", "ACTIONS_RUNTIME_TOKEN"], true),
        ];
        for (set, expected) in cases {
            assert_eq!(any_present(|name| set.contains(&name)), expected, "{set:?}");
        }
    }
}
