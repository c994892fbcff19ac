//! What the typed decoder found wrong, as data: serde's error constructors (`invalid_type`,
//! `unknown_field`, `missing_field`, …) are methods of the decoder's own error type, so each
//! problem arrives with its facts (the value found, the keys or values allowed) and its words
//! are written here, once, instead of being read back out of serde's English.

use std::fmt;

use serde::de::{self, Expected, Unexpected};

use crate::diagnostic::did_you_mean;
use crate::user_file::tree::{Node, Value};

/// One problem with a value.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A value of the wrong kind (a string where a number belongs).
    InvalidType {
        found: Found,
        expected: String,
    },
    /// A value of the right kind that is not allowed (`-1` for a count).
    InvalidValue {
        found: Found,
        expected: String,
    },
    InvalidLength {
        len: usize,
        expected: String,
    },
    /// A name that is not one of the values allowed (`wirte` for a tool).
    UnknownVariant {
        name: String,
        expected: &'static [&'static str],
    },
    /// A key the table does not have.
    UnknownField {
        name: String,
        expected: &'static [&'static str],
    },
    MissingField(&'static str),
    DuplicateField(&'static str),
    /// A type's own check, in its own words.
    Custom(String),
}

/// The value a problem is about, as the file wrote it.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Char(char),
    Str(String),
    Null,
    Array,
    Table,
    /// Something no file format here writes (bytes, a newtype), as serde names it.
    Other(String),
}

impl Found {
    pub fn of_node(node: &Node) -> Found {
        match &node.value {
            Value::Null => Found::Null,
            Value::Bool(b) => Found::Bool(*b),
            Value::Integer(i) => Found::Signed(*i),
            Value::Float(f) => Found::Float(*f),
            Value::String(s) => Found::Str(s.clone()),
            Value::Array(_) => Found::Array,
            Value::Table(_) => Found::Table,
        }
    }

    fn of(unexpected: Unexpected<'_>) -> Found {
        match unexpected {
            Unexpected::Bool(b) => Found::Bool(b),
            Unexpected::Unsigned(n) => Found::Unsigned(n),
            Unexpected::Signed(n) => Found::Signed(n),
            Unexpected::Float(f) => Found::Float(f),
            Unexpected::Char(c) => Found::Char(c),
            Unexpected::Str(s) => Found::Str(s.to_string()),
            Unexpected::Unit | Unexpected::Option => Found::Null,
            Unexpected::Seq => Found::Array,
            Unexpected::Map => Found::Table,
            other => Found::Other(other.to_string()),
        }
    }

    /// Whether `node` holds this value: how a problem serde found in a buffered copy of a
    /// table (an internally tagged enum) is traced back to the key that holds it.
    pub fn is(&self, node: &Node) -> bool {
        match (self, &node.value) {
            (Found::Bool(a), Value::Bool(b)) => a == b,
            (Found::Unsigned(a), Value::Integer(b)) => i64::try_from(*a).is_ok_and(|a| a == *b),
            (Found::Signed(a), Value::Integer(b)) => a == b,
            (Found::Float(a), Value::Float(b)) => a == b,
            (Found::Str(a), Value::String(b)) => a == b,
            (Found::Char(a), Value::String(b)) => b.chars().eq(std::iter::once(*a)),
            (Found::Null, Value::Null) => true,
            (Found::Array, Value::Array(_)) => true,
            (Found::Table, Value::Table(_)) => true,
            _ => false,
        }
    }
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Found::Bool(b) => write!(f, "boolean `{b}`"),
            Found::Unsigned(n) => write!(f, "integer `{n}`"),
            Found::Signed(n) => write!(f, "integer `{n}`"),
            Found::Float(n) => write!(f, "floating point `{n:?}`"),
            Found::Char(c) => write!(f, "character `{c}`"),
            Found::Str(s) => write!(f, "string {s:?}"),
            Found::Null => f.write_str("null"),
            Found::Array => f.write_str("array"),
            Found::Table => f.write_str("table"),
            Found::Other(what) => f.write_str(what),
        }
    }
}

