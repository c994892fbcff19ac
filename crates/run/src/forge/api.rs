//! The forges' REST APIs as plain data: the requests that find, open and update a pull
//! request (GitHub) or merge request (GitLab), and what their answers mean. Sending them is
//! [`super::send`]'s; nothing here does I/O, so every shape and every error reading is
//! table-tested.

use serde_json::{json, Value};

use model::project::ForgeKind;

/// One API call: method, URL and JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub method: &'static str,
    pub url: String,
    pub body: Option<Value>,
}

/// The repository, branches and text a pull request is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target<'a> {
    pub kind: ForgeKind,
    pub api: &'a str,
    /// `owner/name` or the GitLab project's path.
    pub repository: &'a str,
    pub branch: &'a str,
    pub base: &'a str,
}

/// A pull request as the forge names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub number: u64,
    pub url: String,
}

impl Target<'_> {
    /// The headers every call carries, with `token`.
    pub fn headers(&self, token: &str) -> Vec<(String, String)> {
        let mut headers = vec![("user-agent".to_string(), "autobuild".to_string())];
        match self.kind {
            ForgeKind::Github => headers.extend([
                ("authorization".to_string(), format!("Bearer {token}")),
                (
                    "accept".to_string(),
                    "application/vnd.github+json".to_string(),
                ),
                ("x-github-api-version".to_string(), "2022-11-28".to_string()),
            ]),
            ForgeKind::Gitlab => headers.push(("private-token".to_string(), token.to_string())),
        }
        headers
    }

    fn base_url(&self) -> String {
        match self.kind {
            ForgeKind::Github => format!("{}/repos/{}", self.api, self.repository),
            ForgeKind::Gitlab => format!("{}/projects/{}", self.api, encode(self.repository)),
        }
    }

    /// The open pull requests from the branch into the base.
    pub fn find(&self) -> Call {
        let url = match self.kind {
            ForgeKind::Github => {
                let owner = self.repository.split('/').next().unwrap_or_default();
                format!(
                    "{}/pulls?state=open&head={}&base={}",
                    self.base_url(),
                    encode(&format!("{owner}:{}", self.branch)),
                    encode(self.base)
                )
            }
            ForgeKind::Gitlab => format!(
                "{}/merge_requests?state=opened&source_branch={}&target_branch={}",
                self.base_url(),
                encode(self.branch),
                encode(self.base)
            ),
        };
        Call {
            method: "GET",
            url,
            body: None,
        }
    }

    /// Opens the pull request.
    pub fn create(&self, title: &str, body: &str) -> Call {
        let (url, body) = match self.kind {
            ForgeKind::Github => (
                format!("{}/pulls", self.base_url()),
                json!({"title": title, "head": self.branch, "base": self.base, "body": body}),
            ),
            ForgeKind::Gitlab => (
                format!("{}/merge_requests", self.base_url()),
                json!({"title": title, "source_branch": self.branch,
                    "target_branch": self.base, "description": body}),
            ),
        };
        Call {
            method: "POST",
            url,
            body: Some(body),
        }
    }

    /// Brings an open pull request's title and text up to date.
    pub fn update(&self, number: u64, title: &str, body: &str) -> Call {
        match self.kind {
            ForgeKind::Github => Call {
                method: "PATCH",
                url: format!("{}/pulls/{number}", self.base_url()),
                body: Some(json!({"title": title, "body": body})),
            },
            ForgeKind::Gitlab => Call {
                method: "PUT",
                url: format!("{}/merge_requests/{number}", self.base_url()),
                body: Some(json!({"title": title, "description": body})),
            },
        }
    }

    /// The pull request an answer to [`Target::create`] or [`Target::update`] describes.
    pub fn read_one(&self, answer: &Value) -> Option<Found> {
        let (number, url) = match self.kind {
            ForgeKind::Github => ("number", "html_url"),
            ForgeKind::Gitlab => ("iid", "web_url"),
        };
        Some(Found {
            number: answer.get(number)?.as_u64()?,
            url: answer.get(url)?.as_str()?.to_string(),
        })
    }

    /// The first pull request of an answer to [`Target::find`].
    pub fn read_found(&self, answer: &Value) -> Option<Found> {
        answer.as_array()?.iter().find_map(|pr| self.read_one(pr))
    }
}

/// How an answer's status reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    Ok,
    /// Worth asking again after a pause (rate limits, the forge's own failures).
    Retry,
    /// The token was refused.
    Unauthorized,
    /// The repository (or the pull request) does not exist for this token.
    NotFound,
    /// Any other refusal, with the API's message.
    Refused(String),
}

/// What `status` and the answer's `body` mean.
pub fn read_status(status: u16, body: &str) -> Reading {
    let message = message_of(body);
    match status {
        200..=299 => Reading::Ok,
        401 => Reading::Unauthorized,
        404 => Reading::NotFound,
        429 | 500..=599 => Reading::Retry,
        403 if message.to_ascii_lowercase().contains("rate limit") => Reading::Retry,
        _ => Reading::Refused(match message.is_empty() {
            true => format!("HTTP {status}"),
            false => format!("HTTP {status}: {message}"),
        }),
    }
}

