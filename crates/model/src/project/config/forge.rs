//! `[forge]` of config.toml: where `--pr` pushes an approved branch and opens (or updates) its
//! pull request (GitHub) or merge request (GitLab) — docs/pull-requests.md.
//!
//! Every key but `kind` has a default: the repository is read from the remote's URL, the API
//! is the public one of the kind, the token is `GITHUB_TOKEN` / `GITLAB_TOKEN`. The token's
//! variable is never passed to any agent, check or command the runner starts
//! ([`process::secrets`]), whatever its name.

use serde::Deserialize;

use super::values::{EnvVarName, Url};
use base::user_file::rule::Rule;

/// `[forge] kind`: which forge's API opens the pull request.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum ForgeKind {
    /// GitHub or GitHub Enterprise: a pull request through the REST API.
    #[default]
    Github,
    /// GitLab (gitlab.com or self-hosted): a merge request through the REST API (v4).
    Gitlab,
}

impl ForgeKind {
    /// The public API of the kind.
    pub fn default_api_url(self) -> &'static str {
        match self {
            ForgeKind::Github => "https://api.github.com",
            ForgeKind::Gitlab => "https://gitlab.com/api/v4",
        }
    }

    /// The variable the token is read from unless `token_env` says otherwise.
    pub fn default_token_env(self) -> &'static str {
        match self {
            ForgeKind::Github => "GITHUB_TOKEN",
            ForgeKind::Gitlab => "GITLAB_TOKEN",
        }
    }

    /// "pull request" or "merge request", as the forge calls it.
    pub fn request_name(self) -> &'static str {
        match self {
            ForgeKind::Github => "pull request",
            ForgeKind::Gitlab => "merge request",
        }
    }
}

/// `[forge]`: where `--pr` pushes and opens the pull (merge) request.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Forge")]
pub struct ForgeConfig {
    /// `github` (default) or `gitlab`.
    pub kind: ForgeKind,
    /// `owner/name` (GitHub) or the project's path (`group/subgroup/name`, GitLab); default:
    /// read from the remote's URL.
    pub repository: Option<String>,
    /// The git remote the branch is pushed to (default `origin`).
    pub remote: Option<String>,
    /// The forge's API (default `https://api.github.com`, `https://gitlab.com/api/v4`): a GitHub
    /// Enterprise or self-hosted GitLab API URL.
    #[serde(deserialize_with = "Url::some")]
    #[schemars(with = "Option<Url>")]
    pub api_url: Option<String>,
    /// The environment variable holding the API token (default `GITHUB_TOKEN` /
    /// `GITLAB_TOKEN`); it never reaches an agent, a check or a command.
    #[serde(deserialize_with = "EnvVarName::some")]
    #[schemars(with = "Option<EnvVarName>")]
    pub token_env: Option<String>,
}

impl ForgeConfig {
    pub fn remote(&self) -> &str {
        self.remote.as_deref().unwrap_or("origin")
    }

    pub fn api_url(&self) -> &str {
        self.api_url
            .as_deref()
            .unwrap_or(self.kind.default_api_url())
            .trim_end_matches('/')
    }

    pub fn token_env(&self) -> &str {
        self.token_env
            .as_deref()
            .unwrap_or(self.kind.default_token_env())
    }
}

/// The repository path a remote URL names: `acme/widgets` of
/// `https://github.com/acme/widgets.git`, `git@github.com:acme/widgets.git` or
/// `ssh://git@gitlab.example.com:2222/group/sub/widgets`; `None` for a local path.
pub fn repository_of_url(url: &str) -> Option<String> {
    let url = url.trim();
    let path = if let Some((_, rest)) = url.split_once("://") {
        if url.starts_with("file://") {
            return None;
        }
        // host[:port]/path, credentials before an `@`
        let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
        rest.split_once('/')?.1
    } else if let Some((host, path)) = url.split_once(':') {
        // scp-like `user@host:path`; a local path has no `:` before its first `/`.
        if host.contains('/') || host.is_empty() {
            return None;
        }
        path
    } else {
        return None;
    };
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    (path.contains('/') && !path.split('/').any(str::is_empty)).then(|| path.to_string())
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::project::Config;

    #[test]
    fn the_repository_is_read_from_the_remotes_url() {
        let cases = [
            ("https://github.com/acme/widgets.git", Some("acme/widgets")),
            (
                "https://x-token:abc@github.com/acme/widgets",
                Some("acme/widgets"),
            ),
            ("git@github.com:acme/widgets.git", Some("acme/widgets")),
            (
                "ssh://git@gitlab.example.com:2222/group/sub/widgets.git",
                Some("group/sub/widgets"),
            ),
            ("http://127.0.0.1:8080/acme/widgets/", Some("acme/widgets")),
            ("/srv/git/widgets.git", None),
            ("../widgets", None),
            ("file:///srv/git/acme/widgets.git", None),
            ("https://github.com/widgets", None),
        ];
        for (url, expected) in cases {
            assert_eq!(repository_of_url(url).as_deref(), expected, "{url}");
        }
    }

    #[test]
    fn defaults_follow_the_kind_and_a_bad_value_is_located() {
        let config = Config::parse(Path::new("config.toml"), "[forge]\nkind = \"gitlab\"\n")
            .unwrap()
            .forge
            .unwrap();
        assert_eq!(config.api_url(), "https://gitlab.com/api/v4");
        assert_eq!(config.token_env(), "GITLAB_TOKEN");
        assert_eq!(config.remote(), "origin");
        let config = Config::parse(
            Path::new("config.toml"),
            "[forge]\napi_url = \"https://ghe.example.com/api/v3/\"\ntoken_env = \"ACME_TOKEN\"\n",
        )
        .unwrap()
        .forge
        .unwrap();
        assert_eq!(config.api_url(), "https://ghe.example.com/api/v3");
        assert_eq!(config.token_env(), "ACME_TOKEN");
        let bad = Config::parse(
            Path::new("config.toml"),
            "[forge]\nkind = \"gitea\"\ntoken_env = \"1X\"\n",
        )
        .unwrap_err()
        .to_string();
        assert!(bad.contains("config.toml:2:"), "{bad}");
        assert!(bad.contains("config.toml:3:"), "{bad}");
    }
}
