//! JSON Schemas of the files users write — workflows, `.autobuild/config.toml`, profiles and
//! feature files — so editors (taplo for TOML, the YAML language server) complete keys and flag
//! mistakes as they are typed (`autobuild schema <kind>`, checked in under `schemas/`).
//!
//! Each schema is generated from the types the file is read into, never written by hand:
//! workflows and profiles from their serde models, whose step list is described kind by kind
//! from the step-kind registry ([`crate::workflow::kinds`]); feature files from the raw types
//! their decoder reads; config.toml from [`crate::project::Config`], the type it is decoded
//! into.

mod feature;
mod workflow;

use std::borrow::Cow;
use std::marker::PhantomData;

use schemars::generate::SchemaSettings;
use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde_json::Value;

use crate::profile::set::ProfileFile;
use crate::profile::Requirement;

/// The files a schema describes.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::EnumIter,
    strum::VariantNames,
)]
#[strum(serialize_all = "lowercase")]
pub enum SchemaKind {
    Workflow,
    Config,
    Profile,
    Feature,
}

impl SchemaKind {
    /// The kind called `name`, if there is one.
    pub fn named(name: &str) -> Option<SchemaKind> {
        name.parse().ok()
    }

    /// The schema as a JSON value.
    pub fn schema(self) -> Value {
        let generator = SchemaSettings::draft07().for_deserialize().into_generator();
        let mut schema = match self {
            SchemaKind::Workflow => workflow::schema(generator),
            SchemaKind::Config => config_schema(generator),
            // A profile file may patch a profile defined before it, so nothing is required.
            SchemaKind::Profile => {
                let mut schema = generator.into_root_schema_for::<Patch<ProfileFile>>();
                schema.insert("title".into(), "autobuild profile".into());
                schema
            }
            SchemaKind::Feature => feature::schema(generator),
        }
        .to_value();
        if self != SchemaKind::Feature {
            without_null(&mut schema);
        }
        schema
    }

    /// The schema as the checked-in file `schemas/<kind>.json` holds it.
    pub fn text(self) -> String {
        let mut text = serde_json::to_string_pretty(&self.schema())
            .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
        text.push('\n');
        text
    }
}

/// Removes the `null` that schemars allows (and defaults to) for every `Option`: TOML has no
/// null, and an absent key is how a TOML (or YAML) workflow, config or profile says "none".
/// Feature files keep it: GuardKit writes `null`s.
fn without_null(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map.get("default").is_some_and(Value::is_null) {
                map.remove("default");
            }
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".into(), only);
                }
            }
            if let Some(Value::Array(alternatives)) = map.get_mut("anyOf") {
                alternatives.retain(|a| a.get("type").is_none_or(|t| t != "null"));
                if alternatives.len() == 1 {
                    let only = alternatives.remove(0);
                    map.remove("anyOf");
                    if map.is_empty() {
                        *value = only;
                        return without_null(value);
                    }
                    // Draft 7 ignores keys beside `$ref`, such as a description.
                    map.insert("allOf".into(), Value::Array(vec![only]));
                }
            }
            map.values_mut().for_each(without_null);
        }
        Value::Array(items) => items.iter_mut().for_each(without_null),
        _ => {}
    }
}

/// Requirements are strings of a few forms (`checks.<name>`, `criteria`, `coach`, `changes`).
impl JsonSchema for Requirement {
    fn schema_name() -> Cow<'static, str> {
        "Requirement".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let words: Vec<&str> = Requirement::FORMS
            .into_iter()
            .filter(|form| !form.contains('<'))
            .collect();
        json_schema!({
            "description": format!("what the gate checks: {}", Requirement::FORMS.join(", ")),
            "type": "string",
            "anyOf": [
                {"enum": words},
                {"pattern": "^checks\\.[^.]+$", "description": "that runner check passed"}
            ]
        })
    }
}

/// `T` with none of its keys required: a patch of `T` (a role in config.toml or in a workflow
/// that `extends` another, a profile in config.toml) restates only what it changes.
pub struct Patch<T>(PhantomData<T>);

impl<T: JsonSchema> JsonSchema for Patch<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("{}Patch", T::schema_name()).into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = T::json_schema(generator);
        schema.remove("required");
        schema
    }
}

#[cfg(test)]
mod tests;

/// config.toml's schema, from its type; the entries of `[roles]` and `[profiles]` are described
/// here, where workflows and profiles are known (`project` sits below both and keeps them as
/// tables its own type does not describe).
fn config_schema(mut generator: SchemaGenerator) -> Schema {
    let role = generator.subschema_for::<Patch<crate::workflow::model::Role>>();
    let profile = generator.subschema_for::<Patch<ProfileFile>>();
    let mut schema = generator.into_root_schema_for::<crate::project::Config>();
    for (table, entry) in [("roles", role), ("profiles", profile)] {
        if let Some(table) = schema
            .get_mut("properties")
            .and_then(|properties| properties.get_mut(table))
            .and_then(Value::as_object_mut)
        {
            table.insert("additionalProperties".into(), entry.to_value());
        }
    }
    schema
}
