//! Finding a task by id against finding it by path in a GuardKit board of 2,600 task files
//! (issue 24: 372 ms against 55 ms of CPU before; goal: by id at most 1.5× by path).
//!
//! `cargo bench --bench task_lookup` prints the CPU time (user + system, from `wait4`) of
//! `autobuild task <ID> --dry-run` and of the same command naming the task's file, median of
//! `AUTOBUILD_BENCH_RUNS` (default 7) runs each, and their ratio, for a task in `backlog/`
//! and one in `completed/`. Quick enough for CI, though `.ci/run` runs no benches.
//! `AUTOBUILD_BENCH_BIN` measures another `autobuild` binary (a saved "before" build).
//!
//! A second table is issue 46's "a task run reads only its own task": the CPU time of a whole
//! 1-turn task run (`autobuild task <ID> --max-turns 1 --no-merge`, instant scripted agents that
//! approve, a trivial check) on boards of 100 and 1,000 task files, and their ratio (goal: at
//! most 1.3). The task files are committed, as a board is, so the larger board's repository and
//! worktree are larger too: the first row pads the 100-task board with 900 files of the same
//! size that are not tasks (`notes/`), so that the two repositories are alike and only the board
//! differs; the second row has no padding, and its ratio is the repository's growth as well
//! (checking out and walking ten times the files).
//!
//! A third table is `feature --dry-run` of a feature of every task on boards of 100 and 1,000
//! task files, and its CPU per task: each task is preflighted, but what the tasks share (the
//! config, the workflows, each workflow's and task type's inputs) is read once per feature.

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
    lookup(runs);
    task_runs(runs);
    feature_dry_runs(runs);
}

/// `feature --dry-run` of a feature of every task on boards of 100 and 1,000 task files
/// (the preflight of each task; what they share read once): CPU, interleaved, medians.
fn feature_dry_runs(runs: usize) {
    let sizes = [100, 1_000];
    let dir = tempfile::tempdir().expect("temp dir");
    let boards: Vec<_> = sizes
        .iter()
        .map(|&tasks| {
            let root = dir.path().join(format!("feature-{tasks}"));
            make_board(&root, tasks);
            let mut feature = String::from("id: FEAT-BENCH\nname: Bench\ntasks:\n");
            for n in 0..tasks {
                let (id, path) = task(n);
                feature.push_str(&format!("  - id: {id}\n    file_path: {path}\n"));
            }
            write(&root, ".autobuild/features/FEAT-BENCH.yaml", &feature);
            autobuild::git::init_with_commit(&root, "main", "bench board").expect("git init");
            root
        })
        .collect();
    let medians = interleaved(&boards, runs, |board, _| {
        cpu_ms(&mut autobuild(
            board,
            &["feature", "FEAT-BENCH", "--dry-run"],
        ))
    });
    println!();
    println!("feature --dry-run of every task, median CPU of {runs} run(s)");
    println!(
        "{:>10} | {:>8} | {:>11}",
        "task files", "CPU ms", "ms per task"
    );
    for (tasks, median) in sizes.iter().zip(medians) {
        println!(
            "{tasks:>10} | {median:>8.1} | {:>11.2}",
            median / *tasks as f64
        );
    }
}

