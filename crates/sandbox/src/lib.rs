//! OS confinement of agent and check processes (`[sandbox]` in the project config).
//!
//! On Linux every agent process and every runner check can run under bubblewrap (`bwrap`):
//! the whole filesystem stays readable, but the kernel refuses writes everywhere except the
//! task's worktree, the git files the worktree legitimately needs (its own administration
//! directory, the task branch's ref directory, a run-private object directory whose objects
//! the runner imports, verified, into the read-only shared store), the run's scratch
//! directory, a private `/tmp`, the agent CLI's own state (`~/.claude`, `~/.codex`, …) and
//! the paths the project declares in `[sandbox] writable`. The network stays shared: agents
//! call their APIs and checks may download dependencies. A refused write is an ordinary
//! failed command for the agent (`Read-only file system`); the runner notes the refusals it
//! can see in the output ([`denials`]).
//!
//! How it fits together:
//! - [`decide`] turns `[sandbox] mode` into an [`Effective`] setting once per run, asking
//!   [`probe`] whether bwrap works on this machine (`auto` falls back to running unconfined
//!   with a warning; `on` refuses to start).
//! - [`Sandbox::confine`] resolves one step's paths ([`StepPaths`]) against the filesystem
//!   into [`Mounts`] (module `mounts`): `~` expanded, missing directories created, missing
//!   files skipped with a note.
//! - A [`Confinement`] travels in the process spec; [`process::run`] resolves the
//!   program as before and then runs it through [`Confinement::wrap`], which is the pure
//!   command-line builder of module [`bwrap`].
//!
//! `mode = "off"` (or no bwrap under `auto`) leaves process spawning exactly as it is without
//! this module. macOS is not confined yet; docs/sandbox.md ("Not confined yet") describes the plan.

mod backend;
pub mod bwrap;
pub mod denials;
pub mod landlock;
pub mod mounts;
pub mod probe;
pub mod seccomp;

mod settings;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use process::{Wrapped, Wrapper};

pub use backend::{Backend, Record};
pub use mounts::{Hide, StepPaths, Writable};
pub use probe::Availability;
pub use settings::{BackendChoice, Mode, Network, Settings, BACKEND_ENV};

/// How one kind of path is bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Read-only, re-exposed under the private `/tmp`.
    Visible,
    Writable,
    /// Read-only inside a writable tree.
    Protected,
    /// Hidden behind an empty directory: nothing of the host's shows through.
    Masked,
}

impl Access {
    /// The bwrap flag that binds a path this way.
    pub fn flag(self) -> &'static str {
        match self {
            Access::Visible | Access::Protected => "--ro-bind",
            Access::Writable => "--bind",
            Access::Masked => "--tmpfs",
        }
    }
}

/// Host paths bound into the sandbox, each at its own path. Everything else is read-only,
/// except `/tmp`, which is private and empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Bound read-write.
    pub writable: Vec<PathBuf>,
    /// Bound read-only inside a writable path (a worktree's `.git` file, its `commondir`):
    /// the parts of a writable tree that must not change.
    pub protected: Vec<PathBuf>,
    /// Paths under `/tmp` bound read-only again after the private `/tmp` hid them.
    pub visible: Vec<PathBuf>,
    /// Variables set inside the sandbox (where git writes objects), over the child's own.
    pub env: Vec<(String, String)>,
    /// Hidden behind an empty directory (a run with hidden paths); paths under them that are
    /// bound above are shown again.
    pub masked: Vec<PathBuf>,
    /// No network: a network namespace of its own with only a loopback device (a hidden check).
    pub offline: bool,
}

impl Mounts {
    /// Every path once, with its strongest protection, parents before children. A visible
    /// path that an earlier bind already shows is left out.
    pub fn in_mount_order(&self) -> Vec<(&Path, Access)> {
        let mut all: Vec<(&Path, Access)> = Vec::new();
        let lists = [
            (&self.visible, Access::Visible),
            (&self.writable, Access::Writable),
            (&self.protected, Access::Protected),
            (&self.masked, Access::Masked),
        ];
        for (paths, access) in lists {
            for path in paths.iter() {
                match all.iter_mut().find(|(known, _)| *known == path.as_path()) {
                    Some(entry) => entry.1 = entry.1.max(access),
                    None => all.push((path.as_path(), access)),
                }
            }
        }
        let shown: Vec<PathBuf> = all
            .iter()
            .filter(|(_, access)| !matches!(access, Access::Protected | Access::Masked))
            .map(|(path, _)| path.to_path_buf())
            .collect();
        all.retain(|(path, access)| {
            *access != Access::Visible
                || !shown
                    .iter()
                    .any(|other| other != path && path.starts_with(other))
        });
        all.sort_by(|(a, _), (b, _)| {
            (a.components().count(), *a).cmp(&(b.components().count(), *b))
        });
        all
    }
}

