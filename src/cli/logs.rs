//! `autobuild logs <ID> [--turn N] [--step STEP] [--role ROLE] [--follow]`: a run's records
//! — prompts, transcripts, check logs, turn records — in the order they were written.
//!
//! Files are named by what wrote them, not by step id: `prompts/turn_2_player.md`,
//! `logs/turn_2_check_test.log`, `coach_turn_2.json`; a workflow's later loops prefix the name
//! with the loop (`turn_1_polish_player.md`, `polish_gate_turn_1.json`). So a filter becomes a
//! set of *labels* (`player`, `verify`, `check_…`, `gate`) matched inside the file name after
//! any loop prefix; a step id is turned into its labels through the run's resolved workflow.
//! Ordering by modification time is the order the runner wrote them — alphabetical order would
//! put the coach before the player. `--follow` polls the run directory and prints what is new
//! in the agents' transcripts and the check logs (`logs/`; a growing transcript as it grows) until
//! no process holds the run's lock any more. The run's own records (`state.json`, replaced after
//! every step, `events.jsonl`, turn records, reports) are not followed: they would be printed
//! again and again; `logs` without `--follow` shows them.

use std::collections::HashMap;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use regex::Regex;

use crate::error::Error;
use crate::ui;

/// How often `--follow` looks for new output.
const FOLLOW_POLL: Duration = Duration::from_millis(300);

/// Which records to show.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub turn: Option<u32>,
    /// Sets of label patterns (regex fragments): a file must match one label of every set
    /// (`--step` and `--role` both narrow).
    pub labels: Vec<Vec<String>>,
}

impl Filter {
    /// Whether the file called `name` (no directory) is wanted.
    pub fn wants(&self, name: &str) -> bool {
        if self.turn.is_none() && self.labels.is_empty() {
            return true;
        }
        if self.labels.is_empty() {
            return self.matches(name, ".+");
        }
        self.labels
            .iter()
            .all(|set| self.matches(name, &set.join("|")))
    }

    fn matches(&self, name: &str, labels: &str) -> bool {
        let turn = self.turn.map_or(r"\d+".to_string(), |n| n.to_string());
        // `turn_N_[loop_]LABEL[_retryK].md|log`, `[loop_]LABEL_turn_N.json`.
        let pattern = format!(
            r"^(?:turn_{turn}_(?:[\w-]+?_)??(?:{labels})(?:_retry\d+)?\.(?:md|log)|(?:[\w-]+?_)??(?:{labels})_turn_{turn}\.json)$"
        );
        Regex::new(&pattern).is_ok_and(|re| re.is_match(name))
    }
}

/// The labels a step's records are filed under, from the run's resolved workflow: an agent
/// step's role (and `player` or `coach`/`coach_<id>` for its turn record), `verify` and the
/// check logs for a verify step, `gate`, `run_<id>` for a run step. `None` when the workflow
/// has no such step.
pub fn step_labels(workflow: &toml::Value, step: &str) -> Option<Vec<String>> {
    let found = find_step(workflow.get("steps")?.as_array()?, step)?;
    let uses = found
        .get("uses")
        .and_then(toml::Value::as_str)
        .unwrap_or("");
    let id = regex::escape(step);
    Some(match uses {
        "agent" => {
            let role = found.get("role").and_then(toml::Value::as_str)?;
            let access = workflow
                .get("roles")
                .and_then(|r| r.get(role))
                .and_then(|r| r.get("access"))
                .and_then(toml::Value::as_str)
                .unwrap_or("write");
            let record = if access == "write" {
                "player".to_string()
            } else {
                format!("coach|coach_{id}")
            };
            vec![regex::escape(role), record]
        }
        "verify" => vec![
            "verify".into(),
            r"check_[^/]+".into(),
            r"criterion_check_[^/]+".into(),
        ],
        "run" => vec![format!(r"run_check_{id}(?:_\d+)?")],
        other => vec![regex::escape(other)],
    })
}

fn find_step<'a>(steps: &'a [toml::Value], id: &str) -> Option<&'a toml::Value> {
    steps.iter().find_map(|step| {
        if step.get("id").and_then(toml::Value::as_str) == Some(id) {
            return Some(step);
        }
        find_step(step.get("steps")?.as_array()?, id)
    })
}

