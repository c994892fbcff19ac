//! The runner's own cost per turn against `git status` on the same repository, measured with
//! instant scripted agents (the player edits one file) and a trivial check (`true`).
//!
//! `cargo bench --bench loop_overhead` prints one table row per repository size:
//!
//! - `turn ms`: the runner's time per turn (wall time minus agent and check time, minus the
//!   worktree step), median over the runs;
//! - `status ms`: `git status` in the run's worktree, median of 5;
//! - `ratio`: the two divided (issue 24's goal: <= 2);
//! - `RSS MiB`: peak resident memory of the `autobuild` process and of `git status`
//!   (goal: autobuild <= 1.5x git's).
//!
//! Sizes 10 and 10,000 always run (this is what CI's `cargo bench` would run; `.ci/run` runs no
//! benches). 100,000 files run only with `AUTOBUILD_BENCH_LARGE=1`: outside CI, by hand. Each
//! size's repository is generated once into `${XDG_CACHE_HOME:-$HOME/.cache}/autobuild-bench/`
//! and cloned for each run into a temporary directory (`TMPDIR`); both are printed, since the
//! file system behind them moves the figures (a turn's file creations and fsyncs cost far more
//! on ext4 than on tmpfs). `AUTOBUILD_BENCH_TURNS` (default 10) sets the turns per run,
//! `AUTOBUILD_BENCH_RUNS` (default 3) the runs per size, `AUTOBUILD_BENCH_SANDBOX` (`off`,
//! `bwrap`, `landlock`; default `auto`) the confinement, `AUTOBUILD_BENCH_MERGE=1` lands the
//! approved run with `--auto-merge` (a `merge` step after the loop; its time is left out of the
//! turn's like the worktree's, its memory is in the peak), `AUTOBUILD_BENCH_BIN` another
//! `autobuild` binary to measure (to compare with a saved build).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

#[path = "support/rusage.rs"]
mod rusage;
use std::time::Instant;

use serde_json::Value;

const TASK: &str = "TASK-BENCH";

fn main() {
    let setting = |name: &str, default: u32| -> u32 {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let turns = setting("AUTOBUILD_BENCH_TURNS", 10);
    let runs = setting("AUTOBUILD_BENCH_RUNS", 3).max(1);
    let large = std::env::var("AUTOBUILD_BENCH_LARGE").is_ok_and(|v| v == "1");
    let mut sizes = vec![10usize, 10_000];
    if large {
        sizes.push(100_000);
    }
    println!(
        "autobuild loop overhead: {turns} turns per run, median of {runs} run(s) per size{}",
        if merge() {
            ", landed with --auto-merge"
        } else {
            ""
        }
    );
    if !large {
        println!("(100,000 files skipped: set AUTOBUILD_BENCH_LARGE=1; it is not run in CI)");
    }
    // The file system decides much of a turn's cost (its fsyncs), and of git status's.
    println!(
        "runs in {} (TMPDIR), repositories cached in {}",
        std::env::temp_dir().display(),
        cache_dir().display()
    );
    println!(
        "{:>8} | {:>8} | {:>9} | {:>6} | {:>12} | {:>10} | {:>9}",
        "files", "turn ms", "status ms", "ratio", "RSS MiB", "git MiB", "RSS ratio"
    );
    for files in sizes {
        let template = template(files, turns);
        let mut measured: Vec<Figures> = (0..runs).map(|_| measure(&template, turns)).collect();
        measured.sort_by(|a, b| a.per_turn_ms.total_cmp(&b.per_turn_ms));
        let f = &measured[measured.len() / 2];
        println!(
            "{files:>8} | {:>8.1} | {:>9.1} | {:>6.2} | {:>12.1} | {:>10.1} | {:>9.2}",
            f.per_turn_ms,
            f.status_ms,
            f.per_turn_ms / f.status_ms,
            f.rss_kib as f64 / 1024.0,
            f.status_rss_kib as f64 / 1024.0,
            f.rss_kib as f64 / f.status_rss_kib as f64,
        );
    }
}

/// Whether the bench lands the approved run (`AUTOBUILD_BENCH_MERGE=1`).
fn merge() -> bool {
    std::env::var("AUTOBUILD_BENCH_MERGE").is_ok_and(|v| v == "1")
}

struct Figures {
    per_turn_ms: f64,
    status_ms: f64,
    rss_kib: i64,
    status_rss_kib: i64,
}

/// Where the generated repositories are kept between runs.
fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("autobuild-bench")
}

