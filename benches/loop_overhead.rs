//! The runner's own cost per turn, measured with instant scripted agents and a trivial check.
//!
//! `cargo bench --bench loop_overhead` prints, for a small repository and one with ~10,000
//! files: the runner's overhead per turn (wall time minus agent and check time, minus the
//! worktree step), the worktree creation time, and the peak memory of the `autobuild` process.
//! Targets (issue 3): overhead ≤ 50 ms per turn, worktree creation ≤ 1.5 s on the 10k repo.
//! Set `AUTOBUILD_BENCH_TURNS` to change the number of turns (default 10).

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use serde_json::Value;

const TASK: &str = "TASK-BENCH";

fn main() {
    let turns: u32 = std::env::var("AUTOBUILD_BENCH_TURNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    println!("autobuild loop overhead, {turns} turns per run");
    for files in [10usize, 10_000] {
        let figures = measure(files, turns);
        println!(
            "repo with {files:>6} files: overhead {:>6.1} ms/turn (target <= 50), worktree {:>6.0} ms (target <= 1500), peak RSS {:>6.1} MiB, total {:>6.0} ms",
            figures.overhead_per_turn_ms,
            figures.worktree_ms,
            figures.peak_rss_kib as f64 / 1024.0,
            figures.total_ms
        );
    }
}

struct Figures {
    overhead_per_turn_ms: f64,
    worktree_ms: f64,
    peak_rss_kib: i64,
    total_ms: f64,
}

fn measure(files: usize, turns: u32) -> Figures {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    make_project(root, files, turns);
    autobuild::git::init_with_commit(root, "main", "bench project").expect("git init");

    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("-C")
        .arg(root)
        .args([
            "task",
            TASK,
            "--workflow",
            "bench",
            "--no-merge",
            "--max-turns",
        ])
        .arg(turns.to_string())
        .env("AUTOBUILD_CONFIG_DIR", root.join("no-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("run autobuild");
    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(status.code(), Some(0), "the bench run was not approved");

    let run_dir = root.join(".autobuild/runs").join(TASK);
    let mut agents_and_checks_ms = 0.0;
    for turn in 1..=turns {
        for kind in ["player", "coach"] {
            let record = read_json(&run_dir.join(format!("{kind}_turn_{turn}.json")));
            agents_and_checks_ms += record["agent"]["duration_ms"].as_f64().unwrap_or(0.0);
        }
        let verify = read_json(&run_dir.join(format!("verify_turn_{turn}.json")));
        for group in ["checks", "criteria"] {
            for check in verify[group].as_array().into_iter().flatten() {
                agents_and_checks_ms += check["duration_ms"].as_f64().unwrap_or(0.0);
            }
        }
    }
    let worktree_ms = step_duration(&run_dir, "worktree");
    Figures {
        overhead_per_turn_ms: (total_ms - agents_and_checks_ms - worktree_ms) / turns as f64,
        worktree_ms,
        peak_rss_kib: peak_child_rss_kib(),
        total_ms,
    }
}

/// A repository of `files` small files, instant agents, a trivial check. The coach asks for
/// another turn until the last one, so every turn runs every step.
fn make_project(root: &Path, files: usize, turns: u32) {
    for i in 0..files {
        let path = root.join(format!("src/d{}/f{i}.txt", i / 100));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("file {i}\n")).unwrap();
    }
    write(
        root,
        ".autobuild/config.toml",
        r#"[checks.test]
cmd = "true"

[roles.player]
agent = "command"
command = ["sh", "-c", "echo \"$AUTOBUILD_TURN\" > progress.txt; echo done"]

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/coach.sh"]
"#,
    );
    write(
        root,
        ".autobuild/coach.sh",
        &format!(
            r#"if [ "$AUTOBUILD_TURN" -ge {turns} ]; then d=approve; s=met; i='[]'
else d=feedback; s=not_met; i='[{{"severity":"must_fix","category":"bench","description":"turn '$AUTOBUILD_TURN'","location":"","suggestion":""}}]'; fi
echo '{{"decision":"'$d'","summary":"bench","issues":'"$i"',"criteria":[{{"id":"AC-001","status":"'$s'","evidence":""}}]}}'
"#
        ),
    );
    write(root, ".autobuild/.gitignore", "runs/\nworktrees/\n");
    // The default loop's stall detection would (rightly) stop a coach that repeats itself.
    write(
        root,
        ".autobuild/workflows/bench.toml",
        r#"schema = 1
name = "bench"

[roles.player]
agent = "command"
prompt = "player.md"
command = ["true"]

[roles.coach]
agent = "command"
prompt = "coach.md"
access = "read-only"
output = "verdict"
command = ["true"]

[[steps]]
id = "worktree"
uses = "worktree"

[[steps]]
id = "cycle"
uses = "loop"
max_iterations = 10
until = "steps.gate.outputs.approved"
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
id = "report"
uses = "report"
always = true
"#,
    );
    write(
        root,
        ".autobuild/tasks/TASK-BENCH.md",
        "---\nid: TASK-BENCH\ntitle: Bench\n---\n# Bench\n\nWrite progress.\n\n## Acceptance Criteria\n- [ ] progress.txt holds the turn\n",
    );
}

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap_or_default()).unwrap_or(Value::Null)
}

fn step_duration(run_dir: &Path, step: &str) -> f64 {
    fs::read_to_string(run_dir.join("events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|e| e["event"] == "step_finished" && e["step"] == step)
        .and_then(|e| e["duration_ms"].as_f64())
        .unwrap_or(0.0)
}

/// The largest resident set of any waited-for child so far (Linux reports KiB).
fn peak_child_rss_kib() -> i64 {
    // SAFETY: getrusage fills the struct we pass; no other memory is touched.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage.ru_maxrss
    }
}
