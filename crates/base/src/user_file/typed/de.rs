//! A `serde::Deserializer` over a [`Node`] tree that records every problem at the position of
//! the value it is about, and goes on.
//!
//! Going on is possible wherever the decoder finds the problem before serde's visitor has the
//! value: a value of the wrong kind (it checks the kind the visitor asked for against the
//! node), a name that is not one of an enum's values (serde hands it the list), a key a table
//! does not allow (keys a struct does not name are read after the ones it does, so the first
//! refusal means every later one is refused too). Such a value is reported and replaced by a
//! neutral stand-in ([`Substitute`]: zero, empty, the first variant, every field of a struct),
//! whose own complaints are not reported. A problem only a type's own code can find (a missing
//! key, a failed check in a `Deserialize` impl) cannot be stood in for (serde has consumed
//! what would decode the value again): it ends the tables around it up to the nearest array,
//! which ends at that element, and decoding goes on after the array (or stops at the root).

use std::cell::RefCell;
use std::collections::HashSet;

use serde::de::{Deserializer, Visitor};

use super::deferred;
use super::problem::{self, DeError, Found, Problem};
use super::substitute::Substitute;
use crate::diagnostic::Diagnostic;
use crate::user_file::source::Pos;
use crate::user_file::tree::{Entry, Node, Table, Value};

mod access;
use access::{Map, Named, Seq};

/// The problems found so far, in the order they were found.
#[derive(Default)]
pub(super) struct Cx {
    problems: RefCell<Vec<Diagnostic>>,
    /// The nodes (by address) whose value was replaced by a stand-in: what a type's own code
    /// then says about the stand-in follows from the problem already reported.
    stood_in: RefCell<HashSet<usize>>,
}

impl Cx {
    fn report(&self, pos: &Pos, problem: &Problem, field: Option<&str>) -> DeError {
        let (message, help) = problem.words(field);
        let mut diagnostic = pos.error(message);
        diagnostic.help = help;
        self.problems.borrow_mut().push(diagnostic);
        DeError::reported()
    }

    pub(super) fn into_problems(self) -> Vec<Diagnostic> {
        self.problems.into_inner()
    }
}

/// One value of the tree, being decoded.
#[derive(Clone, Copy)]
pub(super) struct De<'a> {
    node: &'a Node,
    /// Where the key that names this value was written: a missing key is shown there.
    key_pos: Option<&'a Pos>,
    /// The nearest key above this value, for "unknown value `x` for `tools`".
    field: Option<&'a str>,
    cx: &'a Cx,
}