/// What a value must be, in the words of the file formats. serde's own visitors (the
/// primitives, `Vec`, maps) name Rust types; those names are mapped one for one here, and
/// every other visitor's `expecting` text (autobuild's own types) is used as written.
pub fn expected(exp: &dyn Expected) -> String {
    let text = exp.to_string();
    let words = match text.as_str() {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" => "a non-negative integer",
        "i8" | "i16" | "i32" | "i64" | "i128" | "isize" => "an integer",
        "f32" | "f64" => "a number",
        "a sequence" => "an array",
        "a map" => "a table",
        "a boolean" | "a string" | "a borrowed string" | "a character" => return text,
        "unit" => "null",
        _ if text.starts_with("struct ") || text.starts_with("internally tagged enum ") => {
            "a table"
        }
        _ => return text,
    };
    words.to_string()
}

impl Problem {
    /// The message and help of this problem; `field` is the nearest key above the value.
    pub fn words(&self, field: Option<&str>) -> (String, Option<String>) {
        match self {
            Problem::InvalidType { found, expected } => {
                (format!("invalid type: {found}, expected {expected}"), None)
            }
            Problem::InvalidValue { found, expected } => {
                (format!("invalid value: {found}, expected {expected}"), None)
            }
            Problem::InvalidLength { len, expected } => {
                (format!("invalid length {len}, expected {expected}"), None)
            }
            Problem::UnknownVariant { name, expected } => {
                let field = field.map_or(String::new(), |f| format!(" for `{f}`"));
                (
                    format!("unknown value `{name}`{field}"),
                    Some(suggestion(name, expected, "values")),
                )
            }
            Problem::UnknownField { name, expected } => (
                format!("unknown key `{name}`"),
                Some(suggestion(name, expected, "keys")),
            ),
            Problem::MissingField(name) => (format!("missing key `{name}`"), None),
            Problem::DuplicateField(name) => (format!("duplicate key `{name}`"), None),
            Problem::Custom(message) => (message.clone(), None),
        }
    }
}

fn suggestion(name: &str, expected: &[&str], what: &str) -> String {
    match did_you_mean(name, expected.iter().copied()) {
        Some(close) => format!("did you mean `{close}`?"),
        None if expected.is_empty() => format!("no {what} are allowed here"),
        None => format!("expected one of: {}", expected.join(", ")),
    }
}

/// The decoder's error: a problem not yet located, or the mark of one already reported (the
/// decoder records each problem once, where it knows the position, and goes on).
#[derive(Debug)]
pub struct DeError(Option<Box<Problem>>);

impl DeError {
    pub fn reported() -> DeError {
        DeError(None)
    }

    /// The problem, unless it is already reported.
    pub fn into_problem(self) -> Option<Problem> {
        self.0.map(|p| *p)
    }

    pub fn problem(&self) -> Option<&Problem> {
        self.0.as_deref()
    }

    fn new(problem: Problem) -> DeError {
        DeError(Some(Box::new(problem)))
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Some(problem) => f.write_str(&problem.words(None).0),
            None => f.write_str("reported"),
        }
    }
}

impl std::error::Error for DeError {}

impl de::Error for DeError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        DeError::new(Problem::Custom(message.to_string()))
    }

    fn invalid_type(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        DeError::new(Problem::InvalidType {
            found: Found::of(unexp),
            expected: expected(exp),
        })
    }

    fn invalid_value(unexp: Unexpected<'_>, exp: &dyn Expected) -> Self {
        DeError::new(Problem::InvalidValue {
            found: Found::of(unexp),
            expected: expected(exp),
        })
    }

    fn invalid_length(len: usize, exp: &dyn Expected) -> Self {
        DeError::new(Problem::InvalidLength {
            len,
            expected: expected(exp),
        })
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        DeError::new(Problem::UnknownVariant {
            name: variant.to_string(),
            expected,
        })
    }

    fn unknown_field(field: &str, expected: &'static [&'static str]) -> Self {
        DeError::new(Problem::UnknownField {
            name: field.to_string(),
            expected,
        })
    }

    fn missing_field(field: &'static str) -> Self {
        DeError::new(Problem::MissingField(field))
    }

    fn duplicate_field(field: &'static str) -> Self {
        DeError::new(Problem::DuplicateField(field))
    }
}

impl From<Problem> for DeError {
    fn from(problem: Problem) -> DeError {
        DeError::new(problem)
    }
}
