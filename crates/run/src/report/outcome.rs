//! A finished run's [`Outcome`] as `autobuild report` needs it to write `report.md` again long
//! after the run ended: the one `state.json` recorded, with the stopping agent's transcript
//! found in the run's logs when the record is from before it named it.

use std::path::{Path, PathBuf};

use crate::engine::Outcome;

/// `recorded` with an unknown transcript path filled in from `logs`, the run's log directory
/// (its last transcript of the role, else the directory itself).
pub fn with_transcript(recorded: &Outcome, logs: &Path) -> Outcome {
    let mut outcome = recorded.clone();
    if let Outcome::AgentUnusable(stop) = &mut outcome {
        if stop.transcript.as_os_str().is_empty() {
            stop.transcript =
                last_transcript(logs, &stop.role).unwrap_or_else(|| logs.to_path_buf());
        }
    }
    outcome
}

/// The role's most recent transcript (`turn_N_ROLE.log`, `turn_N_ROLE_retry1.log`, …).
fn last_transcript(logs: &Path, role: &str) -> Option<PathBuf> {
    std::fs::read_dir(logs)
        .ok()?
        .flatten()
        .filter(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with("turn_")
                && name.contains(&format!("_{role}"))
                && name.ends_with(".log")
        })
        .filter_map(|entry| Some((entry.metadata().ok()?.modified().ok()?, entry.path())))
        .max()
        .map(|(_, path)| path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::AgentStop;
    use agents::AgentErrorClass;
    use model::workflow::model::AgentKind;

    fn stop(transcript: PathBuf) -> Outcome {
        Outcome::AgentUnusable(AgentStop {
            role: "coach".into(),
            agent: AgentKind::ClaudeCode,
            class: AgentErrorClass::OutOfCredit,
            message: "claude: Credit balance is too low".into(),
            transcript,
        })
    }

    #[test]
    fn an_old_records_unknown_transcript_is_found_in_the_logs() {
        let logs = tempfile::tempdir().unwrap();
        let transcript = logs.path().join("turn_2_coach.log");
        std::fs::write(&transcript, "out of credit").unwrap();
        std::fs::write(logs.path().join("turn_2_player.log"), "done").unwrap();
        assert_eq!(
            with_transcript(&stop(PathBuf::new()), logs.path()),
            stop(transcript)
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            with_transcript(&stop(PathBuf::new()), empty.path()),
            stop(empty.path().to_path_buf())
        );
    }

    #[test]
    fn a_recorded_transcript_and_other_outcomes_are_kept() {
        let logs = tempfile::tempdir().unwrap();
        std::fs::write(logs.path().join("turn_3_coach.log"), "later").unwrap();
        let recorded = stop(PathBuf::from("/elsewhere/turn_2_coach.log"));
        assert_eq!(with_transcript(&recorded, logs.path()), recorded);
        assert_eq!(
            with_transcript(&Outcome::TurnLimit, logs.path()),
            Outcome::TurnLimit
        );
    }
}
