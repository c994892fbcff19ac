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

use crate::engine::paths::{run_owner, RunPaths};
use crate::engine::state::RunState;
use base::diagnostic::Diagnostic;
use base::error::Error;
use model::project::Layout;

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

/// A kept run record made in another checkout of this repository — a CI job's workspace,
/// which moves between jobs (`autobuild task <ID> --resume --moved-checkout`): when it names
/// this run's own task and branch and the worktree `<other root>/.autobuild/worktrees/<ID>`
/// (an absolute path of plain names), it is re-rooted here — its worktree (and its task file,
/// when under that root) become this checkout's — and the other root is returned. Anything
/// else is left as it is, for [`ensure_owned`] to refuse: an edited record is never taken
/// over, and the re-rooted one names only what this run owns here.
pub fn take_over(state: &mut RunState, layout: &Layout, run_id: &str) -> Option<PathBuf> {
    let owned = Owned::of(layout, run_id);
    let named = Named::of(state);
    if named.task_id != owned.task_id || named.branch != owned.branch {
        return None;
    }
    let own = owned.worktree.strip_prefix(layout.root()).ok()?;
    let recorded = named.worktree;
    let plain = recorded.components().all(|c| {
        matches!(
            c,
            std::path::Component::RootDir | std::path::Component::Normal(_)
        )
    });
    if !recorded.is_absolute() || !plain || recorded == owned.worktree {
        return None;
    }
    let other = recorded_root(recorded, own)?;
    if let Ok(relative) = state.task_path.strip_prefix(&other) {
        state.task_path = layout.root().join(relative);
    }
    state.worktree = owned.worktree;
    Some(other)
}

/// `root` when `recorded` is `root/own`, and `root` is not empty.
fn recorded_root(recorded: &Path, own: &Path) -> Option<PathBuf> {
    if !recorded.ends_with(own) {
        return None;
    }
    let depth = own.components().count();
    let mut root = recorded.to_path_buf();
    for _ in 0..depth {
        root.pop();
    }
    (root.parent().is_some()).then_some(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_record_naming_its_own_places_under_another_root_is_taken_over() {
        let layout = Layout::new("/work/b");
        // (task, branch, worktree, taken over from)
        let cases: [(&str, &str, &str, Option<&str>); 9] = [
            (
                "T-1",
                "autobuild/T-1",
                "/work/a/.autobuild/worktrees/T-1",
                Some("/work/a"),
            ),
            (
                "T-1",
                "autobuild/T-1",
                "/a/.autobuild/worktrees/T-1",
                Some("/a"),
            ),
            // Already this checkout's: nothing to take over.
            (
                "T-1",
                "autobuild/T-1",
                "/work/b/.autobuild/worktrees/T-1",
                None,
            ),
            // Edited records stay as they are (and are refused).
            ("T-1", "main", "/work/a/.autobuild/worktrees/T-1", None),
            (
                "T-2",
                "autobuild/T-1",
                "/work/a/.autobuild/worktrees/T-1",
                None,
            ),
            (
                "T-1",
                "autobuild/T-1",
                "/work/a/.autobuild/worktrees/T-2",
                None,
            ),
            ("T-1", "autobuild/T-1", "/home/me/work", None),
            (
                "T-1",
                "autobuild/T-1",
                "/work/a/../.autobuild/worktrees/T-1",
                None,
            ),
            ("T-1", "autobuild/T-1", ".autobuild/worktrees/T-1", None),
        ];
        for (task, branch, worktree, expected) in cases {
            let mut state = record(task, branch, worktree);
            let before = state.clone();
            let taken = take_over(&mut state, &layout, "T-1");
            assert_eq!(taken.as_deref(), expected.map(Path::new), "{worktree}");
            match taken {
                Some(_) => {
                    assert_eq!(
                        state.worktree,
                        Path::new("/work/b/.autobuild/worktrees/T-1")
                    );
                    assert!(
                        foreign_fields(Named::of(&state), &Owned::of(&layout, "T-1")).is_empty()
                    );
                }
                None => assert_eq!(state, before, "{worktree}"),
            }
        }
    }

    #[test]
    fn a_taken_over_task_file_under_the_other_root_moves_with_it() {
        let layout = Layout::new("/work/b");
        let mut state = record("T-1", "autobuild/T-1", "/work/a/.autobuild/worktrees/T-1");
        state.task_path = "/work/a/.autobuild/tasks/T-1.md".into();

        take_over(&mut state, &layout, "T-1").unwrap();

        assert_eq!(
            state.task_path,
            Path::new("/work/b/.autobuild/tasks/T-1.md")
        );
    }

    fn record(task: &str, branch: &str, worktree: &str) -> RunState {
        let text = serde_json::json!({
            "version": 1, "task_id": task, "task_path": "t.md", "title": task,
            "workflow": "w", "workflow_hash": "h", "status": "blocked",
            "started_at": "", "updated_at": "", "base_branch": "main", "branch": branch,
            "worktree": worktree, "settings": {
                "workflow_arg": null, "auto_merge": false, "no_merge": false,
                "overrides": [], "max_turns": null, "agent": null},
            "max_turns": 1, "completed": {}, "loops": {}, "last_checkpoint": null,
            "cost_usd": 0.0, "tokens_in": 0, "tokens_out": 0, "outcome": null,
        });
        serde_json::from_value(text).unwrap()
    }

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