/// The API's own words in an error answer: GitHub's `message` and each `errors[].message`,
/// GitLab's `message` (a text, a list or a map of lists) or `error`.
pub fn message_of(body: &str) -> String {
    let Ok(value) = serde_json::from_str::<Value>(body) else {
        return body.trim().chars().take(300).collect();
    };
    let mut parts = Vec::new();
    for key in ["message", "error"] {
        flatten(value.get(key), &mut parts);
    }
    if let Some(errors) = value.get("errors").and_then(Value::as_array) {
        for error in errors {
            let field = |key: &str| error.get(key).and_then(Value::as_str);
            match (error.get("message"), field("field"), field("code")) {
                (Some(message), _, _) => flatten(Some(message), &mut parts),
                // GitHub's validation error: `{"resource", "field", "code"}`.
                (None, Some(field), Some(code)) => parts.push(format!("{field} {code}")),
                (None, _, _) => flatten(Some(error), &mut parts),
            }
        }
    }
    parts.join("; ")
}

fn flatten(value: Option<&Value>, parts: &mut Vec<String>) {
    match value {
        Some(Value::String(text)) if !text.is_empty() => parts.push(text.clone()),
        Some(Value::Array(items)) => items.iter().for_each(|i| flatten(Some(i), parts)),
        Some(Value::Object(map)) => {
            for (key, item) in map {
                let mut inner = Vec::new();
                flatten(Some(item), &mut inner);
                if !inner.is_empty() {
                    parts.push(format!("{key} {}", inner.join(", ")));
                }
            }
        }
        _ => {}
    }
}

/// Percent-encodes everything but unreserved characters (a path segment or query value).
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(kind: ForgeKind) -> Target<'static> {
        Target {
            kind,
            api: "http://127.0.0.1:9/api",
            repository: "acme/widgets",
            branch: "autobuild/TASK-1",
            base: "main",
        }
    }

    #[test]
    fn github_and_gitlab_calls_have_their_apis_shapes() {
        let github = target(ForgeKind::Github);
        assert_eq!(
            github.find().url,
            "http://127.0.0.1:9/api/repos/acme/widgets/pulls?state=open&head=acme%3Aautobuild%2FTASK-1&base=main"
        );
        let create = github.create("T", "B");
        assert_eq!(create.method, "POST");
        assert_eq!(
            create.url,
            "http://127.0.0.1:9/api/repos/acme/widgets/pulls"
        );
        assert_eq!(
            create.body,
            Some(json!({"title": "T", "head": "autobuild/TASK-1", "base": "main", "body": "B"}))
        );
        assert_eq!(github.update(7, "T", "B").method, "PATCH");
        assert!(github.update(7, "T", "B").url.ends_with("/pulls/7"));
        assert!(github
            .headers("tok")
            .contains(&("authorization".into(), "Bearer tok".into())));

        let gitlab = target(ForgeKind::Gitlab);
        assert_eq!(
            gitlab.find().url,
            "http://127.0.0.1:9/api/projects/acme%2Fwidgets/merge_requests?state=opened&source_branch=autobuild%2FTASK-1&target_branch=main"
        );
        assert_eq!(
            gitlab.create("T", "B").body,
            Some(json!({"title": "T", "source_branch": "autobuild/TASK-1",
                "target_branch": "main", "description": "B"}))
        );
        let update = gitlab.update(3, "T", "B");
        assert_eq!(
            (update.method, update.url.ends_with("/merge_requests/3")),
            ("PUT", true)
        );
        assert!(gitlab
            .headers("tok")
            .contains(&("private-token".into(), "tok".into())));
    }

    #[test]
    fn answers_are_read_as_each_forge_writes_them() {
        let github = target(ForgeKind::Github);
        let found = Found {
            number: 12,
            url: "https://github.com/acme/widgets/pull/12".into(),
        };
        assert_eq!(
            github.read_found(&json!([{"number": 12, "html_url": found.url}])),
            Some(found.clone())
        );
        assert_eq!(github.read_found(&json!([])), None);
        let gitlab = target(ForgeKind::Gitlab);
        assert_eq!(
            gitlab.read_one(&json!({"iid": 12, "id": 999, "web_url": found.url})),
            Some(found)
        );
    }

    #[test]
    fn statuses_and_messages_read_as_what_to_do() {
        let cases = [
            (201, "{}", Reading::Ok),
            (401, r#"{"message": "Bad credentials"}"#, Reading::Unauthorized),
            (404, "", Reading::NotFound),
            (429, "", Reading::Retry),
            (502, "bad gateway", Reading::Retry),
            (
                403,
                r#"{"message": "API rate limit exceeded for user"}"#,
                Reading::Retry,
            ),
            (
                422,
                r#"{"message": "Validation Failed", "errors": [{"resource": "PullRequest", "field": "base", "code": "invalid"}, {"message": "No commits between main and autobuild/T"}]}"#,
                Reading::Refused("HTTP 422: Validation Failed; base invalid; No commits between main and autobuild/T".into()),
            ),
            (
                409,
                r#"{"message": ["Another open merge request already exists for this source branch: !4"]}"#,
                Reading::Refused("HTTP 409: Another open merge request already exists for this source branch: !4".into()),
            ),
            (
                400,
                r#"{"message": {"target_branch": ["is invalid"]}}"#,
                Reading::Refused("HTTP 400: target_branch is invalid".into()),
            ),
            (403, "", Reading::Refused("HTTP 403".into())),
        ];
        for (status, body, expected) in cases {
            assert_eq!(read_status(status, body), expected, "{status} {body}");
        }
    }
}
