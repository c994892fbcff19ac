//! The Landlock backend: the same write set as bubblewrap's binds, enforced by the kernel on
//! the process itself (Linux 5.13 or later, no privileges, no user namespaces — so it works in
//! Docker's default profile, Kubernetes pods and Ubuntu's AppArmor-restricted runners, where
//! bwrap is refused).
//!
//! From the same [`Mounts`] bwrap is given, [`rules`] derives what the process may do:
//! - read and execute everything, except a masked tree (a run with hidden paths), which is
//!   left out of the rules by granting its siblings instead ([`cover`]: Landlock only ever
//!   adds rights, a subtree cannot be taken back) — paths shown again under it are granted
//!   on their own;
//! - write the writable paths, a private temporary directory (`TMPDIR`; the host's `/tmp`
//!   itself stays read-only: a rule on it would open every repository under it) and the
//!   harmless devices (`/dev/null`, `/dev/zero`, …, `/dev/shm`);
//! - where the kernel's ABI has them (6 and later): no abstract Unix socket and no signal
//!   outside the sandbox; with no network (`network = "none"`, a hidden check), no TCP bind
//!   or connect (ABI 4), and the seccomp filter refuses every socket besides.
//!
//! What Landlock cannot do that bwrap does, and what stands in for it:
//! - read-only files inside a writable tree (the worktree's `.git` file, its administration
//!   directory's `commondir` and `gitdir`): the runner keeps their contents and puts back any
//!   change after every confined process ([`super::Confinement::restore_protected`]);
//! - a process namespace: the process group and the runner's leftover sweep (by working
//!   directory) stop what a step started, as without a sandbox; `/proc` shows the host's
//!   processes, but Landlock refuses ptrace-mode access (environ, memory) to any outside it;
//! - a loopback-only network for a hidden check: under Landlock it gets no socket at all;
//! - hiding a masked tree from `stat(2)`: names and sizes stay visible, contents do not.
//!
//! The ruleset is built in the parent ([`prepare`]); the forked child only calls
//! `landlock_restrict_self(2)` and installs the seccomp filter.

use std::io;
use std::path::{Path, PathBuf};

use ::landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};
use ::landlock::{Ruleset, RulesetCreated, RulesetStatus};

use super::seccomp;
use super::Mounts;
use process::BeforeExec;
use seccompiler::BpfProgram;

/// The newest ABI whose rights this build asks for (what it was tested with); newer kernels
/// enforce these, older ones what they have.
const TESTED: ABI = ABI::V7;

/// Devices every process may write (and `ioctl`) as under bwrap's minimal `/dev`.
const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
];

/// Writable directories of `/dev` (POSIX shared memory and semaphores).
const DEVICE_DIRS: [&str; 1] = ["/dev/shm"];

/// The Landlock ABI this kernel offers, or why there is none.
pub fn abi() -> Result<i32, String> {
    const VERSION: libc::c_uint = 1; // LANDLOCK_CREATE_RULESET_VERSION
                                     // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the ABI version.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            VERSION,
        )
    };
    if version >= 1 {
        return Ok(version as i32);
    }
    let error = io::Error::last_os_error();
    Err(match error.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no Landlock (Linux 5.13 or later has it)".into(),
        Some(libc::EOPNOTSUPP) => "Landlock is built into this kernel but not enabled (add \
             `landlock` to the `lsm=` boot parameter)"
            .into(),
        _ => format!("Landlock cannot be used: {error}"),
    })
}

/// What one confined process may do, as paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rules {
    /// Read and execute beneath.
    pub read: Vec<PathBuf>,
    /// Everything beneath.
    pub write: Vec<PathBuf>,
    /// No socket (a hidden check's, or `network = "none"`).
    pub offline: bool,
}

/// One entry of a directory, for [`cover`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub path: PathBuf,
    /// A symbolic link: never granted (its target is judged where it lies).
    pub link: bool,
}

/// The rules of `mounts` for a process running `program`, with `tmp` its private temporary
/// directory; `list` reads a directory (for the cover of a masked tree).
pub fn rules(
    mounts: &Mounts,
    program: &Path,
    tmp: &Path,
    list: &dyn Fn(&Path) -> Vec<Entry>,
) -> Rules {
    let mut read = cover(Path::new("/"), &mounts.masked, list);
    let hidden = |path: &Path| mounts.masked.iter().any(|masked| path.starts_with(masked));
    read.extend(mounts.visible.iter().filter(|p| hidden(p)).cloned());
    if hidden(program) {
        read.push(program.to_path_buf());
    }
    let mut write: Vec<PathBuf> = mounts.writable.clone();
    write.push(tmp.to_path_buf());
    write.extend(DEVICE_DIRS.iter().map(PathBuf::from));
    Rules {
        read,
        write,
        offline: mounts.offline,
    }
}

/// Paths whose subtrees together hold everything under `root` except the `masked` trees: the
/// root itself when nothing under it is masked, else, for each masked tree, the siblings along
/// its path down from the root (links left out).
pub fn cover(root: &Path, masked: &[PathBuf], list: &dyn Fn(&Path) -> Vec<Entry>) -> Vec<PathBuf> {
    if masked.iter().any(|m| root.starts_with(m)) {
        return Vec::new();
    }
    if !masked.iter().any(|m| m.starts_with(root)) {
        return vec![root.to_path_buf()];
    }
    list(root)
        .into_iter()
        .filter(|entry| !entry.link)
        .flat_map(|entry| cover(&entry.path, masked, list))
        .collect()
}

