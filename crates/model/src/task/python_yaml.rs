//! A front matter's YAML as Python's YAML reads it, where that is more lenient than the spec.
//!
//! GuardKit's loader reads task files with PyYAML, so GuardKit's files carry what PyYAML
//! accepts and a parser that follows the spec (autobuild's) refuses. Two such shapes are
//! everyday GuardKit files, and both are rewritten here, line by line, before the YAML is
//! parsed, keeping every line where it is so that every diagnostic stays true:
//!
//! - a key written twice in a mapping, at any level (GuardKit's tools write `status:` again
//!   when they move a task; a tool's nested report repeats `passed:`): PyYAML keeps the last
//!   value, so all but the last occurrence are blanked out (same byte length). Whether a repeat
//!   is acceptable is the caller's decision: a key autobuild reads must not have two values.
//! - a multi-line flow collection whose closing `]` or `}` line is at column 0
//!   (`files: [\n  "a.md"\n]`): PyYAML does not check a flow collection's indentation, so that
//!   line is indented by one space. Only a front matter the spec-following parse refuses is
//!   read that way ([`parse`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use base::diagnostic::Diagnostic;
use base::user_file::parse_yaml::parse_part;
use base::user_file::source::Source;
use base::user_file::tree::Node;

/// A key given more than once in one mapping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repeat {
    /// The key, after the keys of the mappings it is nested in: `status`,
    /// `quality_gates.tests.passed`.
    pub key: String,
    /// Byte offsets (within the YAML text) of the key at each of its lines, in file order.
    pub offsets: Vec<usize>,
    /// Every occurrence says the same (the same text, ignoring trailing whitespace).
    pub agree: bool,
}

/// One `key:` line and the lines of its value.
struct Block {
    key: String,
    indent: usize,
    /// The block of the mapping entry it is nested in.
    parent: Option<usize>,
    /// `key:` with nothing after it on its line: a nested mapping may follow.
    opens: bool,
    start: usize,
    end: usize,
}

/// The keys of `yaml` repeated within one block mapping, and the YAML with all but the last
/// occurrence of each blanked out. Only block mappings are looked into: the lines of a value
/// written on its key's line (a block scalar, a flow collection) and of sequence items are
/// the value's.
pub(crate) fn dedupe(yaml: &str) -> (String, Vec<Repeat>) {
    let mut blocks: Vec<Block> = Vec::new();
    // The blocks still open, innermost last; a sequence item's lines are opaque.
    let mut open: Vec<usize> = Vec::new();
    let mut opaque_below: Option<usize> = None;
    let mut offset = 0;
    for raw in yaml.split_inclusive('\n') {
        let start = offset;
        offset += raw.len();
        let text = raw.trim_start_matches(' ');
        let indent = raw.len() - text.len();
        if text.trim().is_empty() || text.starts_with(['#', '\t']) {
            continue;
        }
        if opaque_below.is_some_and(|item| indent > item) {
            continue;
        }
        if text.starts_with("- ") || text.trim_end() == "-" {
            close(&mut open, &mut blocks, indent + 1, start);
            opaque_below = Some(indent);
            continue;
        }
        let Some(key) = key_of(text) else {
            continue;
        };
        opaque_below = None;
        close(&mut open, &mut blocks, indent, start);
        let parent = open.last().copied();
        let nested = parent.map_or(indent == 0, |p| blocks[p].opens);
        if !nested {
            continue;
        }
        let opens = text.trim_end().ends_with(':');
        open.push(blocks.len());
        blocks.push(Block {
            key,
            indent,
            parent,
            opens,
            start,
            end: yaml.len(),
        });
    }

    let mut by_key: BTreeMap<(Option<usize>, &str), Vec<usize>> = BTreeMap::new();
    for (i, block) in blocks.iter().enumerate() {
        by_key
            .entry((block.parent, &block.key))
            .or_default()
            .push(i);
    }
    let mut cleaned = yaml.as_bytes().to_vec();
    let mut blanked: Vec<(usize, usize)> = Vec::new();
    let mut repeats = Vec::new();
    // Outer mappings first, so a repeat inside a blanked-out occurrence is not reported again.
    let mut groups: Vec<Vec<usize>> = by_key.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_by_key(|g| blocks[g[0]].indent);
    for group in groups {
        let span = |i: usize| (blocks[i].start, blocks[i].end);
        if blanked
            .iter()
            .any(|&(s, e)| (s..e).contains(&blocks[group[0]].start))
        {
            continue;
        }
        for &i in &group[..group.len() - 1] {
            let (start, end) = span(i);
            blanked.push((start, end));
            for byte in &mut cleaned[start..end] {
                if *byte != b'\n' {
                    *byte = b' ';
                }
            }
        }
        let text = |i: usize| {
            let (start, end) = span(i);
            yaml[start..end].trim_end()
        };
        repeats.push(Repeat {
            key: key_path(&blocks, group[0]),
            offsets: group
                .iter()
                .map(|&i| blocks[i].start + blocks[i].indent)
                .collect(),
            agree: group.iter().all(|&i| text(i) == text(group[0])),
        });
    }
    repeats.sort_by_key(|r| r.offsets.last().copied());
    // Only ASCII bytes were written over whole lines' content, so this cannot fail; fall back
    // to the original text rather than panic if it ever did.
    let cleaned = String::from_utf8(cleaned).unwrap_or_else(|_| yaml.to_string());
    (cleaned, repeats)
}

