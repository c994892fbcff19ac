//! `[coverage]` of config.toml: the command that measures line coverage and the
//! report it writes. A profile's `coverage = <percent>` makes the measurement a gate
//! requirement ([`crate::steps::coverage`]); without a profile asking for it, the command does
//! not run.
//!
//! `cmd` runs like a check (same shell, environment, sandbox and process runner; `timeout`
//! as a check's), and `report` is the path, relative to the worktree, of the Cobertura XML or
//! LCOV file it writes.

use std::time::Duration;

use serde::Deserialize;

use super::values::{RepoPath, ShellCommand, Timeout};
use base::user_file::rule::Rule;

/// `[coverage]`: the command that measures line coverage, run like a check for tasks whose
/// profile sets `coverage` (the minimum line percentage).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(
    deny_unknown_fields,
    expecting = "the [coverage] table with `cmd` and `report` (a minimum percentage goes in a \
                 profile: `[profiles.feature]` `coverage = 80`)"
)]
#[schemars(rename = "Coverage")]
pub struct CoverageConfig {
    /// The command, run by `sh -c` in the worktree (e.g. `pytest --cov
    /// --cov-report=xml:coverage.xml`).
    #[serde(deserialize_with = "ShellCommand::one")]
    #[schemars(with = "ShellCommand")]
    pub cmd: String,
    /// The report it writes, relative to the worktree: Cobertura XML or LCOV, recognised from
    /// its content.
    #[serde(deserialize_with = "RepoPath::one")]
    #[schemars(with = "RepoPath")]
    pub report: String,
    /// How long the command may run (default: a check's, 10 minutes).
    #[serde(default, deserialize_with = "Timeout::some")]
    #[schemars(with = "Option<Timeout>")]
    pub timeout: Option<Duration>,
}

impl CoverageConfig {
    /// The timeout the command runs with.
    pub fn timeout(&self) -> Duration {
        self.timeout
            .unwrap_or(crate::project::DEFAULT_CHECK_TIMEOUT)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use crate::project::config::tests::problems;
    use crate::project::Config;

    fn parse(source: &str) -> Result<Config, String> {
        Config::parse(Path::new("config.toml"), source).map_err(|d| d.to_string())
    }

    #[test]
    fn reads_the_command_report_and_timeout() {
        assert_eq!(parse("").unwrap().coverage, None);
        let config = parse(
            "[coverage]\ncmd = \"pytest --cov\"\nreport = \"./build/coverage.xml\"\ntimeout = \"5m\"\n",
        )
        .unwrap();
        let coverage = config.coverage.unwrap();
        assert_eq!(coverage.cmd, "pytest --cov");
        assert_eq!(coverage.report, "build/coverage.xml");
        assert_eq!(coverage.timeout(), Duration::from_secs(300));
    }

    #[test]
    fn every_problem_is_reported_where_it_is_written() {
        let found = problems("[coverage]\nreport = \"../x.xml\"\ncomd = \"x\"\n");
        let at: Vec<&str> = found.iter().map(|(at, ..)| at.as_str()).collect();
        assert_eq!(at, ["1:2", "2:10", "3:1"], "{found:#?}");
        assert_eq!(found[0].1, "missing key `cmd`");
        assert!(
            found[1].1.contains("it leaves the repository"),
            "{found:#?}"
        );
        assert_eq!(found[2].2.as_deref(), Some("did you mean `cmd`?"));
        let found = problems("[coverage]\ncmd = \"\"\nreport = \"/abs.xml\"\n");
        assert!(found[0].1.contains("the command is empty"), "{found:#?}");
        assert!(found[1].1.contains("it is absolute"), "{found:#?}");
    }

    #[test]
    fn a_minimum_written_as_the_table_says_where_it_goes() {
        let found = problems("coverage = 80\n");
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].0, "1:12");
        assert!(
            found[0]
                .1
                .contains("a minimum percentage goes in a profile"),
            "{found:#?}"
        );
    }
}
