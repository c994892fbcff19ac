//! Whether confinement works on this machine, and if not, why and what to do about it.
//!
//! The only reliable answer is to try: the probe runs `sh -c "exit 0"` under bwrap (or Landlock) with exactly the
//! flags a real step uses. bwrap exists only on Linux; it may be missing; and even installed it
//! can be refused the namespaces it needs — unprivileged user namespaces switched off by a
//! sysctl or restricted by AppArmor (Ubuntu 23.10 and later), or a container that forbids
//! mounting. Each of these has its own fix, which `doctor`, the dry run and the run's warning
//! name. The answer is computed once per process (a feature asks it for every task).
//!
//! `AUTOBUILD_BWRAP` names the bwrap binary to use instead of `bwrap` on the PATH (a copy in
//! an unusual place, or — in tests — one that is missing or broken on purpose).

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::{Backend, BackendChoice, Confinement, Mounts};
use process::{self, CancelToken, ProcessEnd, ProcessSpec};

/// The variable naming the bwrap binary (a path or a name looked up on the PATH).
pub const BWRAP_ENV: &str = "AUTOBUILD_BWRAP";

/// How long the probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// How to install bubblewrap.
pub const INSTALL: &str = "install bubblewrap: `sudo apt-get install bubblewrap` (Debian, \
     Ubuntu), `sudo dnf install bubblewrap` (Fedora), `sudo pacman -S bubblewrap` (Arch)";

/// Whether agents and checks can be confined here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Availability {
    Available(Backend),
    Unavailable { reason: String, fix: String },
}

/// Whether `choice` can confine here: `auto` is bwrap where it works, else Landlock. Each
/// backend is tried once per process.
pub fn availability(choice: BackendChoice) -> Availability {
    static BWRAP: OnceLock<Availability> = OnceLock::new();
    static LANDLOCK: OnceLock<Availability> = OnceLock::new();
    let bwrap = || BWRAP.get_or_init(check).clone();
    let landlock = || LANDLOCK.get_or_init(check_landlock).clone();
    match choice {
        BackendChoice::Bwrap => bwrap(),
        BackendChoice::Landlock => landlock(),
        BackendChoice::Auto => match (bwrap(), landlock()) {
            (Availability::Available(backend), _) | (_, Availability::Available(backend)) => {
                Availability::Available(backend)
            }
            (
                Availability::Unavailable { reason, fix },
                Availability::Unavailable {
                    reason: no_landlock,
                    ..
                },
            ) => Availability::Unavailable {
                reason: format!("{reason}, and {no_landlock}"),
                fix,
            },
        },
    }
}

/// [`availability`] of the backend `settings` choose (`[sandbox] backend`, or
/// `AUTOBUILD_SANDBOX_BACKEND`); a variable naming no backend is the reason there is none.
pub fn for_settings(settings: &super::Settings) -> Availability {
    match settings.backend_choice() {
        Ok(choice) => availability(choice),
        Err(reason) => Availability::Unavailable {
            reason,
            fix: "set it to auto, bwrap or landlock, or unset it".to_string(),
        },
    }
}

/// Whether Landlock is there and confines a shell.
pub fn check_landlock() -> Availability {
    let unavailable = |reason: String| Availability::Unavailable {
        reason,
        fix: "use Linux 5.13 or later with Landlock enabled, or install bubblewrap".to_string(),
    };
    if !cfg!(target_os = "linux") {
        return unavailable(format!(
            "Landlock is Linux's, and this is {}",
            std::env::consts::OS
        ));
    }
    let abi = match super::landlock::abi() {
        Ok(abi) => abi,
        Err(reason) => return unavailable(reason),
    };
    let backend = Backend::Landlock { abi };
    match try_with(&backend, Mounts::default()) {
        Ok(()) => Availability::Available(backend),
        Err(failure) => unavailable(format!(
            "Landlock (ABI {abi}) does not confine here: {failure}"
        )),
    }
}

/// Finds bwrap and tries it.
pub fn check() -> Availability {
    if !cfg!(target_os = "linux") {
        return Availability::Unavailable {
            reason: format!(
                "this is {}: confinement uses bubblewrap, which exists on Linux only (macOS \
                 support is planned, see docs/sandbox.md, \"Not confined yet\")",
                std::env::consts::OS
            ),
            fix: "none on this system yet".to_string(),
        };
    }
    let named = std::env::var(BWRAP_ENV)
        .ok()
        .filter(|v| !v.trim().is_empty());
    let wanted = named.clone().unwrap_or_else(|| "bwrap".to_string());
    let Ok(bwrap) = which::which(&wanted) else {
        return Availability::Unavailable {
            reason: match named {
                Some(named) => format!("{BWRAP_ENV} names `{named}`, which does not exist"),
                None => "bubblewrap (`bwrap`) is not installed".to_string(),
            },
            fix: INSTALL.to_string(),
        };
    };
    // `--version` runs beside the probe rather than after it: each is a process start, and the
    // first thing every run waits for.
    let (tried, version) = std::thread::scope(|scope| {
        let version = scope.spawn(|| version(&bwrap));
        (try_it(&bwrap), version.join().ok().flatten())
    });
    match tried {
        Ok(()) => {
            let version = version.unwrap_or_else(|| "bubblewrap".to_string());
            Availability::Available(Backend::Bwrap {
                path: bwrap,
                version,
            })
        }
        Err(failure) => {
            let (reason, fix) = explain(&failure.to_string());
            Availability::Unavailable {
                reason: format!("{} does not work here: {reason}", bwrap.display()),
                fix,
            }
        }
    }
}

