//! `autobuild report <ID> [--open]`: writes a run's `report.md` and `report.html` again from
//! its run directory — for a finished run, a run still in progress, an earlier run
//! (`<ID>@<N>`) or a feature — and opens the HTML page with the platform's opener if asked.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::cli::run_dir::checked_run;
use crate::engine::existing::{self, locate_run};
use crate::engine::paths::RunPaths;
use crate::error::Error;
use crate::project::Layout;
use crate::ui;

/// `autobuild report <ID> [--open]`.
pub fn run(id: &str, open: bool) -> Result<u8, Error> {
    let root = checked_run(id)?;
    let runs_dir = Layout::new(&root).runs();
    let html = if crate::feature::run::is_feature_run(&root, id) {
        let written = crate::feature::run::report(&root, id)?;
        ui::line(&format!("report: {}", written.display()));
        crate::report::html_path(&RunPaths::new(&runs_dir, id))
    } else {
        let run = locate_run(&root, id)?;
        let held = !id.contains('@')
            && crate::engine::lock::holder(&runs_dir, &run.state.task_id).is_some();
        let written = existing::write_reports(&run.paths, &run.state, held)?;
        match &written.markdown {
            Some(markdown) => ui::line(&format!("report: {}", markdown.display())),
            None => ui::line(&format!(
                "report.md: not yet; the run has not ended ({})",
                crate::report::recorded_outcome(&run.state, held)
            )),
        }
        written.html
    };
    ui::line(&format!("report: {}", html.display()));
    if open {
        open_in_browser(&html);
    }
    Ok(0)
}

/// The program that opens a file with the desktop's default application.
const OPENER: &str = if cfg!(target_os = "macos") {
    "open"
} else {
    "xdg-open"
};

/// Opens `page` with the platform's opener, or says why it cannot. The report is written
/// either way, so a missing opener is a warning, not a failure.
fn open_in_browser(page: &Path) {
    let Ok(opener) = which::which(OPENER) else {
        ui::warn(&format!(
            "cannot open the report: no `{OPENER}` on PATH; open {} in a browser",
            page.display()
        ));
        return;
    };
    let status = Command::new(&opener)
        .arg(page)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match status {
        Ok(status) if status.success() => {
            ui::line(&format!("opened with {}", opener.display()));
        }
        Ok(status) => ui::warn(&format!(
            "`{OPENER}` could not open the report ({status}); open {} in a browser",
            page.display()
        )),
        Err(e) => ui::warn(&format!(
            "cannot run `{}`: {e}; open {} in a browser",
            opener.display(),
            page.display()
        )),
    }
}