impl<'a> De<'a> {
    pub(super) fn root(node: &'a Node, cx: &'a Cx) -> De<'a> {
        De {
            node,
            key_pos: None,
            field: None,
            cx,
        }
    }

    fn child(self, node: &'a Node, entry: Option<&'a Entry>) -> De<'a> {
        De {
            node,
            key_pos: entry.map(|e| &e.key_pos),
            field: entry.map_or(self.field, |e| Some(e.key.as_str())),
            cx: self.cx,
        }
    }

    /// Reports what the visitor refused, here; `buffered` when serde may have copied the value
    /// before decoding it (an internally tagged enum decodes its variant from a copy after
    /// the deserializer returns; flattened fields alike), so the problem may be about any
    /// value below this one.
    pub(super) fn finish<T>(
        self,
        result: Result<T, DeError>,
        buffered: bool,
    ) -> Result<T, DeError> {
        for message in deferred::take() {
            self.cx
                .report(&self.node.pos, &Problem::Custom(message), self.field);
        }
        result.map_err(|error| match error.into_problem() {
            None => DeError::reported(),
            Some(_) if self.cx.stood_in.borrow().contains(&address(self.node)) => {
                DeError::reported()
            }
            Some(problem) => {
                let pos = if buffered {
                    traced(self.node, &problem).unwrap_or(self.default_pos(&problem))
                } else {
                    self.default_pos(&problem)
                };
                self.cx.report(pos, &problem, self.field)
            }
        })
    }

    fn default_pos(self, problem: &Problem) -> &'a Pos {
        match (problem, self.key_pos) {
            (Problem::MissingField(_), Some(key)) => key,
            _ => &self.node.pos,
        }
    }

    /// Reports a value of the wrong kind, as the visitor describes what it expected, and
    /// hands the visitor a stand-in.
    fn wrong_kind<T>(
        self,
        expected: String,
        stand_in: impl FnOnce(Substitute) -> Result<T, DeError>,
    ) -> Result<T, DeError> {
        let problem = Problem::InvalidType {
            found: Found::of_node(self.node),
            expected,
        };
        self.reported(&self.node.pos, &problem, stand_in)
    }

    /// Reports `problem` at `pos` and hands the visitor a stand-in, whose own complaints
    /// follow from the problem and are not reported.
    fn reported<T>(
        self,
        pos: &Pos,
        problem: &Problem,
        stand_in: impl FnOnce(Substitute) -> Result<T, DeError>,
    ) -> Result<T, DeError> {
        self.cx.report(pos, problem, self.field);
        self.cx.stood_in.borrow_mut().insert(address(self.node));
        let value = stand_in(Substitute::new()).map_err(|_| DeError::reported());
        // What a type's own check says about the stand-in follows from the problem reported.
        deferred::take();
        value
    }

    fn seq<'de, V: Visitor<'de>>(self, items: &'a [Node], visitor: V) -> Result<V::Value, DeError> {
        let mut seq = Seq {
            items: items.iter(),
            de: self,
            stopped: false,
        };
        let result = visitor.visit_seq(&mut seq);
        if seq.stopped {
            // The array ended early at a reported element: what the visitor says about its
            // length follows from that.
            return result.map_err(|_| DeError::reported());
        }
        self.finish(result, false)
    }

    fn map<'de, V: Visitor<'de>>(
        self,
        table: &'a Table,
        fields: Option<&'static [&'static str]>,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        let mut entries: Vec<&Entry> = table.iter().collect();
        if let Some(fields) = fields {
            // Keys the struct names first, so a refused key ends nothing but the unknown ones.
            entries.sort_by_key(|e| !fields.contains(&e.key.as_str()));
        }
        let map = Map {
            entries,
            next: 0,
            value: None,
            fields,
            de: self,
        };
        self.finish(visitor.visit_map(map), fields.is_none())
    }
}

fn address(node: &Node) -> usize {
    std::ptr::from_ref(node) as usize
}

/// Where in `node` the value a buffered problem is about was written.
fn traced<'n>(node: &'n Node, problem: &Problem) -> Option<&'n Pos> {
    let mut found = None;
    node.walk(&mut |inner| {
        if found.is_some() {
            return;
        }
        let hit = match problem {
            Problem::UnknownField { name, .. } => inner
                .as_table()
                .and_then(|t| t.entry(name))
                .map(|e| &e.key_pos),
            Problem::UnknownVariant { name, .. } => {
                (inner.as_str() == Some(name.as_str())).then_some(&inner.pos)
            }
            Problem::InvalidType { found, .. } | Problem::InvalidValue { found, .. } => {
                (!std::ptr::eq(inner, node) && found.is(inner)).then_some(&inner.pos)
            }
            _ => None,
        };
        found = hit;
    });
    found
}

/// What an integer type takes, said of `i`, a value it cannot hold.
fn integer_range(i: i64, min: i128, max: i128) -> String {
    match (min, i < 0) {
        (0, true) => "a non-negative integer".to_string(),
        _ => format!("an integer from {min} to {max}"),
    }
}

