//! Reading a coverage report: Cobertura XML (pytest-cov/coverage.py, cargo-llvm-cov
//! `--cobertura`, c8/nyc `--reporter=cobertura`, gocover-cobertura) with `quick-xml`, and LCOV
//! tracefiles (cargo-llvm-cov `--lcov`, grcov, c8/nyc `--reporter=lcov`, geninfo) with the
//! `lcov` crate. The format is recognised from the content, never from the file name.
//!
//! Only line coverage is read: for each source file, its executable lines and how often each
//! ran. Files listed more than once (Cobertura classes of one file, LCOV records of several
//! test names) are merged, a line counting as covered when any listing ran it.

use std::collections::BTreeMap;

use quick_xml::events::{BytesStart, Event};
use quick_xml::XmlVersion;
use serde::{Deserialize, Serialize};

/// The formats a report can be in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    Cobertura,
    Lcov,
}

impl Format {
    pub fn as_str(self) -> &'static str {
        match self {
            Format::Cobertura => "Cobertura XML",
            Format::Lcov => "LCOV",
        }
    }
}

/// What a report says, before its paths are related to the worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub format: Format,
    /// Cobertura's `<source>` roots, which its file names are relative to (empty for LCOV).
    pub sources: Vec<String>,
    /// Each source file as the report names it, with hits by line number.
    pub files: BTreeMap<String, BTreeMap<u32, u64>>,
}

