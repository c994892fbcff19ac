//! The workflow schema. Header, roles and inputs come from the serde model; a step's schema is
//! assembled per kind from the step-kind registry ([`kinds`]): the common keys, and the kind's
//! own keys as its step struct declares them (types and doc comments), so an editor offers
//! exactly the keys the decoder accepts for that `uses`.
//!
//! A workflow that `extends` another is a patch: nothing is required, roles restate only what
//! they change, and a step names the step it patches by `id` with any key of any kind.

use std::borrow::Cow;

use base::Keyword;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

use super::Patch;
use strum::IntoEnumIterator;

use crate::workflow::kinds::{self, Kind, Uses};
use crate::workflow::model::{opt_duration, Role, Step, Workflow};

/// The root schema of a workflow file.
pub(super) fn schema(mut generator: SchemaGenerator) -> Schema {
    let step = generator.subschema_for::<Step>();
    let role = generator.subschema_for::<Role>();
    let role_patch = generator.subschema_for::<Patch<Role>>();
    let step_patch = step_patch(&mut generator);
    let mut root = generator.into_root_schema_for::<Workflow>();
    let required = root.remove("required").unwrap_or_else(|| json!([]));
    if let Some(properties) = root.get_mut("properties").and_then(Value::as_object_mut) {
        properties.insert(
            "steps".into(),
            json!({"type": "array", "description": "what runs, in order"}),
        );
        properties.insert(
            "roles".into(),
            json!({"type": "object", "description": "agent configurations by name"}),
        );
    }
    root.insert(
        "if".into(),
        json!({"required": ["extends"], "properties": {"extends": {"type": "string"}}}),
    );
    root.insert(
        "then".into(),
        json!({"properties": {
            "steps": {"items": step_patch},
            "roles": {"additionalProperties": role_patch},
        }}),
    );
    root.insert(
        "else".into(),
        json!({"required": required, "properties": {
            "steps": {"items": step},
            "roles": {"additionalProperties": role},
        }}),
    );
    root
}

/// One step: the schema of its kind, chosen by `uses` (`if`/`then` per kind, not `oneOf`), so a
/// generic validator reports the one key that is wrong for that kind instead of every kind's
/// complaints.
impl JsonSchema for Step {
    fn schema_name() -> Cow<'static, str> {
        "Step".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let by_uses: Vec<Value> = Uses::iter()
            .map(|uses| {
                let kind = uses.kind();
                let own = uses.step_schema(generator).to_value();
                let mut properties = common_properties(Some(kind), generator);
                let mut required = vec![json!("id"), json!("uses")];
                for (name, value) in property_map(&own) {
                    properties.insert(name, documented(value));
                }
                if let Some(own) = own.get("required").and_then(Value::as_array) {
                    required.extend(own.iter().cloned());
                }
                json!({
                    "if": {"properties": {"uses": {"const": kind.uses.as_str()}}, "required": ["uses"]},
                    "then": {
                        "title": format!("uses = \"{}\"", kind.uses),
                        "description": kind.summary,
                        "properties": properties,
                        "required": required,
                        "additionalProperties": false,
                    },
                })
            })
            .collect();
        json_schema!({
            "description": "a step: `id`, `uses` and the keys of its kind",
            "type": "object",
            "required": ["id", "uses"],
            "properties": {"uses": {"enum": kinds::names()}},
            "allOf": by_uses,
        })
    }
}

/// A step of a patch: any key of any kind, only `id` required; nested steps are patches too.
fn step_patch(generator: &mut SchemaGenerator) -> Value {
    let mut properties = common_properties(None, generator);
    for uses in Uses::iter() {
        for (name, value) in property_map(&uses.step_schema(generator).to_value()) {
            if name == "steps" {
                properties.insert(
                    name,
                    json!({"type": "array", "items": {"$ref": "#/definitions/StepPatch"}}),
                );
            } else if !properties.contains_key(&name) {
                properties.insert(name, documented(value));
            }
        }
    }
    generator.definitions_mut().insert(
        "StepPatch".into(),
        json!({
            "description": "a step of a workflow that `extends` another: the `id` of the step it changes (or adds) and the keys that change",
            "type": "object",
            "properties": properties,
            "required": ["id"],
            "additionalProperties": false,
        }),
    );
    json!({"$ref": "#/definitions/StepPatch"})
}

/// The keys every step has; `uses` is the kind's name when the kind is known, else any kind.
fn common_properties(kind: Option<&Kind>, generator: &mut SchemaGenerator) -> Map<String, Value> {
    kinds::COMMON_KEYS
        .iter()
        .map(|key| {
            let value = match (key.name, kind) {
                ("uses", Some(kind)) => json!({"const": kind.uses.as_str()}),
                ("uses", None) => json!({"enum": kinds::names()}),
                _ => form_schema(key.form, generator),
            };
            (key.name.to_string(), with_description(value, key.doc))
        })
        .collect()
}

/// The JSON type of a common key's value form.
fn form_schema(form: &str, generator: &mut SchemaGenerator) -> Value {
    match form {
        "bool" => json!({"type": "boolean"}),
        "duration" => generator
            .subschema_for::<opt_duration::Written>()
            .to_value(),
        _ => json!({"type": "string"}),
    }
}

fn property_map(variant: &Value) -> Map<String, Value> {
    variant
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// A key's schema as its step struct declares it, with its doc comment as one line (as the
/// reference writes it) and without the form meant for the reference.
fn documented(mut value: Value) -> Value {
    let Some(map) = value.as_object_mut() else {
        return value;
    };
    map.remove(kinds::FORM_EXTENSION);
    let doc = map
        .remove("description")
        .and_then(|doc| doc.as_str().map(kinds::one_line));
    match doc {
        Some(doc) => with_description(value, &doc),
        None => value,
    }
}

/// Draft 7 ignores keys beside `$ref`, so a described reference is wrapped in `allOf`.
fn with_description(value: Value, doc: &str) -> Value {
    match value {
        Value::Object(mut map) if !map.contains_key("$ref") => {
            map.insert("description".into(), doc.into());
            Value::Object(map)
        }
        other => json!({"allOf": [other], "description": doc}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::SchemaKind;

    #[test]
    fn every_kind_has_exactly_its_declared_keys() {
        let schema = SchemaKind::Workflow.schema();
        let kinds = schema["definitions"]["Step"]["allOf"].as_array().unwrap();
        assert_eq!(kinds.len(), Uses::iter().count());
        for (uses, branch) in Uses::iter().zip(kinds) {
            assert_eq!(branch["if"]["properties"]["uses"]["const"], uses.as_str());
            let variant = &branch["then"];
            assert_eq!(variant["properties"]["uses"]["const"], uses.as_str());
            let mut keys: Vec<&str> = variant["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            keys.sort_unstable();
            let mut expected: Vec<&str> = kinds::COMMON_KEYS
                .iter()
                .chain(uses.kind().keys())
                .map(|k| k.name)
                .collect();
            expected.sort_unstable();
            assert_eq!(keys, expected, "{uses}");
            assert_eq!(variant["description"], uses.kind().summary);
            for key in uses.kind().keys() {
                let described = &variant["properties"][key.name]["description"];
                assert_eq!(described, key.doc, "{uses}.{}", key.name);
            }
        }
    }
}
