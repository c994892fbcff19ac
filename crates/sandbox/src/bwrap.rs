//! The bubblewrap command line that runs one program confined: a pure function of the
//! [`Mounts`], the program, its arguments and its working directory.
//!
//! ```text
//! bwrap --die-with-parent --unshare-user --unshare-pid [--cap-drop ALL --cap-add CAP_SETFCAP]
//!       --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp
//!       [--ro-bind P P | --bind P P]…  --setenv TMPDIR /tmp [--setenv GIT_… V]…
//!       --chdir <cwd> -- <program> <args>…
//! ```
//!
//! - `--ro-bind / /` first: everything stays readable, nothing is writable; the later binds
//!   open up the writable paths, parents before children (a bind over a path hides what an
//!   earlier bind put there, so the order is what makes a protected file inside a writable
//!   tree stay protected). Paths are bound at the same place they have on the host, so the
//!   agent, its transcripts and `/proc/<pid>/cwd` (which resume uses to find leftovers) all
//!   name them the same way.
//! - `--tmpfs /tmp`: a private, empty `/tmp` per process. Host paths under `/tmp` the step
//!   needs (a repository or `HOME` there, as in tests) are bound again after it; `TMPDIR`
//!   points at the private `/tmp`, since the host's may not exist inside.
//! - `--setenv GIT_OBJECT_DIRECTORY …` and `GIT_ALTERNATE_OBJECT_DIRECTORIES …` (module
//!   `mounts`): git's new objects go to the run's private directory, the shared store is read.
//! - `--dev /dev` and `--proc /proc`: a minimal device tree (no access to the host's disks or
//!   terminals) and a procfs of its own.
//! - `--unshare-user`: the program runs in a user namespace of its own (bwrap does that anyway
//!   for an ordinary user; for root it has to be asked), so whatever capabilities it keeps are
//!   only good inside it.
//! - As root, `--cap-drop ALL --cap-add CAP_SETFCAP`: bwrap passes root's capabilities on by
//!   default, and with `CAP_SYS_ADMIN` — even one confined to the user namespace — the program
//!   could remount the read-only binds (which it made itself, so they are not locked)
//!   read-write. `CAP_SETFCAP` is kept because mapping uid 0 into a nested user namespace
//!   requires it: without it, an agent CLI's own sandbox (codex runs the model's commands under
//!   bubblewrap too) cannot start. An ordinary user's program gets no capabilities at all.
//! - `--die-with-parent`: the kernel kills the confined program when bwrap dies, and bwrap
//!   dies with autobuild (it is the child autobuild's own parent-death signal is set on).
//! - `--unshare-pid`: the program runs in a process namespace of its own, whose init is
//!   bwrap's; when the program exits (or bwrap is killed) the kernel kills every process left
//!   in the namespace, so nothing a step started — a `setsid` daemon, a double fork — outlives
//!   it. The program's `/proc` shows only its own processes, not the runner's environment or
//!   working directory (CI credentials, module `secrets`). From outside, the namespace's
//!   processes keep their host pids and the wrapper's process group, so stopping, resuming
//!   and `/proc`-based cleanup work as without a sandbox.
//! - `--unshare-net` only for a hidden check ([`Mounts::offline`]): the oracle's files must not
//!   leave the machine through the code it tests. Not used elsewhere: agents call their APIs,
//!   checks may need the network.
//! - Not used:
//!   `--new-session` (the
//!   runner starts bwrap in a session of its own, which keeps the process group whole and
//!   leaves the program no controlling terminal to inject keystrokes into).

use std::ffi::OsString;
use std::path::Path;

use super::Mounts;

/// Where the private temporary directory is mounted.
pub const TMP: &str = "/tmp";

