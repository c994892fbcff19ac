//! The user's repository as autobuild sees it: the checkout autobuild is started in (the main
//! checkout or one of the user's linked worktrees, e.g. a Conductor workspace; never one of the
//! runner's own task worktrees, which stand for the checkout they belong to), its branches,
//! and the identity autobuild commits with.

use std::fmt;
use std::path::{Component, Path, PathBuf};

use git2::{BranchType, Commit, ErrorCode, Oid, Repository, Signature};

use super::error::{Context, GitError};

/// Used when the repository has no `user.name` / `user.email`: autobuild must never fail a run
/// because the user has no git identity configured.
const FALLBACK_NAME: &str = "autobuild";
const FALLBACK_EMAIL: &str = "autobuild@localhost";

/// The user's checkout of a non-bare repository (see [`Repo::discover`]).
pub struct Repo {
    pub(crate) repo: Repository,
    root: PathBuf,
    /// A second handle for history walks only ([`Repo::merge_base`]), opened when first
    /// needed: libgit2 keeps a commit read for a walk in its object cache only while no parsed
    /// copy of it is cached, and the main handle parses the commits it lands, so every walk
    /// over the feature branch's landings read each of them from disk again.
    walker: std::cell::OnceCell<Repository>,
    /// The worktrees' `HEAD` records while a landing holds them read
    /// ([`Repo::heads_read_once`]).
    pub(crate) heads: std::rc::Rc<std::cell::RefCell<super::worktree::HeadsOnce>>,
    /// The paths that differ between the last two trees a landing compared, by their ids
    /// ([`Repo::touched_paths`]): a landing asks it before and after its ref moves and for
    /// its record, and trees are named by their content, so the answer never goes stale.
    pub(crate) touched: std::cell::RefCell<Option<(git2::Oid, git2::Oid, Vec<String>)>>,
}

impl fmt::Debug for Repo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Repo").field("root", &self.root).finish()
    }
}

impl Repo {
    /// Finds the checkout containing `start`: the main checkout, or the user's linked worktree
    /// when `start` is inside one (its `HEAD` is the branch a run starts from and lands on).
    /// Inside one of the runner's own worktrees (`<checkout>/.autobuild/worktrees/<ID>`) it is
    /// the checkout that worktree belongs to; a worktree of another repository there (a run's
    /// task repository) stands for that repository's main checkout.
    pub fn discover(start: &Path) -> Result<Repo, GitError> {
        let found = Repository::discover(start).map_err(|_| GitError::NotARepository {
            path: start.to_path_buf(),
        })?;
        let repo = if !found.is_worktree() {
            found
        } else if let Some(owner) = found.workdir().and_then(runner_worktree_owner) {
            match Repository::discover(owner) {
                Ok(owner) if same_path(owner.commondir(), found.commondir()) => owner,
                _ => {
                    let common = found.commondir().to_path_buf();
                    Repository::open(&common).context("open the main repository", &common)?
                }
            }
        } else {
            found
        };
        let root = repo
            .workdir()
            .map(normalize)
            .ok_or_else(|| GitError::BareRepository {
                path: repo.path().to_path_buf(),
            })?;
        Ok(Repo {
            repo,
            root,
            walker: std::cell::OnceCell::new(),
            heads: Default::default(),
            touched: Default::default(),
        })
    }

    /// Where the histories of `a` and `b` meet (`None` when they are unrelated). One walk
    /// serves a landing's every question: `b` is in `a` exactly when it is their merge base.
    pub(crate) fn merge_base(&self, a: Oid, b: Oid) -> Result<Option<Oid>, GitError> {
        let walker = match self.walker.get() {
            Some(walker) => walker,
            None => {
                let opened = Repository::open(self.git_dir())
                    .context("open the repository", self.git_dir())?;
                self.walker.get_or_init(|| opened)
            }
        };
        match walker.merge_base(a, b) {
            Ok(base) => Ok(Some(base)),
            Err(e) if e.code() == ErrorCode::NotFound => Ok(None),
            Err(e) => Err(e).context("find the merge base", self.root()),
        }
    }

    /// The checkout's top-level directory (the main checkout's or the user's linked worktree's).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The repository's shared git directory (`.git` of the main checkout).
    pub fn git_dir(&self) -> &Path {
        self.repo.commondir()
    }

    /// The branch checked out in the main checkout; `None` when HEAD is detached or the branch
    /// has no commit yet.
    pub fn current_branch(&self) -> Option<String> {
        let head = self.repo.head().ok()?;
        if head.is_branch() {
            head.shorthand().ok().map(str::to_string)
        } else {
            None
        }
    }

