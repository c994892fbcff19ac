//! `[feature]` of config.toml (docs/features.md): what a feature run does after each wave —
//! `integration = "check"` (default) runs the profiles' checks on the feature branch's tip,
//! `"integrate"` also runs the player on a failure, `"off"` skips it.

use strum::IntoEnumIterator;
use toml::de::DeTable;

use super::reader::{Item, Reader};

const KEYS: [&str; 1] = ["integration"];

/// `[feature] integration`: the check after every wave of a feature.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[schemars(rename_all = "lowercase")]
pub enum Integration {
    /// Run the checks on the feature branch's tip after each wave; a failure stops the feature.
    #[default]
    Check,
    /// As `check`, and a failure is handed to the player as an integration task (the usual
    /// loop, gates and records); the feature goes on once that task is approved.
    Integrate,
    /// No check after the waves.
    Off,
}

impl Integration {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// `[feature]`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FeatureConfig {
    pub integration: Integration,
}

pub(super) fn read(reader: &mut Reader<'_>, table: &DeTable<'_>) -> FeatureConfig {
    let mut feature = FeatureConfig::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "integration" => feature.integration = integration(reader, item).unwrap_or_default(),
            _ => reader.unknown_key(key, "in [feature]", &KEYS),
        }
    }
    feature
}

fn integration(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<Integration> {
    let all = &Integration::iter().collect::<Vec<_>>();
    reader.one_of(
        "feature.integration",
        "feature.integration",
        item,
        all,
        Integration::as_str,
    )
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use strum::IntoEnumIterator;

    use super::Integration;
    use crate::project::Config;

    fn parse(source: &str) -> Result<Config, String> {
        Config::parse(Path::new("config.toml"), source).map_err(|d| d.to_string())
    }

    #[test]
    fn reads_the_integration_mode_defaulting_to_check() {
        assert_eq!(parse("").unwrap().feature.integration, Integration::Check);
        for mode in Integration::iter() {
            let text = format!("[feature]\nintegration = \"{}\"\n", mode.as_str());
            assert_eq!(parse(&text).unwrap().feature.integration, mode);
        }
    }

    #[test]
    fn unknown_values_and_keys_are_reported_with_a_suggestion() {
        let err =
            parse("[feature]\nintegration = \"integrat\"\nintegation = \"off\"\n").unwrap_err();
        assert!(
            err.contains("config.toml:2:15: unknown value `integrat` for `feature.integration`"),
            "{err}"
        );
        assert!(err.contains("did you mean `integrate`"), "{err}");
        assert!(
            err.contains("config.toml:3:1: unknown key `integation` in [feature]"),
            "{err}"
        );
        assert!(err.contains("did you mean `integration`"), "{err}");
        let err = parse("[featur]\n").unwrap_err();
        assert!(err.contains("did you mean `feature`"), "{err}");
    }
}
