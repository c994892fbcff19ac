//! Acceptance criteria: the top-level list items of the `## Acceptance Criteria` section, its
//! `### AC-001 …` headings that carry a paragraph instead, or the front matter's
//! `acceptance_criteria:` list.
//!
//! Rules (docs/config.md, "Task"), with the decisions the document leaves open:
//! - Items are bullet or numbered list items ([`super::section`]); sub-bullets and continuation
//!   lines belong to their item.
//! - A `###` (or deeper) heading that starts with an id (`### AC-001: Login works`) and has no
//!   list items under it is a criterion: its text is the rest of the heading and the paragraphs
//!   under it. GuardKit writes Given/When/Then criteria that way.
//! - Everything else in the section — group headings, prose, code blocks, tables — is kept in
//!   order: as the [`Criterion::preamble`] of the criterion it precedes, or in the task's
//!   criteria epilogue after the last one. It reaches the agents; it is not a criterion.
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

use super::body::{collapse_blank_runs, CriteriaSection};
use super::markdown::Line;
use super::section::{blocks, Block, Item};
use super::{Criterion, CRITERIA_HELP};
use base::diagnostic::Diagnostic;

base::regexes! {
    EXPLICIT_ID = r"^([A-Z]+-[0-9]+):\s*";

    /// An id opening a heading: `AC-001`, then the end, `:`, `.`, a dash or whitespace.
    HEADING_ID = r"^([A-Z]+-[0-9]+)(?:$|[\s:.\-\u{2013}\u{2014}]+)";
}

/// The criteria of a section and the section's text after the last one.
pub(crate) struct Parsed {
    pub criteria: Vec<Criterion>,
    pub epilogue: String,
}

/// One criterion before positional ids are assigned.
struct Draft<'a> {
    /// Where problems with it are reported.
    at: Line<'a>,
    text: String,
    checked: bool,
    preamble: String,
}

/// Parses the criteria section; a section without a single criterion is a problem.
pub(crate) fn parse(
    path: &Path,
    source: &str,
    section: &CriteriaSection<'_>,
    problems: &mut Vec<Diagnostic>,
) -> Parsed {
    let (drafts, epilogue) = drafts(&blocks(&section.lines));
    if drafts.is_empty() {
        problems.push(
            Diagnostic::at_offset(
                path,
                source,
                section.heading.offset,
                "the `## Acceptance Criteria` section lists no criteria",
            )
            .with_help(CRITERIA_HELP),
        );
        return Parsed {
            criteria: Vec::new(),
            epilogue,
        };
    }
    let criteria = finish(path, source, drafts, problems);
    Parsed { criteria, epilogue }
}

/// The criteria of a front-matter `acceptance_criteria:` list: each item is read like the text
/// of a list item, and problems are reported at `at` (the key's line).
pub(crate) fn from_list(
    path: &Path,
    source: &str,
    items: &[String],
    at: Line<'_>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<Criterion> {
    let drafts = items
        .iter()
        .map(|text| Draft {
            at,
            text: text.trim().to_string(),
            checked: false,
            preamble: String::new(),
        })
        .collect();
    finish(path, source, drafts, problems)
}

/// Turns the section's blocks into criteria drafts and the text after the last one.
fn drafts<'a>(blocks: &[Block<'a>]) -> (Vec<Draft<'a>>, String) {
    let mut drafts = Vec::new();
    let mut pending: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < blocks.len() {
        match &blocks[i] {
            Block::Item(item) => {
                drafts.push(Draft {
                    at: item.line,
                    text: item_text(item),
                    checked: item.checked,
                    preamble: collapse_blank_runs(&pending),
                });
                pending.clear();
            }
            Block::Heading { line, level, text } => {
                let under = blocks[i + 1..]
                    .iter()
                    .take_while(|b| !matches!(b, Block::Heading { .. }))
                    .collect::<Vec<_>>();
                let id = HEADING_ID
                    .captures(text)
                    .filter(|_| *level >= 3 && !under.iter().any(|b| matches!(b, Block::Item(_))));
                match id {
                    Some(caps) => {
                        let mut lines = vec![&text[caps[0].len()..]];
                        for block in &under {
                            if let Block::Other(other) = block {
                                lines.extend(other.iter().copied());
                            }
                        }
                        drafts.push(Draft {
                            at: *line,
                            text: format!("{}: {}", &caps[1], collapse_blank_runs(&lines)),
                            checked: false,
                            preamble: collapse_blank_runs(&pending),
                        });
                        pending.clear();
                        i += under.len();
                    }
                    None => pending.push(line.text),
                }
            }
            Block::Other(lines) => pending.extend(lines.iter().copied()),
        }
        i += 1;
    }
    (drafts, collapse_blank_runs(&pending))
}

/// Reads ids and verify commands, reports problems, and numbers the positional ids.
fn finish(
    path: &Path,
    source: &str,
    drafts: Vec<Draft<'_>>,
    problems: &mut Vec<Diagnostic>,
) -> Vec<Criterion> {
    let located = |line: &Line<'_>, message: String| {
        Diagnostic::at_offset(
            path,
            source,
            line.offset + leading_whitespace(line.text),
            message,
        )
    };

    let mut explicit: BTreeSet<String> = BTreeSet::new();
    let mut read = Vec::new();
    for draft in drafts {
        let text = draft.text;
        let (id, text) = match EXPLICIT_ID.captures(&text) {
            Some(caps) => {
                let id = caps[1].to_string();
                if !explicit.insert(id.clone()) {
                    problems.push(located(
                        &draft.at,
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
                problems.push(located(&draft.at, message));
                (text, None)
            }
        };
        let text = match (&verify, text.is_empty()) {
            (Some(cmd), true) => format!("`{cmd}` succeeds"),
            (None, true) => {
                problems.push(located(
                    &draft.at,
                    "empty acceptance criterion: write what must hold after the list marker"
                        .to_string(),
                ));
                continue;
            }
            _ => text,
        };
        read.push((id, text, verify, draft.checked, draft.preamble));
    }

    let mut used = explicit;
    let mut criteria = Vec::new();
    for (position, (id, text, verify, checked, preamble)) in read.into_iter().enumerate() {
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
            preamble,
        });
    }
    criteria
}

fn positional_id(number: usize) -> String {
    format!("AC-{number:03}")
}

fn leading_whitespace(text: &str) -> usize {
    text.len() - text.trim_start_matches([' ', '\t']).len()
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
        // An opening backtick before `verify:` that no span closes: without this the command
        // would silently become text the reviewer judges.
        [] if opens_unclosed_verify(text) => Err(
            "the `verify:` span has no closing backtick, so it is not a command; end the command \
             with a backtick (`verify: <command>`)"
                .to_string(),
        ),
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

/// Whether `text` has a backtick directly before `verify:` (any case) outside every code span.
fn opens_unclosed_verify(text: &str) -> bool {
    let spans = code_spans(text);
    let lower = text.to_ascii_lowercase();
    lower
        .match_indices("`verify:")
        .any(|(at, _)| !spans.iter().any(|span| span.start <= at && at < span.end))
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
