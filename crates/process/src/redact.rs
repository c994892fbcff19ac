//! Keeps secrets out of every file autobuild writes.
//!
//! Agent transcripts, check logs and turn records are plain files a user may share or attach
//! to a bug report, and agents happily echo their environment. Values of variables that look
//! like credentials (names ending in `_API_KEY` or `_TOKEN`, or containing `SECRET`) are
//! replaced by `[REDACTED]` before anything reaches disk. Short values (under 8 bytes) are left
//! alone: they are not credentials, and replacing them would shred ordinary text.

use std::collections::BTreeSet;

/// What a redacted secret is replaced with.
pub const REDACTED: &str = "[REDACTED]";

/// Values shorter than this are never treated as secrets.
const MIN_SECRET_LEN: usize = 8;

/// The secret values known at the start of a process, ready to be applied line by line.
#[derive(Debug, Clone, Default)]
pub struct Redactor {
    /// Longest first, so a secret that contains another is replaced whole.
    secrets: Vec<String>,
}

impl Redactor {
    /// Collects secrets from `env` (the variables given to a child) and the current process env.
    pub fn new(env: &[(String, String)]) -> Redactor {
        let current = std::env::vars_os().filter_map(|(name, value)| {
            Some((name.into_string().ok()?, value.into_string().ok()?))
        });
        Redactor::from_vars(env.iter().cloned().chain(current))
    }

    /// Collects secrets from exactly the given variables.
    pub fn from_vars(vars: impl IntoIterator<Item = (String, String)>) -> Redactor {
        let unique: BTreeSet<String> = vars
            .into_iter()
            .filter(|(name, value)| is_secret_name(name) && value.len() >= MIN_SECRET_LEN)
            .map(|(_, value)| value)
            .collect();
        let mut secrets: Vec<String> = unique.into_iter().collect();
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        Redactor { secrets }
    }

    /// The secret values, longest first.
    pub fn secrets(&self) -> &[String] {
        &self.secrets
    }

    /// This redactor for a rendered HTML page: each secret also as the page escapes it.
    pub fn for_html(&self) -> Redactor {
        let mut secrets: Vec<String> = self
            .secrets
            .iter()
            .flat_map(|secret| [secret.clone(), minijinja::HtmlEscape(secret).to_string()])
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
        Redactor { secrets }
    }

    /// `text` with every secret value replaced by [`REDACTED`].
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.secrets {
            if out.contains(secret.as_str()) {
                out = out.replace(secret.as_str(), REDACTED);
            }
        }
        out
    }

    /// The length in bytes of the longest secret (0 when there are none): a streaming writer
    /// that must cut a very long line keeps this much context so no secret straddles the cut.
    pub fn longest_secret(&self) -> usize {
        self.secrets.first().map_or(0, String::len)
    }

    /// Whether any secret starts before `cut` and ends after it in `text`.
    pub fn straddles(&self, text: &[u8], cut: usize) -> Option<usize> {
        self.secrets
            .iter()
            .filter_map(|secret| {
                let secret = secret.as_bytes();
                let from = cut.saturating_sub(secret.len() - 1);
                let to = (cut + secret.len() - 1).min(text.len());
                text[from..to]
                    .windows(secret.len())
                    .position(|window| window == secret)
                    .map(|offset| from + offset)
                    .filter(|&start| start < cut)
            })
            .min()
    }
}

/// `text` with the values of secret-looking variables (from `env` and the current process
/// env) replaced by `[REDACTED]`.
pub fn redact(text: &str, env: &[(String, String)]) -> String {
    Redactor::new(env).apply(text)
}

/// Whether a variable of this name holds a credential.
pub fn is_secret_name(name: &str) -> bool {
    const ENDINGS: [&str; 7] = [
        "_KEY",
        "TOKEN",
        "PASSWORD",
        "PASSWD",
        "CREDENTIAL",
        "CREDENTIALS",
        "_PAT",
    ];
    let upper = name.to_ascii_uppercase();
    upper.contains("SECRET") || ENDINGS.iter().any(|ending| upper.ends_with(ending))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_redacted_of_the_escaped_secret_too() {
        let redactor = Redactor::from_vars([("MY_TOKEN".to_string(), "a<b>&c/d'e\"f".to_string())]);
        assert_eq!(redactor.secrets(), ["a<b>&c/d'e\"f"]);
        let page = "x a&lt;b&gt;&amp;c&#x2f;d&#x27;e&quot;f y a<b>&c/d'e\"f";
        assert_eq!(redactor.for_html().apply(page), "x [REDACTED] y [REDACTED]");
    }

    #[test]
    fn common_credential_names_are_secret() {
        for name in [
            "OPENAI_API_KEY",
            "API_KEY",
            "GITHUB_TOKEN",
            "TOKEN",
            "PGPASSWORD",
            "DB_PASSWD",
            "AWS_SECRET_ACCESS_KEY",
            "STRIPE_KEY",
            "GCP_CREDENTIALS",
            "GITLAB_PAT",
        ] {
            assert!(is_secret_name(name), "{name}");
        }
        for name in ["PATH", "HOME", "AUTOBUILD_TURN", "KEYBOARD_LAYOUT"] {
            assert!(!is_secret_name(name), "{name}");
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn replaces_values_of_secret_names_only() {
        let redactor = Redactor::from_vars(vars(&[
            ("ANTHROPIC_API_KEY", "sk-ant-123456789"),
            ("GITHUB_TOKEN", "ghp_abcdefghij"),
            ("MY_SECRET_THING", "hunter2hunter2"),
            ("DATABASE_URL", "sqlite:///tmp/dev.db"),
        ]));
        let text =
            "key=sk-ant-123456789 tok=ghp_abcdefghij s=hunter2hunter2 db=sqlite:///tmp/dev.db";
        assert_eq!(
            redactor.apply(text),
            "key=[REDACTED] tok=[REDACTED] s=[REDACTED] db=sqlite:///tmp/dev.db"
        );
    }

    #[test]
    fn short_values_are_not_secrets() {
        let redactor = Redactor::from_vars(vars(&[("X_TOKEN", "abc")]));
        assert_eq!(redactor.apply("abc abc"), "abc abc");
        assert_eq!(redactor.longest_secret(), 0);
    }

    #[test]
    fn longer_secret_wins_over_its_prefix() {
        let redactor = Redactor::from_vars(vars(&[
            ("A_TOKEN", "abcdefgh"),
            ("B_TOKEN", "abcdefgh12345"),
        ]));
        assert_eq!(redactor.apply("x abcdefgh12345 y"), "x [REDACTED] y");
    }

    #[test]
    fn names_are_matched_case_insensitively() {
        assert!(is_secret_name("openai_api_key"));
        assert!(is_secret_name("client_secret"));
        assert!(!is_secret_name("TOKENIZER_PATH"));
        assert!(!is_secret_name("API_KEY_FILE"));
    }

    #[test]
    fn finds_a_secret_across_a_cut() {
        let redactor = Redactor::from_vars(vars(&[("A_TOKEN", "abcdefgh")]));
        let text = b"0123abcdefgh4567";
        assert_eq!(redactor.straddles(text, 6), Some(4));
        assert_eq!(redactor.straddles(text, 4), None);
        assert_eq!(redactor.straddles(text, 12), None);
    }

    #[test]
    fn redact_uses_the_given_env() {
        let text = redact(
            "value=zz-secret-zz",
            &vars(&[("LOCAL_SECRET", "zz-secret-zz")]),
        );
        assert_eq!(text, "value=[REDACTED]");
    }
}
