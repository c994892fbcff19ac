//! Line coverage as a gate requirement (README.md): a profile's `coverage = 80` asks that
//! at least 80% of the executable lines the `[coverage]` command's report lists ran.
//!
//! The runner runs the command like a check and reads its report ([`parse`]: Cobertura XML or
//! LCOV, recognised from the content); this module relates the report's file names to the
//! worktree and measures it: the covered and executable lines over the whole report, and the
//! uncovered lines of the files the task branch changed — what the player can act on. A report
//! that is missing, unreadable, empty or of a failed command is [`Measurement::NotMeasured`],
//! which the gate never approves.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::steps::check::CheckResult;

pub mod parse;

pub use parse::{Format, Report};

/// The name the coverage command's run carries in records, logs and feedback.
pub const CHECK_NAME: &str = "coverage";
/// At most this many changed files with uncovered lines are kept, and this many line ranges
/// of each; the rest is counted.
const MAX_FILES: usize = 20;
const MAX_RANGES: usize = 40;

/// The coverage command's run this turn and what its report says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CoverageResult {
    /// The command's run, as a check named `coverage`.
    pub check: CheckResult,
    /// The report's path, relative to the worktree (`[coverage] report`).
    pub report: String,
    /// The profile's minimum, in percent of lines.
    pub minimum: u8,
    pub measurement: Measurement,
}

impl CoverageResult {
    /// Whether the minimum holds, measured by a command that passed.
    pub fn holds(&self) -> bool {
        self.check.passed()
            && matches!(&self.measurement, Measurement::Measured(m) if m.meets(self.minimum))
    }

    /// One line for the reports: `50% (2 of 4 lines), below the minimum of 80%; uncovered
    /// lines in changed files: lib/greet.sh lines 5-6`, or why it was not measured.
    pub fn summary(&self) -> String {
        let minimum = self.minimum;
        match &self.measurement {
            Measurement::NotMeasured { reason } => format!("not measured: {reason}"),
            Measurement::Measured(m) => {
                let verdict = if m.meets(minimum) {
                    format!("{}, meets the minimum of {minimum}%", m.describe())
                } else {
                    format!("{}, below the minimum of {minimum}%", m.describe())
                };
                if m.uncovered_changed.is_empty() && m.more_files == 0 {
                    verdict
                } else {
                    format!(
                        "{verdict}; uncovered lines in changed files: {}",
                        uncovered_text(&m.uncovered_changed, m.more_files)
                    )
                }
            }
        }
    }
}

/// What the report says, or why nothing can be said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Measurement {
    Measured(Measured),
    NotMeasured { reason: String },
}

/// The line coverage a report states.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measured {
    pub format: Format,
    /// Executable lines that ran, over every file of the report.
    pub covered: u64,
    /// Executable lines, over every file of the report.
    pub total: u64,
    /// The files the task branch changed that have lines no test ran, in path order.
    pub uncovered_changed: Vec<UncoveredFile>,
    /// Changed files with uncovered lines beyond those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more_files: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A changed file's lines no test ran.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UncoveredFile {
    /// Relative to the worktree.
    pub path: String,
    /// Inclusive ranges of consecutive uncovered line numbers.
    pub lines: Vec<(u32, u32)>,
    /// Ranges beyond those listed.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
}

impl Measured {
    /// The covered share in percent (100 for a report with no executable line, which
    /// [`measure`] never returns).
    pub fn percent(&self) -> f64 {
        match self.total {
            0 => 100.0,
            total => self.covered as f64 * 100.0 / total as f64,
        }
    }

    /// Whether at least `minimum` percent of the lines ran (exact, in integers).
    pub fn meets(&self, minimum: u8) -> bool {
        u128::from(self.covered) * 100 >= u128::from(minimum) * u128::from(self.total)
    }

    /// `72.5% (145 of 200 lines)`.
    pub fn describe(&self) -> String {
        describe(self.covered, self.total)
    }
}

/// `covered` of `total` lines as `72.5% (145 of 200 lines)`.
pub fn describe(covered: u64, total: u64) -> String {
    let percent = if total == 0 {
        100.0
    } else {
        covered as f64 * 100.0 / total as f64
    };
    format!("{} ({covered} of {total} lines)", percent_text(percent))
}

/// A percentage with one decimal, without a trailing `.0`, never rounded up to a threshold
/// (79.96% is `79.9%`, not `80%`).
pub fn percent_text(percent: f64) -> String {
    let tenths = (percent * 10.0).floor() / 10.0;
    if tenths.fract() == 0.0 {
        format!("{tenths:.0}%")
    } else {
        format!("{tenths:.1}%")
    }
}

