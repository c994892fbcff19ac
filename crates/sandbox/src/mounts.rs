//! Which host paths one confined process may write, resolved against the filesystem.
//!
//! Writable, beyond the private `/tmp`:
//! - the worktree, except its `.git` file (which says where the repository is: pointing it
//!   elsewhere would send the runner's own checkpoints there);
//! - the worktree's git administration directory (`.git/worktrees/<name>`: its index, HEAD,
//!   reflog), except `commondir` and `gitdir`, which tie it to the repository;
//! - the run's private object directory: the shared object store stays read-only (an agent
//!   could otherwise delete the user's history or plant an object under the name of a future
//!   blob). Git writes new objects to the private directory (`GIT_OBJECT_DIRECTORY`) and reads
//!   the shared ones as an alternate (`GIT_ALTERNATE_OBJECT_DIRECTORIES`); the runner imports
//!   the private objects after the step, each verified against its name
//!   (`git::import_objects`);
//! - the directory of the task branch's ref and of its reflog (`refs/heads/autobuild/`), so a
//!   commit can move the task branch. Git moves a ref by renaming `<ref>.lock` over it, so the
//!   whole directory must be writable: the other `autobuild/*` branches in it are held to the
//!   runners' records by the ref guard (`git::RefGuard`), not by the kernel. The rest
//!   of the shared git directory — `config`, `hooks/`, `info/`, other branches, tags — stays
//!   read-only: that is the point;
//! - the run's scratch directory;
//! - what the agent CLI needs for itself ([`Writable`] entries from its adapter) and the
//!   project's `[sandbox] writable` entries (`~` is the child's `HOME`).
//!
//! A missing directory is created (bwrap cannot bind what does not exist, and the agent could
//! not create it inside: its parent is read-only); a missing file is skipped with a note. Paths
//! are canonicalized, so a symlinked entry opens up the directory it points to.
//!
//! Read-only again after the private `/tmp` hid them (only when they live under `/tmp`): the
//! repository, `HOME` and the directories on the child's `PATH`.

use std::fs;
use std::path::{Path, PathBuf};

use super::bwrap::TMP;
use super::Mounts;
use process::child_var;

/// A path an agent CLI writes to for itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Writable {
    /// Created when missing.
    Dir(PathBuf),
    /// Bound only when it exists.
    File(PathBuf),
}

/// What one step's process works with.
#[derive(Debug, Clone)]
pub struct StepPaths<'a> {
    pub worktree: &'a Path,
    /// The task branch (`autobuild/TASK-1`), whose ref the agent may move.
    pub branch: &'a str,
    /// The main checkout: read-only, shown again when it lives under `/tmp`.
    pub repo_root: &'a Path,
    /// The run's scratch directory.
    pub scratch: &'a Path,
    /// The run's private object directory, where git writes new objects.
    pub objects: &'a Path,
    /// The agent CLI's own state (empty for checks and `command` agents).
    pub agent_state: Vec<Writable>,
    /// The child's environment on top of autobuild's (for `HOME` and `PATH`).
    pub env: &'a [(String, String)],
    /// What a run with hidden paths keeps out of sight (`None` for every other run).
    pub hide: Option<&'a Hide>,
    /// A hidden check's: nothing is writable but `worktree` (the runner's copy, removed after
    /// it) and the private `/tmp` — no scratch, no git files or objects, no `[sandbox]
    /// writable` — and there is no network, so nothing it runs can leave the hidden files
    /// where a later step would read them, or send them anywhere.
    pub sealed: bool,
}

/// How a run with hidden paths confines its processes beyond the ordinary: host paths hidden
/// behind an empty directory (the user's checkout, its git directory, its other worktrees),
/// paths under them shown again read-only (the task repository's git directory, the targets of
/// `[worktree] link`), and a process namespace of its own, so `/proc/<pid>/cwd` of the runner
/// or of another task's check does not lead into a masked directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hide {
    pub masked: Vec<PathBuf>,
    pub shown: Vec<PathBuf>,
}

impl StepPaths<'_> {
    /// A variable as the child sees it: from `env`, else autobuild's own.
    pub fn var(&self, name: &str) -> Option<String> {
        child_var(self.env, name)
    }
}

/// Expands a `[sandbox] writable` entry: `~` and `~/…` against `home`; `None` when it needs a
/// home there is none of.
pub fn expand(entry: &str, home: Option<&Path>) -> Option<PathBuf> {
    match entry.strip_prefix('~') {
        Some("") => home.map(Path::to_path_buf),
        Some(rest) if rest.starts_with('/') => {
            home.map(|home| home.join(rest.trim_start_matches('/')))
        }
        _ => Some(PathBuf::from(entry)),
    }
}

