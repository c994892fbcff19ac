//! Acceptance criteria: the top-level list items of the `## Acceptance Criteria` section.
//!
//! Rules (DESIGN.md §3.1), with the decisions the design left open:
//! - Items are lines starting with `- [ ]`, `- [x]`, `- `, or `* ` (the checkbox forms also with
//!   `*`) at the indentation of the section's first item. Deeper-indented lines, sub-bullets and
//!   lazy continuation lines belong to the item above them; after a blank line only indented
//!   lines do, so a closing paragraph is not glued to the last criterion. `###` sub-headings
//!   group items and are not part of any text.
//! - Markers are removed as exact prefixes: a criterion whose text starts with `x`, `-` or `[`
//!   keeps it.
//! - An id is explicit when the text starts with `WORD-<digits>:` (`AC-001:`, `REQ-7:`).
//!   Otherwise it is positional: `AC-<position>` (three digits, 1-based position in the list);
//!   when that id is already used by an explicit id or an earlier criterion, the next free
//!   number is taken. Duplicate explicit ids are an error.
//! - A code span whose content starts with `verify:` makes the criterion executable; the span
//!   is removed from the text. Use a double-backtick span when the command itself contains a
//!   backtick. A criterion that is only a verify span gets the text "`<command>` succeeds".

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use super::body::CriteriaSection;
use super::markdown::{heading, Fences, Line};
use super::{Criterion, CRITERIA_HELP};
use crate::diagnostic::Diagnostic;

static EXPLICIT_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Z]+-[0-9]+):\s*").expect("the explicit-id pattern is a valid regex")
});

/// A top-level item with the lines that belong to it.
struct Item<'a> {
    line: Line<'a>,
    first: &'a str,
    checked: bool,
    continuation: Vec<&'a str>,
}

/// Parses the criteria section; an empty section is a problem.
pub(crate) fn parse(
    path: &Path,
    source: &str,
    section: &CriteriaSection<'_>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<Criterion> {
    let items = group_items(&section.lines);
    if items.is_empty() {
        problems.push(
            Diagnostic::at_offset(
                path,
                source,
                section.heading.offset,
                "the `## Acceptance Criteria` section lists no criteria",
            )
            .with_help(CRITERIA_HELP),
        );
        return Vec::new();
    }
    let located = |line: &Line<'_>, message: String| {
        Diagnostic::at_offset(
            path,
            source,
            line.offset + leading_whitespace(line.text),
            message,
        )
    };

    let mut explicit: BTreeSet<String> = BTreeSet::new();
    let mut drafts = Vec::new();
    for item in &items {
        let text = item_text(item);
        let (id, text) = match EXPLICIT_ID.captures(&text) {
            Some(caps) => {
                let id = caps[1].to_string();
                if !explicit.insert(id.clone()) {
                    problems.push(located(
                        &item.line,
                        format!("criterion id `{id}` is used more than once in this list"),
                    ));
                }
                (Some(id), text[caps[0].len()..].to_string())
            }
            None => (None, text),
        };
        let (text, verify) = match extract_verify(&text) {
            Ok(pair) => pair,
            Err(message) => {
                problems.push(located(&item.line, message));
                (text, None)
            }
        };
        let text = match (&verify, text.is_empty()) {
            (Some(cmd), true) => format!("`{cmd}` succeeds"),
            (None, true) => {
                problems.push(located(
                    &item.line,
                    "empty acceptance criterion: write what must hold after the list marker"
                        .to_string(),
                ));
                continue;
            }
            _ => text,
        };
        drafts.push((id, text, verify, item.checked));
    }

    let mut used = explicit;
    let mut criteria = Vec::new();
    for (position, (id, text, verify, checked)) in drafts.into_iter().enumerate() {
        let id = id.unwrap_or_else(|| {
            let mut number = position + 1;
            while used.contains(&positional_id(number)) {
                number += 1;
            }
            let id = positional_id(number);
            used.insert(id.clone());
            id
        });
        criteria.push(Criterion {
            id,
            text,
            verify,
            checked,
        });
    }
    criteria
}

fn positional_id(number: usize) -> String {
    format!("AC-{number:03}")
}