/// Every step id of the workflow, for the help of an unknown one.
pub fn step_ids(workflow: &toml::Value) -> Vec<String> {
    fn walk(steps: &[toml::Value], out: &mut Vec<String>) {
        for step in steps {
            if let Some(id) = step.get("id").and_then(toml::Value::as_str) {
                out.push(id.to_string());
            }
            if let Some(inner) = step.get("steps").and_then(toml::Value::as_array) {
                walk(inner, out);
            }
        }
    }
    let mut ids = Vec::new();
    if let Some(steps) = workflow.get("steps").and_then(toml::Value::as_array) {
        walk(steps, &mut ids);
    }
    ids
}

/// The wanted files of the run in `dir` (its top level, `prompts/` and `logs/`), oldest write
/// first; files written at the same instant by name.
pub fn records(dir: &Path, filter: &Filter) -> Result<Vec<PathBuf>, Error> {
    let mut found: Vec<(SystemTime, PathBuf)> = Vec::new();
    for sub in [dir.to_path_buf(), dir.join("prompts"), dir.join("logs")] {
        let entries = match fs::read_dir(&sub) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && sub != dir => continue,
            Err(e) => return Err(Error::io("cannot read", &sub, e)),
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = entry.metadata() else { continue };
            let name = entry.file_name().to_string_lossy().to_string();
            if meta.is_file() && filter.wants(&name) {
                found.push((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), path));
            }
        }
    }
    found.sort();
    Ok(found.into_iter().map(|(_, path)| path).collect())
}

/// `==> path <==` and the file's text.
pub fn show(path: &Path) -> String {
    let text = crate::user_file::read_record(path)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_else(|e| format!("(cannot read: {e})"));
    let name = base::quoted::path(&path.to_string_lossy()).into_owned();
    format!("==> {name} <==\n{}", base::quoted::visible(text.trim_end()))
}

/// Prints the run's records as they are written until `running` says the run has ended, then
/// what the last look finds.
pub fn follow(dir: &Path, filter: &Filter, running: &dyn Fn() -> bool) -> Result<(), Error> {
    let mut follower = Follower::default();
    let logs = dir.join("logs");
    loop {
        let still_running = running();
        let mut files = records(dir, filter)?;
        files.retain(|path| path.parent() == Some(logs.as_path()));
        for chunk in follower.poll(&files) {
            ui::text(&chunk);
        }
        if !still_running {
            return Ok(());
        }
        std::thread::sleep(FOLLOW_POLL);
    }
}

/// What has been printed of each file, so each poll prints only what is new.
#[derive(Debug, Default)]
pub struct Follower {
    printed: HashMap<PathBuf, u64>,
    last: Option<PathBuf>,
}

impl Follower {
    /// The new text of `files`, each piece under a `==> path <==` header when it comes from
    /// another file than the previous piece.
    pub fn poll(&mut self, files: &[PathBuf]) -> Vec<String> {
        let mut chunks = Vec::new();
        for path in files {
            let from = self.printed.get(path).copied().unwrap_or(0);
            let Some(new) = read_from(path, from) else {
                continue;
            };
            if new.is_empty() {
                continue;
            }
            self.printed.insert(path.clone(), from + new.len() as u64);
            let mut chunk = String::new();
            if self.last.as_ref() != Some(path) {
                chunk.push_str(&format!("==> {} <==\n", path.display()));
                self.last = Some(path.clone());
            }
            chunk.push_str(&base::quoted::visible(&String::from_utf8_lossy(&new)));
            if !chunk.ends_with('\n') {
                // The next piece may come from another file; a partial line stays readable.
                chunk.push('\n');
            }
            chunks.push(chunk);
        }
        chunks
    }
}