/// The mounts of `paths` plus `declared` (`[sandbox] writable`), and notes on what could not
/// be made writable. `git` is the worktree's git paths ([`git_paths`]); a linked worktree's
/// mounts set the child's object directories.
pub(super) fn resolve(
    paths: &StepPaths<'_>,
    declared: &[String],
    git: &GitPaths,
) -> (Mounts, Vec<String>) {
    let mut mounts = Mounts::default();
    let mut notes = Vec::new();
    let home = paths.var("HOME").map(PathBuf::from);
    add_dir(paths.worktree, "the worktree", &mut mounts, &mut notes);
    mounts.offline = paths.sealed;
    if !paths.sealed {
        let beside = Beside {
            paths,
            declared,
            git,
            home: home.as_deref(),
        };
        beside.add(&mut mounts, &mut notes);
    }
    mounts.protected = git
        .protected
        .iter()
        .chain([paths.worktree.join(".git")].iter())
        .filter_map(|path| path.canonicalize().ok())
        .collect();
    let path_dirs = paths
        .var("PATH")
        .map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .unwrap_or_default();
    mounts.visible = [paths.repo_root.to_path_buf()]
        .into_iter()
        .chain(home)
        .chain(path_dirs)
        .filter_map(|path| path.canonicalize().ok())
        .filter(|path| path.starts_with(TMP) && path != Path::new(TMP))
        .collect();
    if let Some(hide) = paths.hide {
        mounts.masked = hide
            .masked
            .iter()
            .filter_map(|path| path.canonicalize().ok())
            .collect();
        // The worktree's git needs its repository's shared files (read-only: the writable
        // parts are bound above).
        let shown = hide.shown.iter().chain(git.common.iter());
        mounts
            .visible
            .extend(shown.filter_map(|path| path.canonicalize().ok()));
    }
    (mounts, notes)
}

/// What a step that is not sealed may write beside its worktree (the module's list).
struct Beside<'p> {
    paths: &'p StepPaths<'p>,
    declared: &'p [String],
    git: &'p GitPaths,
    home: Option<&'p Path>,
}

impl Beside<'_> {
    fn add(&self, mounts: &mut Mounts, notes: &mut Vec<String>) {
        let paths = self.paths;
        add_dir(paths.scratch, "the run's scratch directory", mounts, notes);
        for path in &self.git.writable {
            add_dir(path, "git files of the worktree", mounts, notes);
        }
        if let Some(shared) = &self.git.objects {
            match ensure_dir(paths.objects) {
                Ok(private) => {
                    mounts.env = object_env(&private, shared);
                    mounts.writable.push(private);
                }
                Err(problem) => notes.push(format!(
                    "{} (the run's object directory) cannot be used, so git cannot write objects \
                     in the sandbox: {problem}",
                    paths.objects.display()
                )),
            }
        }
        for entry in self.declared {
            match expand(entry, self.home) {
                Some(path) => add_dir(&path, "[sandbox] writable", mounts, notes),
                None => notes.push(format!(
                    "[sandbox] writable entry `{entry}` is ignored: HOME is not set"
                )),
            }
        }
        for state in &paths.agent_state {
            match state {
                Writable::Dir(path) => add_dir(path, "the agent CLI's own state", mounts, notes),
                Writable::File(path) => match path.canonicalize() {
                    Ok(real) if real.is_file() => mounts.writable.push(real),
                    _ => notes.push(format!(
                        "{} (the agent CLI's own state) does not exist, so the agent cannot \
                         create it in the sandbox",
                        path.display()
                    )),
                },
            }
        }
    }
}

/// The variables that send a confined git's new objects to `private` and let it read the
/// `shared` store.
fn object_env(private: &Path, shared: &Path) -> Vec<(String, String)> {
    vec![
        (
            "GIT_OBJECT_DIRECTORY".to_string(),
            private.display().to_string(),
        ),
        (
            "GIT_ALTERNATE_OBJECT_DIRECTORIES".to_string(),
            shared.display().to_string(),
        ),
    ]
}

/// Makes `path` (created when missing) writable, or notes why it stays read-only.
fn add_dir(path: &Path, why: &str, mounts: &mut Mounts, notes: &mut Vec<String>) {
    match ensure_dir(path) {
        Ok(real) => mounts.writable.push(real),
        Err(problem) => notes.push(format!(
            "{} ({why}) stays read-only in the sandbox: {problem}",
            path.display()
        )),
    }
}