/// How one process is confined: the backend and what it may write.
#[derive(Debug, Clone)]
pub struct Confinement {
    pub backend: Backend,
    pub mounts: Mounts,
    /// autobuild runs as root, whose capabilities bwrap would otherwise pass on.
    pub as_root: bool,
    /// `[sandbox] network` (`none` is also [`Mounts::offline`], set by [`Sandbox::confine`]).
    pub network: Network,
    /// Landlock's private temporary directory (`TMPDIR`), removed with the last clone.
    tmp: Option<Arc<tempfile::TempDir>>,
    /// The read-only files inside writable trees as they were when the step was confined
    /// (put back by [`Confinement::restore_protected`]).
    kept: Arc<Vec<(PathBuf, Vec<u8>)>>,
}

impl Confinement {
    /// The confinement of a process with `mounts`, for the user autobuild runs as.
    pub fn new(backend: Backend, mounts: Mounts) -> Confinement {
        // SAFETY: geteuid(2) has no preconditions and cannot fail.
        let as_root = unsafe { libc::geteuid() } == 0;
        let kept = mounts
            .protected
            .iter()
            .filter_map(|path| Some((path.clone(), std::fs::read(path).ok()?)))
            .collect();
        // Landlock cannot give a private /tmp: a directory of its own stands in (module
        // `landlock`); without one the process does not start (`wrap`).
        let tmp = match backend {
            Backend::Landlock { .. } => tempfile::Builder::new()
                .prefix("autobuild-tmp-")
                .tempdir()
                .map_err(|error| tracing::warn!("no private temporary directory: {error}"))
                .ok()
                .map(Arc::new),
            Backend::Bwrap { .. } => None,
        };
        Confinement {
            backend,
            mounts,
            as_root,
            network: Network::default(),
            tmp,
            kept: Arc::new(kept),
        }
    }

    /// This confinement as the wrapper a process spec runs its program through.
    pub fn wrapper(&self) -> Arc<dyn Wrapper> {
        Arc::new(self.clone())
    }

    /// What the process may write: the writable paths and, under Landlock, its private
    /// temporary directory.
    pub fn writable_paths(&self) -> Vec<PathBuf> {
        let tmp = self.tmp.iter().map(|tmp| tmp.path().to_path_buf());
        self.mounts.writable.iter().cloned().chain(tmp).collect()
    }

    /// What the seccomp filter lets the process open: no socket at all without a network
    /// under Landlock (bwrap gives a loopback of its own), no Unix-domain one without a network
    /// under bwrap (a network namespace does not reach socket files) or unless the network is
    /// the host's.
    fn sockets(&self) -> seccomp::Sockets {
        let landlock = matches!(self.backend, Backend::Landlock { .. });
        match (self.mounts.offline, self.network) {
            (true, _) if landlock => seccomp::Sockets::None,
            (false, Network::Host) => seccomp::Sockets::All,
            _ => seccomp::Sockets::NoUnix,
        }
    }

    /// Puts back every read-only file inside a writable tree that a process changed, replaced
    /// or removed (Landlock cannot refuse those writes; under bwrap nothing changes them), never
    /// writing through what is there now: it is removed and the file made anew. Returns the
    /// paths put back, or the one that could not be (the step must not go on).
    pub fn restore_protected(&self) -> Result<Vec<PathBuf>, (PathBuf, std::io::Error)> {
        let mut restored = Vec::new();
        for (path, content) in self.kept.iter() {
            if !intact(path, content) {
                put_back(path, content).map_err(|error| (path.clone(), error))?;
                restored.push(path.clone());
            }
        }
        Ok(restored)
    }
}

/// Whether `path` is still the runner's own regular file with `content`.
fn intact(path: &Path, content: &[u8]) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .is_ok_and(|meta| meta.file_type().is_file() && meta.nlink() == 1)
        && std::fs::read(path).is_ok_and(|now| now == content)
}

/// Removes whatever is at `path` and writes `content` to a new file there.
fn put_back(path: &Path, content: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path)?,
        Ok(_) => std::fs::remove_file(path)?,
        Err(_) => {}
    }
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?
        .write_all(content)
}