/// Why a coverage report cannot be read; the words of the XML and LCOV parsers are kept as
/// text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReportError {
    #[error("the report is empty")]
    Empty,
    #[error("the report is neither Cobertura XML nor LCOV (no XML and no `SF:` record)")]
    UnknownFormat,
    #[error("invalid XML at byte {at}: {why}")]
    Xml { at: u64, why: String },
    #[error("the XML report's root element is `<{0}>`, not Cobertura's `<coverage>`")]
    NotCobertura(String),
    #[error("unknown XML entity `&{0};`")]
    UnknownEntity(String),
    #[error("the XML report has no `<coverage>` element")]
    NoCoverage,
    #[error("line number {0} is too large")]
    LineTooLarge(u64),
    #[error("a `<line>` element has no `{0}` attribute")]
    MissingAttribute(&'static str),
    #[error("`{name}=\"{value}\"` of a `<line>` is not a count")]
    NotACount { name: &'static str, value: String },
    #[error("invalid XML attribute: {0}")]
    Attribute(String),
    #[error("invalid XML attribute value: {0}")]
    AttributeValue(String),
    /// An LCOV `DA:` record outside an `SF:` record (`line` counts from 1).
    #[error("line {line}: a `DA:` record before any `SF:` record")]
    LineOutsideFile { line: usize },
    #[error("line {line}: `{record}`: {why}")]
    LcovRecord {
        line: usize,
        record: String,
        why: String,
    },
}

/// Reads `text` as whichever supported format it is in.
pub fn parse(text: &str) -> Result<Report, ReportError> {
    let body = text.trim_start_matches('\u{feff}').trim_start();
    if body.is_empty() {
        return Err(ReportError::Empty);
    }
    if body.starts_with('<') {
        cobertura(body)
    } else if body
        .lines()
        .any(|line| line.starts_with("SF:") || line.starts_with("TN:"))
    {
        lcov(body)
    } else {
        Err(ReportError::UnknownFormat)
    }
}

fn cobertura(text: &str) -> Result<Report, ReportError> {
    let mut reader = quick_xml::Reader::from_str(text);
    let mut report = Report {
        format: Format::Cobertura,
        sources: Vec::new(),
        files: BTreeMap::new(),
    };
    let mut root_seen = false;
    // The file of the `<class>` being read, and how deep inside `<method>` elements we are
    // (their `<line>`s repeat the class's own).
    let mut class: Option<String> = None;
    let mut in_method = 0usize;
    let mut source: Option<String> = None;
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event().map_err(|e| ReportError::Xml {
            at,
            why: e.to_string(),
        })?;
        match event {
            Event::Start(e) | Event::Empty(e)
                if !root_seen && !matches!(e.local_name().as_ref(), "coverage") =>
            {
                return Err(ReportError::NotCobertura(
                    e.local_name().as_ref().to_string(),
                ));
            }
            Event::Start(e) => {
                root_seen = true;
                match e.local_name().as_ref() {
                    "class" => class = Some(attribute(&e, "filename")?.unwrap_or_default()),
                    "method" => in_method += 1,
                    "source" => source = Some(String::new()),
                    "line" => line(&mut report, &e, class.as_deref(), in_method)?,
                    _ => {}
                }
            }
            Event::Empty(e) => {
                root_seen = true;
                if e.local_name().as_ref() == "line" {
                    line(&mut report, &e, class.as_deref(), in_method)?;
                }
            }
            Event::End(e) => match e.local_name().as_ref() {
                "class" => class = None,
                "method" => in_method = in_method.saturating_sub(1),
                "source" => {
                    if let Some(text) = source.take() {
                        let text = text.trim();
                        if !text.is_empty() {
                            report.sources.push(text.to_string());
                        }
                    }
                }
                _ => {}
            },
            Event::Text(t) => {
                if let Some(text) = source.as_mut() {
                    text.push_str(&t);
                }
            }
            Event::GeneralRef(r) => {
                if let Some(text) = source.as_mut() {
                    let name: &str = &r;
                    match quick_xml::escape::resolve_predefined_entity(name) {
                        Some(resolved) => text.push_str(resolved),
                        None => return Err(ReportError::UnknownEntity(name.to_string())),
                    }
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !root_seen {
        return Err(ReportError::NoCoverage);
    }
    Ok(report)
}

/// A `<line number=".." hits=".."/>` of the current class (not of one of its methods).
fn line(
    report: &mut Report,
    e: &BytesStart<'_>,
    class: Option<&str>,
    in_method: usize,
) -> Result<(), ReportError> {
    let Some(file) = class.filter(|_| in_method == 0) else {
        return Ok(());
    };
    let at = count(e, "number")?;
    let hits = count(e, "hits")?;
    let line = u32::try_from(at).map_err(|_| ReportError::LineTooLarge(at))?;
    let lines = report.files.entry(file.to_string()).or_default();
    let entry = lines.entry(line).or_insert(0);
    *entry = (*entry).max(hits);
    Ok(())
}

fn count(e: &BytesStart<'_>, name: &'static str) -> Result<u64, ReportError> {
    let value = attribute(e, name)?.ok_or(ReportError::MissingAttribute(name))?;
    // Some writers say `hits="1.0"`; a count is never fractional in practice.
    let trimmed = value.trim();
    trimmed
        .parse::<u64>()
        .ok()
        .or_else(|| {
            trimmed
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite() && *f >= 0.0)
                .map(|f| f as u64)
        })
        .ok_or_else(|| ReportError::NotACount {
            name,
            value: value.clone(),
        })
}

fn attribute(e: &BytesStart<'_>, name: &str) -> Result<Option<String>, ReportError> {
    for attr in e.attributes() {
        let attr = attr.map_err(|e| ReportError::Attribute(e.to_string()))?;
        if attr.key.local_name().as_ref() == name {
            let value = attr
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|e| ReportError::AttributeValue(e.to_string()))?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}

fn lcov(text: &str) -> Result<Report, ReportError> {
    use lcov::Record;
    let mut report = Report {
        format: Format::Lcov,
        sources: Vec::new(),
        files: BTreeMap::new(),
    };
    let mut file: Option<String> = None;
    for (index, raw) in text.lines().enumerate() {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        match raw.parse::<Record>() {
            Ok(Record::SourceFile { path }) => {
                let path = path.to_string_lossy().into_owned();
                report.files.entry(path.clone()).or_default();
                file = Some(path);
            }
            Ok(Record::LineData { line, count, .. }) => {
                let Some(path) = &file else {
                    return Err(ReportError::LineOutsideFile { line: index + 1 });
                };
                let lines = report.files.entry(path.clone()).or_default();
                let entry = lines.entry(line).or_insert(0);
                *entry = (*entry).max(count);
            }
            Ok(Record::EndOfRecord) => file = None,
            Ok(_) => {}
            // Newer lcov versions add records (`VER:`, `FNL:`, `FNA:`) line coverage does not
            // need.
            Err(lcov::record::ParseRecordError::UnknownRecord) => {}
            Err(e) => {
                return Err(ReportError::LcovRecord {
                    line: index + 1,
                    record: raw.to_string(),
                    why: e.to_string(),
                })
            }
        }
    }
    Ok(report)
}
