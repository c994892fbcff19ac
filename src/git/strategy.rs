//! The ways an approved branch can land on its base branch (the `merge` step's `strategy`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How an approved branch lands on the base branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MergeStrategy {
    #[default]
    Squash,
    Merge,
    Ff,
}

impl MergeStrategy {
    pub fn as_str(self) -> &'static str {
        match self {
            MergeStrategy::Squash => "squash",
            MergeStrategy::Merge => "merge",
            MergeStrategy::Ff => "ff",
        }
    }
}