/// Groups the section's lines into top-level items with their continuation lines.
fn group_items<'a>(section: &[Line<'a>]) -> Vec<Item<'a>> {
    let mut items: Vec<Item<'a>> = Vec::new();
    let mut open = false;
    let mut after_blank = false;
    let mut base_indent: Option<usize> = None;
    let mut fences = Fences::default();
    for line in section {
        let indent = line.indent();
        let deeper = base_indent.is_some_and(|base| indent > base);
        if fences.is_code(line.text) {
            if open && (deeper || !after_blank) {
                push_continuation(&mut items, line.text);
            }
            continue;
        }
        if line.is_blank() {
            after_blank = true;
            continue;
        }
        if heading(line.text).is_some() {
            open = false;
        } else if let Some((first, checked)) = list_item(line.text).filter(|_| !deeper) {
            base_indent = base_indent.or(Some(indent));
            items.push(Item {
                line: *line,
                first,
                checked,
                continuation: Vec::new(),
            });
            open = true;
        } else if open && (deeper || !after_blank) {
            push_continuation(&mut items, line.text);
        } else {
            open = false;
        }
        after_blank = false;
    }
    items
}

fn leading_whitespace(text: &str) -> usize {
    text.len() - text.trim_start_matches([' ', '\t']).len()
}

fn push_continuation<'a>(items: &mut [Item<'a>], text: &'a str) {
    if let Some(item) = items.last_mut() {
        item.continuation.push(text);
    }
}

/// The text of a list item line after its marker and checkbox, and whether it is checked.
fn list_item(text: &str) -> Option<(&str, bool)> {
    let trimmed = text.trim_start_matches([' ', '\t']);
    let rest = ["- ", "-\t", "* ", "*\t"]
        .iter()
        .find_map(|marker| trimmed.strip_prefix(marker))
        .or_else(|| (trimmed == "-" || trimmed == "*").then_some(""))?;
    let rest = rest.trim_start_matches([' ', '\t']);
    for (checkbox, checked) in [("[ ]", false), ("[x]", true), ("[X]", true)] {
        if let Some(after) = rest.strip_prefix(checkbox) {
            if after.is_empty() || after.starts_with([' ', '\t']) {
                return Some((after.trim(), checked));
            }
        }
    }
    Some((rest.trim_end(), false))
}

/// The item's first line plus its continuation lines, dedented together.
fn item_text(item: &Item<'_>) -> String {
    let indent = item
        .continuation
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| leading_whitespace(l))
        .min()
        .unwrap_or(0);
    let mut text = item.first.to_string();
    for line in &item.continuation {
        text.push('\n');
        text.push_str(line.get(indent..).unwrap_or(line.trim_start()).trim_end());
    }
    text.trim().to_string()
}

/// Removes the `verify:` code span from `text`; returns the remaining text and the command.
fn extract_verify(text: &str) -> Result<(String, Option<String>), String> {
    let verify_spans: Vec<CodeSpan> = code_spans(text)
        .into_iter()
        .filter(|span| verify_command(span.content).is_some())
        .collect();
    match verify_spans.as_slice() {
        [] => Ok((text.to_string(), None)),
        [span] => {
            let command = verify_command(span.content).unwrap_or_default();
            if command.is_empty() {
                return Err("the `verify:` span has no command after `verify:`".to_string());
            }
            let before = text[..span.start].trim_end();
            let after = text[span.end..].trim_start();
            let separator = if before.is_empty() || after.is_empty() {
                ""
            } else {
                " "
            };
            Ok((format!("{before}{separator}{after}").trim().to_string(), Some(command)))
        }
        _ => Err(
            "a criterion may have only one `verify:` command; join them with `&&` or split the criterion"
                .to_string(),
        ),
    }
}

/// The command of a `verify:` span's content, trimmed.
fn verify_command(content: &str) -> Option<String> {
    let content = content.trim_start();
    let head = content.get(..7)?;
    head.eq_ignore_ascii_case("verify:")
        .then(|| content[7..].trim().to_string())
}

/// A Markdown code span: byte range of the whole span (backticks included) and its content.
struct CodeSpan<'a> {
    start: usize,
    end: usize,
    content: &'a str,
}

/// The code spans of `text`: a run of N backticks up to the next run of exactly N backticks.
fn code_spans(text: &str) -> Vec<CodeSpan<'_>> {
    let bytes = text.as_bytes();
    let run_at = |i: usize| bytes[i..].iter().take_while(|b| **b == b'`').count();
    let mut spans = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'`' {
            i += 1;
            continue;
        }
        let open = run_at(i);
        let content_start = i + open;
        let mut j = content_start;
        let mut close = None;
        while j < bytes.len() {
            if bytes[j] == b'`' {
                let run = run_at(j);
                if run == open {
                    close = Some(j);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        match close {
            Some(close_start) => {
                let raw = &text[content_start..close_start];
                let content = match raw.strip_prefix(' ').and_then(|r| r.strip_suffix(' ')) {
                    Some(inner) if !inner.trim().is_empty() => inner,
                    _ => raw,
                };
                spans.push(CodeSpan {
                    start: i,
                    end: close_start + open,
                    content,
                });
                i = close_start + open;
            }
            None => i = content_start,
        }
    }
    spans
}
