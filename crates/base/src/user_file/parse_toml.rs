//! TOML text → [`Node`] tree, with the position of every key and value.
//!
//! `toml::de::DeTable` keeps byte spans for keys and values; they become line/column positions
//! here. Syntax errors are reported with the parser's own location, every one of them the parser
//! recovers from.

use std::sync::Arc;

use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::diagnostic::Diagnostic;
use crate::user_file::source::Source;
use crate::user_file::tree::{Entry, Node, Table, Value};

/// Parses a whole TOML document into a table node.
pub fn parse(source: &Arc<Source>) -> Result<Node, Vec<Diagnostic>> {
    let (document, errors) = DeTable::parse_recoverable(&source.text);
    if !errors.is_empty() {
        return Err(errors
            .iter()
            .map(|e| syntax_error(source, e.span(), e.message()))
            .collect());
    }
    let span = document.span();
    let table = convert_table(source, 0, document.into_inner());
    Ok(Node::new(
        Value::Table(table),
        source.pos_at_offset(span.start),
    ))
}

/// Parses the text of `source` from byte `start` on as one TOML value (the right-hand side of
/// `--set key=value`); `None` when it is not a TOML value.
pub fn parse_value(source: &Arc<Source>, start: usize) -> Option<Node> {
    let value = DeValue::parse(source.text.get(start..)?).ok()?;
    Some(convert_value(source, start, value))
}

/// Converts a parsed value whose spans count from byte `base` of the source text.
fn convert_value(source: &Arc<Source>, base: usize, value: Spanned<DeValue<'_>>) -> Node {
    let pos = source.pos_at_offset(base + value.span().start);
    let value = match value.into_inner() {
        DeValue::String(s) => Value::String(s.into_owned()),
        DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
            Ok(n) => Value::Integer(n),
            // Out of range (or a form Rust does not read): keep the text; deserializing then
            // reports the type mismatch at this position.
            Err(_) => Value::String(i.as_str().to_string()),
        },
        DeValue::Float(f) => match f.as_str().parse() {
            Ok(x) => Value::Float(x),
            Err(_) => Value::String(f.as_str().to_string()),
        },
        DeValue::Boolean(b) => Value::Bool(b),
        DeValue::Datetime(d) => Value::String(d.to_string()),
        DeValue::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| convert_value(source, base, item))
                .collect(),
        ),
        DeValue::Table(t) => Value::Table(convert_table(source, base, t)),
    };
    Node::new(value, pos)
}

fn convert_table(source: &Arc<Source>, base: usize, table: DeTable<'_>) -> Table {
    let mut out = Table::default();
    for (key, value) in table {
        out.insert(Entry {
            key_pos: source.pos_at_offset(base + key.span().start),
            key: key.into_inner().into_owned(),
            value: convert_value(source, base, value),
        });
    }
    out
}

fn syntax_error(
    source: &Source,
    span: Option<std::ops::Range<usize>>,
    message: &str,
) -> Diagnostic {
    let message = format!("invalid TOML: {}", message.trim());
    match span {
        Some(span) => Diagnostic::at_offset(&source.path, &source.text, span.start, message),
        None => Diagnostic::new(&source.path, message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Location;
    use crate::user_file::source::Layer;

    fn src(text: &str) -> Arc<Source> {
        Source::new("w.toml", text, Layer::Repo)
    }

    #[test]
    fn keys_and_values_know_their_lines() {
        let tree = parse(&src("name = \"x\"\n[roles.coach]\nmodel = \"opus\"\n")).unwrap();
        let model = tree.get("roles").unwrap().get("coach").unwrap();
        let entry = model.as_table().unwrap().entry("model").unwrap();
        assert_eq!(entry.key_pos.location, Location { line: 3, column: 1 });
        assert_eq!(entry.value.pos.location, Location { line: 3, column: 9 });
        assert_eq!(entry.value.as_str(), Some("opus"));
    }

    #[test]
    fn arrays_of_tables_and_numbers_convert() {
        let tree = parse(&src(
            "[[steps]]\nid = \"a\"\nmax = 0x10\ncost = 2.5\n[[steps]]\nid = \"b\"\n",
        ))
        .unwrap();
        let steps = tree.get("steps").unwrap().as_array().unwrap();
        assert_eq!(steps.len(), 2);
        assert!(matches!(
            steps[0].get("max").unwrap().value,
            Value::Integer(16)
        ));
        assert!(matches!(steps[0].get("cost").unwrap().value, Value::Float(f) if f == 2.5));
        assert_eq!(steps[1].get("id").unwrap().pos.location.line, 6);
    }

    #[test]
    fn values_parse_from_an_offset() {
        let source = src("max_iterations=3");
        let node = parse_value(&source, 15).unwrap();
        assert!(matches!(node.value, Value::Integer(3)));
        assert_eq!(
            node.pos.location,
            Location {
                line: 1,
                column: 16
            }
        );
        assert!(parse_value(&src("model=opus"), 6).is_none());
    }

    #[test]
    fn syntax_errors_are_located() {
        let errors = parse(&src("name = \"x\"\nschema = \n")).unwrap_err();
        assert_eq!(errors[0].location.map(|l| l.line), Some(2));
        assert!(errors[0].message.starts_with("invalid TOML"));
    }

    #[test]
    fn duplicate_keys_are_syntax_errors() {
        let errors = parse(&src("name = \"x\"\nname = \"y\"\n")).unwrap_err();
        assert_eq!(errors[0].location.map(|l| l.line), Some(2));
    }
}
