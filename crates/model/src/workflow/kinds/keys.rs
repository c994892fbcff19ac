//! The keys of steps: the common ones every step has ([`COMMON_KEYS`]), and each kind's own,
//! derived from the kind's step struct (`AgentStep`, `VerifyStep`, …) — its serde field names,
//! the value form its types imply, and its doc comments. The struct is the one declaration of a
//! kind's keys: decoding reads into it, and the key check, the JSON Schema, the reference
//! (`docs/workflows.md`, `autobuild workflows kinds`) and did-you-mean read its keys from here.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use schemars::generate::SchemaSettings;
use schemars::{Schema, SchemaGenerator};
use serde::de::{DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value};
use strum::IntoEnumIterator;

use super::Uses;

/// A key of a step.
#[derive(Debug, PartialEq, Eq)]
pub struct Key {
    pub name: &'static str,
    /// The value's form as the reference writes it.
    pub form: &'static str,
    pub doc: &'static str,
}

impl Key {
    pub const fn new(name: &'static str, form: &'static str, doc: &'static str) -> Key {
        Key { name, form, doc }
    }
}

/// Keys every step may have, whatever it `uses`.
pub const COMMON_KEYS: [Key; 5] = [
    Key::new(
        "id",
        "string",
        "unique name of the step; `steps.<id>` in expressions",
    ),
    Key::new("uses", "string", "the step kind"),
    Key::new("if", "expression", "the step is skipped when this is false"),
    Key::new(
        "always",
        "bool",
        "run even after a failure, a stop or Ctrl-C (reports, clean-up)",
    ),
    Key::new(
        "timeout",
        "duration",
        "stop the step after this long (\"20m\")",
    ),
];

/// The schema extension a step struct's field sets (`#[schemars(extend("x-form" = …))]`) when
/// the form its type implies says too little, such as `expression` for a string.
pub const FORM_EXTENSION: &str = "x-form";

/// Each kind's keys, derived once. The texts live as long as the process (they are built once,
/// from the compiled-in declarations), so they are kept as `&'static str` like the common keys.
static KEYS: LazyLock<BTreeMap<Uses, Vec<Key>>> = LazyLock::new(|| {
    per_kind(
        Uses::step_schema,
        Uses::key_order,
        |name, doc, value, definitions| Key::new(name, form(value, definitions).leak(), doc),
    )
});

/// The keys of `uses` besides the common ones, in the order its struct declares them.
pub(super) fn of(uses: Uses) -> &'static [Key] {
    KEYS.get(&uses).map_or(&[], Vec::as_slice)
}

/// What each kind declares by the properties of the schema `schema` gives it (its keys, its
/// outputs), in the order `order` gives, each made by `entry` from its name, its doc comment
/// as one line, its schema and the schema's definitions.
pub(super) fn per_kind<T>(
    schema: fn(Uses, &mut SchemaGenerator) -> Schema,
    order: fn(Uses) -> &'static [&'static str],
    entry: impl Fn(&'static str, &'static str, &Value, &Map<String, Value>) -> T,
) -> BTreeMap<Uses, Vec<T>> {
    let mut generator = SchemaSettings::draft07().for_deserialize().into_generator();
    Uses::iter()
        .map(|uses| {
            let schema = schema(uses, &mut generator).to_value();
            let definitions = generator.definitions().clone();
            let properties = schema.get("properties").and_then(Value::as_object);
            let mut properties: Vec<_> = properties.into_iter().flatten().collect();
            let order = order(uses);
            properties.sort_by_key(|(name, _)| order.iter().position(|known| known == name));
            let entries = properties.into_iter().map(|(name, value)| {
                let doc = value.get("description").and_then(Value::as_str);
                let doc = one_line(doc.unwrap_or_default()).leak();
                entry(name.clone().leak(), doc, value, &definitions)
            });
            (uses, entries.collect())
        })
        .collect()
}

/// The serde field names of the struct `T`, in declaration order: what `T`'s derived
/// `Deserialize` hands `deserialize_struct` (JSON Schema properties come sorted by name).
pub(super) fn field_names<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    // The probe always fails once it has seen the names; only the names are wanted.
    let _ = T::deserialize(FieldProbe(&mut fields));
    fields
}

struct FieldProbe<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldProbe<'_> {
    type Error = serde::de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(serde::de::Error::custom(
            "a step struct is read only for its field names",
        ))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        self.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier
        ignored_any
    }
}