/// The bytes of `path` from `offset` on; `None` when it cannot be read.
fn read_from(path: &Path, offset: u64) -> Option<Vec<u8>> {
    let mut file = crate::user_file::open_regular(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filter(turn: Option<u32>, labels: &[&str]) -> Filter {
        Filter {
            turn,
            labels: vec![labels.iter().map(|s| s.to_string()).collect()],
        }
    }

    const WORKFLOW: &str = r#"
[roles.player]
access = "write"
[roles.coach]
access = "read-only"
[[steps]]
id = "cycle"
uses = "loop"
[[steps.steps]]
id = "implement"
uses = "agent"
role = "player"
[[steps.steps]]
id = "verify"
uses = "verify"
[[steps.steps]]
id = "review"
uses = "agent"
role = "coach"
[[steps.steps]]
id = "gate"
uses = "gate"
[[steps]]
id = "lint"
uses = "run"
"#;

    #[test]
    fn a_turn_filter_takes_that_turns_files_of_every_loop() {
        let f = Filter {
            turn: Some(1),
            labels: Vec::new(),
        };
        for name in [
            "player_turn_1.json",
            "polish_player_turn_1.json",
            "turn_1_player.md",
            "turn_1_polish_coach_retry1.md",
            "turn_1_check_test.log",
        ] {
            assert!(f.wants(name), "{name}");
        }
        for name in ["player_turn_11.json", "turn_11_player.md", "state.json"] {
            assert!(!f.wants(name), "{name}");
        }
        assert!(Filter::default().wants("state.json"));
        let both = Filter {
            turn: None,
            labels: vec![vec!["player".into()], vec!["coach".into()]],
        };
        assert!(!both.wants("turn_1_player.md"));
        assert!(filter(None, &["player", "coach"]).wants("turn_1_player.md"));
    }

    #[test]
    fn a_step_becomes_the_labels_its_files_are_named_by() {
        let workflow: toml::Value = toml::from_str(WORKFLOW).unwrap();
        let labels = |step| vec![step_labels(&workflow, step).unwrap()];
        let implement = Filter {
            turn: None,
            labels: labels("implement"),
        };
        assert!(implement.wants("turn_2_player.md"));
        assert!(implement.wants("player_turn_2.json"));
        assert!(implement.wants("turn_1_polish_player.log"));
        assert!(!implement.wants("coach_turn_2.json"));
        let review = Filter {
            turn: Some(2),
            labels: labels("review"),
        };
        assert!(review.wants("turn_2_coach.md"));
        assert!(review.wants("coach_turn_2.json"));
        assert!(review.wants("coach_review_turn_2.json"));
        assert!(!review.wants("coach_turn_1.json"));
        let verify = Filter {
            turn: None,
            labels: labels("verify"),
        };
        assert!(verify.wants("verify_turn_1.json"));
        assert!(verify.wants("turn_1_check_test.log"));
        assert!(verify.wants("turn_1_criterion_check_AC-001.log"));
        assert!(!verify.wants("turn_1_player.log"));
        let lint = Filter {
            turn: None,
            labels: labels("lint"),
        };
        assert!(lint.wants("turn_0_run_check_lint.log"));
        assert!(step_labels(&workflow, "nope").is_none());
        assert_eq!(
            step_ids(&workflow),
            ["cycle", "implement", "verify", "review", "gate", "lint"]
        );
    }

    #[test]
    fn records_come_in_the_order_they_were_written() {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("prompts")).unwrap();
        let base = SystemTime::now() - Duration::from_secs(60);
        for (i, name) in [
            "prompts/turn_1_player.md",
            "player_turn_1.json",
            "coach_turn_1.json",
            "gate_turn_1.json",
        ]
        .iter()
        .enumerate()
        {
            let path = dir.path().join(name);
            fs::write(&path, name).unwrap();
            let file = fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(base + Duration::from_secs(i as u64))
                .unwrap();
        }
        let names: Vec<String> = records(dir.path(), &Filter::default())
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(
            names,
            [
                "prompts/turn_1_player.md",
                "player_turn_1.json",
                "coach_turn_1.json",
                "gate_turn_1.json"
            ]
        );
    }

    #[test]
    fn following_prints_only_what_is_new() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.log");
        let b = dir.path().join("b.log");
        fs::write(&a, "one\n").unwrap();
        let mut follower = Follower::default();
        assert_eq!(
            follower.poll(std::slice::from_ref(&a)),
            [format!("==> {} <==\none\n", a.display())]
        );
        assert!(follower.poll(std::slice::from_ref(&a)).is_empty());
        fs::write(&a, "one\ntwo").unwrap();
        assert_eq!(follower.poll(std::slice::from_ref(&a)), ["two\n"]);
        fs::write(&b, "b\n").unwrap();
        assert_eq!(
            follower.poll(&[a.clone(), b.clone()]),
            [format!("==> {} <==\nb\n", b.display())]
        );
    }
}
