//! `report.html` from real runs of the binary with scripted agents: parsed with an HTML parser
//! and checked for what a person reads in it — one timeline bar per step, every reviewer's
//! verdict, escaped diffs, nothing fetched from the network — and `autobuild report`,
//! `complete` and `discard` keeping both reports true to the run.

use crate::loop_fixture;

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::Duration;

use loop_fixture::{
    assert_exit, fixture, stderr, stdout, wait_until, workflow_fixture, Project, TASK,
};
use scraper::{Html, Selector};

/// A correct player that also adds a page with a script in it: the diff must show it as text.
const PLAYER_WITH_SCRIPT: &str = r#"set -eu
. .autobuild/agents/write_greeting.sh
write_greeting '!'
mkdir -p docs
printf '<script>alert("from the diff")</script>\n' > docs/page.html
echo "Implemented greeting </pre><script>alert('from the message')</script>"
"#;

fn page(path: &Path) -> Html {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    Html::parse_document(&text)
}

fn select<'a>(html: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    html.select(&Selector::parse(css).unwrap()).collect()
}

fn text(html: &Html, css: &str) -> String {
    select(html, css)
        .first()
        .unwrap_or_else(|| panic!("no {css}"))
        .text()
        .collect()
}

/// Nothing in the page is fetched: no scripts, stylesheets or fonts from anywhere, no
/// `src`/`href` to the network, no `@import` in the inline style.
fn assert_self_contained(html: &Html) {
    assert!(select(html, "script").is_empty());
    assert!(select(html, "link").is_empty());
    for element in select(html, "[src], [href]") {
        for name in ["src", "href"] {
            if let Some(url) = element.value().attr(name) {
                let url = url.trim().to_ascii_lowercase();
                assert!(
                    !url.starts_with("http:")
                        && !url.starts_with("https:")
                        && !url.starts_with("//"),
                    "{name}={url}"
                );
            }
        }
    }
    let style: String = select(html, "style")
        .iter()
        .flat_map(|s| s.text())
        .collect();
    assert!(
        !style.contains("@import") && !style.contains("url("),
        "{style}"
    );
}

fn two_reviewer_project() -> Project {
    let project = Project::new();
    project.write(
        ".autobuild/agents/security.sh",
        &fixture("coach_security.sh"),
    );
    project.write(".autobuild/agents/player.sh", PLAYER_WITH_SCRIPT);
    project.write(
        ".autobuild/workflows/secure.toml",
        &workflow_fixture("secure.toml"),
    );
    project.commit()
}

