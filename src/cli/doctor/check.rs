//! One line of `autobuild doctor`: what was checked, how it came out, and who needs it.

/// How a check came out; the name is shown and is `level` in `doctor --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Level {
    Ok,
    Warn,
    Missing,
}

/// One line of the report; a `Missing` check with a `need` stops the selected workflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub level: Level,
    pub subject: String,
    pub detail: String,
    /// Who needs it and how to fix it, when the selected workflow cannot run without it.
    pub need: Option<String>,
}

impl Check {
    pub(super) fn new(
        level: Level,
        subject: impl Into<String>,
        detail: impl Into<String>,
    ) -> Check {
        Check {
            level,
            subject: subject.into(),
            detail: detail.into(),
            need: None,
        }
    }

    /// Marks a missing check as blocking the selected workflow.
    pub(super) fn needed(mut self, need: impl Into<String>) -> Check {
        if self.level == Level::Missing {
            self.need = Some(need.into());
        }
        self
    }
}
