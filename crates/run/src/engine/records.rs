//! A run's turns loaded back from its directory: every loop's turns (a later loop's records by
//! its prefix), each with its player, checks, every reviewer and the gate. `report.md`, the
//! HTML report, `status` and the feature runner all read turns through here.

use std::path::Path;

use crate::engine::paths::RunPaths;
use crate::engine::state::RunState;
use crate::engine::turn::{
    combined_verdict, more_reviews, CoachRecord, GateRecord, PlayerRecord, VerifyRecord,
};

/// Everything recorded about one turn, loaded back from the run directory.
#[derive(Debug, Default)]
pub struct TurnRecords {
    /// The loop the turn belongs to; empty for the workflow's first loop (whose records carry
    /// no prefix).
    pub loop_id: String,
    pub turn: u32,
    pub player: Option<PlayerRecord>,
    pub verify: Option<VerifyRecord>,
    /// Every reviewer's record, first reviewer first.
    pub reviews: Vec<CoachRecord>,
    pub gate: Option<GateRecord>,
}

impl TurnRecords {
    /// `3` in the first loop, `polish 3` in a later one.
    pub fn label(&self) -> String {
        match self.loop_id.as_str() {
            "" => self.turn.to_string(),
            id => format!("{id} {}", self.turn),
        }
    }

    /// Every reviewer's verdict combined, as the gate saw it.
    pub fn verdict(&self) -> Option<model::steps::verdict::Verdict> {
        combined_verdict(&self.reviews)
    }
}

/// Loads every turn of every loop of the run (the first loop first), each loop's turns in
/// order until the first turn with no record.
pub fn load_turns(paths: &RunPaths, state: &RunState) -> Vec<TurnRecords> {
    // A later loop's records are prefixed with its id; the first loop's are not.
    let mut loops: Vec<(String, String)> = vec![(String::new(), String::new())];
    loops.extend(
        state
            .loops
            .keys()
            .map(|id| (id.clone(), format!("{id}_")))
            .filter(|(_, prefix)| {
                paths.turn_record(&format!("{prefix}gate"), 1).exists()
                    || paths.turn_record(&format!("{prefix}player"), 1).exists()
            }),
    );
    loops
        .iter()
        .flat_map(|(loop_id, prefix)| {
            (1..)
                .map(move |turn| {
                    let record = |kind: &str| paths.turn_record(&format!("{prefix}{kind}"), turn);
                    TurnRecords {
                        loop_id: loop_id.clone(),
                        turn,
                        player: read(&record("player")),
                        verify: read(&record("verify")),
                        reviews: read::<CoachRecord>(&record("coach"))
                            .into_iter()
                            .chain(more_reviews(paths, prefix, turn))
                            .collect(),
                        gate: read(&record("gate")),
                    }
                })
                .take_while(|t| t.player.is_some() || t.verify.is_some() || !t.reviews.is_empty())
        })
        .collect()
}

fn read<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    serde_json::from_str(&base::user_file::read_record_text(path).ok()?).ok()
}

/// A recorded turn as the display summarizes it.
pub fn turn_summary(t: &TurnRecords) -> crate::engine::events::TurnSummary {
    let reviews: Vec<&CoachRecord> = t.reviews.iter().collect();
    crate::engine::turn::summarize(
        t.player.as_ref(),
        t.verify.as_ref(),
        &reviews,
        t.gate.as_ref(),
    )
}