/// By id against by path, on a board of [`TASKS`] files.
fn lookup(runs: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("project");
    make_board(&root, TASKS);
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

/// A 1-turn task run on boards of 100 and 1,000 task files: CPU, interleaved, medians.
fn task_runs(runs: usize) {
    // (task files, files that are not tasks): the padded 100-task board, the bare one, 1,000.
    let sizes = [(100, 900), (100, 0), (1_000, 0)];
    let dir = tempfile::tempdir().expect("temp dir");
    let boards: Vec<_> = sizes
        .iter()
        .map(|&(tasks, padding)| {
            let root = dir.path().join(format!("board-{tasks}-{padding}"));
            make_board(&root, tasks);
            for n in tasks..tasks + padding {
                // The same text, but no id: not a task.
                let text = task_text(n).replace("id: ", "ref: ");
                write(&root, &format!("notes/note-{n}.md"), &text);
            }
            write(
                &root,
                ".autobuild/coach.sh",
                r#"echo '{"decision":"approve","summary":"ok","issues":[],"criteria":[{"id":"AC-001","status":"met","evidence":"x"},{"id":"AC-002","status":"met","evidence":"x"}]}'"#,
            );
            write(
                &root,
                ".autobuild/config.toml",
                "[checks.test]\ncmd = \"true\"\n\n[roles.player]\nagent = \"command\"\ncommand = [\"sh\", \"-c\", \"echo done > progress.txt\"]\n\n[roles.coach]\nagent = \"command\"\ncommand = [\"sh\", \".autobuild/coach.sh\"]\n",
            );
            autobuild::git::init_with_commit(&root, "main", "bench board").expect("git init");
            root
        })
        .collect();
    let (id, _) = task(17);
    let medians = interleaved(&boards, runs, |board, round| {
        task_run_cpu_ms(board, &id, round)
    });
    println!();
    println!("a 1-turn task run (approved, not merged), median CPU of {runs} run(s)");
    println!(
        "{:>10} | {:>11} | {:>8} | {:>18}",
        "task files", "other files", "CPU ms", "1,000 tasks / this"
    );
    let largest = medians[medians.len() - 1];
    for (&(tasks, padding), median) in sizes.iter().zip(&medians) {
        println!(
            "{tasks:>10} | {padding:>11} | {median:>8.1} | {:>18.2}",
            largest / median
        );
    }
}

/// The median of `runs` measurements of each board, taken in rounds over all boards so that
/// the machine's load moves every board alike; a first round warms up and is not counted.
fn interleaved(
    boards: &[std::path::PathBuf],
    runs: usize,
    mut measure: impl FnMut(&Path, usize) -> f64,
) -> Vec<f64> {
    let mut times = vec![Vec::new(); boards.len()];
    for round in 0..=runs {
        for (board, times) in boards.iter().zip(&mut times) {
            let value = measure(board, round);
            if round > 0 {
                times.push(value);
            }
        }
    }
    times
        .iter_mut()
        .map(|t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect()
}

/// The CPU time (ms) of one approved 1-turn run of `task` in `root` (round `round`: each run
/// has a task branch of its own, so nothing is resumed).
fn task_run_cpu_ms(root: &Path, task: &str, round: usize) -> f64 {
    let (code, usage) = rusage::run(&mut autobuild(
        root,
        &["task", task, "--max-turns", "1", "--no-merge"],
    ));
    assert_eq!(
        code,
        0,
        "the task run in {} was not approved",
        root.display()
    );
    // The next round runs the task afresh.
    let discard = autobuild(root, &["discard", task, "--yes"])
        .status()
        .expect("discard");
    assert!(discard.success(), "discard after round {round} failed");
    rusage::cpu_ms(&usage)
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
fn make_board(root: &Path, tasks: usize) {
    for n in 0..tasks {
        let (_, path) = task(n);
        write(root, &path, &task_text(n));
    }
    write(
        root,
        ".autobuild/config.toml",
        "[checks.test]\ncmd = \"true\"\n\n[roles.player]\nagent = \"command\"\ncommand = [\"true\"]\n\n[roles.coach]\nagent = \"command\"\ncommand = [\"true\"]\n",
    );
    write(root, ".autobuild/.gitignore", "runs/\nworktrees/\n");
}

/// Task `n`'s file: front matter and a body of a typical size.
fn task_text(n: usize) -> String {
    let (id, _) = task(n);
    let body = "Some context for the work, as a task description carries it.\n".repeat(20);
    format!(
        "---\nid: {id}\ntitle: Work item {n}\nstatus: backlog\ntask_type: feature\npriority: medium\ntags: [bench]\n---\n# Work item {n}\n\n{body}\n## Acceptance Criteria\n- [ ] AC-001: item {n} works\n- [ ] AC-002: item {n} is tested\n"
    )
}

/// The median CPU time (ms) of `autobuild task <task> --dry-run` in `root`.
fn median_cpu_ms(root: &Path, task: &str, runs: usize) -> f64 {
    let mut times: Vec<f64> = (0..=runs)
        .map(|_| cpu_ms(&mut autobuild(root, &["task", task, "--dry-run"])))
        // The first run warms the page cache.
        .skip(1)
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// `autobuild -C <root> ARGS…` (or `AUTOBUILD_BENCH_BIN`), without the user's config and
/// silent.
fn autobuild(root: &Path, args: &[&str]) -> Command {
    let binary = std::env::var_os("AUTOBUILD_BENCH_BIN")
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_autobuild").into());
    let mut command = Command::new(binary);
    command
        .arg("-C")
        .arg(root)
        .args(args)
        .env("AUTOBUILD_CONFIG_DIR", root.join("no-config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    command
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
