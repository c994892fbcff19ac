//! YAML text → [`Node`] tree, with the position of every key and value.
//!
//! `yaml_serde` reports locations only for syntax errors; a validator also needs them for keys
//! and values of a *valid* document (an unknown key, a wrong type). So YAML is read here from
//! `saphyr-parser`'s event stream, whose events carry markers, into the same tree TOML produces.
//! Plain scalars are typed by the YAML 1.2 core schema (`true`, `3`, `2.5`, `~`); quoted and
//! block scalars are strings. Anchors and aliases are supported, within the bounds of
//! [`crate::user_file::yaml_limits`] (aliases may copy at most 10,000 values into a document,
//! which may nest at most 128 levels): past them parsing stops with an error located at the
//! alias or collection that crossed the bound, before the tree grows. Duplicate keys are errors.

use std::collections::HashMap;
use std::sync::Arc;

use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Tag};

use crate::diagnostic::{Diagnostic, Location};
use crate::user_file::source::{Pos, Source};
use crate::user_file::tree::{Entry, Node, Table, Value};
use crate::user_file::yaml_limits::{Budget, Exceeded};

/// Parses a YAML document into a node; an empty document is an empty table.
pub fn parse(source: &Arc<Source>) -> Result<Node, Vec<Diagnostic>> {
    parse_part(source, &source.text)
}

/// Parses `text`, a part of `source` laid out on the same lines and columns as it is written
/// there (the YAML front matter of a task file, with the lines before it left empty), so every
/// position points into `source` and its snippets show the file's own lines.
pub fn parse_part(source: &Arc<Source>, text: &str) -> Result<Node, Vec<Diagnostic>> {
    let mut builder = Builder::default();
    let mut parser = Parser::new_from_str(text);
    let mut documents = 0;
    while let Some(next) = parser.next_event() {
        let (event, span) = next.map_err(|e| vec![scan_error(source, &e)])?;
        let pos = position(source, span.start);
        match event {
            Event::DocumentStart(_) => {
                documents += 1;
                if documents > 1 {
                    return Err(vec![
                        pos.error("a second YAML document: the file must hold exactly one")
                    ]);
                }
            }
            Event::Scalar(text, style, anchor, tag) => {
                builder.budget.scalar(anchor);
                if builder.expects_key() {
                    builder.set_key(text.into_owned(), pos);
                } else {
                    let node = Node::new(scalar(&text, style, tag.as_deref()), pos);
                    builder.complete(node, anchor);
                }
            }
            Event::Alias(anchor) => {
                builder
                    .budget
                    .alias(anchor, span.start)
                    .map_err(|e| vec![exceeded(source, e)])?;
                let Some(node) = builder.anchors.get(&anchor).cloned() else {
                    return Err(vec![pos.error("alias of an unknown anchor")]);
                };
                if builder.expects_key() {
                    match node.as_str() {
                        Some(key) => builder.set_key(key.to_string(), pos),
                        None => return Err(vec![pos.error("keys must be strings")]),
                    }
                } else {
                    builder.complete(node, 0);
                }
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if builder.expects_key() {
                    return Err(vec![pos.error("keys must be strings, not tables or lists")]);
                }
                builder
                    .budget
                    .open(anchor, span.start)
                    .map_err(|e| vec![exceeded(source, e)])?;
                let container = match event {
                    Event::SequenceStart(..) => Container::Array(Vec::new()),
                    _ => Container::Table {
                        table: Table::default(),
                        key: None,
                    },
                };
                builder.stack.push(Frame {
                    pos,
                    anchor,
                    container,
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                builder.budget.close();
                builder.close();
            }
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
        }
    }
    if !builder.errors.is_empty() {
        return Err(builder.errors);
    }
    Ok(builder.root.unwrap_or_else(|| {
        Node::new(
            Value::Table(Table::default()),
            source.pos(Location { line: 1, column: 1 }),
        )
    }))
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    errors: Vec<Diagnostic>,
    budget: Budget,
}

struct Frame {
    pos: Pos,
    anchor: usize,
    container: Container,
}

enum Container {
    Array(Vec<Node>),
    Table {
        table: Table,
        /// The key read last, waiting for its value.
        key: Option<(String, Pos)>,
    },
}

impl Builder {
    fn expects_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                container: Container::Table { key: None, .. },
                ..
            })
        )
    }

    fn set_key(&mut self, name: String, pos: Pos) {
        if let Some(Frame {
            container: Container::Table { key, .. },
            ..
        }) = self.stack.last_mut()
        {
            *key = Some((name, pos));
        }
    }

    fn close(&mut self) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        let value = match frame.container {
            Container::Array(items) => Value::Array(items),
            Container::Table { table, .. } => Value::Table(table),
        };
        self.complete(Node::new(value, frame.pos), frame.anchor);
    }

    /// Attaches a finished value to its parent (or makes it the document).
    fn complete(&mut self, node: Node, anchor: usize) {
        if anchor > 0 {
            self.anchors.insert(anchor, node.clone());
        }
        match self.stack.last_mut().map(|f| &mut f.container) {
            None => self.root = Some(node),
            Some(Container::Array(items)) => items.push(node),
            Some(Container::Table { table, key }) => {
                let Some((name, key_pos)) = key.take() else {
                    return;
                };
                if let Some(first) = table.entry(&name) {
                    let first_line = first.key_pos.location.line;
                    self.errors.push(
                        key_pos
                            .error(format!("duplicate key `{name}`"))
                            .with_help(format!("`{name}` is already set on line {first_line}")),
                    );
                    return;
                }
                table.insert(Entry {
                    key: name,
                    key_pos,
                    value: node,
                });
            }
        }
    }
}

