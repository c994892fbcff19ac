//! Finding a task by id against finding it by path in a GuardKit board of 2,600 task files
//! (issue 24: 372 ms against 55 ms of CPU before; goal: by id at most 1.5× by path).
//!
//! `cargo bench --bench task_lookup` prints the CPU time (user + system, from `wait4`) of
//! `autobuild task <ID> --dry-run` and of the same command naming the task's file, median of
//! `AUTOBUILD_BENCH_RUNS` (default 7) runs each, and their ratio, for a task in `backlog/`
//! and one in `completed/`. Quick enough for CI, though `.ci/run` runs no benches.
//! `AUTOBUILD_BENCH_BIN` measures another `autobuild` binary (a saved "before" build).

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

#[path = "support/rusage.rs"]
mod rusage;

/// GuardKit's state folders, as a board spreads its tasks over them.
const STATES: [&str; 6] = [
    "backlog",
    "in_progress",
    "in_review",
    "blocked",
    "completed",
    "archived",
];
const TASKS: usize = 2_600;

fn main() {
    let runs = std::env::var("AUTOBUILD_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(7usize)
        .max(1);
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    make_board(&root);
    autobuild::git::init_with_commit(&root, "main", "bench board").expect("git init");

    println!("autobuild task lookup: {TASKS} GuardKit task files, median CPU of {runs} run(s)");
    println!(
        "{:>10} | {:>11} | {:>13} | {:>6}",
        "task in", "by id ms", "by path ms", "ratio"
    );
    for n in [17, 4 * TASKS / 6 + 17] {
        let (id, path) = task(n);
        let state = STATES[n * STATES.len() / TASKS];
        let by_id = median_cpu_ms(&root, &id, runs);
        let by_path = median_cpu_ms(&root, &path, runs);
        println!(
            "{state:>10} | {by_id:>11.1} | {by_path:>13.1} | {:>6.2}",
            by_id / by_path
        );
    }
}

/// The id of task `n` and its file, relative to the repository.
fn task(n: usize) -> (String, String) {
    let id = format!("TASK-{n:04X}");
    let state = STATES[n * STATES.len() / TASKS];
    let path = format!("tasks/{state}/{id}-some-work-{n}.md");
    (id, path)
}

/// `TASKS` task files spread over the state folders, named after their ids as GuardKit names
/// them, each with front matter and a body of a typical size; a project config with command
/// agents so that a dry run needs nothing else.
fn make_board(root: &Path) {
    for n in 0..TASKS {
        let (id, path) = task(n);
        let body = "Some context for the work, as a task description carries it.\n".repeat(20);
        write(
            root,
            &path,
            &format!(
                "---\nid: {id}\ntitle: Work item {n}\nstatus: backlog\ntask_type: feature\npriority: medium\ntags: [bench]\n---\n# Work item {n}\n\n{body}\n## Acceptance Criteria\n- [ ] AC-001: item {n} works\n- [ ] AC-002: item {n} is tested\n"
            ),
        );
    }
    write(
        root,
        ".autobuild/config.toml",
        "[checks.test]\ncmd = \"true\"\n\n[roles.player]\nagent = \"command\"\ncommand = [\"true\"]\n\n[roles.coach]\nagent = \"command\"\ncommand = [\"true\"]\n",
    );
    write(root, ".autobuild/.gitignore", "runs/\nworktrees/\n");
}

/// The median CPU time (ms) of `autobuild task <task> --dry-run` in `root`.
fn median_cpu_ms(root: &Path, task: &str, runs: usize) -> f64 {
    let binary = std::env::var_os("AUTOBUILD_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_autobuild").into());
    let mut times: Vec<f64> = (0..=runs)
        .map(|_| {
            let mut command = Command::new(&binary);
            command
                .arg("-C")
                .arg(root)
                .args(["task", task, "--dry-run"])
                .env("AUTOBUILD_CONFIG_DIR", root.join("no-config"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            cpu_ms(&mut command)
        })
        // The first run warms the page cache.
        .skip(1)
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Runs `command` to its end and returns its CPU time (user + system), in ms; panics unless
/// it exits 0.
fn cpu_ms(command: &mut Command) -> f64 {
    let (code, usage) = rusage::run(command);
    assert_eq!(code, 0, "the dry run failed");
    rusage::cpu_ms(&usage)
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().expect("a parent")).expect("create a directory");
    fs::write(path, text).expect("write a file");
}
