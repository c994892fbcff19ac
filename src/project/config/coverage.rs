//! `[coverage]` of config.toml (README.md): the command that measures line coverage and the
//! report it writes. A profile's `coverage = <percent>` makes the measurement a gate
//! requirement ([`crate::steps::coverage`]); without a profile asking for it, the command does
//! not run.
//!
//! `cmd` runs like a check (same shell, environment, sandbox and process runner; `timeout`
//! as a check's), and `report` is the path, relative to the worktree, of the Cobertura XML or
//! LCOV file it writes.

use std::time::Duration;

use toml::de::{DeTable, DeValue};

use super::reader::{Item, Reader};

const KEYS: [&str; 3] = ["cmd", "report", "timeout"];

/// `[coverage]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CoverageConfig {
    /// Run by `sh -c` in the worktree, like a check.
    pub cmd: String,
    /// The report the command writes, a clean path relative to the worktree.
    pub report: String,
    pub timeout: Option<Duration>,
}

impl CoverageConfig {
    /// The timeout the command runs with.
    pub fn timeout(&self) -> Duration {
        self.timeout
            .unwrap_or(crate::project::DEFAULT_CHECK_TIMEOUT)
    }
}

/// `[coverage]`, or `None` after reporting what is missing or wrong.
pub(super) fn read(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<CoverageConfig> {
    let DeValue::Table(table) = item.get_ref() else {
        reader.report(
            item.span(),
            "`coverage` must be the [coverage] table with the command and its report",
            Some(
                "the minimum goes in a profile (`[profiles.feature]` `coverage = 80`); \
                 [coverage] declares `cmd` and `report`"
                    .to_string(),
            ),
        );
        return None;
    };
    fields(reader, item, table)
}

fn fields(reader: &mut Reader<'_>, item: &Item<'_>, table: &DeTable<'_>) -> Option<CoverageConfig> {
    let mut cmd = None;
    let mut report = None;
    let mut timeout = None;
    let mut ok = true;
    for (key, value) in table {
        match key.get_ref().as_ref() {
            "cmd" => {
                cmd = reader.non_blank(
                    "coverage.cmd",
                    value,
                    "`cmd` is empty; give the command that writes the coverage report",
                );
                ok &= cmd.is_some();
            }
            "report" => {
                report = report_path(reader, value);
                ok &= report.is_some();
            }
            "timeout" => {
                timeout = reader.duration("coverage.timeout", value);
                ok &= timeout.is_some();
            }
            _ => reader.unknown_key(key, "in [coverage]", &KEYS),
        }
    }
    for (name, present, example) in [
        (
            "cmd",
            table.contains_key("cmd"),
            "e.g. `cmd = \"pytest --cov --cov-report=xml:coverage.xml\"`",
        ),
        (
            "report",
            table.contains_key("report"),
            "the file the command writes, e.g. `report = \"coverage.xml\"` (Cobertura XML or LCOV)",
        ),
    ] {
        if !present {
            ok = false;
            reader.report(
                item.span(),
                format!("missing key `{name}` in [coverage]"),
                Some(example.to_string()),
            );
        }
    }
    Some(CoverageConfig {
        cmd: cmd?,
        report: report?,
        timeout,
    })
    .filter(|_| ok)
}

fn report_path(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<String> {
    let text = reader.string("coverage.report", item)?;
    match super::worktree::normalize(text) {
        Ok(path) => Some(path),
        Err(why) => {
            reader.report(
                item.span(),
                format!("`{text}` cannot be the coverage report: {why}"),
                Some(
                    "give the report's path relative to the repository root, e.g. \"coverage.xml\""
                        .to_string(),
                ),
            );
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

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
        let err = parse("[coverage]\nreport = \"../x.xml\"\ncomd = \"x\"\n").unwrap_err();
        assert!(
            err.contains("config.toml:2:10: `../x.xml` cannot be the coverage report: it leaves the repository"),
            "{err}"
        );
        assert!(
            err.contains("config.toml:3:1: unknown key `comd` in [coverage]"),
            "{err}"
        );
        assert!(err.contains("did you mean `cmd`"), "{err}");
        assert!(err.contains("missing key `cmd` in [coverage]"), "{err}");
        let err = parse("[coverage]\ncmd = \"\"\nreport = \"/abs.xml\"\n").unwrap_err();
        assert!(err.contains("`cmd` is empty"), "{err}");
        assert!(err.contains("it is absolute"), "{err}");
        let err = parse("coverage = 80\n").unwrap_err();
        assert!(err.contains("config.toml:1:12"), "{err}");
    }
}