/// Types a scalar by the YAML 1.2 core schema; only plain scalars can be non-strings.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Value {
    let forced_string = tag.is_some_and(|t| t.is_yaml_core_schema() && t.suffix == "str");
    if style != ScalarStyle::Plain || forced_string {
        return Value::String(text.to_string());
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY)
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN),
        _ => {}
    }
    if let Some(n) = integer(text) {
        return Value::Integer(n);
    }
    crate::regexes! {
        /// A YAML 1.2 core-schema float.
        FLOAT = r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$";
    }
    if FLOAT.is_match(text) {
        if let Ok(f) = text.parse() {
            return Value::Float(f);
        }
    }
    Value::String(text.to_string())
}

fn integer(text: &str) -> Option<i64> {
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok();
    }
    if let Some(octal) = text.strip_prefix("0o") {
        return i64::from_str_radix(octal, 8).ok();
    }
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn position(source: &Arc<Source>, marker: Marker) -> Pos {
    source.pos(Location {
        line: marker.line().max(1),
        column: marker.col() + 1,
    })
}

fn exceeded(source: &Arc<Source>, exceeded: Exceeded) -> Diagnostic {
    source
        .pos(exceeded.location)
        .error(exceeded.message)
        .with_help(exceeded.help)
}

fn scan_error(source: &Arc<Source>, error: &ScanError) -> Diagnostic {
    let at = position(source, *error.marker()).location;
    let message = format!("invalid YAML: {}", error.info());
    match origin(&source.text, at, error.info()) {
        Some((mistake, why)) => source
            .pos(mistake)
            .error(format!("{message} (line {}); {why}", at.line)),
        None => source.pos(at).error(message),
    }
}

