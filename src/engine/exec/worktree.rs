//! The `worktree` step: the task branch `autobuild/<ID>` and its worktree under
//! `.autobuild/worktrees/<ID>`. Preflight already refused an existing branch unless the run
//! resumes, so here an existing branch always means "continue on it".

use serde_json::json;

use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use crate::error::Error;

pub fn execute(cx: &mut RunCx) -> Result<StepDone, Error> {
    let plan = cx.plan;
    let path = plan.worktree.clone();
    let branch = plan.branch.clone();
    let base = plan.base_branch.clone();
    plan.layout.ensure_gitignore()?;
    let resumed = cx.repo.branch_exists(&branch);
    let head = if resumed {
        let opened = if path.is_dir() {
            cx.repo.open_worktree(&path, &branch)
        } else {
            cx.repo.attach_worktree(&branch, &path)
        }?;
        opened.head
    } else {
        cx.repo.create_worktree(&branch, &base, &path)?.base_commit
    };
    cx.state.worktree = path.clone();
    cx.state.last_checkpoint = Some(head);
    let summary = if resumed {
        format!("continuing on {branch} in {}", path.display())
    } else {
        format!("{branch} from {base} in {}", path.display())
    };
    Ok(StepDone::ok(
        summary,
        json!({
            "path": path.display().to_string(),
            "branch": branch,
            "base": base,
            "resumed": resumed,
        }),
    ))
}