/// The arguments of `bwrap` (not the binary itself) that run `program args` in `cwd` with
/// `mounts`; `as_root` when autobuild runs as root.
pub fn arguments(
    mounts: &Mounts,
    as_root: bool,
    program: &Path,
    args: &[String],
    cwd: &Path,
) -> Vec<OsString> {
    let mut argv: Vec<OsString> = ["--die-with-parent", "--unshare-user", "--unshare-pid"]
        .map(OsString::from)
        .to_vec();
    if mounts.offline {
        argv.push("--unshare-net".into());
    }
    if as_root {
        argv.extend(["--cap-drop", "ALL", "--cap-add", "CAP_SETFCAP"].map(OsString::from));
    }
    argv.extend(
        [
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            TMP,
        ]
        .map(OsString::from),
    );
    for (path, access) in mounts.in_mount_order() {
        argv.push(access.flag().into());
        argv.push(path.as_os_str().to_owned());
        if access != super::Access::Masked {
            argv.push(path.as_os_str().to_owned());
        }
    }
    argv.extend(["--setenv", "TMPDIR", TMP].map(OsString::from));
    for (name, value) in &mounts.env {
        argv.extend(["--setenv", name, value].map(OsString::from));
    }
    argv.push("--chdir".into());
    argv.push(cwd.as_os_str().to_owned());
    argv.push("--".into());
    argv.push(program.as_os_str().to_owned());
    argv.extend(args.iter().map(OsString::from));
    argv
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn text(argv: &[OsString]) -> String {
        argv.iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn the_rest_is_read_only_and_the_program_runs_last() {
        let argv = arguments(
            &Mounts::default(),
            false,
            Path::new("/usr/bin/sh"),
            &["-c".to_string(), "echo hi".to_string()],
            Path::new("/repo/wt"),
        );
        assert_eq!(
            text(&argv),
            "--die-with-parent --unshare-user --unshare-pid --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
             --setenv TMPDIR /tmp --chdir /repo/wt -- /usr/bin/sh -c echo hi"
        );
        let as_root = arguments(
            &Mounts::default(),
            true,
            Path::new("/bin/true"),
            &[],
            Path::new("/"),
        );
        assert_eq!(
            text(&as_root[..7]),
            "--die-with-parent --unshare-user --unshare-pid --cap-drop ALL --cap-add CAP_SETFCAP"
        );
    }

    #[test]
    fn parents_are_bound_before_children_whatever_their_access() {
        let mounts = Mounts {
            writable: vec![
                PathBuf::from("/tmp/x/repo/.autobuild/worktrees/T"),
                PathBuf::from("/home/u/.cache"),
            ],
            protected: vec![PathBuf::from("/tmp/x/repo/.autobuild/worktrees/T/.git")],
            visible: vec![PathBuf::from("/tmp/x/repo")],
            env: Vec::new(),
            ..Mounts::default()
        };
        let argv = arguments(&mounts, false, Path::new("/bin/true"), &[], Path::new("/"));
        let binds = text(&argv[12..argv.len() - 7]);
        assert_eq!(
            binds,
            "--bind /home/u/.cache /home/u/.cache \
             --ro-bind /tmp/x/repo /tmp/x/repo \
             --bind /tmp/x/repo/.autobuild/worktrees/T /tmp/x/repo/.autobuild/worktrees/T \
             --ro-bind /tmp/x/repo/.autobuild/worktrees/T/.git /tmp/x/repo/.autobuild/worktrees/T/.git"
        );
    }

    #[test]
    fn a_masked_checkout_shows_only_what_is_bound_under_it() {
        let mounts = Mounts {
            writable: vec![PathBuf::from("/r/.autobuild/worktrees/T")],
            visible: vec![
                PathBuf::from("/r"),
                PathBuf::from("/r/.autobuild/worktrees/.repos/T/.git"),
            ],
            masked: vec![PathBuf::from("/r")],
            ..Mounts::default()
        };
        let argv = arguments(&mounts, false, Path::new("/bin/true"), &[], Path::new("/"));
        let text = text(&argv);
        assert!(text.starts_with("--die-with-parent --unshare-user --unshare-pid "));
        assert!(
            text.contains(
                "--tmpfs /tmp --tmpfs /r \
                 --bind /r/.autobuild/worktrees/T /r/.autobuild/worktrees/T \
                 --ro-bind /r/.autobuild/worktrees/.repos/T/.git /r/.autobuild/worktrees/.repos/T/.git"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_path_listed_twice_is_bound_once_with_the_strongest_protection() {
        let mounts = Mounts {
            writable: vec![PathBuf::from("/w"), PathBuf::from("/w")],
            protected: vec![PathBuf::from("/w/.git"), PathBuf::from("/w/.git")],
            visible: vec![PathBuf::from("/w/.git")],
            env: Vec::new(),
            ..Mounts::default()
        };
        let argv = arguments(&mounts, false, Path::new("/bin/true"), &[], Path::new("/"));
        let binds = text(&argv[12..argv.len() - 7]);
        assert_eq!(binds, "--bind /w /w --ro-bind /w/.git /w/.git");
    }
}
