//! Tests of the workflow model.

use super::*;

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
