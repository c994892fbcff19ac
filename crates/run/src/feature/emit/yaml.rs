//! Building YAML values tersely for the renderers.

use yaml_serde::{Mapping, Value};

pub fn s(text: &str) -> Value {
    Value::String(text.to_string())
}

pub fn map<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Mapping(pairs.into_iter().map(|(k, v)| (s(k), v)).collect())
}

pub fn seq<I: IntoIterator<Item = Value>>(items: I) -> Value {
    Value::Sequence(items.into_iter().collect())
}

pub fn num(n: u64) -> Value {
    Value::Number(n.into())
}

pub fn insert(value: &mut Value, key: &str, item: Value) {
    if let Value::Mapping(m) = value {
        m.insert(key.into(), item);
    }
}

/// `value` with `key: item` first.
pub fn prepend(value: Value, key: &str, item: Value) -> Value {
    let mut out = Mapping::new();
    out.insert(key.into(), item);
    if let Value::Mapping(rest) = value {
        out.extend(rest);
    }
    Value::Mapping(out)
}

pub fn to_text(value: &Value) -> String {
    yaml_serde::to_string(value).unwrap_or_default()
}
