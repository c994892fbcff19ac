use base::Keyword;
use strum::IntoEnumIterator;

use super::*;

#[test]
fn every_kind_is_a_draft_7_object_schema() {
    for kind in SchemaKind::iter() {
        let schema = kind.schema();
        assert_eq!(schema["$schema"], "http://json-schema.org/draft-07/schema#");
        assert_eq!(schema["type"], "object", "{}", kind.as_str());
    }
}

#[test]
fn the_checked_in_schemas_are_current() {
    for kind in SchemaKind::iter() {
        let name = kind.as_str();
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
            .join("schemas")
            .join(format!("{name}.json"));
        let checked_in = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            checked_in == kind.text(),
            "schemas/{name}.json is out of date; regenerate it with \
             `cargo run -- schema {name} > schemas/{name}.json`"
        );
    }
}

#[test]
fn requirements_accept_what_the_profile_decoder_accepts() {
    let schema = SchemaKind::Profile.schema();
    let requirement = &schema["definitions"]["Requirement"];
    let words = requirement["anyOf"][0]["enum"].as_array().unwrap();
    for word in words {
        assert!(word.as_str().unwrap().parse::<Requirement>().is_ok());
    }
    assert_eq!(words.len() + 1, Requirement::FORMS.len());
}
