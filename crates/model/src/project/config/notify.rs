//! `[notify]` of config.toml: a command run when a run ends approved, blocked, or waiting for a
//! person, so nobody has to watch a long run (docs/notify.md). It gets the run's
//! `status <ID> --json` document on stdin; how it fares never changes the run's result.

use std::time::Duration;

use serde::Deserialize;

use super::values::Timeout;
use base::user_file::rule::Rule;

/// How long the command may run unless `timeout` says otherwise.
pub const DEFAULT_NOTIFY_TIMEOUT: Duration = Duration::from_secs(30);

/// `[notify]`: the command told when a run ends.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Notify")]
pub struct NotifyConfig {
    /// The program and its arguments (not a shell line), e.g. `["notify-send", "autobuild"]`;
    /// it reads the run's `status --json` document on stdin, and `AUTOBUILD_EVENT` (`done`,
    /// `blocked`, `waiting`), `AUTOBUILD_RUN` and `AUTOBUILD_EXIT_CODE` from its environment.
    // An empty one is refused where it is written (`finish`).
    #[schemars(length(min = 1))]
    pub command: Vec<String>,
    /// How long it may run (default 30 s); then it is stopped, with a warning.
    #[serde(default, deserialize_with = "Timeout::some")]
    #[schemars(with = "Option<Timeout>")]
    pub timeout: Option<Duration>,
}

impl NotifyConfig {
    pub fn timeout(&self) -> Duration {
        self.timeout.unwrap_or(DEFAULT_NOTIFY_TIMEOUT)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::project::Config;

    #[test]
    fn the_command_is_a_program_with_arguments_and_an_empty_one_is_located() {
        let config = Config::parse(
            Path::new("config.toml"),
            "[notify]\ncommand = [\"notify-send\", \"autobuild\"]\ntimeout = \"5s\"\n",
        )
        .unwrap();
        let notify = config.notify.unwrap();
        assert_eq!(notify.command, ["notify-send", "autobuild"]);
        assert_eq!(notify.timeout(), std::time::Duration::from_secs(5));
        for bad in ["[notify]\ncommand = []\n", "[notify]\ncommand = [\"\"]\n"] {
            let error = Config::parse(Path::new("config.toml"), bad)
                .unwrap_err()
                .to_string();
            assert!(error.contains("config.toml:2:"), "{error}");
            assert!(error.contains("notify-send"), "{error}");
        }
        let missing = Config::parse(Path::new("config.toml"), "[notify]\n")
            .unwrap_err()
            .to_string();
        assert!(missing.contains("command"), "{missing}");
    }
}