/// The project of `files` files, generated and committed once into the cache.
fn template(files: usize, turns: u32) -> PathBuf {
    // The confinement is part of the project's config, so of the cached repository's name.
    let sandbox = std::env::var("AUTOBUILD_BENCH_SANDBOX").unwrap_or_else(|_| "auto".into());
    let landing = if merge() { "-merge" } else { "" };
    let dir = cache_dir().join(format!("repo-{files}-{turns}-{sandbox}{landing}"));
    if dir.join(".git/autobuild-bench-ready").exists() {
        return dir;
    }
    let _ = fs::remove_dir_all(&dir);
    make_project(&dir, files, turns);
    autobuild::git::init_with_commit(&dir, "main", "bench project").expect("git init");
    fs::write(dir.join(".git/autobuild-bench-ready"), "").expect("mark the cache");
    dir
}

fn measure(template: &Path, turns: u32) -> Figures {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    let cloned = Command::new("git")
        .args(["clone", "-q", "--local", "--no-hardlinks"])
        .arg(template)
        .arg(&root)
        .status()
        .expect("git clone");
    assert!(cloned.success(), "cannot clone the bench project");

    let started = Instant::now();
    // Another build of autobuild (a saved "before" binary) can be measured in its place.
    let binary = std::env::var_os("AUTOBUILD_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_autobuild").into());
    let mut command = Command::new(binary);
    command
        .arg("-C")
        .arg(&root)
        .args(["task", TASK, "--workflow", "bench"])
        .arg(if merge() {
            "--auto-merge"
        } else {
            "--no-merge"
        })
        .arg("--max-turns")
        .arg(turns.to_string())
        .env("AUTOBUILD_CONFIG_DIR", root.join("no-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    let (code, rss_kib) = run_measured(&mut command);
    let total_ms = started.elapsed().as_secs_f64() * 1000.0;
    assert_eq!(code, 0, "the bench run was not approved");

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
    let worktree_ms = step_duration(&run_dir, "worktree") + step_duration(&run_dir, "merge");
    let worktree = read_json(&run_dir.join("state.json"))["worktree"]
        .as_str()
        .map(PathBuf::from)
        .expect("the run's worktree");
    // A landed run's worktree is removed; the main checkout then holds the same tree.
    let status_in = if worktree.exists() { &worktree } else { &root };
    let (status_ms, status_rss_kib) = git_status(status_in);
    Figures {
        per_turn_ms: (total_ms - agents_and_checks_ms - worktree_ms) / turns as f64,
        status_ms,
        rss_kib,
        status_rss_kib,
    }
}

/// `git status` in `worktree`: median wall time of 5 (after one warm-up) and peak RSS.
fn git_status(worktree: &Path) -> (f64, i64) {
    let mut times = Vec::new();
    let mut rss = 0;
    for round in 0..6 {
        let started = Instant::now();
        let mut command = Command::new("git");
        command
            .arg("-C")
            .arg(worktree)
            .arg("status")
            .stdout(Stdio::null());
        let (code, peak) = run_measured(&mut command);
        assert_eq!(code, 0, "git status failed");
        if round > 0 {
            times.push(started.elapsed().as_secs_f64() * 1000.0);
            rss = rss.max(peak);
        }
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], rss)
}

/// Runs `command` to its end; its exit code and peak resident set (KiB, Linux) of it and the
/// children it waited for.
fn run_measured(command: &mut Command) -> (i32, i64) {
    let (code, usage) = rusage::run(command);
    (code, usage.ru_maxrss)
}

/// A repository of `files` small files, instant agents, a trivial check. The coach asks for
/// another turn until the last one, so every turn runs every step.
fn make_project(root: &Path, files: usize, turns: u32) {
    // `AUTOBUILD_BENCH_SANDBOX`: `off`, `bwrap` or `landlock` (default: `auto`).
    let sandbox = match std::env::var("AUTOBUILD_BENCH_SANDBOX").as_deref() {
        Ok("off") => "\n[sandbox]\nmode = \"off\"\n".to_string(),
        Ok(backend @ ("bwrap" | "landlock")) => {
            format!("\n[sandbox]\nmode = \"on\"\nbackend = \"{backend}\"\n")
        }
        _ => String::new(),
    };
    for i in 0..files {
        let path = root.join(format!("src/d{}/f{i}.txt", i / 100));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, format!("file {i}\n")).unwrap();
    }
    write(
        root,
        ".autobuild/config.toml",
        (r#"[checks.test]
cmd = "true"

[roles.player]
agent = "command"
command = ["sh", "-c", "echo \"$AUTOBUILD_TURN\" > progress.txt; echo done"]

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/coach.sh"]
"#
        .to_string()
            + &sandbox)
            .as_str(),
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
    let merge_step = if merge() {
        "\n[[steps]]\nid = \"merge\"\nuses = \"merge\"\nif = \"steps.cycle.outputs.exit == 'done'\"\n"
    } else {
        ""
    };
    write(
        root,
        ".autobuild/workflows/bench.toml",
        &(r#"schema = 1
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
"#
        .to_string()
            + merge_step
            + r#"
[[steps]]
id = "report"
uses = "report"
always = true
"#),
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
