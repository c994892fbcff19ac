//! Top-level keys written twice in a front matter.
//!
//! GuardKit's own tools write `status:` a second time when they move a task, and Python's YAML
//! loader keeps the last value, so such files are everyday GuardKit files. A YAML parser that
//! follows the spec rejects them, pointing at the mapping's first line. Here the front matter
//! is scanned line by line first: every repeated top-level key is found at its own line, and
//! all but its last occurrence are blanked out (same byte length, so every offset and every
//! later diagnostic stays true) before the YAML is parsed. Whether a repeat is acceptable is
//! the caller's decision: a key autobuild reads must not have two values.

use std::collections::BTreeMap;

/// A key given more than once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repeat {
    pub key: String,
    /// Byte offsets (within the YAML text) of the key's lines, in file order.
    pub offsets: Vec<usize>,
    /// Every occurrence says the same (the same text, ignoring trailing whitespace).
    pub agree: bool,
}

/// The repeated top-level keys of `yaml`, and the YAML with all but the last occurrence of each
/// blanked out.
pub(crate) fn dedupe(yaml: &str) -> (String, Vec<Repeat>) {
    let mut blocks: Vec<(String, usize, usize)> = Vec::new();
    let mut offset = 0;
    for raw in yaml.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        if let Some(key) = top_level_key(raw) {
            blocks.push((key, start, offset));
        } else if belongs_to_previous(raw) {
            if let Some(last) = blocks.last_mut() {
                last.2 = offset;
            }
        }
    }
    let mut by_key: BTreeMap<&str, Vec<(usize, usize)>> = BTreeMap::new();
    for (key, start, end) in &blocks {
        by_key.entry(key).or_default().push((*start, *end));
    }
    let mut cleaned = yaml.as_bytes().to_vec();
    let mut repeats = Vec::new();
    for (key, spans) in by_key.into_iter().filter(|(_, spans)| spans.len() > 1) {
        for &(start, end) in &spans[..spans.len() - 1] {
            for byte in &mut cleaned[start..end] {
                if *byte != b'\n' {
                    *byte = b' ';
                }
            }
        }
        let text = |&(start, end): &(usize, usize)| yaml[start..end].trim_end();
        let agree = spans.iter().all(|span| text(span) == text(&spans[0]));
        repeats.push(Repeat {
            key: key.to_string(),
            offsets: spans.iter().map(|(start, _)| *start).collect(),
            agree,
        });
    }
    repeats.sort_by_key(|r| r.offsets.last().copied());
    // Only ASCII bytes were written over whole lines' content, so this cannot fail; fall back
    // to the original text rather than panic if it ever did.
    let cleaned = String::from_utf8(cleaned).unwrap_or_else(|_| yaml.to_string());
    (cleaned, repeats)
}

/// The key of a line that starts a top-level `key: value` entry.
fn top_level_key(line: &str) -> Option<String> {
    let first = line.chars().next()?;
    if first.is_whitespace() || matches!(first, '#' | '-' | '?' | '[' | '{' | '&' | '*' | '!') {
        return None;
    }
    let (key, rest) = match first {
        '"' | '\'' => {
            let close = line[1..].find(first)? + 1;
            (&line[1..close], &line[close + 1..])
        }
        _ => {
            let colon = line.find(": ").or_else(|| {
                let trimmed = line.trim_end();
                trimmed.ends_with(':').then(|| trimmed.len() - 1)
            })?;
            (line[..colon].trim_end(), &line[colon..])
        }
    };
    let after = rest.trim_start().strip_prefix(':')?;
    (after.is_empty() || after.starts_with([' ', '\t', '\r', '\n'])).then(|| key.to_string())
}

/// Lines that continue the entry above: indented lines, blank lines, comments, and the `- `
/// items of a sequence written at column 0.
fn belongs_to_previous(line: &str) -> bool {
    line.trim().is_empty()
        || line.starts_with([' ', '\t', '#'])
        || line.starts_with("- ")
        || line.trim_end() == "-"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_of_each_repeated_key_and_every_offset() {
        let yaml = "id: T1\nstatus: backlog\ntags:\n- a\n- b\nstatus: in_review\n\"tags\": [c]\n";
        let (cleaned, repeats) = dedupe(yaml);
        assert_eq!(cleaned.len(), yaml.len());
        assert_eq!(
            cleaned,
            "id: T1\n               \n     \n   \n   \nstatus: in_review\n\"tags\": [c]\n"
        );
        let got: Vec<(&str, &[usize])> = repeats
            .iter()
            .map(|r| (r.key.as_str(), r.offsets.as_slice()))
            .collect();
        assert_eq!(got, vec![("status", &[7, 37][..]), ("tags", &[23, 55][..])]);
    }

    #[test]
    fn nested_keys_urls_and_plain_text_are_not_keys() {
        for line in [
            "  status: x\n",
            "- status: x\n",
            "url: http://a\n",
            "# status: x\n",
        ] {
            assert_ne!(top_level_key(line).as_deref(), Some("status"), "{line}");
        }
        assert_eq!(top_level_key("url: http://a\n").as_deref(), Some("url"));
        assert_eq!(top_level_key("key:\n").as_deref(), Some("key"));
        assert_eq!(dedupe("a: 1\nb: 2\n").1, Vec::new());
    }
}