/// A doc comment as one line of reference text.
pub fn one_line(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// How the reference writes a value of this schema: `string`, `bool`, `integer ≥ 1`,
/// `list of strings`, `pass | fail`, `table of strings`, `table`, or the field's own form.
fn form(schema: &Value, definitions: &Map<String, Value>) -> String {
    if let Some(form) = schema.get(FORM_EXTENSION).and_then(Value::as_str) {
        return form.to_string();
    }
    if let Some(target) = reference(schema) {
        return match definitions.get(target) {
            Some(definition) => form(definition, definitions),
            None => target.to_lowercase(),
        };
    }
    if let Some(words) = words(schema) {
        return words.join(" | ");
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        if let Some(alternatives) = schema.get(combinator).and_then(Value::as_array) {
            let real: Vec<&Value> = alternatives.iter().filter(|a| !is_null(a)).collect();
            let consts: Option<Vec<Vec<String>>> = real.iter().map(|a| words(a)).collect();
            if let Some(consts) = consts.filter(|c| !c.is_empty()) {
                return consts.concat().join(" | ");
            }
            if let [only] = real.as_slice() {
                return form(only, definitions);
            }
        }
    }
    match json_type(schema) {
        Some("boolean") => "bool".into(),
        Some("integer") => match schema.get("minimum").and_then(Value::as_u64) {
            Some(min) if min > 0 => format!("integer ≥ {min}"),
            _ => "integer".into(),
        },
        Some("array") => match schema.get("items") {
            Some(items) => format!("list of {}", plural(items, definitions)),
            None => "list".into(),
        },
        Some("object") => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => {
                format!("table of {}", plural(values, definitions))
            }
            _ => "table".into(),
        },
        Some(other) => other.into(),
        None => "value".into(),
    }
}

/// `strings` for a list of strings; a list of a named type is a list of its name (`steps`).
fn plural(items: &Value, definitions: &Map<String, Value>) -> String {
    match reference(items) {
        Some(name) => format!("{}s", name.to_lowercase()),
        None => format!("{}s", form(items, definitions)),
    }
}

fn reference(schema: &Value) -> Option<&str> {
    let target = schema.get("$ref")?.as_str()?;
    target.rsplit('/').next()
}

/// The fixed values of an enumeration (`enum`, or a `const`), without null.
fn words(schema: &Value) -> Option<Vec<String>> {
    if let Some(value) = schema.get("const").and_then(Value::as_str) {
        return Some(vec![value.to_string()]);
    }
    let values = schema.get("enum")?.as_array()?;
    Some(
        values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
    )
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null") || schema.get("const") == Some(&Value::Null)
}

/// The schema's type, leaving out the `null` an `Option` adds.
fn json_type(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(single) => Some(single),
        Value::Array(types) => types
            .iter()
            .filter_map(Value::as_str)
            .find(|t| *t != "null"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn forms_follow_the_types() {
        let definitions: Map<String, Value> = serde_json::from_value(json!({
            "Expect": {"oneOf": [{"const": "pass"}, {"const": "fail"}]},
            "Strategy": {"type": "string", "enum": ["squash", "merge", "ff"]},
            "Stall": {"type": "object", "properties": {"window": {"type": "integer"}}},
        }))
        .unwrap();
        let cases = [
            (json!({"type": "string"}), "string"),
            (json!({"type": ["boolean", "null"]}), "bool"),
            (json!({"type": "integer", "minimum": 1}), "integer ≥ 1"),
            (json!({"type": "integer", "minimum": 0}), "integer"),
            (
                json!({"type": ["array", "null"], "items": {"type": "string"}}),
                "list of strings",
            ),
            (
                json!({"type": "array", "items": {"$ref": "#/definitions/Step"}}),
                "list of steps",
            ),
            (
                json!({"anyOf": [{"$ref": "#/definitions/Expect"}, {"type": "null"}]}),
                "pass | fail",
            ),
            (
                json!({"anyOf": [{"$ref": "#/definitions/Strategy"}, {"type": "null"}]}),
                "squash | merge | ff",
            ),
            (
                json!({"anyOf": [{"$ref": "#/definitions/Stall"}, {"type": "null"}]}),
                "table",
            ),
            (
                json!({"type": "object", "additionalProperties": {"type": "string"}}),
                "table of strings",
            ),
            (
                json!({"type": "string", "x-form": "expression"}),
                "expression",
            ),
        ];
        for (schema, expected) in cases {
            assert_eq!(form(&schema, &definitions), expected, "{schema}");
        }
    }

    #[test]
    fn keys_keep_the_order_their_struct_declares() {
        let names = |uses: Uses| -> Vec<&str> { of(uses).iter().map(|k| k.name).collect() };
        assert_eq!(names(Uses::Agent), ["role", "advisory", "criteria"]);
        assert_eq!(names(Uses::Run), ["run", "env"]);
        assert_eq!(
            names(Uses::Loop),
            ["max_iterations", "until", "stall", "steps"]
        );
        assert!(names(Uses::Worktree).is_empty());
    }

    #[test]
    fn the_keys_of_every_kind_are_the_fields_serde_reads() {
        for uses in Uses::iter() {
            let mut derived: Vec<&str> = of(uses).iter().map(|k| k.name).collect();
            let mut read = uses.key_order().to_vec();
            derived.sort_unstable();
            read.sort_unstable();
            assert_eq!(derived, read, "keys of `{uses}`");
        }
        assert_eq!(Uses::Loop.key_order().len(), 4);
    }

    #[test]
    fn every_key_of_every_kind_is_documented() {
        for uses in Uses::iter() {
            for key in of(uses) {
                assert!(!key.doc.is_empty(), "`{}` of `{uses}` has no doc", key.name);
                assert!(!key.doc.contains('\n'));
            }
        }
    }
}
