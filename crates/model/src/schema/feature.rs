//! The feature-file schema, from the types the feature decoder reads. GuardKit keeps its own
//! keys and run state in the file, so keys beyond autobuild's are allowed, as the decoder
//! allows them; and GuardKit's other shape, the keys under a `feature:` wrapper, is accepted too.

use schemars::{Schema, SchemaGenerator};
use serde_json::json;

use crate::feature_file::RawFeature;

pub(super) fn schema(mut generator: SchemaGenerator) -> Schema {
    let feature = generator.subschema_for::<RawFeature>();
    let mut root = generator.into_root_schema_for::<RawFeature>();
    let flat = json!({
        "required": root.remove("required").unwrap_or_else(|| json!([])),
    });
    let wrapped = json!({
        "description": "the feature's keys under a `feature:` wrapper (`tasks` and `orchestration` may sit beside it)",
        "required": ["feature"],
        "properties": {"feature": feature},
    });
    root.insert("anyOf".into(), json!([flat, wrapped]));
    root
}
