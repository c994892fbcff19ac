//! How many of the task files GuardKit's own loader reads autobuild loads (issue 49, item 13),
//! measured on a checkout of GuardKit's repository:
//!
//! ```text
//! GUARDKIT_REPO=/path/to/guardkit cargo test -p autobuild-model --lib -- --ignored \
//!     guardkit_corpus --nocapture
//! ```
//!
//! GuardKit's loader (`guardkit/tasks/task_loader.py`, `TaskLoader`) finds a task by globbing
//! `{task_id}*.md` under the folders of `tasks/` (its state folders, and `completed/` for the
//! orchestrator's lookups), reads the front matter with python-frontmatter (PyYAML), and takes
//! the criteria from a front-matter `acceptance_criteria:` key or from the top-level items
//! under a line `## Acceptance Criteria`; a file without either gets the placeholder "No
//! acceptance criteria specified", which autobuild refuses by design. So the files measured
//! are those under `tasks/` whose name carries an id and in which GuardKit finds criteria, and
//! those whose front matter is not YAML, which GuardKit's loader rejects (reported apart).

use std::path::{Path, PathBuf};

use serde::de::IgnoredAny;
use serde::Deserialize;

use super::fields::OneOrMany;
use super::*;

/// The `.md` files under `dir`, recursively, in path order.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

/// How GuardKit's loader reads a file: `Err` when it rejects it (the front matter is not YAML),
/// else whether it finds acceptance criteria (`TaskLoader._extract_acceptance_criteria`).
///
/// python-frontmatter takes the front matter from a stripped text starting with a line of
/// three or more dashes up to the next such line, and PyYAML parses it; `yaml_serde` (a port
/// of libyaml, whose grammar PyYAML follows) stands in for PyYAML. The criteria are an
/// `acceptance_criteria:` list or string in the front matter, or a top-level list item with
/// text under a line `## Acceptance Criteria` (or `Criterion`) before the next line starting
/// with `##`.
fn guardkit_reading(source: &str) -> Result<bool, String> {
    #[derive(serde::Deserialize)]
    struct Front {
        acceptance_criteria: Option<Criteria>,
    }
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Criteria {
        Read(#[allow(dead_code, reason = "only its shape matters")] OneOrMany<IgnoredAny>),
        Other(IgnoredAny),
    }

    let text = source.trim();
    let boundary = |line: &str| line.len() >= 3 && line.trim_end().bytes().all(|b| b == b'-');
    let mut content = text;
    if text.lines().next().is_some_and(boundary) {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        if let Some(close) = lines
            .iter()
            .skip(1)
            .position(|l| boundary(l.trim_end_matches('\n')))
        {
            let front = lines[1..=close].concat();
            IgnoredAny::deserialize(yaml_serde::Deserializer::from_str(&front))
                .map_err(|e| e.to_string())?;
            if let Ok(Front {
                acceptance_criteria: Some(Criteria::Read(_)),
            }) = yaml_serde::from_str(&front)
            {
                return Ok(true);
            }
            content = &text[lines[..=close + 1].concat().len()..];
        }
    }
    let mut in_section = false;
    for line in content.lines() {
        let heading = line.trim().to_lowercase();
        if matches!(
            heading.as_str(),
            "## acceptance criteria" | "## acceptance criterion"
        ) {
            in_section = true;
        } else if in_section && line.starts_with("##") {
            in_section = false;
        } else if in_section && (line.starts_with("- ") || line.starts_with("* ")) {
            // GuardKit strips the marker with `lstrip("- [x] ")…lstrip("* ")`.
            let text = line
                .trim_start_matches(['-', ' ', '[', 'x', ']'])
                .trim_start_matches(['*', ' '])
                .trim();
            if !text.is_empty() {
                return Ok(true);
            }
        }
    }
    Ok(false)
}

#[test]
fn guardkit_reads_criteria_as_its_loader_does() {
    let cases = [
        ("---\nid: T\nacceptance_criteria:\n  - a\n---\n", Ok(true)),
        ("---\nid: T\nacceptance_criteria: a\n---\n", Ok(true)),
        ("---\nid: T\nacceptance_criteria: {a: 1}\n---\n", Ok(false)),
        (
            "---\nid: T\n---\n## Acceptance Criteria\n- [ ] a\n",
            Ok(true),
        ),
        ("# T\n\n## acceptance criterion\n* a\n", Ok(true)),
        (
            "## Acceptance Criteria\n  - indented only\n## Next\n- a\n",
            Ok(false),
        ),
        (
            "## Acceptance Criteria (Machine-Verifiable)\n- a\n",
            Ok(false),
        ),
        ("## Acceptance Criteria\n- [x]\n", Ok(false)),
        (
            "---\nid: T\nfiles: [\n  a\n]\ns: 1\ns: 2\n---\n## Acceptance Criteria\n- a\n",
            Ok(true),
        ),
    ];
    for (source, expected) in cases {
        assert_eq!(guardkit_reading(source), expected, "{source:?}");
    }
    assert!(guardkit_reading("---\ntitle: a: b\n---\n## Acceptance Criteria\n- a\n").is_err());
}

#[test]
#[ignore = "needs GuardKit's repository at $GUARDKIT_REPO"]
fn guardkit_corpus() {
    let Some(repo) = std::env::var_os("GUARDKIT_REPO").map(PathBuf::from) else {
        panic!("set GUARDKIT_REPO to a checkout of GuardKit's repository to run this measurement");
    };
    let tasks = repo.join("tasks");
    assert!(tasks.is_dir(), "{} has no tasks/ folder", repo.display());
    let (mut total, mut not_yaml) = (0, 0);
    let mut failures = Vec::new();
    for path in markdown_files(&tasks) {
        let shown = path.strip_prefix(&repo).unwrap_or(&path).to_path_buf();
        let Ok(source) = std::fs::read_to_string(&path) else {
            continue;
        };
        let guardkit = guardkit_reading(&source);
        if id_from_file_name(&path).is_none() || guardkit == Ok(false) {
            continue;
        }
        total += 1;
        if let Err(problems) = Task::parse(&shown, &source) {
            let first = problems.0.first().map(ToString::to_string);
            let first = first.unwrap_or_default();
            let first = first.lines().next().unwrap_or_default().to_string();
            match &guardkit {
                Err(why) => {
                    not_yaml += 1;
                    failures.push(format!("{first}\n    (GuardKit rejects it too: {why})"));
                }
                Ok(_) => failures.push(first),
            }
        }
    }
    let loaded = total - failures.len();
    let percent = |n: usize, of: usize| n as f64 * 100.0 / of.max(1) as f64;
    for failure in &failures {
        println!("{failure}");
    }
    println!(
        "{loaded} of {total} task files load ({:.2}%); {} fail, {not_yaml} of them rejected \
         by GuardKit's loader too (front matter not YAML): {loaded} of {} ({:.2}%) without them",
        percent(loaded, total),
        failures.len(),
        total - not_yaml,
        percent(loaded, total - not_yaml),
    );
}
