//! A name looked up in a catalog that does not have it (a workflow, a built-in prompt, a
//! profile, a step kind, a schema): one error for all of them, worded once, with the closest
//! name or the list of names as its help.

use crate::diagnostic::did_you_mean;
use crate::error::{Class, Problem};

/// Which catalog was asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Catalog {
    Workflow,
    Prompt,
    Profile,
    StepKind,
    Schema,
}

impl Catalog {
    /// What the error says before the name.
    fn missing(self) -> &'static str {
        match self {
            Catalog::Workflow => "unknown workflow",
            Catalog::Prompt => "no built-in prompt",
            Catalog::Profile => "unknown profile",
            Catalog::StepKind => "no step kind",
            Catalog::Schema => "no schema",
        }
    }

    /// What the help says before the list of names.
    fn listing(self) -> &'static str {
        match self {
            Catalog::Workflow => "the workflows here are",
            Catalog::Prompt => "the built-in prompts are",
            Catalog::Profile => "the profiles are",
            Catalog::StepKind => "the step kinds are",
            Catalog::Schema => "the schemas are",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} `{name}`", catalog.missing())]
pub struct Unknown {
    pub catalog: Catalog,
    pub name: String,
    /// The closest name, when one is close enough.
    pub close: Option<String>,
    /// Every name of the catalog, for the help when none is close.
    pub names: Vec<String>,
}

impl Unknown {
    pub fn new<'a>(
        catalog: Catalog,
        name: &str,
        names: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Unknown {
        Unknown {
            catalog,
            name: name.to_string(),
            close: did_you_mean(name, names.clone()).map(str::to_string),
            names: names.into_iter().map(str::to_string).collect(),
        }
    }
}

impl Problem for Unknown {
    fn class(&self) -> Class {
        Class::Usage
    }

    fn help(&self) -> Option<String> {
        Some(match &self.close {
            Some(close) => format!("did you mean `{close}`?"),
            None => format!("{}: {}", self.catalog.listing(), self.names.join(", ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_name_suggests_the_closest_or_lists_them_all() {
        let names = ["coach.md", "player.md"];
        let near = Unknown::new(Catalog::Prompt, "coahc.md", names);
        assert_eq!(near.to_string(), "no built-in prompt `coahc.md`");
        assert_eq!(near.help().as_deref(), Some("did you mean `coach.md`?"));
        let far = Unknown::new(Catalog::Schema, "zzz", ["workflow", "config"]);
        assert_eq!(far.to_string(), "no schema `zzz`");
        assert_eq!(
            far.help().as_deref(),
            Some("the schemas are: workflow, config")
        );
        assert_eq!(far.class(), Class::Usage);
    }
}