impl Wrapper for Confinement {
    fn wrap(&self, program: &Path, args: &[String], cwd: &Path) -> std::io::Result<Wrapped> {
        let real = program
            .canonicalize()
            .unwrap_or_else(|_| program.to_path_buf());
        let filter = seccomp::program(self.sockets())?;
        match &self.backend {
            Backend::Bwrap { path, .. } => {
                let mut mounts = self.mounts.clone();
                let hidden = mounts.masked.iter().any(|masked| real.starts_with(masked));
                if real.starts_with(bwrap::TMP) || hidden {
                    mounts.visible.push(real.clone());
                }
                let args = bwrap::arguments(&mounts, self.as_root, &real, args, cwd);
                Ok(Wrapped {
                    program: path.clone(),
                    args,
                    env: Vec::new(),
                    leads: true,
                    before_exec: Some(Box::new(move || seccomp::install(&filter))),
                })
            }
            Backend::Landlock { .. } => {
                let Some(tmp) = self.tmp.as_ref().map(|tmp| tmp.path().to_path_buf()) else {
                    return Err(std::io::Error::other(
                        "Landlock: no private temporary directory could be made",
                    ));
                };
                let rules = landlock::rules(&self.mounts, &real, &tmp, &landlock::list_dir);
                let before_exec = landlock::prepare(&rules, filter, self.as_root)?;
                let mut env = self.mounts.env.clone();
                env.push(("TMPDIR".to_string(), tmp.display().to_string()));
                let mut wrapped = Wrapped::plain(&real, args);
                wrapped.env = env;
                wrapped.before_exec = Some(before_exec);
                Ok(wrapped)
            }
        }
    }
}

/// What `[sandbox] mode` amounts to on this machine for one run.
#[derive(Debug)]
pub enum Effective {
    On(Sandbox),
    /// Not confined, and why (for the dry run and `doctor`).
    Off(String),
}

impl Effective {
    pub fn sandbox(&self) -> Option<&Sandbox> {
        match self {
            Effective::On(sandbox) => Some(sandbox),
            Effective::Off(_) => None,
        }
    }
}

/// Confinement is on for this run.
#[derive(Debug)]
pub struct Sandbox {
    pub backend: Backend,
    /// `[sandbox] writable` as written.
    pub declared: Vec<String>,
    pub network: Network,
    /// Notes already shown in this run: each is said once.
    said: Mutex<BTreeSet<String>>,
    /// The git paths of each linked worktree and branch confined so far. They are read from
    /// the worktree's `.git` file and its administration directory's `commondir`, which every
    /// confined process sees read-only and the runner never changes during a run, so each is
    /// found once instead of at every process start (an opening of the repository).
    git_paths: Mutex<BTreeMap<(PathBuf, String), Arc<mounts::GitPaths>>>,
}

impl Sandbox {
    pub fn new(backend: Backend, settings: &Settings) -> Sandbox {
        Sandbox {
            backend,
            declared: settings.writable.clone(),
            network: settings.network,
            said: Mutex::new(BTreeSet::new()),
            git_paths: Mutex::new(BTreeMap::new()),
        }
    }

    /// [`mounts::git_paths`] of `worktree` for `branch`, found once per run.
    fn git_paths(&self, worktree: &Path, branch: &str) -> Arc<mounts::GitPaths> {
        let key = (worktree.to_path_buf(), branch.to_string());
        let mut known = self
            .git_paths
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(found) = known.get(&key) {
            return Arc::clone(found);
        }
        let found = Arc::new(mounts::git_paths(worktree, branch));
        // Not a linked worktree (yet): asked again next time.
        if !found.is_empty() {
            known.insert(key, Arc::clone(&found));
        }
        found
    }

    /// The confinement of one process with `paths`, and the notes about paths that could not
    /// be made writable (each note is returned once per run).
    pub fn confine(&self, paths: &StepPaths<'_>) -> (Confinement, Vec<String>) {
        let git = self.git_paths(paths.worktree, paths.branch);
        let (mut mounts, notes) = mounts::resolve(paths, &self.declared, &git);
        mounts.offline |= self.network == Network::None;
        let mut confinement = Confinement::new(self.backend.clone(), mounts);
        confinement.network = self.network;
        let mut said = self.said.lock().unwrap_or_else(PoisonError::into_inner);
        let fresh = notes
            .into_iter()
            .filter(|note| said.insert(note.clone()))
            .collect();
        (confinement, fresh)
    }
}

/// What `settings` amount to here: confinement on, off (and why), plus a warning (`auto`
/// without a working bwrap) or a reason the run cannot start (`on` without one).
pub struct Decision {
    pub effective: Effective,
    pub warning: Option<String>,
    pub blocker: Option<Unconfinable>,
}

