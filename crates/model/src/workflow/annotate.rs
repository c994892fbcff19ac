//! `workflows show --resolved`: the resolved TOML, with a comment on every value a higher layer
//! set saying where it came from (`model = "opus"  # .autobuild/workflows/my.toml:5`).
//!
//! The resolved text is parsed again and walked alongside the merged tree (whose values keep
//! their positions); values from the base document of the `extends` chain stay unmarked.

use std::collections::BTreeMap;
use std::sync::Arc;

use base::user_file::parse_toml;
use base::user_file::source::{Layer, Pos, Source};
use base::user_file::tree::{Node, Value};

/// The resolved TOML text with a header listing the layers and origin comments.
pub fn annotate(resolved: &str, merged: &Node) -> String {
    let source = Source::new("resolved", resolved, Layer::File);
    let Ok(written) = parse_toml::parse(&source) else {
        return resolved.to_string();
    };
    let mut notes: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    collect(&written, merged, &merged.pos, &mut notes);

    let mut out = String::from("# Resolved from (lowest precedence first):\n");
    for layer in layers(merged) {
        out.push_str(&format!(
            "#   {} ({})\n",
            layer.path.display(),
            layer.layer.label()
        ));
    }
    out.push('\n');
    for (index, line) in resolved.lines().enumerate() {
        out.push_str(line);
        if let Some(origins) = notes.get(&(index + 1)) {
            out.push_str("  # ");
            out.push_str(&origins.join(", "));
        }
        out.push('\n');
    }
    out
}

/// Notes, by line of the resolved text, the origin of every value not from `base`'s source.
fn collect(written: &Node, merged: &Node, base: &Pos, notes: &mut BTreeMap<usize, Vec<String>>) {
    match (&written.value, &merged.value) {
        (Value::Table(w), Value::Table(m)) => {
            for entry in w.iter() {
                if let Some(value) = m.get(&entry.key) {
                    collect(&entry.value, value, base, notes);
                }
            }
        }
        (Value::Array(w), Value::Array(m))
            if w.iter().all(|n| n.as_table().is_some()) && !w.is_empty() =>
        {
            for (index, item) in w.iter().enumerate() {
                let counterpart = match item.get_str("id") {
                    Some(id) => m.iter().find(|n| n.get_str("id") == Some(id)),
                    None => m.get(index),
                };
                if let Some(counterpart) = counterpart {
                    collect(item, counterpart, base, notes);
                }
            }
        }
        _ => {
            if !merged.pos.same_source(base) {
                notes
                    .entry(written.pos.location.line)
                    .or_default()
                    .push(merged.pos.describe());
            }
        }
    }
}

/// The distinct sources of the merged tree's values, lowest precedence first.
fn layers(merged: &Node) -> Vec<Arc<Source>> {
    let mut sources: Vec<Arc<Source>> = Vec::new();
    merged.walk(&mut |node| {
        if !sources.iter().any(|s| Arc::ptr_eq(s, &node.pos.source)) {
            sources.push(Arc::clone(&node.pos.source));
        }
    });
    sources.sort_by_key(|s| s.layer);
    sources
}
