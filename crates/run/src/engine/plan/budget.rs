//! A budget is never skipped silently: every agent step whose cost cannot be known is named
//! before the run starts.
//!
//! Claude Code reports each invocation's cost. codex and the native HTTP adapters report only
//! tokens, and autobuild prices them from `[pricing]` or its built-in table (module
//! `agents::pricing`; each adapter says what it cannot price, `Adapter::unpriced`); a model in
//! neither — or a codex role without `model`, which runs whatever codex's own default is — would
//! run uncounted, and `limits.max_cost_usd` would never trigger. So with a budget such a run is
//! refused until `[pricing."<model>"]` gives a price (or the role names a priced model); without
//! a budget it is a warning that the cost is not recorded.

use crate::engine::plan::Blocker;
use agents::{adapter_for, CostGap};
use model::project::config::PriceTable;
use model::workflow::ResolvedWorkflow;

/// What stops the run and what only warns, about agent steps whose cost cannot be known.
#[derive(Debug, Default, PartialEq)]
pub struct Unpriced {
    pub blockers: Vec<Blocker>,
    pub warnings: Vec<String>,
}

pub fn check(resolved: &ResolvedWorkflow, pricing: &PriceTable) -> Unpriced {
    let budget = resolved.workflow.limits.max_cost_usd;
    let mut found = Unpriced::default();
    let mut seen: Vec<&str> = Vec::new();
    for (role_name, role) in resolved.workflow.agent_roles() {
        if seen.contains(&role_name.as_str()) {
            continue;
        }
        seen.push(role_name);
        let Some(CostGap { what, fix }) =
            adapter_for(role.agent).and_then(|adapter| adapter.unpriced(role_name, role, pricing))
        else {
            continue;
        };
        let agent = role.agent;
        match budget {
            Some(limit) => found.blockers.push(Blocker::Unpriced {
                role: role_name.clone(),
                agent,
                what,
                limit,
                fix,
            }),
            None => found.warnings.push(format!(
                "role `{role_name}` ({agent}): {what}: its cost is not recorded; {fix}"
            )),
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use model::project::config::ModelPrice;
    use model::workflow::model::AgentKind;
    use model::workflow::{resolve, Overrides};

    fn codex_workflow(player: Option<&str>, budget: Option<f64>) -> ResolvedWorkflow {
        let overrides = Overrides {
            agent: Some("codex".into()),
            models: vec!["coach=gpt-5-codex".into()],
            ..Overrides::default()
        };
        let mut resolved = resolve(None, "player-coach", &overrides).unwrap();
        if let Some(role) = resolved.workflow.roles.get_mut("player") {
            role.model = player.map(str::to_string);
        }
        resolved.workflow.limits.max_cost_usd = budget;
        resolved
    }

    #[test]
    fn with_a_budget_an_unpriced_or_unnamed_model_is_refused() {
        let none = PriceTable::new();
        let found = check(&codex_workflow(Some("gpt-6.1-sol"), Some(25.0)), &none);
        let [Blocker::Unpriced {
            role,
            agent: AgentKind::Codex,
            what,
            limit,
            fix,
        }] = found.blockers.as_slice()
        else {
            panic!("{found:?}");
        };
        assert_eq!((role.as_str(), *limit), ("player", 25.0));
        // The adapter's words for the gap and its fix.
        assert!(what.contains("`gpt-6.1-sol` has no known price"), "{what}");
        assert!(fix.contains("[pricing.\"gpt-6.1-sol\"]"), "{fix}");

        let found = check(&codex_workflow(None, Some(25.0)), &none);
        let [Blocker::Unpriced { role, what, .. }] = found.blockers.as_slice() else {
            panic!("{found:?}");
        };
        assert_eq!(role, "player");
        assert!(what.starts_with("names no `model`"), "{what}");
    }

    #[test]
    fn a_price_from_the_project_or_the_built_in_table_is_enough() {
        let mut table = PriceTable::new();
        table.insert(
            "gpt-6.1-sol".into(),
            ModelPrice {
                input: 1.0,
                cached_input: Some(0.1),
                output: 8.0,
            },
        );
        let found = check(&codex_workflow(Some("gpt-6.1-sol"), Some(25.0)), &table);
        assert_eq!(found, Unpriced::default());
        let found = check(&codex_workflow(Some("o3"), Some(25.0)), &PriceTable::new());
        assert_eq!(found, Unpriced::default());
    }

    #[test]
    fn without_a_budget_it_is_a_warning_and_claude_models_are_left_to_their_own_check() {
        let found = check(
            &codex_workflow(Some("gpt-6.1-sol"), None),
            &PriceTable::new(),
        );
        assert!(found.blockers.is_empty());
        assert_eq!(found.warnings.len(), 1);
        assert!(found.warnings[0].contains("its cost is not recorded"));
        let found = check(
            &codex_workflow(Some("sonnet"), Some(25.0)),
            &PriceTable::new(),
        );
        assert_eq!(found, Unpriced::default());
    }
}
