//! The answers of agent steps outside loops (`steps.<id>.outputs.text`: a planner's plan), as
//! the reports show them. Answers of steps inside a loop are the turns' own records (the
//! player's final message, the reviewer's verdict) and are shown with their turn.

use serde::Serialize;

use crate::engine::state::RunState;

/// One step's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Answer {
    pub step: String,
    pub text: String,
}

/// The answers recorded in `state`, in step order of the record (by step id).
pub fn answers(state: &RunState) -> Vec<Answer> {
    state
        .completed
        .iter()
        .filter(|(path, _)| !path.contains('/'))
        .filter_map(|(path, record)| {
            let text = record.outputs.get("text")?.as_str()?.trim();
            (!text.is_empty()).then(|| Answer {
                step: path.clone(),
                text: text.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::state::StepRecord;
    use serde_json::json;

    #[test]
    fn only_top_level_steps_with_an_answer() {
        let mut state: RunState = serde_json::from_value(json!({
            "version": 1, "task_id": "TASK-1", "task_path": "t.md", "title": "t",
            "workflow": "planned", "workflow_hash": "x", "status": "blocked",
            "started_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:01:00Z",
            "base_branch": "main", "branch": "autobuild/TASK-1", "worktree": "/w",
            "settings": {"workflow_arg": null, "auto_merge": false, "no_merge": false,
                "overrides": [], "max_turns": null, "player_model": null,
                "coach_model": null, "agent": null},
            "max_turns": 2, "completed": {}, "loops": {}, "last_checkpoint": null,
            "cost_usd": 0.0, "tokens_in": 0, "tokens_out": 0, "outcome": null
        }))
        .unwrap();
        for (path, outputs) in [
            ("plan", json!({"text": "1. do it\n"})),
            ("cycle/1/implement", json!({"text": "done"})),
            ("worktree", json!({"path": "x"})),
            ("silent", json!({"text": "  "})),
        ] {
            state
                .completed
                .insert(path.to_string(), StepRecord { ok: true, outputs });
        }
        assert_eq!(
            answers(&state),
            vec![Answer {
                step: "plan".into(),
                text: "1. do it".into()
            }]
        );
    }
}