#[test]
fn a_two_reviewer_run_shows_every_step_both_verdicts_and_an_escaped_diff() {
    let project = two_reviewer_project();

    let output = project.run(&["task", TASK, "--workflow", "secure"]);

    assert_exit(&output, 3);
    let html = page(&project.run_dir().join("report.html"));
    assert_self_contained(&html);
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    let steps = events
        .lines()
        .filter(|line| line.contains(r#""event":"step_finished""#))
        .count();
    assert_eq!(select(&html, ".timeline .row.step .bar").len(), steps);
    let kinds: Vec<&str> = select(&html, ".timeline .row.step")
        .iter()
        .map(|r| r.value().attr("data-kind").unwrap())
        .collect();
    let turn = ["agent", "check", "review", "review", "gate"];
    assert_eq!(kinds, [&["runner"][..], &turn, &turn, &["runner"]].concat());
    // The merge step did not run: it is marked, not drawn.
    assert_eq!(
        select(&html, ".timeline .row.mark[data-mark=skip]").len(),
        1
    );
    let decision = |step: &str| {
        select(
            &html,
            &format!("#turn-1 .review[data-review={step}] [data-decision]"),
        )[0]
        .value()
        .attr("data-decision")
        .unwrap()
        .to_string()
    };
    assert_eq!(decision("security_review"), "feedback");
    assert_eq!(decision("review"), "approve");
    let issue = text(&html, "#turn-1 .review[data-review=security_review] .issue");
    assert!(
        issue.contains(
            "SECURITY-FINDING: greeting echoes unescaped input like <img src=x onerror=alert(1)>"
        ),
        "{issue}"
    );
    assert!(select(&html, "img").is_empty());
    let diff = text(&html, "#turn-1 .diff");
    assert!(
        diff.contains(r#"+<script>alert("from the diff")</script>"#),
        "{diff}"
    );
    assert!(text(&html, "#turn-1").contains("</pre><script>alert('from the message')</script>"));
    assert!(text(&html, "#turn-1 table.checks").contains("AC-001"));
    assert_eq!(
        text(&html, "#outcome"),
        "blocked: the turn limit was reached without approval"
    );

    // Discarding it: both reports say so and no longer send the reader to the worktree.
    let output = project.run(&["discard", TASK, "--yes"]);
    assert_exit(&output, 0);
    let report = project.report();
    assert!(
        report.contains("- Discarded: the branch and the worktree are removed"),
        "{report}"
    );
    assert!(!report.contains("Worktree (preserved)"), "{report}");
    assert!(!report.contains("Suggested actions"), "{report}");
    assert!(report.contains("## Why it stopped"), "{report}");
    let html = page(&project.run_dir().join("report.html"));
    assert!(
        text(&html, "#outcome").starts_with("discarded (blocked: the turn limit"),
        "{}",
        text(&html, "#outcome")
    );
}

#[test]
fn report_writes_both_reports_again_exactly_as_the_run_left_them() {
    let project = two_reviewer_project();
    assert_exit(&project.run(&["task", TASK, "--workflow", "secure"]), 3);
    let markdown = project.report();
    let html = std::fs::read_to_string(project.run_dir().join("report.html")).unwrap();
    std::fs::remove_file(project.run_dir().join("report.md")).unwrap();
    std::fs::remove_file(project.run_dir().join("report.html")).unwrap();

    let output = project.run(&["report", TASK]);

    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("report.html"),
        "{}",
        stdout(&output)
    );
    assert_eq!(project.report(), markdown);
    assert_eq!(
        std::fs::read_to_string(project.run_dir().join("report.html")).unwrap(),
        html
    );

    // An earlier run, kept as TASK-1@1 when the task runs again, has its own reports.
    assert_exit(
        &project.run(&["task", TASK, "--workflow", "secure", "--fresh", "--yes"]),
        3,
    );
    let earlier = project.root.join(".autobuild/runs/TASK-1@1");
    std::fs::remove_file(earlier.join("report.html")).unwrap();
    assert_exit(&project.run(&["report", "TASK-1@1"]), 0);
    assert_self_contained(&page(&earlier.join("report.html")));
}

#[test]
fn complete_brings_both_reports_up_to_date_with_the_merge() {
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    assert!(project.report().contains("approved; not merged yet"));

    let output = project.run(&["complete", TASK]);

    assert_exit(&output, 0);
    let report = project.report();
    assert!(
        report.contains("**Outcome:** approved and merged"),
        "{report}"
    );
    for stale in [
        "not merged yet",
        "Worktree (preserved)",
        "Next step",
        "autobuild complete",
    ] {
        assert!(!report.contains(stale), "{stale}: {report}");
    }
    let html = page(&project.run_dir().join("report.html"));
    assert_eq!(text(&html, "#outcome"), "approved and merged");
}

#[test]
fn a_run_in_progress_gets_an_html_report_and_no_markdown_yet() {
    let project = Project::new()
        .player("player_slow.sh")
        .env("LOOP_PLAYER_DELAY", "4")
        .commit();
    let mut child = project.spawn(&["task", TASK, "--no-merge"]);
    let events = project.run_dir().join("events.jsonl");
    wait_until(Duration::from_secs(20), "the player to start", || {
        std::fs::read_to_string(&events).is_ok_and(|e| e.contains(r#""step":"implement""#))
    });

    let output = project.run(&["report", TASK]);

    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains("report.md: not yet; the run has not ended (running)"),
        "{}",
        stdout(&output)
    );
    assert!(!project.run_dir().join("report.md").exists());
    let html = page(&project.run_dir().join("report.html"));
    assert_eq!(text(&html, "#outcome"), "running");
    let last = select(&html, ".timeline .row.step").pop().unwrap();
    assert_eq!(last.value().attr("data-step"), Some("implement"));
    assert!(last.text().collect::<String>().contains("running"));
    assert!(child.wait().unwrap().success());
    assert!(project.report().contains("approved; not merged yet"));
}

#[test]
fn open_uses_the_platform_opener_and_says_so_when_there_is_none() {
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    let bin = tempfile::tempdir().unwrap();
    let opened = bin.path().join("opened");
    let opener = bin.path().join("xdg-open");
    std::fs::write(
        &opener,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", opened.display()),
    )
    .unwrap();
    std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();

    let output = project.run_with_env(
        &["report", TASK, "--open"],
        &[("PATH", &bin.path().display().to_string())],
    );

    assert_exit(&output, 0);
    let html = project.run_dir().join("report.html");
    assert_eq!(
        std::fs::read_to_string(&opened).unwrap().trim(),
        html.display().to_string()
    );

    let empty = tempfile::tempdir().unwrap();
    let output = project.run_with_env(
        &["report", TASK, "--open"],
        &[("PATH", &empty.path().display().to_string())],
    );
    assert_exit(&output, 0);
    assert!(
        stderr(&output).contains("cannot open the report: no `xdg-open` on PATH"),
        "{}",
        stderr(&output)
    );
}

/// Every closing section report.md has (why it stopped, recurring issues, last feedback,
/// failure class, suggested actions, next step) is in report.html too, with the same items;
/// returns the page.
fn assert_html_carries_the_markdown(project: &Project) -> Html {
    let markdown = project.report();
    let html = page(&project.run_dir().join("report.html"));
    assert_self_contained(&html);
    let sections = [
        ("Why it stopped", "#why"),
        ("Recurring issues", "#recurring"),
        ("Last feedback", "#last-feedback"),
        ("Failure class", "#failure-class"),
        ("Suggested actions", "#actions"),
        ("Next step", "#next-step"),
    ];
    for (heading, id) in sections {
        let in_markdown = markdown.contains(&format!("\n## {heading}\n"));
        assert_eq!(
            in_markdown,
            !select(&html, id).is_empty(),
            "{heading}: {markdown}"
        );
        if !in_markdown {
            continue;
        }
        // The section's text, line by line without Markdown's marks, is the page's.
        let body = markdown.split(&format!("\n## {heading}\n")).nth(1).unwrap();
        let body = body.split("\n## ").next().unwrap();
        let shown = text(&html, id).replace('\n', " ");
        for line in body
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("```"))
        {
            let line = line.trim_start_matches("- ").replace('`', "");
            let line = line.split(" (log: ").next().unwrap();
            assert!(shown.contains(line), "{heading}: `{line}` not in: {shown}");
        }
    }
    html
}

#[test]
fn a_blocked_run_s_page_says_why_what_recurred_the_class_and_what_to_do() {
    let project = two_reviewer_project();
    assert_exit(&project.run(&["task", TASK, "--workflow", "secure"]), 3);

    let html = assert_html_carries_the_markdown(&project);

    for id in ["#why", "#recurring", "#failure-class", "#actions"] {
        assert!(!select(&html, id).is_empty(), "{id}");
    }
    assert!(
        text(&html, "#actions").contains("autobuild discard TASK-1"),
        "{}",
        text(&html, "#actions")
    );
    // The branch's net change, not collapsed, beside the turns' own diffs.
    let net = text(&html, "#net-diff .diff");
    assert!(net.contains("+++ b/lib/greet.sh"), "{net}");
    assert!(
        net.contains(r#"+<script>alert("from the diff")</script>"#),
        "{net}"
    );
    assert!(select(&html, "details #net-diff, details .net-diff").is_empty());
    // command agents report no cost: unknown, shown the same way everywhere.
    let facts = text(&html, ".facts");
    assert!(
        facts.contains("Cost– (no agent reported a cost) ·"),
        "{facts}"
    );
    assert!(text(&html, "#turn-1 .spend").starts_with("cost – ·"));
}

#[test]
fn a_waiting_and_an_approved_run_s_pages_name_the_next_step() {
    let project = Project::new();
    project.write(
        ".autobuild/tasks/TASK-1.md",
        &loop_fixture::task_file().replacen("---\n", "---\ncomplexity: 8\n", 1),
    );
    let project = project.commit();
    assert_exit(&project.run(&["task", TASK, "--workflow", "guardkit"]), 6);
    let html = assert_html_carries_the_markdown(&project);
    let next = text(&html, "#next-step");
    assert!(next.contains("autobuild approve TASK-1"), "{next}");
    assert!(select(&html, "#why").is_empty());

    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    let html = assert_html_carries_the_markdown(&project);
    let next = text(&html, "#next-step");
    assert!(next.contains("autobuild complete TASK-1"), "{next}");
    assert!(text(&html, "#net-diff").contains("the approved commit"));
    assert!(text(&html, "#net-diff .diff").contains("+++ b/lib/greet.sh"));
}

/// Diffs come from the records (issue 24): a run directory copied away from its repository
/// still loads every turn's patch and the branch's net diff, with no repository to diff in.
#[test]
fn a_run_directory_away_from_its_repository_still_shows_every_diff() {
    use autobuild::engine::paths::RunPaths;
    use autobuild::engine::state::RunState;
    use autobuild::report::records::RunRecords;

    let project = two_reviewer_project();
    assert_exit(&project.run(&["task", TASK, "--workflow", "secure"]), 3);
    assert!(project.run_dir().join("net_diff.json").is_file());
    let away = tempfile::tempdir().unwrap();
    let runs = away.path().join("runs");
    loop_fixture::copy_files(&project.run_dir(), &runs.join(TASK));
    let paths = RunPaths::new(&runs, TASK);
    let state = RunState::load(&paths.state()).unwrap();

    let records = RunRecords::load(&paths, state, "blocked".into(), None);

    let added = r#"+<script>alert("from the diff")</script>"#;
    assert!(
        records.turns[0].diff.contains(added),
        "{}",
        records.turns[0].diff
    );
    assert!(records.net_diff.contains(added), "{}", records.net_diff);
    assert!(records.computed_net_diff.is_none(), "read, not computed");
}
