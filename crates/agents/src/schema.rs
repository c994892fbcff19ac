//! The verdict schema as an agent CLI is given it.
//!
//! `schemas/verdict.schema.json` declares its dialect (`"$schema": ".../draft/2020-12/schema"`),
//! which documents the file but constrains nothing. The CLIs do not take it kindly: Claude Code
//! checks `--json-schema` with a draft-07 validator and, when that fails on the unknown
//! meta-schema, silently starts without its `StructuredOutput` tool; OpenAI's structured output
//! accepts a subset of JSON Schema. So every adapter strips the meta keys, and the schema itself
//! keeps to keywords draft-07 and the structured-output subset share (checked by
//! [`draft07_problems`] in the tests). Keys keep their written order: the schema is also shown
//! in `--dry-run` command lines, where a reordered schema would be harder to compare with the
//! file.

use serde_json::Value;

use base::json_text::JsonStrings;

/// Top-level keys that describe the schema rather than the answer.
pub const META_KEYS: &[&str] = &["$schema"];

/// Keywords of JSON Schema draft-07 (validation and annotations), for [`draft07_problems`].
const DRAFT07_KEYWORDS: &[&str] = &[
    "$id",
    "$ref",
    "$comment",
    "title",
    "description",
    "default",
    "readOnly",
    "writeOnly",
    "examples",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "additionalItems",
    "items",
    "maxItems",
    "minItems",
    "uniqueItems",
    "contains",
    "maxProperties",
    "minProperties",
    "required",
    "additionalProperties",
    "definitions",
    "properties",
    "patternProperties",
    "dependencies",
    "propertyNames",
    "const",
    "enum",
    "type",
    "format",
    "contentMediaType",
    "contentEncoding",
    "if",
    "then",
    "else",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
];

/// The schema on one line without [`META_KEYS`], keys in their written order; `Err` when the
/// text is not JSON.
pub fn for_cli(text: &str) -> Result<String, serde_json::Error> {
    serde_json::from_str::<Value>(text)?;
    Ok(strip_top_level(&compact(text), META_KEYS))
}

/// Keywords of `schema` (at any depth) that draft-07 does not have, as JSON pointers.
pub fn draft07_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    walk(schema, "", &mut problems);
    problems
}

fn walk(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let Some(object) = schema.as_object() else {
        return;
    };
    for (key, value) in object {
        let here = format!("{at}/{key}");
        if !DRAFT07_KEYWORDS.contains(&key.as_str()) {
            problems.push(here.clone());
            continue;
        }
        match key.as_str() {
            // Maps from names to schemas.
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                for (name, sub) in value.as_object().into_iter().flatten() {
                    walk(sub, &format!("{here}/{name}"), problems);
                }
            }
            // Lists of schemas.
            // `items` may also be one schema (below).
            "allOf" | "anyOf" | "oneOf" | "items" if value.is_array() => {
                for (i, sub) in value.as_array().into_iter().flatten().enumerate() {
                    walk(sub, &format!("{here}/{i}"), problems);
                }
            }
            // One schema.
            "items"
            | "additionalItems"
            | "additionalProperties"
            | "contains"
            | "propertyNames"
            | "if"
            | "then"
            | "else"
            | "not" => walk(value, &here, problems),
            _ => {}
        }
    }
}

/// `text` without whitespace outside strings.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut strings = JsonStrings::default();
    for c in text.chars() {
        if strings.feed(c) || !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// Compact JSON `text` (an object) without the top-level members named in `keys`.
fn strip_top_level(text: &str, keys: &[&str]) -> String {
    let members = match top_level_members(text) {
        Some(members) => members,
        None => return text.to_string(),
    };
    let kept: Vec<&str> = members
        .iter()
        .filter(|member| {
            let name = serde_json::from_str::<String>(key_of(member)).unwrap_or_default();
            !keys.contains(&name.as_str())
        })
        .copied()
        .collect();
    format!("{{{}}}", kept.join(","))
}

/// The `"key":value` members of a compact JSON object, or `None` when `text` is not an object.
fn top_level_members(text: &str) -> Option<Vec<&str>> {
    let inner = text.strip_prefix('{')?.strip_suffix('}')?;
    let mut members = Vec::new();
    let (mut depth, mut start) = (0usize, 0usize);
    let mut strings = JsonStrings::default();
    for (at, c) in inner.char_indices() {
        if strings.feed(c) {
            continue;
        }
        match c {
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.checked_sub(1)?,
            ',' if depth == 0 => {
                members.push(&inner[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if !inner[start..].is_empty() {
        members.push(&inner[start..]);
    }
    Some(members)
}

/// The quoted key of a compact `"key":value` member.
fn key_of(member: &str) -> &str {
    let mut escaped = false;
    for (at, c) in member.char_indices().skip(1) {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '"' => return &member[..=at],
            _ => {}
        }
    }
    member
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::steps::verdict::VERDICT_SCHEMA;

    #[test]
    fn the_meta_schema_is_stripped_and_the_order_kept() {
        let text = "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n  \
                    \"type\": \"object\",\n  \"title\": \"a \\\" b, {c}\",\n  \
                    \"properties\": {\"$schema\": {\"type\": \"string\"}}\n}";
        assert_eq!(
            for_cli(text).unwrap(),
            r#"{"type":"object","title":"a \" b, {c}","properties":{"$schema":{"type":"string"}}}"#
        );
        assert!(for_cli("not json").is_err());
        assert_eq!(for_cli("[1, 2]").unwrap(), "[1,2]");
        assert_eq!(for_cli("{}").unwrap(), "{}");
    }

    #[test]
    fn the_verdict_schema_a_cli_gets_is_draft07_without_a_meta_schema() {
        let text = for_cli(VERDICT_SCHEMA).unwrap();
        let schema: Value = serde_json::from_str(&text).unwrap();
        let original: Value = serde_json::from_str(VERDICT_SCHEMA).unwrap();
        assert!(schema.get("$schema").is_none(), "{text}");
        let mut expected = original.clone();
        if let Some(object) = expected.as_object_mut() {
            object.remove("$schema");
        }
        assert_eq!(schema, expected, "only the meta key is removed");
        assert_eq!(draft07_problems(&schema), Vec::<String>::new());
    }

    #[test]
    fn keywords_draft07_lacks_are_named() {
        let schema = serde_json::json!({
            "type": "object",
            "$defs": {},
            "properties": {"a": {"type": "array", "prefixItems": []}},
            "anyOf": [{"unevaluatedProperties": false}],
        });
        assert_eq!(
            draft07_problems(&schema),
            [
                "/$defs",
                "/anyOf/0/unevaluatedProperties",
                "/properties/a/prefixItems"
            ]
        );
    }
}