/// `[sandbox] mode = "on"` where nothing can be confined: why, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "[sandbox] mode = \"on\", but agents and checks cannot be confined here: {reason}; fix: {fix} (or set mode = \"auto\" to run unconfined with a warning)"
)]
pub struct Unconfinable {
    pub reason: String,
    pub fix: String,
}

/// Starts [`probe::availability`] on a thread of its own when `settings` will need it, so
/// the bwrap processes it waits for run while the caller reads the workflow; [`decide`] then
/// waits for that answer instead of starting its own.
pub fn start_probe(settings: &Settings) {
    if settings.mode == Mode::Off {
        return;
    }
    let Ok(choice) = settings.backend_choice() else {
        return;
    };
    let started = std::thread::Builder::new()
        .name("sandbox-probe".into())
        .spawn(move || {
            probe::availability(choice);
        });
    // Without a thread, `decide` probes on the caller's.
    if let Err(error) = started {
        tracing::debug!("sandbox probe runs when asked: {error}");
    }
}

/// Decides whether this run is confined, asking [`probe::availability`] (once per process)
/// unless the mode is `off`.
pub fn decide(settings: &Settings) -> Decision {
    if settings.mode == Mode::Off {
        return Decision {
            effective: Effective::Off("[sandbox] mode = \"off\"".to_string()),
            warning: None,
            blocker: None,
        };
    }
    match probe::for_settings(settings) {
        Availability::Available(backend) => Decision {
            effective: Effective::On(Sandbox::new(backend, settings)),
            warning: None,
            blocker: None,
        },
        Availability::Unavailable { reason, fix } => {
            let (warning, blocker) = if settings.mode == Mode::On {
                let blocker = Unconfinable {
                    reason: reason.clone(),
                    fix: fix.clone(),
                };
                (None, Some(blocker))
            } else {
                let warning = format!(
                    "agents and checks run without OS confinement: {reason} (fix: {fix}; or set \
                     [sandbox] mode = \"off\" in .autobuild/config.toml to silence this)"
                );
                (Some(warning), None)
            };
            Decision {
                effective: Effective::Off(format!("not available: {reason}")),
                warning,
                blocker,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_off_never_probes_and_says_why() {
        let decision = decide(&Settings {
            mode: Mode::Off,
            writable: vec!["~/.cache".into()],
            ..Settings::default()
        });
        assert!(decision.effective.sandbox().is_none());
        assert!(decision.warning.is_none() && decision.blocker.is_none());
        match decision.effective {
            Effective::Off(why) => assert_eq!(why, "[sandbox] mode = \"off\""),
            Effective::On(_) => panic!("mode off confined"),
        }
    }

    #[test]
    fn sockets_follow_the_network_and_a_sealed_check_gets_no_unix_socket_even_on_host() {
        use seccomp::Sockets;
        let bwrap = Backend::Bwrap {
            path: PathBuf::from("/usr/bin/bwrap"),
            version: String::new(),
        };
        let landlock = Backend::Landlock { abi: 7 };
        let table = [
            (&bwrap, false, Network::Ip, Sockets::NoUnix),
            (&bwrap, false, Network::Host, Sockets::All),
            (&bwrap, true, Network::Host, Sockets::NoUnix),
            (&landlock, false, Network::Host, Sockets::All),
            (&landlock, true, Network::Host, Sockets::None),
            (&landlock, true, Network::None, Sockets::None),
        ];
        for (backend, offline, network, expected) in table {
            let mounts = Mounts {
                offline,
                ..Mounts::default()
            };
            let mut confinement = Confinement::new(backend.clone(), mounts);
            confinement.network = network;
            assert_eq!(
                confinement.sockets(),
                expected,
                "{backend} {offline} {network:?}"
            );
        }
    }

    #[test]
    fn a_program_under_tmp_stays_visible() {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("agent.sh");
        std::fs::write(&script, "true\n").unwrap();
        let bwrap = Backend::Bwrap {
            path: PathBuf::from("/usr/bin/bwrap"),
            version: String::new(),
        };
        let confinement = Confinement::new(bwrap, Mounts::default());
        let wrapped = confinement.wrap(&script, &[], Path::new("/")).unwrap();
        let (program, argv) = (wrapped.program, wrapped.args);
        assert_eq!(program, PathBuf::from("/usr/bin/bwrap"));
        let real = script.canonicalize().unwrap();
        if real.starts_with("/tmp") {
            let bound = argv
                .windows(3)
                .any(|w| w[0] == "--ro-bind" && w[1] == real.as_os_str() && w[2] == w[1]);
            assert!(bound, "{argv:?}");
        }
        assert_eq!(argv.last().unwrap(), real.as_os_str());
    }
}
