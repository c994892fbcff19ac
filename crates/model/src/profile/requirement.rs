//! One gate requirement of a profile, written as a string in profile files:
//! `checks.<name>` (that runner check passed), `criteria` (every executable acceptance
//! criterion passed), `coach` (the coach verdict is `approve`), `changes` (the player's turn
//! changed the worktree). A profile's `coverage = <percent>` key adds [`Requirement::Coverage`]
//! (the `[coverage]` command's report shows at least that much line coverage); it is not
//! written in `require`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Requirement {
    Check(String),
    Criteria,
    Coach,
    Changes,
    /// At least `minimum` percent of the lines the coverage report lists ran.
    Coverage {
        minimum: u8,
    },
}

impl Requirement {
    /// The accepted spellings, for error messages and suggestions.
    pub const FORMS: [&'static str; 4] = ["checks.<name>", "criteria", "coach", "changes"];
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Check(name) => write!(f, "checks.{name}"),
            Requirement::Criteria => f.write_str("criteria"),
            Requirement::Coach => f.write_str("coach"),
            Requirement::Changes => f.write_str("changes"),
            Requirement::Coverage { minimum } => write!(f, "coverage >= {minimum}%"),
        }
    }
}

impl FromStr for Requirement {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "criteria" => Ok(Requirement::Criteria),
            "coach" => Ok(Requirement::Coach),
            "changes" => Ok(Requirement::Changes),
            _ if s.starts_with("coverage") => Err(format!(
                "`{s}` is not written in `require`: set the profile's own key, e.g. `coverage = 80`"
            )),
            _ => match s.strip_prefix("checks.") {
                Some(name) if !name.is_empty() && !name.contains('.') => {
                    Ok(Requirement::Check(name.to_string()))
                }
                _ => Err(format!(
                    "unknown requirement `{s}`: expected one of {}",
                    Requirement::FORMS.join(", ")
                )),
            },
        }
    }
}

impl Serialize for Requirement {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Requirement {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(|message| {
            if text.starts_with("checks.") || text.starts_with("coverage") {
                serde::de::Error::custom(message)
            } else {
                // Reported by the file decoders as an unknown value with a "did you mean".
                serde::de::Error::unknown_variant(&text, &Requirement::FORMS)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_form() {
        for text in ["checks.test", "criteria", "coach", "changes"] {
            let r: Requirement = text.parse().unwrap();
            assert_eq!(r.to_string(), text);
        }
        assert!("checks.".parse::<Requirement>().is_err());
        assert!("tests".parse::<Requirement>().is_err());
        let err = "coverage".parse::<Requirement>().unwrap_err();
        assert!(err.contains("e.g. `coverage = 80`"), "{err}");
        assert_eq!(
            Requirement::Coverage { minimum: 80 }.to_string(),
            "coverage >= 80%"
        );
    }
}