    /// The branch HEAD names when it has no commit yet (a repository before its first commit).
    pub fn unborn_branch(&self) -> Option<String> {
        if self.repo.head().is_ok() {
            return None;
        }
        let head = self.repo.find_reference("HEAD").ok()?;
        let target = head.symbolic_target().ok().flatten()?;
        Some(
            target
                .strip_prefix("refs/heads/")
                .unwrap_or(target)
                .to_string(),
        )
    }

    pub fn branch_exists(&self, name: &str) -> bool {
        self.repo.find_branch(name, BranchType::Local).is_ok()
    }

    /// The tip commit (hex) of a local branch.
    pub fn resolve_branch(&self, name: &str) -> Result<String, GitError> {
        Ok(self.branch_tip(name)?.id().to_string())
    }

    /// The first parent (hex) of `commit`; `None` for a root commit.
    pub fn parent_of(&self, commit: &str) -> Result<Option<String>, GitError> {
        let found = find_commit(&self.repo, commit, &self.root)?;
        Ok(found.parent_id(0).ok().map(|id| id.to_string()))
    }

    /// Like [`Repo::resolve_branch`], for the branch a run starts from and merges into, so a
    /// missing one is reported as the base branch.
    pub fn resolve_base(&self, name: &str) -> Result<String, GitError> {
        Ok(self.base_tip(name)?.id().to_string())
    }

    pub(crate) fn branch_tip(&self, name: &str) -> Result<Commit<'_>, GitError> {
        let branch = match self.repo.find_branch(name, BranchType::Local) {
            Ok(branch) => branch,
            Err(e) if e.code() == ErrorCode::NotFound || e.code() == ErrorCode::InvalidSpec => {
                return Err(GitError::BranchNotFound {
                    branch: name.to_string(),
                })
            }
            Err(e) => return Err(e).context(format_args!("look up branch `{name}`"), &self.root),
        };
        branch
            .get()
            .peel_to_commit()
            .context(format_args!("read the tip of branch `{name}`"), &self.root)
    }

    /// The message of the commit `name` points to.
    pub fn tip_message(&self, name: &str) -> Result<String, GitError> {
        Ok(self
            .branch_tip(name)?
            .message()
            .unwrap_or_default()
            .to_string())
    }

    pub(crate) fn base_tip(&self, name: &str) -> Result<Commit<'_>, GitError> {
        self.branch_tip(name).map_err(|e| match e {
            GitError::BranchNotFound { branch } => GitError::BaseBranchNotFound { branch },
            other => other,
        })
    }
}

/// Opens the repository whose working tree is exactly `checkout` (a linked worktree or the main
/// checkout).
pub(crate) fn open_checkout(checkout: &Path) -> Result<Repository, GitError> {
    let repo = Repository::open(checkout).map_err(|_| GitError::NotARepository {
        path: checkout.to_path_buf(),
    })?;
    if repo.workdir().is_none() {
        return Err(GitError::BareRepository {
            path: checkout.to_path_buf(),
        });
    }
    // A worktree's links to the main checkout are never its changes (see `linked`).
    super::linked::ignore_linked(&repo);
    Ok(repo)
}

/// The commit HEAD points to in `repo`.
pub(crate) fn head_of<'r>(repo: &'r Repository, path: &Path) -> Result<Commit<'r>, GitError> {
    match repo.head() {
        Ok(head) => head.peel_to_commit().context("read HEAD", path),
        Err(e) if e.code() == ErrorCode::UnbornBranch || e.code() == ErrorCode::NotFound => {
            Err(GitError::NoCommits {
                path: path.to_path_buf(),
            })
        }
        Err(e) => Err(e).context("read HEAD", path),
    }
}

/// Finds a commit by full or abbreviated hex id (or any revision git understands).
pub(crate) fn find_commit<'r>(
    repo: &'r Repository,
    commit: &str,
    path: &Path,
) -> Result<Commit<'r>, GitError> {
    let not_found = || GitError::CommitNotFound {
        commit: commit.to_string(),
        path: path.to_path_buf(),
    };
    let found = match Oid::from_str(commit) {
        Ok(id) if commit.len() == 40 => repo.find_commit(id).map_err(|_| not_found())?,
        _ => repo
            .revparse_single(commit)
            .and_then(|object| object.peel_to_commit())
            .map_err(|_| not_found())?,
    };
    Ok(found)
}

