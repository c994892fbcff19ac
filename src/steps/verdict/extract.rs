//! Finding the verdict JSON in a coach's final message when the adapter has no structured output.
//!
//! Models wrap JSON in prose and code fences, and sometimes quote example JSON before their real
//! answer. The rule is positional and documented so it is predictable: the **last** fenced block
//! tagged `json` (or untagged and starting with `{`) wins; without one, the **last** balanced
//! top-level `{…}` span of the text that parses as a JSON object wins. Nothing here looks at
//! words such as "approved": prose is never a verdict.

use serde_json::Value;

/// Where the verdict JSON came from, for error messages the coach can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    StructuredOutput,
    FencedBlock,
    BareObject,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Origin::StructuredOutput => "structured output",
            Origin::FencedBlock => "last ```json block of the final message",
            Origin::BareObject => "last JSON object of the final message",
        })
    }
}

/// The text of the verdict candidate and where it was found, or `None` when the message holds
/// neither a candidate fenced block nor a JSON object.
pub fn find_candidate(message: &str) -> Option<(&str, Origin)> {
    if let Some(block) = last_fenced_json_block(message) {
        return Some((block, Origin::FencedBlock));
    }
    last_bare_object(message).map(|object| (object, Origin::BareObject))
}

/// The content of the last fenced block that is tagged `json` or is untagged and starts with
/// `{`. An unclosed fence runs to the end of the text, as in CommonMark, so a truncated answer
/// yields a syntax error rather than an older block.
fn last_fenced_json_block(message: &str) -> Option<&str> {
    let mut last = None;
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
            last = Some(content);
        }
    }
    last
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

/// The last balanced top-level `{…}` span that parses as a JSON object. Braces inside JSON
/// strings do not count; a span that is not valid JSON is searched for objects nested inside it.
/// When a JSON object is opened after it and never closed, the answer was cut off (a killed or
/// truncated agent): an earlier object is then a draft, not the verdict, and nothing is found.
fn last_bare_object(message: &str) -> Option<&str> {
    let mut last = None;
    let mut search_from = 0;
    let mut cut_off = false;
    while let Some(open) = message[search_from..].find('{').map(|i| i + search_from) {
        match matching_brace(message.as_bytes(), open) {
            Some(close) => {
                let span = &message[open..=close];
                if matches!(serde_json::from_str::<Value>(span), Ok(Value::Object(_))) {
                    last = Some(span);
                    cut_off = false;
                    search_from = close + 1;
                } else {
                    search_from = open + 1;
                }
            }
            None => {
                cut_off |= message[open + 1..].trim_start().starts_with('"');
                search_from = open + 1;
            }
        }
    }
    if cut_off {
        None
    } else {
        last
    }
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

    #[test]
    fn prefers_the_last_json_fence() {
        let message = "Example:\n```json\n{\"a\": 1}\n```\nVerdict:\n```json\n{\"a\": 2}\n```\n";
        assert_eq!(
            find_candidate(message),
            Some(("{\"a\": 2}\n", Origin::FencedBlock))
        );
    }

    #[test]
    fn accepts_untagged_fences_holding_an_object_but_not_other_languages() {
        let message = "```\n{\"a\": 1}\n```\n```python\n{\"b\": 2}\n```\n";
        assert_eq!(
            find_candidate(message),
            Some(("{\"a\": 1}\n", Origin::FencedBlock))
        );
    }

    #[test]
    fn accepts_indented_and_tilde_fences() {
        let message = "1. verdict:\n   ~~~JSON\n   {\"a\": 1}\n   ~~~\n";
        assert_eq!(
            find_candidate(message),
            Some(("   {\"a\": 1}\n", Origin::FencedBlock))
        );
    }

    #[test]
    fn an_unclosed_fence_runs_to_the_end() {
        let message = "```json\n{\"a\": 1}\n```\n```json\n{\"decision\": \"appr";
        assert_eq!(
            find_candidate(message),
            Some(("{\"decision\": \"appr", Origin::FencedBlock))
        );
    }

    #[test]
    fn finds_the_last_top_level_object_in_prose() {
        let message = r#"First {"a": {"x": 1}} then {"b": "brace } in a string \" and {"} done."#;
        assert_eq!(
            find_candidate(message),
            Some((
                r#"{"b": "brace } in a string \" and {"}"#,
                Origin::BareObject
            ))
        );
    }

    #[test]
    fn skips_prose_braces_and_finds_objects_nested_in_non_json_spans() {
        let message = r#"Use {name} here. {not json {"a": 1} either} and an unclosed { brace"#;
        assert_eq!(
            find_candidate(message),
            Some((r#"{"a": 1}"#, Origin::BareObject))
        );
    }

    #[test]
    fn handles_multibyte_text_around_objects() {
        let message = "Résumé — «ok» {\"é\": \"ü{\"} ✓";
        assert_eq!(
            find_candidate(message),
            Some(("{\"é\": \"ü{\"}", Origin::BareObject))
        );
    }

    #[test]
    fn prose_alone_has_no_candidate() {
        assert_eq!(find_candidate("IMPLEMENTATION_APPROVED"), None);
        assert_eq!(find_candidate("```python\nprint(1)\n```"), None);
        assert_eq!(find_candidate("[1, 2, 3]"), None);
    }
}
