//! The feature page: its waves drawn as rows of task cards, each card saying how the task
//! ended and linking the task's own report. A pure function of plain data; the feature
//! module says what goes on the page ([`crate::feature::report::html_page`]).

use serde::Serialize;

use base::error::Error;

/// Everything the feature page shows.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FeaturePage {
    pub feature_id: String,
    pub name: String,
    pub outcome: String,
    /// `merged`, `approved`, `blocked`, `conflict`, `running`, …
    pub status: String,
    pub file: String,
    pub branch: String,
    pub base: String,
    pub merged_commit: Option<String>,
    pub cost: String,
    pub waves: Vec<Vec<TaskCard>>,
    /// Every task that started, on one time axis ([`crate::feature::timeline`]).
    pub timeline: Vec<TaskSpan>,
    /// From the first task's start to the last one's end, in milliseconds.
    pub timeline_ms: u64,
    pub conflict: Option<crate::feature::state::ConflictRecord>,
    /// Every integration check of the feature branch's tip, in order.
    pub integration: Vec<IntegrationView>,
    /// Separations, conflicts and discarded runs, one sentence each
    /// ([`crate::feature::report::history_lines`]).
    pub history: Vec<String>,
    pub next_steps: Vec<String>,
}

/// One task of a wave.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TaskCard {
    pub id: String,
    pub title: String,
    pub status: String,
    /// `2/5`, or empty when the task did not run.
    pub turns: String,
    pub cost: String,
    /// The last coach decision, when one ran.
    pub decision: String,
    /// Why it did not merge, or why it was skipped.
    pub message: Option<String>,
    /// The task's report, relative to the feature's run directory.
    pub link: Option<String>,
    /// The task's run wrote its `report.md`.
    pub has_report: bool,
}

/// One task's bar on the feature's timeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TaskSpan {
    pub id: String,
    /// 1-based.
    pub wave: usize,
    pub status: String,
    /// Where the bar starts and how wide it is, in percent of the track.
    pub left: f64,
    pub width: f64,
    pub duration_ms: u64,
    /// Not finished: the bar ends at the feature's last update.
    pub running: bool,
}

/// One integration check on the HTML page.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IntegrationView {
    pub wave: usize,
    pub commit: String,
    pub passed: bool,
    pub tasks: Vec<String>,
    /// `name: status` of every check.
    pub checks: Vec<String>,
    /// The first error of the first failing check.
    pub first_error: Option<String>,
    /// `TASK (status)` of the integration task, under `integrate`.
    pub repair: Option<String>,
}

/// What the feature's `report.md` says beyond the page's facts.
#[derive(Serialize)]
struct MarkdownView<'a> {
    #[serde(flatten)]
    page: &'a FeaturePage,
    /// The tasks' reports are beside the feature's: linked, else named.
    links: bool,
    /// The `## Integration checks` section.
    integration: String,
}

/// The HTML page of a feature run.
pub fn render_feature(page: &FeaturePage) -> Result<String, Error> {
    super::render("feature.html", page)
}

/// The `report.md` of a feature run; `links`: each task's row links its report, else names it.
pub fn render_markdown(
    page: &FeaturePage,
    links: bool,
    integration: String,
) -> Result<String, Error> {
    let view = MarkdownView {
        page,
        links,
        integration,
    };
    super::render("feature.md", &view)
}

#[cfg(test)]
mod tests {
    use scraper::{Html, Selector};

    use super::*;

    #[test]
    fn waves_are_drawn_in_order_and_every_task_with_a_report_is_linked() {
        let card = |id: &str, status: &str, link: bool| TaskCard {
            id: id.into(),
            title: format!("{id} <i>title</i>"),
            status: status.into(),
            link: link.then(|| format!("../{id}/report.html")),
            ..TaskCard::default()
        };
        let page = FeaturePage {
            feature_id: "FEAT-1".into(),
            status: "blocked".into(),
            waves: vec![
                vec![card("T1", "merged", true), card("T2", "blocked", true)],
                vec![card("T3", "skipped", false)],
            ],
            ..FeaturePage::default()
        };
        let html = Html::parse_document(&render_feature(&page).unwrap());
        let sel = |css: &str| Selector::parse(css).unwrap();
        let waves: Vec<Vec<&str>> = html
            .select(&sel(".wave"))
            .map(|wave| {
                wave.select(&sel(".card"))
                    .map(|c| c.value().attr("data-task").unwrap())
                    .collect()
            })
            .collect();
        assert_eq!(waves, [vec!["T1", "T2"], vec!["T3"]]);
        for id in ["T1", "T2"] {
            let link = sel(&format!(
                ".card[data-task={id}] a[href='../{id}/report.html']"
            ));
            assert!(html.select(&link).next().is_some(), "{id}");
        }
        assert!(html.select(&sel(".card[data-task=T3] a")).next().is_none());
        assert!(html.select(&sel("i")).next().is_none());
    }
}
