//! One document tree for TOML and YAML, where every key and value knows where it was written.
//!
//! TOML and YAML parse into this same tree ([`crate::user_file::parse_toml`],
//! [`crate::user_file::parse_yaml`]), layers merge on it (`workflow::merge`), and the typed
//! model is decoded from it (`workflow::decode`). Keeping positions on the tree instead
//! of on the typed model means the model stays plain data while every error still points at
//! `path:line:col`.

use serde_json::Value as Json;

use crate::user_file::source::Pos;

/// A value with the position it was written at.
#[derive(Debug, Clone)]
pub struct Node {
    pub value: Value,
    pub pos: Pos,
}

#[derive(Debug, Clone)]
pub enum Value {
    /// YAML's `~`/`null`; TOML has no null.
    Null,
    Bool(bool),
    Integer(i64),
    Float(f64),
    String(String),
    Array(Vec<Node>),
    Table(Table),
}

/// A map that keeps the order keys were written in.
#[derive(Debug, Clone, Default)]
pub struct Table {
    entries: Vec<Entry>,
}

#[derive(Debug, Clone)]
pub struct Entry {
    pub key: String,
    pub key_pos: Pos,
    pub value: Node,
}

/// One step of a path into a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    Key(String),
    Index(usize),
}

impl Seg {
    pub fn key(name: &str) -> Seg {
        Seg::Key(name.to_string())
    }
}

impl Table {
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Node> {
        self.entries
            .iter_mut()
            .find(|e| e.key == key)
            .map(|e| &mut e.value)
    }

    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.key == key)
    }

    /// Replaces the value of an existing key in place, or appends the entry.
    pub fn insert(&mut self, entry: Entry) {
        match self.entries.iter_mut().find(|e| e.key == entry.key) {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    pub fn remove(&mut self, key: &str) -> Option<Entry> {
        let index = self.entries.iter().position(|e| e.key == key)?;
        Some(self.entries.remove(index))
    }

    pub fn iter(&self) -> impl Iterator<Item = &Entry> {
        self.entries.iter()
    }

    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.key.as_str())
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

impl IntoIterator for Table {
    type Item = Entry;
    type IntoIter = std::vec::IntoIter<Entry>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl Node {
    pub fn new(value: Value, pos: Pos) -> Node {
        Node { value, pos }
    }

    pub fn as_table(&self) -> Option<&Table> {
        match &self.value {
            Value::Table(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_table_mut(&mut self) -> Option<&mut Table> {
        match &mut self.value {
            Value::Table(t) => Some(t),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match &self.value {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The value of `key` when this is a table.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_table()?.get(key)
    }

    /// The string value of `key` when this is a table and the value is a string.
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// What kind of value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Integer(_) => "an integer",
            Value::Float(_) => "a float",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }

    /// The node at `path`, if every step exists.
    pub fn at(&self, path: &[Seg]) -> Option<&Node> {
        path.iter()
            .try_fold(self, |node, seg| match (seg, &node.value) {
                (Seg::Key(k), Value::Table(t)) => t.get(k),
                (Seg::Index(i), Value::Array(items)) => items.get(*i),
                _ => None,
            })
    }

    pub fn at_mut(&mut self, path: &[Seg]) -> Option<&mut Node> {
        let mut node = self;
        for seg in path {
            node = match (seg, &mut node.value) {
                (Seg::Key(k), Value::Table(t)) => t.get_mut(k)?,
                (Seg::Index(i), Value::Array(items)) => items.get_mut(*i)?,
                _ => return None,
            };
        }
        Some(node)
    }

    /// Removes the value at `path` (a table entry or an array element); false when absent.
    pub fn remove_at(&mut self, path: &[Seg]) -> bool {
        let Some((last, parent)) = path.split_last() else {
            return false;
        };
        match (last, self.at_mut(parent).map(|n| &mut n.value)) {
            (Seg::Key(k), Some(Value::Table(t))) => t.remove(k).is_some(),
            (Seg::Index(i), Some(Value::Array(items))) if *i < items.len() => {
                items.remove(*i);
                true
            }
            _ => false,
        }
    }

    /// The tree as JSON, for deserializing the typed model. Non-finite floats, which JSON cannot
    /// hold, become null; [`Node::non_finite_floats`] reports them first.
    pub fn to_json(&self) -> Json {
        match &self.value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Integer(i) => Json::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::String(s) => Json::String(s.clone()),
            Value::Array(items) => Json::Array(items.iter().map(Node::to_json).collect()),
            Value::Table(t) => Json::Object(
                t.iter()
                    .map(|e| (e.key.clone(), e.value.to_json()))
                    .collect(),
            ),
        }
    }

    /// Every `inf`/`nan` in the tree: no setting accepts them.
    pub fn non_finite_floats(&self) -> Vec<&Node> {
        let mut out = Vec::new();
        self.walk(&mut |node| {
            if matches!(node.value, Value::Float(f) if !f.is_finite()) {
                out.push(node);
            }
        });
        out
    }

    /// Calls `visit` on this node and every node below it, depth first.
    pub fn walk<'a>(&'a self, visit: &mut impl FnMut(&'a Node)) {
        visit(self);
        match &self.value {
            Value::Array(items) => items.iter().for_each(|n| n.walk(visit)),
            Value::Table(t) => t.iter().for_each(|e| e.value.walk(visit)),
            _ => {}
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::diagnostic::Location;
    use crate::user_file::source::{Layer, Source};

    /// A position for hand-built trees in tests.
    pub fn pos() -> Pos {
        Source::new("t.toml", "", Layer::BuiltIn).pos(Location { line: 1, column: 1 })
    }

    pub fn table(entries: Vec<(&str, Node)>) -> Node {
        let mut t = Table::default();
        for (key, value) in entries {
            t.insert(Entry {
                key: key.to_string(),
                key_pos: pos(),
                value,
            });
        }
        Node::new(Value::Table(t), pos())
    }

    pub fn string(s: &str) -> Node {
        Node::new(Value::String(s.to_string()), pos())
    }

    #[test]
    fn paths_reach_and_remove_nested_values() {
        let mut tree = table(vec![(
            "steps",
            Node::new(Value::Array(vec![table(vec![("id", string("a"))])]), pos()),
        )]);
        let path = [Seg::key("steps"), Seg::Index(0), Seg::key("id")];
        assert_eq!(tree.at(&path).and_then(Node::as_str), Some("a"));
        assert!(tree.remove_at(&path));
        assert!(tree.at(&path).is_none());
        assert!(!tree.remove_at(&path));
    }

    #[test]
    fn json_keeps_values_and_drops_non_finite_floats() {
        let tree = table(vec![
            ("a", Node::new(Value::Float(f64::INFINITY), pos())),
            ("b", Node::new(Value::Integer(3), pos())),
        ]);
        assert_eq!(tree.to_json(), serde_json::json!({"a": null, "b": 3}));
        assert_eq!(tree.non_finite_floats().len(), 1);
    }
}