/// Ends, at `at`, the open blocks indented by `indent` or more.
fn close(open: &mut Vec<usize>, blocks: &mut [Block], indent: usize, at: usize) {
    while let Some(&last) = open.last() {
        if blocks[last].indent < indent {
            break;
        }
        blocks[last].end = at;
        open.pop();
    }
}

/// `parent.child.key` for the block `i`.
fn key_path(blocks: &[Block], i: usize) -> String {
    let mut keys = vec![blocks[i].key.as_str()];
    let mut at = blocks[i].parent;
    while let Some(p) = at {
        keys.push(&blocks[p].key);
        at = blocks[p].parent;
    }
    keys.reverse();
    keys.join(".")
}

/// The key of a line (its indentation removed) that starts a `key: value` entry.
fn key_of(line: &str) -> Option<String> {
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

/// Parses the front matter `yaml` of `file`, which starts at `yaml_offset`; only when the spec
/// refuses it, it is read again with its flow collections' closers indented
/// ([`indent_flow_closers`]), and each of those gets a warning.
pub(crate) fn parse(
    file: &Arc<Source>,
    yaml_offset: usize,
    yaml: &str,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Node, Vec<Diagnostic>> {
    // The YAML on the lines it has in the file, so positions need no translating.
    let lines_before = "\n".repeat(file.text[..yaml_offset].matches('\n').count());
    let errors = match parse_part(file, &format!("{lines_before}{yaml}")) {
        Ok(tree) => return Ok(tree),
        Err(errors) => errors,
    };
    let Some((fixed, closers)) = indent_flow_closers(yaml) else {
        return Err(errors);
    };
    let tree = parse_part(file, &format!("{lines_before}{fixed}")).map_err(|_| errors)?;
    warnings.extend(closers.into_iter().map(|at| {
        let at = yaml_offset + at;
        let closer = file.text[at..].chars().next().unwrap_or(']');
        Diagnostic::at_offset(
            &file.path,
            &file.text,
            at,
            format!(
                "this `{closer}` at column 1 closes the flow collection opened above, as \
                 GuardKit's loader (Python's YAML) reads it; YAML requires it to be indented"
            ),
        )
        .with_help(format!("indent the `{closer}` by two spaces"))
    }));
    Ok(tree)
}

/// `yaml` with each line that holds only a flow collection's closing `]` or `}` at column 0
/// indented by one space, as PyYAML reads it, and the byte offsets (within `yaml`) of those
/// lines; `None` when there is none.
pub(crate) fn indent_flow_closers(yaml: &str) -> Option<(String, Vec<usize>)> {
    let mut fixed = String::with_capacity(yaml.len() + 8);
    let mut offsets = Vec::new();
    let mut offset = 0;
    for line in yaml.split_inclusive('\n') {
        if matches!(line.trim_end(), "]" | "}") && !line.starts_with(' ') {
            offsets.push(offset);
            fixed.push(' ');
        }
        fixed.push_str(line);
        offset += line.len();
    }
    (!offsets.is_empty()).then_some((fixed, offsets))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repeated(yaml: &str) -> Vec<(String, Vec<usize>)> {
        let (cleaned, repeats) = dedupe(yaml);
        assert_eq!(cleaned.len(), yaml.len());
        repeats.into_iter().map(|r| (r.key, r.offsets)).collect()
    }

    #[test]
    fn keeps_the_last_of_each_repeated_key_and_every_offset() {
        let yaml = "id: T1\nstatus: backlog\ntags:\n- a\n- b\nstatus: in_review\n\"tags\": [c]\n";
        let (cleaned, _) = dedupe(yaml);
        assert_eq!(
            cleaned,
            "id: T1\n               \n     \n   \n   \nstatus: in_review\n\"tags\": [c]\n"
        );
        assert_eq!(
            repeated(yaml),
            [
                ("status".into(), vec![7, 37]),
                ("tags".into(), vec![23, 55])
            ]
        );
    }

    #[test]
    fn repeats_in_nested_mappings_are_found_by_their_path() {
        let yaml = "gates:\n  tests:\n    passed: 3\n    passed: true\n  other:\n    passed: 1\n";
        let (cleaned, _) = dedupe(yaml);
        assert_eq!(
            cleaned,
            "gates:\n  tests:\n             \n    passed: true\n  other:\n    passed: 1\n"
        );
        assert_eq!(
            repeated(yaml),
            [("gates.tests.passed".into(), vec![20, 34])]
        );
        // A repeat inside an occurrence that is blanked out is not reported twice.
        let yaml = "a:\n  b: 1\n  b: 2\na:\n  c: 3\n";
        assert_eq!(repeated(yaml), [("a".into(), vec![0, 17])]);
    }

    #[test]
    fn sequence_items_scalars_and_flow_values_are_not_mappings_to_look_into() {
        for yaml in [
            "steps:\n  - name: a\n    run: x\n  - name: b\n    run: y\n",
            "steps:\n- name: a\n  run: x\n- name: b\n  run: y\n",
            "turns:\n- a: 1\n  text: 'x\n\n    - y'\n  b: 2\n- a: 2\n  b: 3\n",
            "notes: |\n  run: x\n  run: y\n",
            "files: {\n  a: 1,\n  a: 2 }\n",
            "a:\n  b: 1\nc:\n  b: 2\n",
        ] {
            assert_eq!(repeated(yaml), [], "{yaml}");
        }
    }

    #[test]
    fn nested_keys_urls_and_plain_text_are_not_keys() {
        for line in ["- status: x\n", "# status: x\n", "status:x\n", "[a]: b\n"] {
            assert_eq!(key_of(line), None, "{line}");
        }
        assert_eq!(key_of("url: http://a\n").as_deref(), Some("url"));
        assert_eq!(key_of("key:\n").as_deref(), Some("key"));
        assert_eq!(key_of("'a b': 1\n").as_deref(), Some("a b"));
    }

    #[test]
    fn flow_closers_at_column_zero_are_indented() {
        type Indented<'a> = Option<(&'a str, Vec<usize>)>;
        let cases: [(&str, Indented); 4] = [
            (
                "files: [\n  \"a.md\"\n]\nx: {\n  a: 1\n}\n",
                Some(("files: [\n  \"a.md\"\n ]\nx: {\n  a: 1\n }\n", vec![18, 32])),
            ),
            ("files: [\n  a\n  ]\n", None),
            ("files: [a]\n", None),
            ("text: \"]\"\n", None),
        ];
        for (yaml, expected) in cases {
            let got = indent_flow_closers(yaml);
            let got = got.as_ref().map(|(t, o)| (t.as_str(), o.clone()));
            assert_eq!(got, expected, "{yaml}");
        }
    }
}
