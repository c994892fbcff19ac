//! Where a GuardKit task file goes when its task lands (docs/guardkit.md, "Keeping a GuardKit
//! board true"): from its state folder (`tasks/<state>/…`, `.guardkit/tasks/<state>/…`, or
//! directly `.guardkit/tasks/`) to the `completed/` folder of the same board, keeping any
//! sub-folder, with `status: completed` in its front matter. Pure functions over paths and
//! text; the landing (`engine::exec::merge`) applies them to the commit it lands.

use std::path::{Component, Path, PathBuf};

use super::lookup::GUARDKIT_TASK_DIRS;

/// GuardKit's folder for finished tasks.
pub const COMPLETED: &str = "completed";

/// Where the task file at `path` (relative to the repository root) moves when its task
/// lands; `None` when it is not in one of GuardKit's active state folders (autobuild's own
/// `.autobuild/tasks/`, a path elsewhere, or already `completed/`/`archived/`).
pub fn completed_path(path: &Path) -> Option<PathBuf> {
    let parts: Vec<&str> = path
        .components()
        .map(|c| match c {
            Component::Normal(part) => part.to_str(),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let board_len = match parts.as_slice() {
        ["tasks", ..] => 1,
        [".guardkit", "tasks", ..] => 2,
        _ => return None,
    };
    let rest = &parts[board_len..];
    let below = match rest {
        // A file directly in `.guardkit/tasks/` (the seeds' layout).
        [_file] if board_len == 2 => rest,
        [state, below @ ..] if GUARDKIT_TASK_DIRS.contains(state) && !below.is_empty() => below,
        _ => return None,
    };
    let mut to: PathBuf = parts[..board_len].iter().collect();
    to.push(COMPLETED);
    to.extend(below);
    Some(to)
}

/// `text` with `status: completed` in its front matter: the `status:` line replaced (every one,
/// as a key given twice is read with the last value), or one added before the closing `---`;
/// `text` unchanged when it has no front matter.
pub fn marked_completed(text: &str) -> String {
    let Some(body) = text.strip_prefix("---\n") else {
        return text.to_string();
    };
    let Some(end) = body.find("\n---") else {
        return text.to_string();
    };
    let (front, rest) = body.split_at(end + 1);
    let mut found = false;
    let mut lines: Vec<String> = front
        .lines()
        .map(|line| {
            if line.starts_with("status:") {
                found = true;
                "status: completed".to_string()
            } else {
                line.to_string()
            }
        })
        .collect();
    if !found {
        lines.push("status: completed".to_string());
    }
    format!("---\n{}\n{rest}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_in_an_active_state_folder_moves_to_the_completed_folder_of_its_board() {
        let cases = [
            ("tasks/backlog/TASK-1.md", Some("tasks/completed/TASK-1.md")),
            (
                "tasks/in_review/auth/TASK-2.md",
                Some("tasks/completed/auth/TASK-2.md"),
            ),
            (
                ".guardkit/tasks/in_progress/T.md",
                Some(".guardkit/tasks/completed/T.md"),
            ),
            (
                ".guardkit/tasks/T.md",
                Some(".guardkit/tasks/completed/T.md"),
            ),
            ("tasks/blocked/T.md", Some("tasks/completed/T.md")),
            ("tasks/completed/T.md", None),
            ("tasks/archived/T.md", None),
            ("tasks/T.md", None),
            ("tasks/other/T.md", None),
            (".autobuild/tasks/T.md", None),
            ("docs/tasks/backlog/T.md", None),
            ("/abs/tasks/backlog/T.md", None),
            ("tasks/backlog/../../x.md", None),
        ];
        for (from, to) in cases {
            assert_eq!(
                completed_path(Path::new(from)),
                to.map(PathBuf::from),
                "{from}"
            );
        }
    }

    #[test]
    fn the_front_matter_says_completed() {
        let cases = [
            (
                "---\nid: T\nstatus: in_review\n---\n# T\nstatus: not this\n",
                "---\nid: T\nstatus: completed\n---\n# T\nstatus: not this\n",
            ),
            (
                "---\nid: T\nstatus: backlog\nstatus: in_review\n---\n# T\n",
                "---\nid: T\nstatus: completed\nstatus: completed\n---\n# T\n",
            ),
            (
                "---\nid: T\n---\n# T\n",
                "---\nid: T\nstatus: completed\n---\n# T\n",
            ),
            ("# T\n\nno front matter\n", "# T\n\nno front matter\n"),
        ];
        for (text, expected) in cases {
            assert_eq!(marked_completed(text), expected, "{text}");
        }
    }
}
