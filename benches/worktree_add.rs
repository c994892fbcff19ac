//! Creating a task's worktree against `git worktree add` of the same repository (issue 46,
//! item 4: 3.5× of CPU at 10,000 files before; goal ≤ 1.5×).
//!
//! `cargo bench --bench worktree_add` prints, per repository size, the median CPU time (user +
//! system) of `git worktree add -b` (a child process, from `wait4`) and of autobuild's own
//! `Repo::create_worktree` (this process's own and its children's, from `getrusage`), over
//! `AUTOBUILD_BENCH_RUNS` (default 5) runs each, interleaved, and their ratio. Sizes: 1,000 and
//! 10,000 files; 100,000 with `AUTOBUILD_BENCH_LARGE=1`.

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};

#[path = "support/rusage.rs"]
mod rusage;

fn main() {
    let runs: usize = std::env::var("AUTOBUILD_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5usize)
        .max(1);
    let mut sizes = vec![1_000, 10_000];
    if std::env::var_os("AUTOBUILD_BENCH_LARGE").is_some() {
        sizes.push(100_000);
    }
    println!("worktree creation: median CPU of {runs} run(s), interleaved");
    println!(
        "{:>8} | {:>12} | {:>16} | {:>6}",
        "files", "git ms", "autobuild ms", "ratio"
    );
    for files in sizes {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = dir.path().join("repo");
        make_repo(&root, files);
        let repo = autobuild::git::Repo::discover(&root).expect("open the repository");
        let (mut git, mut ours) = (Vec::new(), Vec::new());
        for run in 0..=runs {
            let git_path = dir.path().join(format!("git-{run}"));
            let mut command = Command::new("git");
            command
                .current_dir(&root)
                .args(["worktree", "add", "-q", "-b", &format!("g{run}")])
                .arg(&git_path)
                .arg("main")
                .stdout(Stdio::null());
            let git_ms = child_cpu_ms(&mut command);
            let before = self_cpu_ms();
            repo.create_worktree(
                &format!("a{run}"),
                "main",
                &dir.path().join(format!("ours-{run}")),
            )
            .expect("create the worktree");
            let ours_ms = self_cpu_ms() - before;
            // The first run warms the page cache.
            if run > 0 {
                git.push(git_ms);
                ours.push(ours_ms);
            }
        }
        let (git, ours) = (median(git), median(ours));
        println!(
            "{files:>8} | {git:>12.1} | {ours:>16.1} | {:>6.2}",
            ours / git
        );
    }
}

fn make_repo(root: &Path, files: usize) {
    for n in 0..files {
        let path = root.join(format!("src/d{}/e{}/file{n}.txt", n % 50, n % 7));
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, format!("line of file {n}\n").repeat(8)).unwrap();
    }
    autobuild::git::init_with_commit(root, "main", "bench files").expect("git init");
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// This process's CPU time and that of its waited-for children, in ms.
fn self_cpu_ms() -> f64 {
    let ms = |who| {
        // SAFETY: getrusage fills the struct we pass.
        let usage = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            libc::getrusage(who, &mut usage);
            usage
        };
        rusage::cpu_ms(&usage)
    };
    ms(libc::RUSAGE_SELF) + ms(libc::RUSAGE_CHILDREN)
}

/// Runs `command` to its end; its CPU time, in ms (and it must exit 0).
fn child_cpu_ms(command: &mut Command) -> f64 {
    let (code, usage) = rusage::run(command);
    assert_eq!(code, 0, "git failed");
    rusage::cpu_ms(&usage)
}
