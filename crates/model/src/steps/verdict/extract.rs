//! Finding the verdict JSON in a coach's final message when the adapter has no structured output.
//!
//! Models wrap JSON in prose and code fences, quote example JSON before or after their real
//! answer, and sometimes write two verdicts. This module only finds the candidates, in order:
//! every fenced block tagged `json` (or untagged and starting with `{`); without one, every
//! balanced top-level `{…}` span of the text that parses as a JSON object (comments and
//! trailing commas tolerated). Which candidate is the verdict is decided by the reader
//! (`read.rs`). Nothing here looks at words such as "approved": prose is never a verdict.

use super::lenient;

/// Where the verdict JSON came from, for error messages the coach can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    StructuredOutput,
    /// Block `index` (1-based) of the `count` JSON blocks of the final message.
    FencedBlock {
        index: usize,
        count: usize,
    },
    /// Object `index` (1-based) of the `count` JSON objects of the final message.
    BareObject {
        index: usize,
        count: usize,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, index, count) = match *self {
            Origin::StructuredOutput => return f.write_str("structured output"),
            Origin::FencedBlock { index, count } => ("```json block", index, count),
            Origin::BareObject { index, count } => ("JSON object", index, count),
        };
        match count {
            1 => write!(f, "{what} of the final message"),
            _ if index == count => {
                write!(f, "last {what} ({index} of {count}) of the final message")
            }
            _ => write!(f, "{what} {index} of {count} of the final message"),
        }
    }
}

/// The verdict candidates of `message`, in order, each with where it was found: the fenced
/// JSON blocks when there is one, else the top-level JSON objects. Empty when the message holds
/// neither.
pub fn candidates(message: &str) -> Vec<(&str, Origin)> {
    let fenced = fenced_json_blocks(message);
    if !fenced.is_empty() {
        let count = fenced.len();
        return fenced
            .into_iter()
            .enumerate()
            .map(|(i, text)| {
                (
                    text,
                    Origin::FencedBlock {
                        index: i + 1,
                        count,
                    },
                )
            })
            .collect();
    }
    let bare = bare_objects(message);
    let count = bare.len();
    bare.into_iter()
        .enumerate()
        .map(|(i, text)| {
            (
                text,
                Origin::BareObject {
                    index: i + 1,
                    count,
                },
            )
        })
        .collect()
}

/// The contents of the fenced blocks that are tagged `json` or are untagged and start with
/// `{`. An unclosed fence runs to the end of the text, as in CommonMark, so a truncated answer
/// yields a block with a syntax error rather than nothing.
fn fenced_json_blocks(message: &str) -> Vec<&str> {
    let mut blocks = Vec::new();
    let mut lines = LineSpans::new(message);
    while let Some((line_start, line)) = lines.next() {
        let Some((fence_char, fence_len, info)) = opening_fence(line) else {
            continue;
        };
        let content_start = line_start + line.len();
        let mut content_end = message.len();
        for (start, inner) in lines.by_ref() {
            if closes_fence(inner, fence_char, fence_len) {
                content_end = start;
                break;
            }
        }
        let content = message[content_start..content_end].trim_start_matches(['\r', '\n']);
        let language = info.split_whitespace().next().unwrap_or("");
        let tagged_json = language.eq_ignore_ascii_case("json");
        let untagged_object = language.is_empty() && content.trim_start().starts_with('{');
        if tagged_json || untagged_object {
            blocks.push(content);
        }
    }
    blocks
}

/// Lines with the byte offset where each starts; the line text excludes its newline.
struct LineSpans<'a> {
    text: &'a str,
    offset: usize,
}

impl<'a> LineSpans<'a> {
    fn new(text: &'a str) -> Self {
        LineSpans { text, offset: 0 }
    }
}

impl<'a> Iterator for LineSpans<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.offset >= self.text.len() {
            return None;
        }
        let start = self.offset;
        let rest = &self.text[start..];
        let (line, advance) = match rest.find('\n') {
            Some(end) => (&rest[..end], end + 1),
            None => (rest, rest.len()),
        };
        self.offset += advance;
        Some((start, line))
    }
}

/// `(fence char, fence length, info string)` when `line` opens a fenced code block. Any
/// indentation is accepted because models indent fences inside list items.
fn opening_fence(line: &str) -> Option<(char, usize, &str)> {
    let trimmed = line.trim_start();
    let fence_char = trimmed.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let fence_len = trimmed.chars().take_while(|c| *c == fence_char).count();
    if fence_len < 3 {
        return None;
    }
    let info = trimmed[fence_len..].trim();
    if fence_char == '`' && info.contains('`') {
        return None;
    }
    Some((fence_char, fence_len, info))
}

fn closes_fence(line: &str, fence_char: char, fence_len: usize) -> bool {
    let trimmed = line.trim();
    trimmed.len() >= fence_len && trimmed.chars().all(|c| c == fence_char)
}

