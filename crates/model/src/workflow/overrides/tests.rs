//! Tests of command-line overrides: flags and `--set` as patches, their conflicts and errors.

use super::*;
use crate::workflow::builtin;
use base::user_file::source::Layer;

fn player_coach() -> Node {
    let (file, text) = builtin::WORKFLOWS[0];
    parse_toml::parse(&Source::new(file, text, Layer::BuiltIn)).unwrap()
}

fn set(items: &[&str]) -> Overrides {
    Overrides {
        set: items.iter().map(|s| s.to_string()).collect(),
        ..Overrides::default()
    }
}

#[test]
fn set_reaches_roles_limits_and_nested_steps() {
    let mut tree = player_coach();
    apply(
        &mut tree,
        &set(&[
            "roles.coach.model=opus",
            "limits.max_cost_usd=5",
            "steps.cycle.max_iterations=3",
            "steps.review.role=player",
        ]),
    )
    .unwrap();
    assert_eq!(
        tree.at(&path("roles.coach.model")).unwrap().as_str(),
        Some("opus")
    );
    assert!(matches!(
        tree.at(&path("limits.max_cost_usd")).unwrap().value,
        Value::Integer(5)
    ));
    let cycle = &tree_steps(&tree)[1];
    assert!(matches!(
        cycle.get("max_iterations").unwrap().value,
        Value::Integer(3)
    ));
    let review = &cycle.get("steps").unwrap().as_array().unwrap()[2];
    assert_eq!(review.get_str("role"), Some("player"));
    let model = tree.at(&path("roles.coach.model")).unwrap();
    assert_eq!(model.pos.layer(), Layer::CommandLine);
    assert_eq!(model.pos.location.column, 19);
}

#[test]
fn flags_set_models_agents_and_the_first_loop() {
    let mut tree = player_coach();
    let overrides = Overrides {
        max_turns: Some(9),
        models: vec!["player=haiku".into()],
        agent: Some("codex".into()),
        ..Overrides::default()
    };
    apply(&mut tree, &overrides).unwrap();
    assert_eq!(
        tree.at(&path("roles.player.model")).unwrap().as_str(),
        Some("haiku")
    );
    assert_eq!(
        tree.at(&path("roles.coach.agent")).unwrap().as_str(),
        Some("codex")
    );
    // The coach's model was chosen for the replaced adapter.
    assert!(tree.at(&path("roles.coach.model")).is_none());
    let cycle = &tree_steps(&tree)[1];
    assert!(matches!(
        cycle.get("max_iterations").unwrap().value,
        Value::Integer(9)
    ));
}

#[test]
fn model_flags_reach_any_role_and_name_what_is_wrong() {
    let mut tree = player_coach();
    let overrides = Overrides {
        models: vec![
            "coach=opus".into(),
            "player=haiku".into(),
            "coach=o3".into(),
        ],
        ..Overrides::default()
    };
    apply(&mut tree, &overrides).unwrap();
    assert_eq!(
        tree.at(&path("roles.coach.model")).unwrap().as_str(),
        Some("o3"),
        "the last --model for a role wins"
    );
    let model = tree.at(&path("roles.player.model")).unwrap();
    assert_eq!(model.as_str(), Some("haiku"));
    assert_eq!(model.pos.describe(), "--model player=haiku");

    let problems = apply(
        &mut player_coach(),
        &Overrides {
            models: vec!["coahc=opus".into(), "opus".into(), "coach=".into()],
            ..Overrides::default()
        },
    )
    .unwrap_err();
    assert_eq!(problems[0].message, "the workflow has no `coahc` role");
    assert_eq!(problems[0].help.as_deref(), Some("did you mean `coach`?"));
    assert_eq!(problems[1].message, "expected ROLE=MODEL");
    assert_eq!(problems[2].message, "no model named for `coach`");
}

#[test]
fn unknown_steps_and_roles_are_located_with_suggestions() {
    let mut tree = player_coach();
    let problems = apply(
        &mut tree,
        &set(&[
            "steps.cylce.max_iterations=3",
            "roles.coahc.model=x",
            "oops",
        ]),
    )
    .unwrap_err();
    assert_eq!(problems[0].message, "no step `cylce`");
    assert_eq!(problems[0].help.as_deref(), Some("did you mean `cycle`?"));
    assert_eq!(problems[0].location.unwrap().column, 7);
    assert_eq!(problems[1].help.as_deref(), Some("did you mean `coach`?"));
    assert_eq!(problems[2].message, "expected KEY=VALUE");
}

#[test]
fn a_set_of_a_key_a_flag_also_sets_is_refused_whatever_the_order() {
    let mut tree = player_coach();
    let overrides = Overrides {
        max_turns: Some(3),
        models: vec!["coach=opus".into()],
        agent: Some("codex".into()),
        set: vec![
            "steps.cycle.max_iterations=5".into(),
            "roles.coach.model=haiku".into(),
            "roles. player .agent=command".into(),
            "limits.max_cost_usd=5".into(),
            "roles.player.model=sonnet".into(),
        ],
    };
    let problems = apply(&mut tree, &overrides).unwrap_err();
    let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`steps.cycle.max_iterations` is set both by --max-turns and by --set",
            "`roles.coach.model` is set both by --model and by --set",
            "`roles.player.agent` is set both by --agent and by --set",
        ]
    );
    assert_eq!(
        problems[0].help.as_deref(),
        Some("give only one of them: drop --max-turns or this --set")
    );
}

#[test]
fn the_last_set_of_a_key_wins() {
    let mut tree = player_coach();
    apply(
        &mut tree,
        &set(&["roles.coach.model=opus", "roles.coach.model=haiku"]),
    )
    .unwrap();
    assert_eq!(
        tree.at(&path("roles.coach.model")).unwrap().as_str(),
        Some("haiku")
    );
}

fn path(dotted: &str) -> Vec<base::user_file::tree::Seg> {
    dotted
        .split('.')
        .map(base::user_file::tree::Seg::key)
        .collect()
}
