//! The doctor's sandbox line: whether agents and checks would run confined here, and if not,
//! with which backend (bwrap, else Landlock) and, if not, why (not Linux, no bwrap, no user
//! namespaces, a container that forbids mounting, no Landlock) and the fix. Only `mode = "on"` makes a missing sandbox stop the workflow.

use super::{Check, Level};
use crate::sandbox::probe::{self, Availability};
use crate::sandbox::{Mode, Settings};
use base::Keyword;

pub(super) fn sandbox_check(settings: &Settings) -> Check {
    let subject = "sandbox";
    if settings.mode == Mode::Off {
        return Check::new(
            Level::Ok,
            subject,
            "off ([sandbox] mode = \"off\"): agents and checks run unconfined",
        );
    }
    match probe::for_settings(settings) {
        Availability::Available(backend) => Check::new(
            Level::Ok,
            subject,
            format!(
                "{} ({backend}): agents and checks run confined (mode \"{}\", network \"{}\")",
                backend.name(),
                settings.mode.as_str(),
                settings.network.as_str()
            ),
        ),
        Availability::Unavailable { reason, fix } if settings.mode == Mode::On => {
            Check::new(Level::Missing, subject, format!("not available: {reason}")).needed(format!(
                "OS confinement ([sandbox] mode = \"on\"): {fix}, or set mode = \"auto\""
            ))
        }
        Availability::Unavailable { reason, fix } => Check::new(
            Level::Warn,
            subject,
            format!(
                "not available: {reason}; agents and checks would run unconfined (fix: {fix}; \
                 or set [sandbox] mode = \"off\")"
            ),
        ),
    }
}