/// The balanced top-level `{…}` spans that parse as JSON objects. Braces inside JSON strings do
/// not count; a span that is not valid JSON is searched for objects nested inside it. When a
/// JSON object is opened after the last one and never closed, the answer was cut off (a killed
/// or truncated agent): that unclosed rest is returned last, so the reader sees a syntax error
/// rather than taking an earlier draft for the verdict.
fn bare_objects(message: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut search_from = 0;
    let mut cut_off = None;
    while let Some(open) = message[search_from..].find('{').map(|i| i + search_from) {
        match matching_brace(message.as_bytes(), open) {
            Some(close) => {
                let span = &message[open..=close];
                if lenient::parse_json(span).is_ok_and(|value| value.is_object()) {
                    found.push(span);
                    search_from = close + 1;
                } else {
                    search_from = open + 1;
                }
            }
            None => {
                // Everything after an unclosed object is inside it.
                if message[open + 1..].trim_start().starts_with('"') {
                    cut_off = Some(open);
                    break;
                }
                search_from = open + 1;
            }
        }
    }
    if let Some(open) = cut_off {
        found.push(&message[open..]);
    }
    found
}

/// The index of the `}` closing the `{` at `open`, skipping over JSON strings and their escapes.
/// Works on bytes: the ASCII delimiters never occur inside multi-byte UTF-8 sequences.
fn matching_brace(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (index, &byte) in bytes.iter().enumerate().skip(open) {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(index);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last(message: &str) -> Option<(&str, Origin)> {
        candidates(message).pop()
    }

    #[test]
    fn lists_every_json_fence_in_order() {
        let message = "Example:\n```json\n{\"a\": 1}\n```\nVerdict:\n```json\n{\"a\": 2}\n```\n";
        assert_eq!(
            candidates(message),
            vec![
                ("{\"a\": 1}\n", Origin::FencedBlock { index: 1, count: 2 }),
                ("{\"a\": 2}\n", Origin::FencedBlock { index: 2, count: 2 }),
            ]
        );
    }

    #[test]
    fn accepts_untagged_fences_holding_an_object_but_not_other_languages() {
        let message = "```\n{\"a\": 1}\n```\n```python\n{\"b\": 2}\n```\n";
        assert_eq!(
            candidates(message),
            vec![("{\"a\": 1}\n", Origin::FencedBlock { index: 1, count: 1 })]
        );
    }

    #[test]
    fn accepts_indented_and_tilde_fences() {
        let message = "1. verdict:\n   ~~~JSON\n   {\"a\": 1}\n   ~~~\n";
        assert_eq!(
            last(message),
            Some((
                "   {\"a\": 1}\n",
                Origin::FencedBlock { index: 1, count: 1 }
            ))
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let message = "```json\n{\"a\": 1}\n```\n```json\n{\"decision\": \"appr";
        assert_eq!(
            last(message),
            Some((
                "{\"decision\": \"appr",
                Origin::FencedBlock { index: 2, count: 2 }
            ))
        );
    }

    #[test]
    fn finds_the_top_level_objects_in_prose() {
        let message = r#"First {"a": {"x": 1}} then {"b": "brace } in a string \" and {"} done."#;
        assert_eq!(
            candidates(message),
            vec![
                (
                    r#"{"a": {"x": 1}}"#,
                    Origin::BareObject { index: 1, count: 2 }
                ),
                (
                    r#"{"b": "brace } in a string \" and {"}"#,
                    Origin::BareObject { index: 2, count: 2 }
                ),
            ]
        );
    }

    #[test]
    fn skips_prose_braces_and_finds_objects_nested_in_non_json_spans() {
        let message = r#"Use {name} here. {not json {"a": 1} either} and an unclosed { brace"#;
        assert_eq!(
            candidates(message),
            vec![(r#"{"a": 1}"#, Origin::BareObject { index: 1, count: 1 })]
        );
    }

    #[test]
    fn a_bare_object_with_a_trailing_comma_is_found() {
        let message = "Verdict: {\"a\": 1,} done";
        assert_eq!(
            candidates(message),
            vec![("{\"a\": 1,}", Origin::BareObject { index: 1, count: 1 })]
        );
    }

    #[test]
    fn a_cut_off_object_comes_last() {
        let message = r#"Draft {"a": 1} final {"decision": "feedback", "summ"#;
        assert_eq!(
            last(message),
            Some((
                r#"{"decision": "feedback", "summ"#,
                Origin::BareObject { index: 2, count: 2 }
            ))
        );
    }

    #[test]
    fn handles_multibyte_text_around_objects() {
        let message = "Résumé — «ok» {\"é\": \"ü{\"} ✓";
        assert_eq!(
            last(message),
            Some(("{\"é\": \"ü{\"}", Origin::BareObject { index: 1, count: 1 }))
        );
    }

    #[test]
    fn prose_alone_has_no_candidate() {
        assert!(candidates("IMPLEMENTATION_APPROVED").is_empty());
        assert!(candidates("```python\nprint(1)\n```").is_empty());
        assert!(candidates("[1, 2, 3]").is_empty());
    }

    #[test]
    fn origins_say_which_block() {
        assert_eq!(
            Origin::FencedBlock { index: 1, count: 1 }.to_string(),
            "```json block of the final message"
        );
        assert_eq!(
            Origin::BareObject { index: 2, count: 2 }.to_string(),
            "last JSON object (2 of 2) of the final message"
        );
        assert_eq!(
            Origin::FencedBlock { index: 1, count: 3 }.to_string(),
            "```json block 1 of 3 of the final message"
        );
    }
}
