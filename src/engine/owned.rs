//! Run records are untrusted input. `state.json` names the branch and worktree a run works
//! on, and commands that continue or end a run delete them (`discard`, `complete`'s clean-up)
//! or write in them (`resume`, `approve`, recovery). But the file sits in the repository,
//! where an unconfined agent, a bad merge or a hand edit can change it: a record naming the
//! user's own branch and linked worktree must not make `discard --yes` delete them.
//!
//! So before acting, every such command checks that the record names only what the runner
//! itself creates for that run id — branch `autobuild/<ID>`, worktree
//! `.autobuild/worktrees/<ID>`, the record under `.autobuild/runs/<run id>` — and that neither
//! directory is a link to somewhere else. Anything else is a problem in the record (exit 2),
//! with nothing touched.

use std::path::{Path, PathBuf};

use crate::diagnostic::Diagnostic;
use crate::engine::paths::{run_owner, RunPaths};
use crate::engine::state::RunState;
use crate::error::Error;
use crate::project::Layout;

/// What the runner itself creates for a run of `run_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owned {
    pub task_id: String,
    pub branch: String,
    pub worktree: PathBuf,
}

impl Owned {
    pub fn of(layout: &Layout, run_id: &str) -> Owned {
        let task_id = run_owner(run_id).to_string();
        Owned {
            branch: format!("autobuild/{task_id}"),
            worktree: layout.worktree(&task_id),
            task_id,
        }
    }
}

/// What a run record names: its task, branch and worktree.
#[derive(Debug, Clone, Copy)]
pub struct Named<'a> {
    pub task_id: &'a str,
    pub branch: &'a str,
    pub worktree: &'a Path,
}

impl<'a> Named<'a> {
    pub fn of(state: &'a RunState) -> Named<'a> {
        Named {
            task_id: &state.task_id,
            branch: &state.branch,
            worktree: &state.worktree,
        }
    }
}

/// What `named` names other than `owned`, each as a sentence; empty when the record is the
/// runner's own. Paths are compared as written, and, where both exist, by what they resolve
/// to (a repository reached through a different path).
pub fn foreign_fields(named: Named<'_>, owned: &Owned) -> Vec<String> {
    let mut foreign = Vec::new();
    if named.task_id != owned.task_id {
        foreign.push(format!(
            "it is of task `{}`, not {}",
            named.task_id, owned.task_id
        ));
    }
    if named.branch != owned.branch {
        foreign.push(format!(
            "it names branch `{}`, not `{}`",
            named.branch, owned.branch
        ));
    }
    if !same_place(named.worktree, &owned.worktree) {
        foreign.push(format!(
            "it names worktree {}, not {}",
            named.worktree.display(),
            owned.worktree.display()
        ));
    }
    foreign
}

fn same_place(recorded: &Path, expected: &Path) -> bool {
    if recorded == expected {
        return true;
    }
    match (recorded.canonicalize(), expected.canonicalize()) {
        (Ok(a), Ok(b)) => a == b && !is_link(expected),
        _ => false,
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|meta| meta.file_type().is_symlink())
}

/// Refuses (exit 2, nothing touched) a run record that names anything the runner did not
/// create for `run_id`, or whose run directory or worktree is a link.
pub fn ensure_owned(
    state: &RunState,
    paths: &RunPaths,
    layout: &Layout,
    run_id: &str,
) -> Result<(), Error> {
    let owned = Owned::of(layout, run_id);
    let mut foreign = foreign_fields(Named::of(state), &owned);
    for (what, dir) in [("run directory", &paths.dir), ("worktree", &owned.worktree)] {
        if is_link(dir) {
            foreign.push(format!("its {what} {} is a symbolic link", dir.display()));
        }
    }
    if foreign.is_empty() {
        return Ok(());
    }
    Err(Error::from(
        Diagnostic::new(
            paths.state(),
            format!(
                "autobuild does not act on this run record: {}",
                foreign.join("; ")
            ),
        )
        .with_help(format!(
            "a run of {} only ever uses branch `{}` and worktree {}; the record was changed outside autobuild — look at it, or start over with `autobuild task {} --fresh`",
            owned.task_id,
            owned.branch,
            owned.worktree.display(),
            owned.task_id
        )),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_runners_own_branch_and_worktree_are_acted_on() {
        let layout = Layout::new("/repo");
        let wt = "/repo/.autobuild/worktrees/T-1";
        let cases = [
            ("T-1", "T-1", "autobuild/T-1", wt, 0),
            ("T-1@2", "T-1", "autobuild/T-1", wt, 0),
            ("T-1", "T-1", "main", wt, 1),
            ("T-1", "T-1", "autobuild/T-1", "/home/me/work", 1),
            ("T-1", "T-1", "feature/mine", "/repo/../elsewhere", 2),
            (
                "T-1",
                "T-2",
                "autobuild/T-2",
                "/repo/.autobuild/worktrees/T-2",
                3,
            ),
        ];
        for (run_id, task_id, branch, worktree, expected) in cases {
            let named = Named {
                task_id,
                branch,
                worktree: Path::new(worktree),
            };
            let found = foreign_fields(named, &Owned::of(&layout, run_id));
            assert_eq!(found.len(), expected, "{run_id}: {found:?}");
        }
    }
}