impl fmt::Display for UncoveredFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ranges: Vec<String> = self
            .lines
            .iter()
            .map(|(a, b)| {
                if a == b {
                    a.to_string()
                } else {
                    format!("{a}-{b}")
                }
            })
            .collect();
        write!(f, "{} lines {}", self.path, ranges.join(", "))?;
        if self.more > 0 {
            write!(f, " and {} more range(s)", self.more)?;
        }
        Ok(())
    }
}

/// The uncovered lines of changed files as one clause: `src/a.py lines 3-4, 9; src/b.py
/// lines 12`.
pub fn uncovered_text(files: &[UncoveredFile], more_files: usize) -> String {
    let mut text = files
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ");
    if more_files > 0 && text.is_empty() {
        text = format!("{more_files} more file(s)");
    } else if more_files > 0 {
        text.push_str(&format!("; and {more_files} more file(s)"));
    }
    text
}

/// A report that lists no executable line measures nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the {} report lists no executable lines ({files} file(s)); is the command measuring the right sources?",
    format.as_str()
)]
pub struct NoLines {
    pub format: Format,
    pub files: usize,
}

/// Measures `report`: `roots` are the absolute paths the worktree is known by (the report's
/// absolute file names are made relative to them), `changed` the worktree-relative paths the
/// task branch changed, `exists` whether a worktree-relative path is a file (to choose among a
/// Cobertura report's source roots).
pub fn measure(
    report: &Report,
    roots: &[String],
    changed: &[String],
    exists: &dyn Fn(&str) -> bool,
) -> Result<Measured, NoLines> {
    let mut covered = 0u64;
    let mut total = 0u64;
    let mut by_path: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    for (name, lines) in &report.files {
        total += lines.len() as u64;
        covered += lines.values().filter(|hits| **hits > 0).count() as u64;
        let Some(path) = relative(name, &report.sources, roots, exists) else {
            continue;
        };
        if !changed.contains(&path) {
            continue;
        }
        let missed = by_path.entry(path).or_default();
        missed.extend(lines.iter().filter(|(_, h)| **h == 0).map(|(n, _)| *n));
    }
    if total == 0 {
        return Err(NoLines {
            format: report.format,
            files: report.files.len(),
        });
    }
    let mut files: Vec<UncoveredFile> = by_path
        .into_iter()
        .filter(|(_, lines)| !lines.is_empty())
        .map(|(path, mut lines)| {
            lines.sort_unstable();
            lines.dedup();
            let mut ranges = ranges(&lines);
            let more = ranges.len().saturating_sub(MAX_RANGES);
            ranges.truncate(MAX_RANGES);
            UncoveredFile {
                path,
                lines: ranges,
                more,
            }
        })
        .collect();
    let more_files = files.len().saturating_sub(MAX_FILES);
    files.truncate(MAX_FILES);
    Ok(Measured {
        format: report.format,
        covered,
        total,
        uncovered_changed: files,
        more_files,
    })
}

/// Sorted, distinct line numbers as inclusive ranges of consecutive numbers.
fn ranges(lines: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &line in lines {
        match out.last_mut() {
            Some((_, end)) if end.checked_add(1) == Some(line) => *end = line,
            _ => out.push((line, line)),
        }
    }
    out
}

/// A report's file name as a worktree-relative path, or `None` when it names a file outside
/// the worktree. A Cobertura name is tried under each source root; the first that names an
/// existing file wins, else the first that is inside the worktree.
fn relative(
    name: &str,
    sources: &[String],
    roots: &[String],
    exists: &dyn Fn(&str) -> bool,
) -> Option<String> {
    let candidates: Vec<String> = if name.starts_with('/') || sources.is_empty() {
        vec![name.to_string()]
    } else {
        sources
            .iter()
            .map(|source| format!("{}/{name}", source.trim_end_matches('/')))
            .chain(std::iter::once(name.to_string()))
            .collect()
    };
    let inside: Vec<String> = candidates
        .iter()
        .filter_map(|candidate| within(candidate, roots))
        .collect();
    inside
        .iter()
        .find(|path| exists(path))
        .or_else(|| inside.first())
        .cloned()
}

/// `path` (absolute, or relative to the worktree) as a normalized worktree-relative path.
fn within(path: &str, roots: &[String]) -> Option<String> {
    let rest = if path.starts_with('/') {
        let root = roots.iter().find_map(|root| {
            let root = root.trim_end_matches('/');
            path.strip_prefix(root)
                .filter(|rest| rest.starts_with('/'))
                .map(|rest| rest.to_string())
        })?;
        root
    } else {
        path.to_string()
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in rest.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

#[cfg(test)]
mod tests;