macro_rules! integer {
    ($($method:ident $visit:ident $t:ty),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
            match self.node.value {
                Value::Integer(i) => match <$t>::try_from(i) {
                    Ok(n) => self.finish(visitor.$visit(n), false),
                    Err(_) => {
                        let expected = integer_range(i, <$t>::MIN.into(), <$t>::MAX.into());
                        let problem = Problem::InvalidValue { found: Found::Signed(i), expected };
                        self.reported(&self.node.pos, &problem, |s| s.$method(visitor))
                    }
                },
                _ => self.wrong_kind(problem::expected(&visitor), |s| s.$method(visitor)),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for De<'_> {
    type Error = DeError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Null => self.finish(visitor.visit_unit(), false),
            Value::Bool(b) => self.finish(visitor.visit_bool(*b), false),
            Value::Integer(i) => match u64::try_from(*i) {
                Ok(n) => self.finish(visitor.visit_u64(n), false),
                Err(_) => self.finish(visitor.visit_i64(*i), false),
            },
            Value::Float(f) => self.finish(visitor.visit_f64(*f), false),
            Value::String(s) => self.finish(visitor.visit_str(s), false),
            Value::Array(items) => self.seq(items, visitor),
            Value::Table(table) => self.map(table, None, visitor),
        }
    }

    integer!(deserialize_u8 visit_u8 u8, deserialize_u16 visit_u16 u16,
        deserialize_u32 visit_u32 u32, deserialize_u64 visit_u64 u64,
        deserialize_i8 visit_i8 i8, deserialize_i16 visit_i16 i16,
        deserialize_i32 visit_i32 i32, deserialize_i64 visit_i64 i64);

    forward! {
        deserialize_f32() => deserialize_f64,
        deserialize_string() => deserialize_str,
        deserialize_identifier() => deserialize_str,
        deserialize_bytes() => deserialize_any,
        deserialize_byte_buf() => deserialize_any,
        deserialize_unit_struct(&'static str) => deserialize_unit,
        deserialize_tuple(usize) => deserialize_seq,
        deserialize_tuple_struct(&'static str, usize) => deserialize_seq,
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.value {
            Value::Float(f) => self.finish(visitor.visit_f64(f), false),
            // A whole number is a number (`threshold = 1`).
            Value::Integer(i) => self.finish(visitor.visit_f64(i as f64), false),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_f64(visitor)),
        }
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.value {
            Value::Bool(b) => self.finish(visitor.visit_bool(b), false),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_bool(visitor)),
        }
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        let mut chars = self.node.as_str().map(str::chars);
        match chars.as_mut().map(|c| (c.next(), c.next())) {
            Some((Some(c), None)) => self.finish(visitor.visit_char(c), false),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_char(visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::String(s) => self.finish(visitor.visit_str(s), false),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_str(visitor)),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.value {
            Value::Null => self.finish(visitor.visit_none(), false),
            _ => self.finish(visitor.visit_some(self), false),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match self.node.value {
            Value::Null => self.finish(visitor.visit_unit(), false),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_unit(visitor)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, DeError> {
        self.finish(visitor.visit_newtype_struct(self), false)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Array(items) => self.seq(items, visitor),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_seq(visitor)),
        }
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Table(table) => self.map(table, None, visitor),
            _ => self.wrong_kind(problem::expected(&visitor), |s| s.deserialize_map(visitor)),
        }
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::Table(table) => self.map(table, Some(fields), visitor),
            _ => self.wrong_kind(problem::expected(&visitor), |s| {
                s.deserialize_struct(name, fields, visitor)
            }),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, DeError> {
        match &self.node.value {
            Value::String(s) if variants.contains(&s.as_str()) => {
                self.finish(visitor.visit_enum(Named { name: s, de: None }), false)
            }
            Value::String(s) => {
                let problem = Problem::UnknownVariant {
                    name: s.clone(),
                    expected: variants,
                };
                self.reported(&self.node.pos, &problem, |s| {
                    s.deserialize_enum(name, variants, visitor)
                })
            }
            // `{ variant = value }`
            Value::Table(table) if table.iter().count() == 1 => {
                let Some(entry) = table.iter().next() else {
                    return Err(DeError::reported());
                };
                if !variants.contains(&entry.key.as_str()) {
                    let problem = Problem::UnknownVariant {
                        name: entry.key.clone(),
                        expected: variants,
                    };
                    return self.reported(&entry.key_pos, &problem, |s| {
                        s.deserialize_enum(name, variants, visitor)
                    });
                }
                let de = self.child(&entry.value, Some(entry));
                self.finish(
                    visitor.visit_enum(Named {
                        name: &entry.key,
                        de: Some(de),
                    }),
                    false,
                )
            }
            _ => self.wrong_kind(format!("one of: {}", variants.join(", ")), |s| {
                s.deserialize_enum(name, variants, visitor)
            }),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, DeError> {
        visitor.visit_unit()
    }
}
