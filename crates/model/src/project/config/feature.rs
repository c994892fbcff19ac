//! `[feature]` of config.toml: what a feature run does after each wave —
//! `integration = "check"` (default) runs the profiles' checks on the feature branch's tip,
//! `"integrate"` also runs the player on a failure, `"off"` skips it.

use serde::Deserialize;

/// `[feature] integration`: the check after every wave of a feature.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
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

/// `[feature]`: what a feature run does after each wave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Feature")]
pub struct FeatureConfig {
    /// After each wave: run the profiles' checks on the feature branch's tip (`check`, the
    /// default), also hand a failure to the player (`integrate`), or skip it (`off`).
    pub integration: Integration,
}

#[cfg(test)]
mod tests {
    use base::Keyword;
    use std::path::Path;

    use strum::IntoEnumIterator;

    use super::Integration;
    use crate::project::config::tests::problems;
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
        let found = problems("[feature]\nintegration = \"integrat\"\nintegation = \"off\"\n");
        assert_eq!(
            found,
            [
                (
                    "2:15".into(),
                    "unknown value `integrat` for `integration`".into(),
                    Some("did you mean `integrate`?".into())
                ),
                (
                    "3:1".into(),
                    "unknown key `integation`".into(),
                    Some("did you mean `integration`?".into())
                ),
            ]
        );
        let found = problems("[featur]\n");
        assert_eq!(found[0].2.as_deref(), Some("did you mean `feature`?"));
    }
}