/// Why a directory to mount writable cannot be used (the note that says so names it).
#[derive(Debug, thiserror::Error)]
enum DirProblem {
    #[error("cannot create it: {0}")]
    Create(#[source] std::io::Error),
    #[error("{0}")]
    Resolve(#[source] std::io::Error),
    #[error("it is not a directory")]
    NotADirectory,
}

/// `path` as a canonical directory, created when missing.
fn ensure_dir(path: &Path) -> Result<PathBuf, DirProblem> {
    if !path.exists() {
        fs::create_dir_all(path).map_err(DirProblem::Create)?;
    }
    let real = path.canonicalize().map_err(DirProblem::Resolve)?;
    if real.is_dir() {
        Ok(real)
    } else {
        Err(DirProblem::NotADirectory)
    }
}

/// The git paths of a worktree: writable ones and read-only ones inside them.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct GitPaths {
    writable: Vec<PathBuf>,
    protected: Vec<PathBuf>,
    /// The shared object store, read-only.
    objects: Option<PathBuf>,
    /// The repository's shared git directory.
    common: Option<PathBuf>,
}

impl GitPaths {
    /// Nothing found: not a linked worktree.
    pub(super) fn is_empty(&self) -> bool {
        *self == GitPaths::default()
    }
}

/// What the worktree's git commands must write, and what inside it stays read-only. Nothing
/// when `worktree` is not a linked worktree (its administration directory would be the whole
/// shared git directory).
pub(super) fn git_paths(worktree: &Path, branch: &str) -> GitPaths {
    let Ok(repo) = git2::Repository::open(worktree) else {
        return GitPaths::default();
    };
    let admin = repo.path().to_path_buf();
    let common = repo.commondir().to_path_buf();
    if !repo.is_worktree() || admin == common {
        return GitPaths::default();
    }
    // The ref lock (`<branch>.lock`) is created beside the ref, so its directory is writable.
    let branch_dir = Path::new(branch)
        .parent()
        .map_or_else(PathBuf::new, Path::to_path_buf);
    GitPaths {
        writable: vec![
            admin.clone(),
            common.join("refs/heads").join(&branch_dir),
            common.join("logs/refs/heads").join(&branch_dir),
        ],
        protected: vec![admin.join("commondir"), admin.join("gitdir")],
        objects: common.join("objects").canonicalize().ok(),
        common: Some(common),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    use testkit::git;

    #[test]
    fn home_entries_are_expanded_and_others_kept() {
        let home = Path::new("/home/u");
        assert_eq!(expand("~", Some(home)), Some(PathBuf::from("/home/u")));
        assert_eq!(
            expand("~/.cache", Some(home)),
            Some(PathBuf::from("/home/u/.cache"))
        );
        assert_eq!(expand("~/.cache", None), None);
        assert_eq!(expand("/opt/x", None), Some(PathBuf::from("/opt/x")));
    }

    #[test]
    fn a_linked_worktree_may_write_its_own_git_files_and_nothing_shared() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        fs::create_dir_all(&repo).unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["commit", "-q", "--allow-empty", "-m", "init"]);
        let worktree = repo.join(".autobuild/worktrees/TASK-1");
        git(
            &repo,
            &["worktree", "add", "-q", "-b", "autobuild/TASK-1"]
                .iter()
                .copied()
                .chain([worktree.to_str().unwrap()])
                .collect::<Vec<_>>(),
        );
        let home = dir.path().join("home");
        let scratch = repo.join(".autobuild/runs/TASK-1/scratch");
        let objects = repo.join(".autobuild/runs/TASK-1/objects");
        let env = vec![("HOME".to_string(), home.display().to_string())];
        let paths = StepPaths {
            worktree: &worktree,
            branch: "autobuild/TASK-1",
            repo_root: &repo,
            scratch: &scratch,
            objects: &objects,
            agent_state: vec![
                Writable::Dir(home.join(".agent")),
                Writable::File(home.join(".agent.json")),
            ],
            env: &env,
            hide: None,
            sealed: false,
        };
        let git = git_paths(paths.worktree, paths.branch);
        let (mounts, notes) = resolve(&paths, &["~/.cache".to_string()], &git);
        // Sealed (a hidden check): only its own tree, and no network.
        let sealed = resolve(
            &StepPaths {
                sealed: true,
                ..paths.clone()
            },
            &["~/.cache".to_string()],
            &git,
        )
        .0;
        assert_eq!(sealed.writable, [worktree.canonicalize().unwrap()]);
        assert!(sealed.offline && !mounts.offline);
        assert!(sealed.env.is_empty());
        let real = |p: &Path| p.canonicalize().unwrap();
        let git_dir = real(&repo.join(".git"));
        let expected = vec![
            real(&worktree),
            real(&scratch),
            git_dir.join("worktrees/TASK-1"),
            git_dir.join("refs/heads/autobuild"),
            git_dir.join("logs/refs/heads/autobuild"),
            real(&objects),
            real(&home.join(".cache")),
            real(&home.join(".agent")),
        ];
        assert_eq!(mounts.writable, expected);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains(".agent.json"), "{notes:?}");
        assert!(mounts.protected.contains(&real(&worktree).join(".git")));
        assert!(mounts
            .protected
            .contains(&git_dir.join("worktrees/TASK-1/commondir")));
        assert!(!mounts.writable.contains(&git_dir));
        // The shared object store is read-only; git writes to the run's own directory.
        assert!(!mounts.writable.contains(&git_dir.join("objects")));
        assert_eq!(
            mounts.env,
            vec![
                (
                    "GIT_OBJECT_DIRECTORY".to_string(),
                    real(&objects).display().to_string()
                ),
                (
                    "GIT_ALTERNATE_OBJECT_DIRECTORIES".to_string(),
                    git_dir.join("objects").display().to_string()
                ),
            ]
        );
        if git_dir.starts_with(TMP) {
            assert!(mounts.visible.contains(&real(&repo)));
            assert!(mounts.visible.contains(&real(&home)));
        }
    }

    #[test]
    fn the_main_checkout_gets_no_git_files() {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        assert_eq!(git_paths(dir.path(), "main"), GitPaths::default());
        assert_eq!(
            git_paths(&dir.path().join("missing"), "main"),
            GitPaths::default()
        );
    }
}
