//! What landing one task onto its feature branch costs as the feature grows: one wave of
//! trivial tasks (the player writes one file of its own, the check is `true`, the coach
//! approves) on a 10-file repository, run by `autobuild feature` with the real binary.
//!
//! `cargo bench --bench feature_landing` prints, per feature size: the whole run's wall time,
//! the landing time per task, and that time against the smallest size's (issue 24's goal:
//! at most 2 for 1,000 tasks against 100). A wave's tasks land one after another once they all
//! ran, and each landing ends by marking its task's run merged (`runs/<TASK>/state.json`), so
//! the landing time per task is the span of those files' modification times over the landings
//! between them.
//!
//! Sizes default to 100 and 1,000 (`AUTOBUILD_BENCH_FEATURE_SIZES=100,1000`); the 1,000-task
//! run takes minutes, so this bench is run by hand, not in CI (`.ci/run` runs no benches).
//! `AUTOBUILD_BENCH_BIN` measures another `autobuild` binary (a saved "before" build).
//!
//! The task files are committed, so the repository (and every task's worktree) grows with the
//! feature: a landing's check of the worktree for unsaved work and its deletion cost what the
//! worktree holds. `AUTOBUILD_BENCH_TASK_FILES=untracked` keeps them out of git (ignored, in
//! the main checkout only), so that only the feature's size grows: the two runs tell the costs
//! apart.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Instant, SystemTime};

const FEATURE: &str = "FEAT-BENCH";

fn main() {
    let sizes: Vec<usize> = std::env::var("AUTOBUILD_BENCH_FEATURE_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
        .filter(|sizes: &Vec<usize>| !sizes.is_empty())
        .unwrap_or_else(|| vec![100, 1000]);
    let untracked = std::env::var("AUTOBUILD_BENCH_TASK_FILES").is_ok_and(|v| v == "untracked");
    println!(
        "autobuild feature landing: one wave of trivial tasks on a 10-file repository, {}",
        if untracked {
            "task files untracked"
        } else {
            "one committed task file per task"
        }
    );
    println!(
        "{:>7} | {:>8} | {:>16} | {:>6}",
        "tasks", "run s", "landing ms/task", "ratio"
    );
    let mut first: Option<f64> = None;
    for tasks in sizes {
        let (run_s, per_landing_ms) = measure(tasks.max(2), untracked);
        let base = *first.get_or_insert(per_landing_ms);
        println!(
            "{tasks:>7} | {run_s:>8.1} | {per_landing_ms:>16.1} | {:>6.2}",
            per_landing_ms / base
        );
    }
}

/// Runs a feature of `tasks` tasks; its wall time (s) and landing time per task (ms).
fn measure(tasks: usize, untracked: bool) -> (f64, f64) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    make_project(&root, tasks, untracked);
    autobuild::git::init_with_commit(&root, "main", "bench project").expect("git init");

    let binary = std::env::var_os("AUTOBUILD_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_autobuild").into());
    let started = Instant::now();
    let output = Command::new(binary)
        .arg("-C")
        .arg(&root)
        .args(["feature", FEATURE, "--no-merge", "--max-parallel", "2"])
        .env("AUTOBUILD_CONFIG_DIR", root.join("no-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .output()
        .expect("run autobuild");
    let run_s = started.elapsed().as_secs_f64();
    // Its warnings (the command adapter's tool allowlist) would break up the table.
    assert!(
        output.status.success(),
        "the bench feature did not finish approved: {}",
        String::from_utf8_lossy(&output.stderr)
    );

    let runs = root.join(".autobuild/runs");
    let mut landed: Vec<SystemTime> = (1..=tasks)
        .map(|n| {
            let state = runs.join(task_id(n)).join("state.json");
            let text = fs::read_to_string(&state).expect("a task's run record");
            let record: serde_json::Value = serde_json::from_str(&text).expect("a JSON run record");
            assert_eq!(record["status"], "merged", "{} did not land", task_id(n));
            fs::metadata(&state)
                .and_then(|m| m.modified())
                .expect("its modification time")
        })
        .collect();
    landed.sort();
    let span = landed[tasks - 1]
        .duration_since(landed[0])
        .expect("ordered times");
    (run_s, span.as_secs_f64() * 1000.0 / (tasks - 1) as f64)
}

fn task_id(n: usize) -> String {
    format!("TASK-{n:04}")
}

/// Ten files, instant agents, a trivial check, and a feature of `tasks` independent tasks.
fn make_project(root: &Path, tasks: usize, untracked: bool) {
    for i in 0..10 {
        write(root, &format!("src/f{i}.txt"), &format!("file {i}\n"));
    }
    write(root, "out/.keep", "");
    write(
        root,
        ".autobuild/config.toml",
        r#"[checks.test]
cmd = "true"

[roles.player]
agent = "command"
command = ["sh", "-c", "echo done > \"out/$AUTOBUILD_TASK_ID.txt\"; echo done"]

[roles.coach]
agent = "command"
command = ["sh", "-c", "echo '{\"decision\":\"approve\",\"summary\":\"ok\",\"issues\":[],\"criteria\":[{\"id\":\"AC-001\",\"status\":\"met\",\"evidence\":\"\"}]}'"]
"#,
    );
    let ignored = if untracked {
        "runs/\nworktrees/\ntasks/\n"
    } else {
        "runs/\nworktrees/\n"
    };
    write(root, ".autobuild/.gitignore", ignored);
    let mut feature = format!("id: {FEATURE}\nname: Bench\ntasks:\n");
    for n in 1..=tasks {
        let id = task_id(n);
        feature.push_str(&format!("  - id: {id}\n"));
        write(
            root,
            &format!(".autobuild/tasks/{id}.md"),
            &format!(
                "---\nid: {id}\ntitle: Task {id}\n---\n# Task {id}\n\n## Acceptance Criteria\n- [ ] AC-001: done\n"
            ),
        );
    }
    write(
        root,
        &format!(".autobuild/features/{FEATURE}.yaml"),
        &feature,
    );
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("a parent")).expect("create a directory");
    fs::write(path, text).expect("write a file");
}
