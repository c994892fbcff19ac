//! The environment a child sees: the project's variables (`env`, later entries win) on top of
//! autobuild's own. Adapters, credential checks and the sandbox's mounts all ask through
//! [`child_var`], so "is this variable set for the child" has one answer.

/// A variable as a child with `env` on top of autobuild's environment sees it: set and
/// non-empty, or `None`.
pub fn child_var(env: &[(String, String)], name: &str) -> Option<String> {
    env.iter()
        .rev()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.clone())
        .or_else(|| std::env::var(name).ok())
        .filter(|value| !value.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_project_value_wins_and_empty_counts_as_unset() {
        let name = "AUTOBUILD_TEST_CHILD_VAR_NEVER_SET";
        let env = vec![
            (name.to_string(), "first".to_string()),
            (name.to_string(), "second".to_string()),
        ];
        assert_eq!(child_var(&env, name).as_deref(), Some("second"));
        let emptied = vec![(name.to_string(), String::new())];
        assert_eq!(child_var(&emptied, name), None);
        assert_eq!(child_var(&[], name), None);
        // Not in `env`: autobuild's own environment answers (PATH is always set in tests).
        assert!(child_var(&[], "PATH").is_some());
    }
}