/// Where the mistake behind a scan error the parser noticed at `at` is, when it is elsewhere:
/// a flow collection (`[`, `{`) opened on an earlier line and never closed (the parser only
/// notices at a later line), or the tab a plain scalar's scan found after the scalar's start.
/// With what to say about it.
fn origin(text: &str, at: Location, info: &str) -> Option<(Location, String)> {
    if info.contains("tab") {
        let start = text
            .lines()
            .take(at.line.saturating_sub(1))
            .map(|line| line.len() + 1)
            .sum::<usize>()
            + at.column.saturating_sub(1);
        let tab = start + text.get(start..)?.find('\t')?;
        let line = text[..tab].matches('\n').count() + 1;
        let column = tab - text[..tab].rfind('\n').map_or(0, |n| n + 1) + 1;
        return (line != at.line || column != at.column).then(|| {
            (
                Location { line, column },
                "YAML does not allow a tab here: indent with spaces".to_string(),
            )
        });
    }
    let mut open: Vec<(Location, char)> = Vec::new();
    for (index, line) in text.lines().take(at.line.saturating_sub(1)).enumerate() {
        let mut quote: Option<char> = None;
        let mut before = String::new();
        for (column, c) in line.chars().enumerate() {
            let starts_value = {
                let t = before.trim_end();
                t.is_empty() || t.ends_with([':', '-', ',', '[', '{'])
            };
            match (quote, c) {
                (Some(q), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, '"' | '\'') if starts_value => quote = Some(c),
                (None, '#') if before.is_empty() || before.ends_with(' ') => break,
                (None, '[' | '{') if starts_value || !open.is_empty() => open.push((
                    Location {
                        line: index + 1,
                        column: column + 1,
                    },
                    c,
                )),
                (None, ']' | '}') if !open.is_empty() => {
                    open.pop();
                }
                _ => {}
            }
            before.push(c);
        }
    }
    let (opened, bracket) = *open.first()?;
    let close = if bracket == '[' { ']' } else { '}' };
    Some((
        opened,
        format!("the `{bracket}` here is never closed: add the `{close}`, or quote the value"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::user_file::source::Layer;

    fn parse_text(text: &str) -> Result<Node, Vec<Diagnostic>> {
        parse(&Source::new("w.yaml", text, Layer::Repo))
    }

    #[test]
    fn keys_and_values_know_their_lines() {
        let tree = parse_text("name: x\nroles:\n  coach:\n    model: opus\n").unwrap();
        let coach = tree.get("roles").unwrap().get("coach").unwrap();
        let entry = coach.as_table().unwrap().entry("model").unwrap();
        assert_eq!(entry.key_pos.location, Location { line: 4, column: 5 });
        assert_eq!(
            entry.value.pos.location,
            Location {
                line: 4,
                column: 12
            }
        );
    }

    #[test]
    fn plain_scalars_follow_the_core_schema() {
        let tree =
            parse_text("a: 3\nb: 2.5\nc: true\nd: ~\ne: '3'\nf: 3a\ng: 0x10\nh: .inf\n").unwrap();
        let value = |k: &str| tree.get(k).unwrap().value.clone();
        assert!(matches!(value("a"), Value::Integer(3)));
        assert!(matches!(value("b"), Value::Float(f) if f == 2.5));
        assert!(matches!(value("c"), Value::Bool(true)));
        assert!(matches!(value("d"), Value::Null));
        assert!(matches!(value("e"), Value::String(s) if s == "3"));
        assert!(matches!(value("f"), Value::String(s) if s == "3a"));
        assert!(matches!(value("g"), Value::Integer(16)));
        assert!(matches!(value("h"), Value::Float(f) if f.is_infinite()));
    }

    #[test]
    fn sequences_of_mappings_and_aliases() {
        let tree = parse_text("base: &b {x: 1}\nsteps:\n  - id: a\n  - *b\n").unwrap();
        let steps = tree.get("steps").unwrap().as_array().unwrap();
        assert_eq!(steps[0].get_str("id"), Some("a"));
        assert!(matches!(
            steps[1].get("x").unwrap().value,
            Value::Integer(1)
        ));
    }

    #[test]
    fn duplicate_keys_and_syntax_errors_are_located() {
        let errors = parse_text("a: 1\nb: 2\na: 3\n").unwrap_err();
        assert_eq!(errors[0].location.map(|l| l.line), Some(3));
        assert!(errors[0].message.contains("duplicate key `a`"));

        let errors = parse_text("a: [1, 2\nb: 3\n").unwrap_err();
        assert!(errors[0].message.starts_with("invalid YAML"));
        assert!(errors[0].location.is_some());
    }

    #[test]
    fn a_scan_error_points_at_the_mistake_not_where_the_parser_noticed_it() {
        for (text, line, column) in [
            // An unclosed flow sequence: noticed a line later.
            ("a: 1\nb: [x\nc: 3\n", 2, 4),
            ("a: 1\nb: {x: 1\nc: 3\n", 2, 4),
            // A tab after a plain scalar's start: noticed at the scalar.
            ("a: ok\n\tb: 2\n", 2, 1),
        ] {
            let errors = parse_text(text).unwrap_err();
            assert_eq!(
                errors[0].location,
                Some(Location { line, column }),
                "{text:?}: {errors:?}"
            );
        }
        // Closed on its own line, or a bracket inside a plain value: where the parser says.
        let errors = parse_text("a: [1,\n  2]\nb: a[0\nc: d: e\n").unwrap_err();
        assert_eq!(errors[0].location.map(|l| l.line), Some(4), "{errors:?}");
    }

    #[test]
    fn an_alias_bomb_stops_at_the_alias_that_crosses_the_bound() {
        let errors = parse_text(&crate::user_file::yaml_limits::tests::laughs()).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert!(errors[0].message.contains("too many aliases"), "{errors:?}");
        assert_eq!(errors[0].location.map(|l| l.line), Some(5));
        assert!(errors[0]
            .help
            .as_deref()
            .unwrap_or("")
            .contains("billion laughs"));
    }

    #[test]
    fn nesting_past_the_bound_is_an_error_not_a_stack_overflow() {
        let errors = parse_text(&("- ".repeat(200_000) + "x\n")).unwrap_err();
        assert!(errors[0].message.contains("nests more than 128 levels"));
    }

    #[test]
    fn empty_document_is_an_empty_table() {
        assert!(parse_text("").unwrap().as_table().unwrap().is_empty());
    }
}