/// Why confining `true` failed; its `Display` is what [`explain`] reads (bwrap's own words
/// when it said something).
#[derive(Debug, thiserror::Error)]
enum ProbeFailure {
    #[error("no temporary directory: {0}")]
    NoScratch(#[source] std::io::Error),
    #[error("{0}")]
    NotStarted(#[source] process::ProcessError),
    #[error("no answer within {PROBE_TIMEOUT:?}")]
    NoAnswer,
    /// bwrap failed and said this (trimmed).
    #[error("{0}")]
    Said(String),
    #[error("it ended with {0:?} and said nothing")]
    Silent(ProcessEnd),
}

/// Whether `backend` can also take the network away, as a hidden check's sealed confinement
/// does (`Mounts::offline`; some containers refuse bwrap a network namespace), once per
/// process: `Err` is why not, in the backend's words.
pub fn offline_works(backend: &Backend) -> Result<(), String> {
    static ANSWER: OnceLock<Result<(), String>> = OnceLock::new();
    let offline = Mounts {
        offline: true,
        ..Mounts::default()
    };
    ANSWER
        .get_or_init(|| try_with(backend, offline).map_err(|failure| failure.to_string()))
        .clone()
}

/// Runs a shell under bwrap the way a step would be.
fn try_it(bwrap: &Path) -> Result<(), ProbeFailure> {
    let backend = Backend::Bwrap {
        path: bwrap.to_path_buf(),
        version: String::new(),
    };
    try_with(&backend, Mounts::default())
}

/// Runs `sh -c 'exit 0'` confined with `mounts`.
fn try_with(backend: &Backend, mounts: Mounts) -> Result<(), ProbeFailure> {
    let scratch = tempfile::tempdir().map_err(ProbeFailure::NoScratch)?;
    // The shell every Linux has, whatever the PATH.
    let mut spec = ProcessSpec::new("/bin/sh", "/", scratch.path().join("probe.log"));
    spec.args = vec!["-c".to_string(), "exit 0".to_string()];
    spec.timeout = Some(PROBE_TIMEOUT);
    spec.kill_grace = Duration::from_secs(1);
    spec.sandbox = Some(Confinement::new(backend.clone(), mounts).wrapper());
    let ran = process::run(&spec, &CancelToken::new()).map_err(ProbeFailure::NotStarted)?;
    match ran.end {
        ProcessEnd::Exited(0) => Ok(()),
        ProcessEnd::TimedOut => Err(ProbeFailure::NoAnswer),
        _ if !ran.stderr_tail.trim().is_empty() => {
            Err(ProbeFailure::Said(ran.stderr_tail.trim().to_string()))
        }
        end => Err(ProbeFailure::Silent(end)),
    }
}

/// The first line of `bwrap --version`.
fn version(bwrap: &Path) -> Option<String> {
    let scratch = tempfile::tempdir().ok()?;
    let mut spec = ProcessSpec::new(
        bwrap.display().to_string(),
        scratch.path(),
        scratch.path().join("version.log"),
    );
    spec.args = vec!["--version".to_string()];
    spec.timeout = Some(PROBE_TIMEOUT);
    spec.capture_limit = 1024;
    let ran = process::run(&spec, &CancelToken::new()).ok()?;
    let line = ran.stdout.lines().next()?.trim().to_string();
    (ran.end == ProcessEnd::Exited(0) && !line.is_empty()).then_some(line)
}

/// Why bwrap failed, in words, and the fix, from what it printed.
pub fn explain(said: &str) -> (String, String) {
    let lower = said.to_lowercase();
    let first = said.lines().next().unwrap_or(said).trim();
    if lower.contains("namespace") || lower.contains("uid map") || lower.contains("setgroups") {
        (
            format!("user namespaces are not available to it ({first})"),
            "allow unprivileged user namespaces: `sudo sysctl -w \
             kernel.unprivileged_userns_clone=1` (Debian) and a non-zero \
             `user.max_user_namespaces`; on Ubuntu 23.10 and later AppArmor restricts them — \
             install the `bwrap` AppArmor profile or `sudo sysctl -w \
             kernel.apparmor_restrict_unprivileged_userns=0`; in a container, allow them in its \
             security settings"
                .to_string(),
        )
    } else if lower.contains("mount") || lower.contains("pivot_root") || lower.contains("slave") {
        (
            format!("it may not mount filesystems ({first}), as is usual in a container"),
            "run the container with the permissions bubblewrap needs (e.g. `--security-opt \
             seccomp=unconfined --security-opt apparmor=unconfined`, or privileged), or run \
             autobuild outside it"
                .to_string(),
        )
    } else {
        (
            format!("it failed: {first}"),
            format!("check that `bwrap --ro-bind / / true` works for this user; {INSTALL}"),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_are_explained_with_their_fix() {
        let (reason, fix) = explain(
            "bwrap: No permissions to creating new namespace, likely because the kernel does \
             not allow non-privileged user namespaces.",
        );
        assert!(reason.starts_with("user namespaces are not available"));
        assert!(fix.contains("unprivileged_userns_clone"));
        let (reason, fix) = explain("bwrap: setting up uid map: Permission denied");
        assert!(reason.starts_with("user namespaces"));
        assert!(fix.contains("apparmor_restrict_unprivileged_userns"));
        let (reason, fix) =
            explain("bwrap: Can't mount proc on /newroot/proc: Operation not permitted");
        assert!(reason.contains("may not mount"));
        assert!(fix.contains("container"));
        let (reason, _) = explain("something else\nmore");
        assert_eq!(reason, "it failed: something else");
    }
}
