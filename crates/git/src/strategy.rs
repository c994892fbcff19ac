//! The ways an approved branch can land on its base branch (the `merge` step's `strategy`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an approved branch lands on the base branch.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "kebab-case")]
#[serde(rename_all = "kebab-case")]
pub enum MergeStrategy {
    #[default]
    Squash,
    Merge,
    Ff,
}
