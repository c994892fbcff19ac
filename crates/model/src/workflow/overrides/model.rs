//! A role's model chosen on the command line: `--model ROLE=MODEL` (any role of the workflow)
//! and its aliases `--player-model X` and `--coach-model X`. A `--model` flag stays the text the
//! user typed until it is applied to a workflow, where a mistake is located in that text and
//! the workflow's roles are suggested; an alias is a [`ModelChoice`] from the start. Both are
//! read into a [`ModelChoice`] in one place, [`ModelFlag::choice`].

use std::fmt;

/// A model for a role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelChoice {
    pub role: String,
    pub model: String,
}

impl ModelChoice {
    /// `ROLE=MODEL`, split at the first `=`; `None` without one. The role and the model are
    /// checked against the workflow where the choice is applied.
    fn parse(text: &str) -> Option<ModelChoice> {
        let (role, model) = text.split_once('=')?;
        Some(ModelChoice {
            role: role.to_string(),
            model: model.to_string(),
        })
    }
}

/// `ROLE=MODEL`, as `--model` takes it.
impl fmt::Display for ModelChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.role, self.model)
    }
}

/// One model choice of the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFlag {
    /// `--model ROLE=MODEL`, as typed.
    Given(String),
    /// `--player-model X` or `--coach-model X`: the flag names the role.
    Alias(ModelChoice),
}

impl ModelFlag {
    /// `--player-model MODEL` (`role` "player") or `--coach-model MODEL` (`role` "coach").
    pub fn alias(role: &str, model: &str) -> ModelFlag {
        ModelFlag::Alias(ModelChoice {
            role: role.to_string(),
            model: model.to_string(),
        })
    }

    /// The choice, or `None` when a `--model` value has no `=`.
    pub fn choice(&self) -> Option<ModelChoice> {
        match self {
            ModelFlag::Given(text) => ModelChoice::parse(text),
            ModelFlag::Alias(choice) => Some(choice.clone()),
        }
    }
}

/// The flag's value as `--model` takes it: `ROLE=MODEL` (an alias's too), for locating
/// mistakes and naming where a role's model came from.
impl fmt::Display for ModelFlag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelFlag::Given(text) => f.write_str(text),
            ModelFlag::Alias(choice) => choice.fmt(f),
        }
    }
}

impl From<&str> for ModelFlag {
    fn from(text: &str) -> ModelFlag {
        ModelFlag::Given(text.to_string())
    }
}

impl From<String> for ModelFlag {
    fn from(text: String) -> ModelFlag {
        ModelFlag::Given(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_is_read_into_a_role_and_a_model_in_one_place() {
        let cases = [
            (ModelFlag::from("coach=opus"), Some(("coach", "opus"))),
            // Split at the first `=`: a model name may hold one.
            (ModelFlag::from("coach=a=b"), Some(("coach", "a=b"))),
            (ModelFlag::from("coach="), Some(("coach", ""))),
            (ModelFlag::from("opus"), None),
            (
                ModelFlag::alias("player", "haiku"),
                Some(("player", "haiku")),
            ),
        ];
        for (flag, want) in cases {
            let got = flag.choice();
            assert_eq!(
                got.as_ref().map(|c| (c.role.as_str(), c.model.as_str())),
                want,
                "{flag:?}"
            );
        }
        assert_eq!(
            ModelFlag::alias("player", "haiku").to_string(),
            "player=haiku"
        );
        assert_eq!(ModelFlag::from("opus").to_string(), "opus");
    }
}
