//! The kinds' declared facts agree with the names they are registered under.

use super::*;
use base::Keyword;

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
fn the_gate_is_the_only_kind_bound_to_a_loop() {
    let loop_only: Vec<Uses> = Uses::iter().filter(|u| u.kind().loop_only).collect();
    assert_eq!(loop_only, [Uses::Gate]);
}
