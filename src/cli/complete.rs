//! Value completions: besides the flags the completion scripts know from the clap definitions,
//! the shell is offered the values that depend on the project — task ids, workflow names — and
//! the schema kinds. They come from clap_complete's dynamic engine
//! ([`clap_complete::CompleteEnv`]): the script `autobuild completions <SHELL>` prints calls
//! `autobuild` back with `COMPLETE=<shell>` set, and [`main`](super::main) answers before
//! anything else runs. Each candidate list is read from where the fact lives (the task scan, the
//! workflow catalog, `SchemaKind::ALL`); nothing is written, and a project that cannot be read
//! offers nothing rather than an error.

use std::path::PathBuf;

use base::Keyword;
use clap_complete::engine::CompletionCandidate;

use crate::schema::SchemaKind;

/// The repository the completion is for: `-C`'s environment form, else the current directory.
fn root() -> Option<PathBuf> {
    let start = match std::env::var_os("AUTOBUILD_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => std::env::current_dir().ok()?,
    };
    Some(crate::project::find_repo_root(&start).unwrap_or(start))
}

/// Task ids of the project, with each task's title.
pub fn task_ids() -> Vec<CompletionCandidate> {
    let Some(root) = root() else {
        return Vec::new();
    };
    let Ok(scan) = crate::task::list_tasks(&root) else {
        return Vec::new();
    };
    let mut tasks: Vec<_> = scan.tasks.iter().map(|t| (&t.id, &t.title)).collect();
    tasks.sort();
    tasks.dedup_by(|a, b| a.0 == b.0);
    tasks
        .into_iter()
        .map(|(id, title)| CompletionCandidate::new(id).help(Some(title.clone().into())))
        .collect()
}

/// Workflow names: the built-ins, the user's and the project's.
pub fn workflow_names() -> Vec<CompletionCandidate> {
    let root = root();
    let Ok(catalog) = crate::workflow::catalog::Catalog::discover(root.as_deref()) else {
        return Vec::new();
    };
    catalog
        .names()
        .into_iter()
        .map(CompletionCandidate::new)
        .collect()
}

/// The kinds `autobuild schema` prints.
pub fn schema_kinds() -> Vec<CompletionCandidate> {
    <SchemaKind as strum::IntoEnumIterator>::iter()
        .map(|kind| CompletionCandidate::new(kind.as_str()))
        .collect()
}
