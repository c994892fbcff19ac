//! Which copy of a task counts when one id is declared by files in different state folders.
//!
//! GuardKit moves a task file from folder to folder as it progresses (`backlog/` →
//! `in_progress/` → `in_review/` → `completed/`), and its own workflow regularly leaves the old
//! copy behind. Refusing such an id would make a large share of real GuardKit tasks unusable, and
//! picking by search order would run a stale copy. The copy in the most advanced *active* state
//! is the one being worked on, so it wins: `.autobuild/tasks/` (autobuild's own folder, where a
//! user puts a copy meant for autobuild) > `in_progress` > `in_review` > `design_approved` >
//! `backlog` > `blocked` > any other folder > `completed` > `archived` > `obsolete`. The user is told which
//! copy was taken and which were not. Two copies of equal rank (the same state, perhaps under
//! `tasks/` and `.guardkit/tasks/`) stay an error: nothing says which one is meant.

use std::path::{Component, Path};

/// GuardKit's task states, most current first, then the finished ones.
const ORDER: [&str; 5] = [
    "in_progress",
    "in_review",
    "design_approved",
    "backlog",
    "blocked",
];
/// GuardKit's finished states: a task there is done, and is never run again.
pub(crate) const FINISHED: [&str; 3] = ["completed", "archived", "obsolete"];

/// The finished state folder (`completed`, `archived`, `obsolete`) a task file sits in, if any.
pub fn finished_state(root: &Path, path: &Path) -> Option<String> {
    let (_, state) = rank(root, path);
    FINISHED.contains(&state.as_str()).then_some(state)
}

/// The rank of a task file (lower wins) and the name of its state folder.
pub(crate) fn rank(root: &Path, path: &Path) -> (usize, String) {
    let relative = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(part) => Some(part.to_string_lossy().into_owned()),
            _ => None,
        })
        .collect();
    if parts.starts_with(&[".autobuild".to_string(), "tasks".to_string()]) {
        return (0, ".autobuild/tasks".to_string());
    }
    let state = match parts.iter().position(|p| p == "tasks") {
        Some(i) => parts.get(i + 1).cloned().unwrap_or_default(),
        None => String::new(),
    };
    let rank = match (
        ORDER.iter().position(|s| *s == state),
        FINISHED.iter().position(|s| *s == state),
    ) {
        (Some(i), _) => 1 + i,
        (None, Some(i)) => 2 + ORDER.len() + i,
        (None, None) => 1 + ORDER.len(),
    };
    (rank, state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn active_states_beat_waiting_and_finished_ones() {
        let root = Path::new("/repo");
        let rank_of = |p: &str| rank(root, &root.join(p)).0;
        let order = [
            ".autobuild/tasks/T.md",
            "tasks/in_progress/T.md",
            "tasks/in_review/x/T.md",
            "tasks/design_approved/T.md",
            ".guardkit/tasks/backlog/T.md",
            "tasks/blocked/T.md",
            "tasks/other/T.md",
            "tasks/completed/T.md",
            "tasks/archived/T.md",
        ];
        for pair in order.windows(2) {
            assert!(rank_of(pair[0]) < rank_of(pair[1]), "{pair:?}");
        }
        assert_eq!(
            rank_of("tasks/backlog/T.md"),
            rank_of(".guardkit/tasks/backlog/sub/T.md")
        );
        assert_eq!(
            rank(root, &root.join("tasks/in_review/T.md")).1,
            "in_review"
        );
    }
}
