//! Tests of the workflow model's key lists and serialization.

use super::*;

/// Every action with every optional field set.
fn every_action() -> Vec<Action> {
    vec![
        Action::Worktree,
        Action::Agent {
            role: "player".into(),
            advisory: true,
        },
        Action::Verify {
            checks: Some(vec!["test".into()]),
            expect: Some(Expect::Fail),
        },
        Action::Gate {
            reviews: Some(vec!["review".into()]),
        },
        Action::Loop {
            max_iterations: 1,
            until: Some("true".into()),
            stall: Some(StallConfig::default()),
            steps: vec![],
        },
        Action::Merge {
            strategy: Some(MergeStrategy::Squash),
        },
        Action::Run {
            run: "true".into(),
            env: BTreeMap::from([("A".into(), "1".into())]),
        },
        Action::Approval {
            question: Some("Ship it?".into()),
        },
        Action::Report,
    ]
}

#[test]
fn declared_step_keys_match_the_actions() {
    for action in every_action() {
        let json = serde_json::to_value(&action).unwrap();
        let mut written: Vec<&str> = json
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| *k != "uses")
            .collect();
        written.sort_unstable();
        let mut declared: Vec<&str> = action.kind().keys.iter().map(|k| k.name).collect();
        declared.sort_unstable();
        assert_eq!(written, declared, "keys of `{}`", action.uses());
        assert_eq!(json["uses"], action.uses().as_str());
    }
    assert_eq!(
        every_action().len(),
        crate::workflow::kinds::Uses::ALL.len()
    );
}

#[test]
fn waived_requirements_leave_the_gate() {
    let workflow = Workflow {
        schema: SCHEMA_VERSION,
        name: "solo".into(),
        description: String::new(),
        extends: None,
        replaces: None,
        inputs: BTreeMap::new(),
        limits: Limits::default(),
        gate: GateConfig {
            waive: vec![Requirement::Coach],
        },
        roles: BTreeMap::new(),
        steps: vec![],
    };
    assert_eq!(
        workflow.gate_requirements(&[Requirement::Criteria, Requirement::Coach]),
        [Requirement::Criteria]
    );
}
