//! What every crate's unit tests share (a dev-dependency only): the git command line, with a
//! fixed identity, and a failure panics with git's output.

use std::path::Path;
use std::process::Command;

/// Runs git in `dir` with `env` added; its standard output, trimmed.
pub fn git_with(dir: &Path, env: &[(&str, &Path)], args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// Runs git in `dir`; its standard output, trimmed.
pub fn git(dir: &Path, args: &[&str]) -> String {
    git_with(dir, &[], args)
}