/// [`cover`]'s directory reader on the real filesystem (an unreadable directory has nothing to
/// grant).
pub fn list_dir(dir: &Path) -> Vec<Entry> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<Entry> = entries
        .flatten()
        .map(|entry| Entry {
            link: entry.file_type().is_ok_and(|t| t.is_symlink()),
            path: entry.path(),
        })
        .collect();
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found
}

/// The ruleset of `rules` and the seccomp filter, ready for the child to take on.
/// `as_root`: autobuild runs as root, whose capabilities the process would keep (bwrap drops
/// them with `--cap-drop ALL`; here the child drops them itself).
pub fn prepare(rules: &Rules, filter: BpfProgram, as_root: bool) -> io::Result<BeforeExec> {
    let ruleset = ruleset(rules).map_err(|error| io::Error::other(format!("Landlock: {error}")))?;
    let mut ruleset = Some(ruleset);
    Ok(Box::new(move || {
        let Some(ruleset) = ruleset.take() else {
            return Err(io::Error::other("Landlock: the ruleset was already used"));
        };
        if as_root {
            drop_capabilities()?;
        }
        // restrict_self sets PR_SET_NO_NEW_PRIVS, then restricts.
        let status = ruleset
            .restrict_self()
            .map_err(|_| io::Error::last_os_error())?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(io::Error::from_raw_os_error(libc::ENOSYS));
        }
        seccomp::install(&filter)
    }))
}

/// Drops every capability of the calling thread, for good: the bounding set first (which
/// needs `CAP_SETPCAP`, still held), so that executing a program as root gains none back,
/// then the ambient, effective, permitted and inheritable sets.
fn drop_capabilities() -> io::Result<()> {
    const LAST_CAP: libc::c_ulong = 63;
    for cap in 0..=LAST_CAP {
        // SAFETY: prctl(PR_CAPBSET_DROP) only changes this thread's bounding set; EINVAL for a
        // capability the kernel does not have is expected.
        let dropped = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) };
        if dropped != 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINVAL) {
            return Err(io::Error::last_os_error());
        }
    }
    // SAFETY: as above, for the ambient set.
    let cleared = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        )
    };
    if cleared != 0 {
        return Err(io::Error::last_os_error());
    }
    #[repr(C)]
    struct Header {
        version: u32,
        pid: libc::c_int,
    }
    #[repr(C)]
    #[derive(Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    const VERSION_3: u32 = 0x2008_0522; // _LINUX_CAPABILITY_VERSION_3
    let header = Header {
        version: VERSION_3,
        pid: 0,
    };
    let data = [Data {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset(2) with a version 3 header and its two data words, both valid for the call.
    let set = unsafe { libc::syscall(libc::SYS_capset, &header, data.as_ptr()) };
    if set != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn ruleset(rules: &Rules) -> Result<RulesetCreated, ::landlock::RulesetError> {
    let all = AccessFs::from_all(TESTED);
    let read = AccessFs::from_read(TESTED);
    let device = read | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let mut ruleset = Ruleset::default()
        .handle_access(all)?
        .scope(Scope::from_all(TESTED))?;
    if rules.offline {
        ruleset = ruleset.handle_access(AccessNet::from_all(TESTED))?;
    }
    ruleset
        .create()?
        .add_rules(path_beneath_rules(&rules.read, read))?
        .add_rules(path_beneath_rules(&rules.write, all))?
        .add_rules(path_beneath_rules(DEVICES, device))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tree: `/a/{b,c,link}`, `/a/b/{d,e}`, `/f`.
    fn list(dir: &Path) -> Vec<Entry> {
        let names: &[&str] = match dir.to_str().unwrap() {
            "/" => &["/a", "/f"],
            "/a" => &["/a/b", "/a/c", "/a/link"],
            "/a/b" => &["/a/b/d", "/a/b/e"],
            _ => &[],
        };
        names
            .iter()
            .map(|name| Entry {
                path: PathBuf::from(name),
                link: name.ends_with("link"),
            })
            .collect()
    }

    fn paths(names: &[&str]) -> Vec<PathBuf> {
        names.iter().map(PathBuf::from).collect()
    }

    #[test]
    fn the_cover_leaves_out_exactly_the_masked_trees_and_links() {
        let table: [(&[&str], &[&str]); 5] = [
            (&[], &["/"]),
            (&["/a/b"], &["/a/c", "/f"]),
            (&["/a/b/d"], &["/a/b/e", "/a/c", "/f"]),
            (&["/a/b", "/f"], &["/a/c"]),
            (&["/"], &[]),
        ];
        for (masked, expected) in table {
            assert_eq!(
                cover(Path::new("/"), &paths(masked), &list),
                paths(expected),
                "masked {masked:?}"
            );
        }
    }

    #[test]
    fn shown_paths_under_a_masked_tree_and_the_program_are_readable_again() {
        let mounts = Mounts {
            writable: paths(&["/a/b/d"]),
            visible: paths(&["/a/b/e", "/f"]),
            masked: paths(&["/a/b"]),
            ..Mounts::default()
        };
        let rules = rules(
            &mounts,
            Path::new("/a/b/e/agent.sh"),
            Path::new("/t"),
            &list,
        );
        assert_eq!(
            rules.read,
            paths(&["/a/c", "/f", "/a/b/e", "/a/b/e/agent.sh"])
        );
        assert_eq!(rules.write, paths(&["/a/b/d", "/t", "/dev/shm"]));
        assert!(!rules.offline);
    }
}
