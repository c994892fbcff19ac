//! The kinds' declared facts agree with the typed model and outputs they describe.

use super::*;

#[test]
fn every_kind_is_registered_under_its_own_name() {
    for uses in Uses::iter() {
        assert_eq!(uses.kind().uses, uses);
        assert_eq!(named(uses.as_str()).map(|k| k.uses), Some(uses));
        let json = serde_json::to_value(uses).unwrap();
        assert_eq!(json.as_str(), Some(uses.as_str()), "serde name of {uses:?}");
    }
    assert!(named("lop").is_none());
}

#[test]
fn declared_outputs_are_what_the_typed_outputs_serialize() {
    let cases: Vec<(Uses, serde_json::Value)> = vec![
        (
            Uses::Worktree,
            serde_json::to_value(WorktreeOutputs {
                path: String::new(),
                branch: String::new(),
                base: String::new(),
                resumed: false,
            })
            .unwrap(),
        ),
        (
            Uses::Agent,
            serde_json::to_value(AgentOutputs {
                succeeded: true,
                exit: String::new(),
                files_changed: 0,
                decision: String::new(),
                text: String::new(),
            })
            .unwrap(),
        ),
        (
            Uses::Verify,
            serde_json::to_value(VerifyOutputs {
                passed: true,
                failed: vec![],
                criteria_met: 0,
                criteria_total: 0,
            })
            .unwrap(),
        ),
        (
            Uses::Gate,
            serde_json::to_value(GateOutputs::default()).unwrap(),
        ),
        (
            Uses::Loop,
            serde_json::to_value(LoopOutputs {
                iterations: 1,
                exit: LoopExit::Done,
            })
            .unwrap(),
        ),
        (
            Uses::Approval,
            serde_json::to_value(ApprovalOutputs::default()).unwrap(),
        ),
        (
            Uses::Merge,
            serde_json::to_value(MergeOutputs::default()).unwrap(),
        ),
        (
            Uses::Run,
            serde_json::to_value(RunOutputs {
                exit_code: Some(0),
                passed: true,
            })
            .unwrap(),
        ),
        (
            Uses::Report,
            serde_json::to_value(ReportOutputs {
                path: String::new(),
            })
            .unwrap(),
        ),
    ];
    assert_eq!(cases.len(), Uses::iter().count());
    for (uses, value) in cases {
        let mut written: Vec<&str> = value
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        written.sort_unstable();
        let mut declared: Vec<&str> = uses.kind().outputs.iter().map(|o| o.name).collect();
        declared.sort_unstable();
        assert_eq!(written, declared, "outputs of `{uses}`");
    }
}

#[test]
fn the_gate_is_the_only_kind_bound_to_a_loop() {
    let loop_only: Vec<Uses> = Uses::iter().filter(|u| u.kind().loop_only).collect();
    assert_eq!(loop_only, [Uses::Gate]);
}
