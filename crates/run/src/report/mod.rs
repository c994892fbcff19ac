//! `report.html`: the run report a person opens in a browser, beside `report.md` in the run
//! directory — one self-contained file (inline CSS, no script, nothing fetched from the
//! network) with the run's timeline, each turn's changes, checks, verdicts and costs; for a
//! feature, its waves with a link to each task's report.
//!
//! Loading ([`records`]) reads the run directory and git; rendering ([`html`], [`feature`]) is
//! a pure function of what was loaded. The pages are minijinja templates with HTML
//! auto-escaping, so nothing an agent, a diff or a log says can become markup.

pub mod answers;
pub mod feature;
pub mod html;
pub mod outcome;
pub mod records;
pub mod timeline;

use std::path::PathBuf;

use base::Keyword;
use minijinja::Environment;
use serde::Serialize;

use crate::engine::paths::RunPaths;
use crate::engine::state::{RunState, RunStatus};
use crate::engine::Outcome;
use base::error::Error;
use process::Redactor;

/// The file name, beside `report.md`.
pub const REPORT_HTML: &str = "report.html";

/// Where a run's (or a feature's) HTML report is.
pub fn html_path(paths: &RunPaths) -> PathBuf {
    paths.dir.join(REPORT_HTML)
}

/// Writes `report.html` for the run in `paths`, as `state` says it stands, with `outcome` as
/// its one-sentence outcome and `ended` its outcome once it has one; returns its path.
pub fn write_run(
    paths: &RunPaths,
    state: &RunState,
    outcome: &str,
    ended: Option<&Outcome>,
) -> Result<PathBuf, Error> {
    write_records(paths, &load_run(paths, state, outcome, ended))
}

/// The records of the run in `paths` as `state` says it stands, with `outcome` as its
/// one-sentence outcome on the page and `ended` its outcome once it has one.
pub fn load_run(
    paths: &RunPaths,
    state: &RunState,
    outcome: &str,
    ended: Option<&Outcome>,
) -> records::RunRecords {
    let outcome = if state.status == RunStatus::Discarded {
        discarded(outcome)
    } else {
        outcome.to_string()
    };
    records::RunRecords::load(paths, state.clone(), outcome, ended)
}

/// Writes `report.html` of the run `records` loaded; returns its path.
pub fn write_records(paths: &RunPaths, records: &records::RunRecords) -> Result<PathBuf, Error> {
    let page = html::render_run(records)?;
    // The net diff is stored once computed: later reports read it, git or no git.
    records::store_net_diff(paths, records)
        .map_err(|e| Error::io("cannot write", paths.net_diff(), e))?;
    write(paths, &page)
}

/// Writes a rendered `page` as the `report.html` of the run (or feature) in `paths`; returns
/// its path. The values of secret-named variables (a diff of a file an agent wrote one into)
/// are redacted, escaped or not.
pub fn write(paths: &RunPaths, page: &str) -> Result<PathBuf, Error> {
    let path = html_path(paths);
    let page = Redactor::new(&[]).for_html().apply(page);
    crate::engine::state::write_atomic(&path, page.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    Ok(path)
}

/// The outcome sentence of a run as its state records it, or where it stands when it has not
/// ended.
pub fn recorded_outcome(state: &RunState, held: bool) -> String {
    match (&state.outcome, state.status) {
        (_, RunStatus::Running) if held => "running".to_string(),
        (_, RunStatus::Running) => "interrupted; `autobuild resume` continues it".to_string(),
        (Some(outcome), _) => outcome.to_string(),
        (None, status) => status.as_str().to_string(),
    }
}

fn discarded(outcome: &str) -> String {
    format!("discarded ({outcome}): the branch and the worktree are removed; the records are kept")
}

/// Renders one of the report templates: a name ending in `.html` turns on minijinja's HTML
/// escaping of every value; a `.md` one is text with every block tag on a line of its own.
fn render<T: Serialize>(name: &str, view: &T) -> Result<String, Error> {
    let mut env = Environment::new();
    env.add_filter("duration", html::duration);
    env.add_filter("quoted", html::quoted);
    env.add_filter("trim_end", |text: String| text.trim_end().to_string());
    let markdown = name.ends_with(".md");
    env.set_trim_blocks(markdown);
    env.set_lstrip_blocks(markdown);
    env.set_keep_trailing_newline(markdown);
    let templates = [
        ("style.css", include_str!("style.css")),
        ("macros.html", include_str!("macros.html")),
        ("base.html", include_str!("base.html")),
        ("run.html", include_str!("run.html")),
        ("feature.html", include_str!("feature.html")),
        ("run.md", include_str!("run.md")),
        ("feature.md", include_str!("feature.md")),
    ];
    for (template, source) in templates {
        env.add_template(template, source)
            .map_err(|e| template_error(template, &e))?;
    }
    env.get_template(name)
        .and_then(|t| t.render(view))
        .map_err(|e| template_error(name, &e))
}

fn template_error(name: &str, error: &minijinja::Error) -> Error {
    let kind = if name.ends_with(".md") {
        "Markdown"
    } else {
        "HTML"
    };
    Error::runtime(format!("cannot render the {kind} report ({name}): {error}"))
}
