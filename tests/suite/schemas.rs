//! The checked-in JSON Schemas (`schemas/*.json`) accept the files autobuild ships and reads,
//! and reject what its decoders reject (an unknown key), checked with an independent
//! JSON-Schema validator.

use std::path::{Path, PathBuf};

use autobuild::project::Config;
use autobuild::schema::SchemaKind;
use base::Keyword;
use serde_json::{json, Value};

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

fn validator(kind: SchemaKind) -> jsonschema::Validator {
    let path = repo(&format!("schemas/{}.json", kind.as_str()));
    let text = std::fs::read_to_string(&path).unwrap();
    let schema: Value = serde_json::from_str(&text).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

fn toml_file(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    let value: toml::Value = toml::from_str(&text).unwrap();
    serde_json::to_value(value).unwrap()
}

fn yaml_file(path: &Path) -> Value {
    yaml_serde::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn errors(validator: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn assert_valid(kind: SchemaKind, instance: &Value, what: &str) {
    let found = errors(&validator(kind), instance);
    assert!(found.is_empty(), "{what}: {found:#?}");
}

fn assert_invalid(kind: SchemaKind, instance: &Value, what: &str) {
    assert!(
        !validator(kind).is_valid(instance),
        "{what} should be rejected"
    );
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(repo(dir))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    found.sort();
    assert!(!found.is_empty(), "no *.{ext} in {dir}");
    found
}

#[test]
fn shipped_workflows_are_valid() {
    for path in files("workflows", "toml") {
        assert_valid(
            SchemaKind::Workflow,
            &toml_file(&path),
            &path.display().to_string(),
        );
    }
    let yaml = repo("tests/fixtures/workflows/player-coach.yaml");
    assert_valid(SchemaKind::Workflow, &yaml_file(&yaml), "the YAML fixture");
}

#[test]
fn a_patch_that_extends_restates_only_what_changes() {
    let patch = json!({
        "schema": 1, "name": "careful", "extends": "player-coach",
        "roles": {"coach": {"model": "opus"}},
        "steps": [{"id": "cycle", "max_iterations": 8}],
    });
    assert_valid(SchemaKind::Workflow, &patch, "the docs' patch example");
    let mut full = patch.clone();
    full.as_object_mut().unwrap().remove("extends");
    assert_invalid(
        SchemaKind::Workflow,
        &full,
        "a step without `uses` outside a patch",
    );
}

#[test]
fn unknown_workflow_keys_are_rejected_where_the_decoder_rejects_them() {
    let base = toml_file(&repo("workflows/player-coach.toml"));
    let mut top = base.clone();
    top["modle"] = json!("x");
    assert_invalid(SchemaKind::Workflow, &top, "an unknown top-level key");
    let mut role = base.clone();
    role["roles"]["coach"]["modle"] = json!("x");
    assert_invalid(SchemaKind::Workflow, &role, "an unknown role key");
    let mut step = base.clone();
    step["steps"][1]["untill"] = json!("true");
    assert_invalid(SchemaKind::Workflow, &step, "an unknown key of a loop step");
    let mut misplaced = base.clone();
    misplaced["steps"][0]["role"] = json!("player");
    assert_invalid(
        SchemaKind::Workflow,
        &misplaced,
        "a key of another kind (`role` on a worktree step)",
    );
    let mut kind = base;
    kind["steps"][0]["uses"] = json!("worktre");
    assert_invalid(SchemaKind::Workflow, &kind, "an unknown `uses`");
}

/// Steps are checked by the schema of their `uses` alone (`if`/`then`, not `oneOf`): a generic
/// validator reports the one wrong key, not one complaint per step kind.
#[test]
fn a_wrong_key_of_a_step_is_one_error_not_one_per_kind() {
    let mut step = toml_file(&repo("workflows/player-coach.toml"));
    step["steps"][1]["untill"] = json!("true");
    let found = errors(&validator(SchemaKind::Workflow), &step);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].contains("untill"), "{found:#?}");
}

#[test]
fn shipped_profiles_are_valid_and_unknown_keys_rejected() {
    for path in files("profiles", "toml") {
        assert_valid(
            SchemaKind::Profile,
            &toml_file(&path),
            &path.display().to_string(),
        );
    }
    assert_invalid(
        SchemaKind::Profile,
        &json!({"require": ["coach"], "aliasses": []}),
        "an unknown profile key",
    );
    assert_invalid(
        SchemaKind::Profile,
        &json!({"require": ["tests"]}),
        "an unknown requirement",
    );
}

#[test]
fn the_demo_config_is_valid_and_unknown_keys_rejected() {
    let config = toml_file(&repo("demo/project/.autobuild/config.toml"));
    assert_valid(SchemaKind::Config, &config, "the demo config");
    let mut typo = config;
    typo["checks"]["test"]["timout"] = json!("1m");
    assert_invalid(SchemaKind::Config, &typo, "an unknown key of a check");
}

/// The config schema is derived from the type the reader decodes, so their keys agree by
/// construction; what can still drift is a rule a value type states twice, once for the
/// decoder and once as a schema pattern. Each case is judged by both.
#[test]
fn the_config_schema_and_the_decoder_agree_on_value_rules() {
    let validator = validator(SchemaKind::Config);
    let cases = [
        ("[checks.unit-tests_2]\ncmd = \"make\"\n", true),
        ("[checks.Test]\ncmd = \"make\"\n", false),
        ("[checks.2fast]\ncmd = \"make\"\n", false),
        ("[checks.test]\ncmd = \"  \"\n", false),
        ("[checks.test]\ntimeout = \"1m\"\n", false),
        ("[checks.test]\ncmd = \"x\"\ntimout = \"1m\"\n", false),
        ("[env]\nvars = { _X1 = \"1\" }\n", true),
        ("[env]\nvars = { \"BAD-NAME\" = \"1\" }\n", false),
        ("[env]\nvars = { PATH = \"/bin\" }\n", false),
        ("[env]\nvars = { PORT = 8080 }\n", false),
        ("[env]\npath_prepend = [\".venv/bin\", \" bin \"]\n", true),
        ("[env]\npath_prepend = [\"a:b\"]\n", false),
        ("[env]\npath_prepend = [\" \"]\n", false),
        (
            "[sandbox]\nwritable = [\"~\", \"~/.cache\", \"/opt/x/\"]\n",
            true,
        ),
        ("[sandbox]\nwritable = [\"/\"]\n", false),
        ("[sandbox]\nwritable = [\"cache\"]\n", false),
        ("[sandbox]\nmode = \"onn\"\n", false),
        ("[pricing.m]\ninput = 0\noutput = 1.5\n", true),
        ("[pricing.m]\ninput = -1\noutput = 1\n", false),
        ("[pricing.m]\ninput = 1\n", false),
        ("[project]\nbase_branch = \"\"\n", false),
        ("[coverage]\ncmd = \"x\"\n", false),
        ("coverage = 80\n", false),
        ("[roles.player]\nmodel = \"opus\"\n", true),
        ("[feature]\nintegration = \"integrate\"\n", true),
        ("[scope]\nreveal = \"all\"\n", false),
        ("not_a_table = 0\n", false),
    ];
    for (text, valid) in cases {
        let decoded = Config::parse(Path::new("config.toml"), text);
        assert_eq!(
            decoded.is_ok(),
            valid,
            "the decoder on {text:?}: {decoded:?}"
        );
        let value: toml::Value = toml::from_str(text).unwrap();
        let instance = serde_json::to_value(value).unwrap();
        assert_eq!(
            validator.is_valid(&instance),
            valid,
            "the schema on {text:?}: {:#?}",
            errors(&validator, &instance)
        );
    }
}

#[test]
fn the_guardkit_feature_fixture_is_valid() {
    let feature = yaml_file(&repo(
        "tests/fixtures/features/guardkit/.guardkit/features/FEAT-A1B2.yaml",
    ));
    assert_valid(SchemaKind::Feature, &feature, "the GuardKit feature");
    let demo = yaml_file(&repo(
        "tests/fixtures/features/demo/.autobuild/features/FEAT-GREET.yaml",
    ));
    assert_valid(SchemaKind::Feature, &demo, "the demo feature");
    let wrapped = json!({"feature": {"id": "FEAT-1", "name": "x"}, "tasks": [{"id": "T-1"}]});
    assert_valid(
        SchemaKind::Feature,
        &wrapped,
        "a feature under a `feature:` wrapper",
    );
    let mut broken = feature;
    broken["tasks"][0]["dependencies"] = json!("TASK-GK-002");
    assert_invalid(
        SchemaKind::Feature,
        &broken,
        "dependencies that are not a list",
    );
    assert_invalid(
        SchemaKind::Feature,
        &json!({"name": "no id"}),
        "a feature without an id",
    );
}
