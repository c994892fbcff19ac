//! What steps publish to expressions (`steps.<id>.outputs.<name>`), derived from each kind's
//! outputs struct (`AgentOutputs`, `GateOutputs`, …): the serde field names, the value type
//! their types imply, and their doc comments. The struct the executor fills is the one
//! declaration of a kind's outputs; the reference, expression validation and the dry run's
//! placeholders read them from here.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::keys::per_kind;
use super::Uses;

/// One typed output of a step.
#[derive(Debug, PartialEq, Eq)]
pub struct Output {
    pub name: &'static str,
    pub ty: ValueType,
    pub doc: &'static str,
}

/// The type of an output value as expressions see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
pub enum ValueType {
    #[strum(serialize = "bool")]
    Bool,
    #[strum(serialize = "integer")]
    Integer,
    #[strum(serialize = "string")]
    Text,
    #[strum(serialize = "list of strings")]
    TextList,
}

/// Each kind's outputs, derived once (kept for the process's life, like the keys).
static OUTPUTS: LazyLock<BTreeMap<Uses, Vec<Output>>> = LazyLock::new(|| {
    per_kind(
        Uses::outputs_schema,
        Uses::output_order,
        |name, doc, value, definitions| {
            let ty = value_type(value, definitions);
            Output { name, ty, doc }
        },
    )
});

/// The outputs of `uses`, in the order its outputs struct declares them.
pub(super) fn of(uses: Uses) -> &'static [Output] {
    OUTPUTS.get(&uses).map_or(&[], Vec::as_slice)
}

/// How expressions see a value of this schema: an enumeration of words is a string.
fn value_type(schema: &Value, definitions: &Map<String, Value>) -> ValueType {
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .and_then(|name| definitions.get(name));
    if let Some(definition) = target {
        return value_type(definition, definitions);
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if types.contains(&"boolean") {
        ValueType::Bool
    } else if types.contains(&"integer") {
        ValueType::Integer
    } else if types.contains(&"array") {
        ValueType::TextList
    } else {
        ValueType::Text
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use strum::IntoEnumIterator;

    use super::*;

    #[test]
    fn value_types_follow_the_types() {
        let definitions: Map<String, Value> = serde_json::from_value(json!({
            "Exit": {"oneOf": [{"type": "string", "const": "done"}]},
        }))
        .unwrap();
        let cases = [
            (json!({"type": "boolean"}), ValueType::Bool),
            (
                json!({"type": "integer", "format": "uint"}),
                ValueType::Integer,
            ),
            (json!({"type": ["integer", "null"]}), ValueType::Integer),
            (json!({"type": "string"}), ValueType::Text),
            (json!({"$ref": "#/definitions/Exit"}), ValueType::Text),
            (
                json!({"type": "array", "items": {"type": "string"}}),
                ValueType::TextList,
            ),
        ];
        for (schema, expected) in cases {
            assert_eq!(value_type(&schema, &definitions), expected, "{schema}");
        }
    }

    #[test]
    fn every_output_of_every_kind_is_documented_and_in_declared_order() {
        for uses in Uses::iter() {
            let outputs = of(uses);
            assert!(!outputs.is_empty(), "`{uses}` publishes nothing");
            for output in outputs {
                assert!(!output.doc.is_empty(), "`{}` of `{uses}`", output.name);
            }
            let names: Vec<&str> = outputs.iter().map(|o| o.name).collect();
            assert_eq!(names, uses.output_order(), "outputs of `{uses}`");
        }
    }
}
