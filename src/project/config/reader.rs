//! Typed access to a spanned TOML document that reports problems instead of stopping at them.
//!
//! Every accessor checks one value (a table, a string, a duration, …) and, when it is wrong,
//! records a located [`Diagnostic`] and returns `None`, so the caller goes on reading the rest
//! of the file and the user sees every problem of one load at once.

use std::borrow::Cow;
use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::diagnostic::{did_you_mean, Diagnostic};

/// A key with the span it was written at.
pub(super) type Key<'i> = Spanned<Cow<'i, str>>;
/// A value with the span it was written at.
pub(super) type Item<'i> = Spanned<DeValue<'i>>;

const DURATION_FORM: &str = r#"write it like "90s", "20m" or "1h 30m""#;

/// Reads values of the file at `path` whose text is `source`, collecting problems.
pub(super) struct Reader<'a> {
    path: &'a Path,
    source: &'a str,
    problems: Vec<Diagnostic>,
}

impl<'a> Reader<'a> {
    pub(super) fn new(path: &'a Path, source: &'a str) -> Reader<'a> {
        Reader {
            path,
            source,
            problems: Vec::new(),
        }
    }

    /// Every problem reported while reading.
    pub(super) fn into_problems(self) -> Vec<Diagnostic> {
        self.problems
    }

    /// The text of the file at `span`, as the user wrote it.
    pub(super) fn written(&self, span: Range<usize>) -> &'a str {
        self.source.get(span).unwrap_or_default()
    }

    pub(super) fn duration(&mut self, name: &str, item: &Item<'_>) -> Option<Duration> {
        let DeValue::String(text) = item.get_ref() else {
            self.report(
                item.span(),
                format!(
                    "`{name}` must be a duration string, found {}",
                    describe(item.get_ref())
                ),
                Some(format!("{DURATION_FORM}, in quotes")),
            );
            return None;
        };
        match humantime::parse_duration(text.trim()) {
            Ok(duration) if duration.is_zero() => {
                let field = name.rsplit('.').next().unwrap_or(name);
                self.report(
                    item.span(),
                    format!("`{field}` must be greater than zero"),
                    None,
                );
                None
            }
            Ok(duration) => Some(duration),
            Err(_) => {
                self.report(
                    item.span(),
                    format!("invalid duration {text:?}: {DURATION_FORM}"),
                    None,
                );
                None
            }
        }
    }

    pub(super) fn table<'t, 'i>(
        &mut self,
        name: &str,
        item: &'t Item<'i>,
    ) -> Option<&'t DeTable<'i>> {
        match item.get_ref() {
            DeValue::Table(table) => Some(table),
            other => {
                self.wrong_type(name, "a table", other, item.span());
                None
            }
        }
    }

    pub(super) fn array<'t, 'i>(
        &mut self,
        name: &str,
        item: &'t Item<'i>,
    ) -> Option<&'t [Item<'i>]> {
        match item.get_ref() {
            DeValue::Array(items) => Some(items),
            other => {
                self.wrong_type(name, "an array", other, item.span());
                None
            }
        }
    }

    pub(super) fn string<'t>(&mut self, name: &str, item: &'t Item<'_>) -> Option<&'t str> {
        match item.get_ref() {
            DeValue::String(text) => Some(text.as_ref()),
            other => {
                self.wrong_type(name, "a string", other, item.span());
                None
            }
        }
    }

    /// A string that must be one of `values` (spelled by `as_str`); any other is reported as
    /// "unknown value `…` for `{shown}`" with a did-you-mean. `name` names the key in a type error.
    pub(super) fn one_of<T: Copy>(
        &mut self,
        name: &str,
        shown: &str,
        item: &Item<'_>,
        values: &[T],
        as_str: fn(T) -> &'static str,
    ) -> Option<T> {
        let text = self.string(name, item)?;
        let found = values.iter().copied().find(|value| as_str(*value) == text);
        if found.is_none() {
            let names: Vec<&str> = values.iter().map(|value| as_str(*value)).collect();
            self.report(
                item.span(),
                format!("unknown value `{text}` for `{shown}`"),
                Some(suggestion(text, &names, "values")),
            );
        }
        found
    }

    pub(super) fn boolean(&mut self, name: &str, item: &Item<'_>) -> Option<bool> {
        match item.get_ref() {
            DeValue::Boolean(value) => Some(*value),
            other => {
                self.wrong_type(name, "a boolean", other, item.span());
                None
            }
        }
    }

    /// The trimmed string, or `None` after reporting `blank` when it is blank.
    pub(super) fn non_blank(&mut self, name: &str, item: &Item<'_>, blank: &str) -> Option<String> {
        let text = self.string(name, item)?;
        if text.trim().is_empty() {
            self.report(item.span(), blank, None);
            None
        } else {
            Some(text.trim().to_string())
        }
    }

    fn wrong_type(&mut self, name: &str, expected: &str, found: &DeValue<'_>, span: Range<usize>) {
        let name = if name.starts_with("an ") {
            name.to_string()
        } else {
            format!("`{name}`")
        };
        self.report(
            span,
            format!("{name} must be {expected}, found {}", describe(found)),
            None,
        );
    }

    pub(super) fn unknown_key(&mut self, key: &Key<'_>, place: &str, known: &[&str]) {
        let name = key.get_ref().as_ref();
        self.report(
            key.span(),
            format!("unknown key `{name}` {place}"),
            Some(suggestion(name, known, "keys")),
        );
    }

    /// A diagnostic pointing at `span`, to report later (its message is filled in then).
    pub(super) fn at(&self, span: Range<usize>) -> Diagnostic {
        Diagnostic::at_offset(self.path, self.source, span.start, "")
    }

    pub(super) fn report(
        &mut self,
        span: Range<usize>,
        message: impl Into<String>,
        help: Option<String>,
    ) {
        let diagnostic = Diagnostic::at_offset(self.path, self.source, span.start, message);
        self.problems.push(match help {
            Some(help) => diagnostic.with_help(help),
            None => diagnostic,
        });
    }
}

/// "did you mean" when one name is close, else the list of what is allowed.
pub(super) fn suggestion(name: &str, known: &[&str], what: &str) -> String {
    match did_you_mean(name, known.iter().copied()) {
        Some(close) => format!("did you mean `{close}`?"),
        None => format!("expected one of the {what}: {}", known.join(", ")),
    }
}

/// `the integer 5`, `the string "x"`, `a table`: what was written, for type errors.
pub(super) fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(text) => format!("the string {text:?}"),
        DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_) => {
            format!("the {} {}", value.type_str(), plain_text(value))
        }
        DeValue::Datetime(datetime) => format!("the datetime {datetime}"),
        DeValue::Array(_) => "an array".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

/// A scalar as the user wrote it, without quotes.
pub(super) fn plain_text(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(text) => text.to_string(),
        DeValue::Integer(integer) => integer.to_string(),
        DeValue::Float(float) => float.to_string(),
        DeValue::Boolean(flag) => flag.to_string(),
        DeValue::Datetime(datetime) => datetime.to_string(),
        DeValue::Array(_) | DeValue::Table(_) => "...".to_string(),
    }
}