/// Who the person at this checkout is, for records of their decisions: git's `user.name` (of
/// the repository, else the global config), else `$USER`.
pub fn person(checkout: &Path) -> Option<String> {
    let configured = open_checkout(checkout)
        .ok()
        .and_then(|repo| repo.config().ok())
        .or_else(|| git2::Config::open_default().ok())
        .and_then(|config| config.get_string("user.name").ok());
    configured
        .or_else(|| std::env::var("USER").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
}

/// The repository's configured identity, else autobuild's own: a missing or unusable
/// `user.name` / `user.email` never stops a checkpoint or a merge.
pub(crate) fn signature(repo: &Repository, path: &Path) -> Result<Signature<'static>, GitError> {
    let config = repo.config().ok();
    let setting = |key: &str| {
        config
            .as_ref()
            .and_then(|config| config.get_string(key).ok())
            .map(|value| value.trim().to_string())
            .filter(|value| !value.is_empty())
    };
    let name = setting("user.name").unwrap_or_else(|| FALLBACK_NAME.to_string());
    let email = setting("user.email").unwrap_or_else(|| FALLBACK_EMAIL.to_string());
    Signature::now(&name, &email)
        .or_else(|_| Signature::now(FALLBACK_NAME, FALLBACK_EMAIL))
        .context("create the commit signature", path)
}

/// `path` without `.` components or a trailing separator, so paths from libgit2 (which end in
/// `/`) compare equal to paths built by callers.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    path.components()
        .filter(|component| !matches!(component, Component::CurDir))
        .collect()
}

/// The checkout a runner's worktree `<checkout>/.autobuild/worktrees/<ID>` belongs to, by the
/// shape of its path (`None` for any other directory).
fn runner_worktree_owner(workdir: &Path) -> Option<&Path> {
    let workdir = workdir.components().as_path();
    let worktrees = workdir.parent()?;
    let dot_autobuild = worktrees.parent()?;
    let shaped =
        worktrees.file_name()? == "worktrees" && dot_autobuild.file_name()? == ".autobuild";
    shaped.then(|| dot_autobuild.parent()).flatten()
}

/// Whether two paths name the same directory, resolving symlinks when both exist.
pub(crate) fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => normalize(a) == normalize(b),
    }
}

/// What `git status` shows by default, file by file: staged, unstaged and untracked changes
/// (untracked directories listed file by file), ignored files and submodules left out.
pub(crate) fn status_options() -> git2::StatusOptions {
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true)
        .renames_index_to_workdir(false);
    options
}

#[cfg(test)]
mod tests {
    use super::*;
    use testkit::git;

    #[test]
    fn a_runner_worktree_stands_for_the_checkout_it_belongs_to() {
        for (workdir, owner) in [
            ("/p/.autobuild/worktrees/TASK-1/", Some("/p")),
            ("/p/.autobuild/worktrees/TASK-1", Some("/p")),
            ("/ws/.autobuild/worktrees/T", Some("/ws")),
            ("/p/worktrees/TASK-1", None),
            ("/p/.autobuild/runs/TASK-1", None),
            ("/ws", None),
            ("/.autobuild/worktrees", None),
        ] {
            assert_eq!(
                runner_worktree_owner(Path::new(workdir)),
                owner.map(Path::new),
                "{workdir}"
            );
        }
    }

    #[test]
    fn a_linked_worktree_is_the_checkout_and_its_head_the_current_branch() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir_all(&root).unwrap();
        crate::init_with_commit(&root, "main", "base").unwrap();
        let ws = dir.path().join("ws");
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "conductor/ws",
                ws.to_str().unwrap(),
            ],
        );
        let runner = ws.join(".autobuild/worktrees/TASK-1");
        let runner_path = runner.to_str().unwrap();
        git(
            &root,
            &[
                "worktree",
                "add",
                "-q",
                "-b",
                "autobuild/TASK-1",
                runner_path,
            ],
        );

        for start in [&ws, &runner.join(".")] {
            let repo = Repo::discover(start).unwrap();
            assert!(same_path(repo.root(), &ws), "{start:?}: {:?}", repo.root());
            assert_eq!(repo.current_branch().as_deref(), Some("conductor/ws"));
            assert!(same_path(repo.git_dir(), &root.join(".git")));
        }
        let main = Repo::discover(&root).unwrap();
        assert_eq!(main.current_branch().as_deref(), Some("main"));
    }
}
