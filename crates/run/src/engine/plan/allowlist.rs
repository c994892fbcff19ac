//! Roles whose adapter cannot enforce their tool allowlist: one warning per adapter, naming every
//! such role, so a command says it once however many roles share the adapter.

use model::workflow::model::Access;
use model::workflow::model::AgentKind;

#[derive(Debug, Default)]
pub struct Unenforced {
    /// Per adapter, in first-seen order: its roles, and whether any of them is read-only.
    by_agent: Vec<(AgentKind, Vec<String>, bool)>,
}

impl Unenforced {
    pub fn add(&mut self, agent: AgentKind, role: &str, access: Access) {
        let read_only = access == Access::ReadOnly;
        match self.by_agent.iter_mut().find(|(kind, ..)| *kind == agent) {
            Some((_, roles, any_read_only)) => {
                if !roles.iter().any(|r| r == role) {
                    roles.push(role.to_string());
                }
                *any_read_only |= read_only;
            }
            None => self
                .by_agent
                .push((agent, vec![role.to_string()], read_only)),
        }
    }

    pub fn warnings(&self) -> Vec<String> {
        self.by_agent
            .iter()
            .map(|(agent, roles, read_only)| {
                format!(
                    "the `{agent}` adapter cannot enforce the tool allowlist of {}: the agent is \
                     trusted to use only the listed tools{}",
                    super::blocker::role_names(roles),
                    if *read_only {
                        " (read-only access is still enforced by the runner's audit after every \
                         turn)"
                    } else {
                        ""
                    }
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_warning_per_adapter_names_all_its_roles() {
        let mut u = Unenforced::default();
        u.add(AgentKind::Command, "player", Access::Write);
        u.add(AgentKind::Command, "coach", Access::ReadOnly);
        u.add(AgentKind::Command, "coach", Access::ReadOnly);
        assert_eq!(
            u.warnings(),
            [
                "the `command` adapter cannot enforce the tool allowlist of roles `player` and \
              `coach`: the agent is trusted to use only the listed tools (read-only access is \
              still enforced by the runner's audit after every turn)"
            ]
        );
        let mut writer_only = Unenforced::default();
        writer_only.add(AgentKind::Codex, "player", Access::Write);
        assert_eq!(
            writer_only.warnings(),
            ["the `codex` adapter cannot enforce the tool allowlist of role `player`: the agent \
              is trusted to use only the listed tools"]
        );
    }
}
