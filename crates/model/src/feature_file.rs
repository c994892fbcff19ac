//! Feature files (docs/features.md): YAML shared with GuardKit, read with the position of every
//! value so later checks (unknown task, cycle, wave order) can point at the offending line.
//!
//! GuardKit writes many keys autobuild does not use (`status`, `execution`, `estimated_minutes`,
//! …) and keeps its own run state in the file, so unknown keys are accepted and ignored. A key
//! that is not one of GuardKit's and looks like a misspelling of a key autobuild reads
//! (`dependancies`) is an error: silently ignoring it would change the order tasks run in.
//! autobuild never writes to a feature file.
//!
//! GuardKit writes features in more than one shape, and all of them are read: the keys may sit
//! under a `feature:` wrapper, and the run order may be given per task (`wave: 1`, `wave: 2`)
//! instead of as `orchestration.parallel_groups`. Per-task waves become the parallel groups
//! (checked like declared ones, each task's problems pointing at its `wave:` line); declared
//! `parallel_groups` win when a file has both. Anchors and aliases are read within the bounds of
//! [`base::user_file::yaml_limits`], and the file within the input size cap of
//! [`base::user_file`].

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use base::diagnostic::{did_you_mean, Diagnostic};
use base::user_file::parse_yaml;
use base::user_file::source::{Layer, Pos, Source};
use base::user_file::tree::{Node, Seg};

mod guardkit;

use base::user_file::typed::decode;
use guardkit::{unwrap_feature, waves_as_groups};

/// A string value and where it was written.
#[derive(Debug, Clone)]
pub struct Located {
    pub value: String,
    pub pos: Pos,
}

/// One entry of the feature's `tasks` list.
#[derive(Debug, Clone)]
pub struct TaskEntry {
    pub id: Located,
    /// Relative to the repository root (or absolute).
    pub file_path: Option<Located>,
    /// `None` when the entry has no `dependencies` key: the task file's own list applies.
    pub dependencies: Option<Vec<Located>>,
    /// GuardKit's per-task `wave:` (1 runs first), with where it was written.
    pub wave: Option<(u32, Pos)>,
    /// Where the entry starts, for problems with the entry as a whole.
    pub pos: Pos,
}

/// A parsed feature file; its tasks are not looked up yet.
#[derive(Debug, Clone)]
pub struct FeatureFile {
    pub path: PathBuf,
    pub id: Located,
    pub name: String,
    pub description: String,
    pub tasks: Vec<TaskEntry>,
    /// `orchestration.parallel_groups`, else the groups of the tasks' `wave:` keys; `None` when
    /// neither is given.
    pub parallel_groups: Option<Vec<Vec<Located>>>,
    /// Whether `parallel_groups` came from the tasks' `wave:` keys.
    pub groups_from_waves: bool,
    pub recommended_parallel: Option<u32>,
    /// The `tasks` key, for problems with the list as a whole.
    pub tasks_pos: Pos,
}

/// A feature file as GuardKit writes it (docs/features.md). Keys autobuild does not read are
/// allowed: GuardKit keeps its own state in the file.
#[derive(Deserialize, schemars::JsonSchema)]
#[schemars(title = "autobuild / GuardKit feature file")]
pub(crate) struct RawFeature {
    /// The feature's id (`autobuild feature <ID>`).
    id: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    description: Option<String>,
    /// The feature's tasks.
    #[serde(default)]
    tasks: Vec<RawTask>,
    #[serde(default)]
    orchestration: Option<RawOrchestration>,
}

/// One task of the feature.
#[derive(Deserialize, schemars::JsonSchema)]
struct RawTask {
    /// The task's id.
    id: String,
    /// The task file, relative to the repository root (else it is looked up by id).
    #[serde(default)]
    file_path: Option<String>,
    /// Tasks that must be merged first (absent: the task file's own list applies).
    #[serde(default)]
    dependencies: Option<Vec<String>>,
    /// GuardKit's run order: lower waves run first (every task has one, or none does).
    #[serde(default)]
    wave: Option<u32>,
}

/// The run order.
#[derive(Deserialize, schemars::JsonSchema)]
struct RawOrchestration {
    /// Groups of task ids run in order; the tasks of one group run in parallel.
    #[serde(default)]
    parallel_groups: Option<Vec<Vec<String>>>,
    /// How many tasks run at once (`--parallel` overrides it).
    #[serde(default)]
    recommended_parallel: Option<u32>,
}

/// Keys of each table: the ones autobuild reads first, then GuardKit's other keys.
const FEATURE_KEYS: (&[&str], &[&str]) = (
    &["id", "name", "description", "tasks", "orchestration"],
    &[
        "created",
        "status",
        "complexity",
        "estimated_tasks",
        "execution",
        "smoke_gates",
        "behavioural_oracle",
        "bootstrap_extras",
        "preflight_strict",
        "evidence_repos",
        "file_path",
    ],
);
const TASK_KEYS: (&[&str], &[&str]) = (
    &["id", "file_path", "dependencies", "wave"],
    &[
        "name",
        "complexity",
        "status",
        "implementation_mode",
        "estimated_minutes",
        "requires_infrastructure",
        "result",
        "turns_completed",
        "current_turn",
        "started_at",
        "completed_at",
        "task_type",
    ],
);
const ORCHESTRATION_KEYS: (&[&str], &[&str]) = (
    &["parallel_groups", "recommended_parallel"],
    &["estimated_duration_minutes"],
);

impl FeatureFile {
    /// Parses the text of the feature file at `path` (the path shown in messages).
    pub fn parse(path: &Path, text: &str) -> Result<FeatureFile, Vec<Diagnostic>> {
        let source = Source::new(path, text, Layer::Repo);
        let tree = unwrap_feature(parse_yaml::parse(&source)?);
        if tree.as_table().is_none() {
            return Err(vec![tree.pos.error(format!(
                "a feature file is a table with `id`, `name` and `tasks`, found {}",
                tree.kind()
            ))]);
        }
        let mut problems = misspelled_keys(&tree);
        let raw = decode::<RawFeature>(&tree);
        let raw = match raw {
            Ok(raw) if problems.is_empty() => raw,
            Ok(_) => return Err(problems),
            Err(mut more) => {
                problems.append(&mut more);
                problems.sort_by_key(|d| d.location);
                return Err(problems);
            }
        };
        let feature = from_raw(path, &source, &tree, raw);
        match waves_as_groups(&feature) {
            Ok(Some(groups)) => Ok(FeatureFile {
                parallel_groups: Some(groups),
                groups_from_waves: true,
                ..feature
            }),
            Ok(None) => Ok(feature),
            Err(problems) => Err(problems),
        }
    }

    /// Reads and parses the feature file at `path` (at most [`base::user_file::MAX_BYTES`]
    /// of UTF-8 text).
    pub fn load(path: &Path, shown_as: &Path) -> Result<FeatureFile, base::error::Error> {
        let text = base::user_file::read(path, shown_as)
            .map_err(|e| e.into_error("cannot read feature file", path))?;
        FeatureFile::parse(shown_as, &text).map_err(base::error::Error::from)
    }
}

fn from_raw(path: &Path, source: &Arc<Source>, tree: &Node, raw: RawFeature) -> FeatureFile {
    let at = |segs: &[Seg]| {
        tree.at(segs)
            .map_or_else(|| tree.pos.clone(), |n| n.pos.clone())
    };
    let located = |value: String, segs: &[Seg]| Located {
        value,
        pos: at(segs),
    };
    let tasks = raw
        .tasks
        .into_iter()
        .enumerate()
        .map(|(i, task)| {
            let base = [Seg::key("tasks"), Seg::Index(i)];
            let path_to = |more: &[Seg]| [base.as_slice(), more].concat();
            TaskEntry {
                id: located(task.id, &path_to(&[Seg::key("id")])),
                file_path: task
                    .file_path
                    .filter(|p| !p.trim().is_empty())
                    .map(|p| located(p, &path_to(&[Seg::key("file_path")]))),
                dependencies: task.dependencies.map(|deps| {
                    deps.into_iter()
                        .enumerate()
                        .map(|(d, dep)| {
                            located(dep, &path_to(&[Seg::key("dependencies"), Seg::Index(d)]))
                        })
                        .collect()
                }),
                wave: task
                    .wave
                    .map(|wave| (wave, at(&path_to(&[Seg::key("wave")])))),
                pos: at(&base),
            }
        })
        .collect();
    let orchestration = raw.orchestration;
    let parallel_groups = orchestration
        .as_ref()
        .and_then(|o| o.parallel_groups.clone())
        .filter(|groups| !groups.is_empty())
        .map(|groups| {
            groups
                .into_iter()
                .enumerate()
                .map(|(g, group)| {
                    group
                        .into_iter()
                        .enumerate()
                        .map(|(item, id)| {
                            located(
                                id,
                                &[
                                    Seg::key("orchestration"),
                                    Seg::key("parallel_groups"),
                                    Seg::Index(g),
                                    Seg::Index(item),
                                ],
                            )
                        })
                        .collect()
                })
                .collect()
        });
    let tasks_pos = tree
        .as_table()
        .and_then(|t| t.entry("tasks"))
        .map_or_else(|| source.pos_at_offset(0), |e| e.key_pos.clone());
    FeatureFile {
        path: path.to_path_buf(),
        name: raw
            .name
            .filter(|n| !n.trim().is_empty())
            .unwrap_or_else(|| raw.id.clone()),
        id: located(raw.id, &[Seg::key("id")]),
        description: raw.description.unwrap_or_default(),
        tasks,
        parallel_groups,
        groups_from_waves: false,
        recommended_parallel: orchestration.and_then(|o| o.recommended_parallel),
        tasks_pos,
    }
}

/// Unknown keys that look like misspellings of keys autobuild reads.
fn misspelled_keys(tree: &Node) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    check_keys(tree, FEATURE_KEYS, &mut problems);
    if let Some(tasks) = tree.get("tasks").and_then(Node::as_array) {
        for task in tasks {
            check_keys(task, TASK_KEYS, &mut problems);
        }
    }
    if let Some(orchestration) = tree.get("orchestration") {
        check_keys(orchestration, ORCHESTRATION_KEYS, &mut problems);
    }
    problems
}

fn check_keys(node: &Node, (read, known): (&[&str], &[&str]), problems: &mut Vec<Diagnostic>) {
    let Some(table) = node.as_table() else {
        return;
    };
    for entry in table.iter() {
        let key = entry.key.as_str();
        if read.contains(&key) || known.contains(&key) {
            continue;
        }
        if let Some(meant) = did_you_mean(key, read.iter().copied()) {
            problems.push(
                entry
                    .key_pos
                    .error(format!("unknown key `{key}`"))
                    .with_help(format!("did you mean `{meant}`?")),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GUARDKIT: &str = r#"id: FEAT-A1B2
name: User authentication
description: |
  Login and logout.
created: 2025-01-10T10:00:00Z
status: planned
complexity: 6
estimated_tasks: 2
tasks:
  - id: TASK-AUTH-001
    name: Login endpoint
    file_path: tasks/backlog/TASK-AUTH-001.md
    complexity: 5
    dependencies: []
    status: pending
    implementation_mode: task-work
    estimated_minutes: 60
  - id: TASK-AUTH-002
    file_path: tasks/backlog/TASK-AUTH-002.md
    dependencies:
      - TASK-AUTH-001
orchestration:
  parallel_groups:
    - [TASK-AUTH-001]
    - [TASK-AUTH-002]
  estimated_duration_minutes: 90
  recommended_parallel: 2
execution:
  started_at: null
  completed_waves: []
"#;

    #[test]
    fn reads_a_guardkit_feature_with_positions() {
        let feature = FeatureFile::parse(Path::new("f.yaml"), GUARDKIT).unwrap();
        assert_eq!(feature.id.value, "FEAT-A1B2");
        assert_eq!(feature.name, "User authentication");
        assert_eq!(feature.description, "Login and logout.\n");
        assert_eq!(feature.tasks.len(), 2);
        let second = &feature.tasks[1];
        assert_eq!(second.id.value, "TASK-AUTH-002");
        let deps = second.dependencies.as_ref().unwrap();
        assert_eq!(deps[0].value, "TASK-AUTH-001");
        assert_eq!(deps[0].pos.location.line, 21);
        assert_eq!(deps[0].pos.location.column, 9);
        assert_eq!(feature.tasks[0].dependencies.as_ref().unwrap().len(), 0);
        let groups = feature.parallel_groups.unwrap();
        assert_eq!(groups[1][0].value, "TASK-AUTH-002");
        assert_eq!(groups[1][0].pos.location.line, 25);
        assert_eq!(feature.recommended_parallel, Some(2));
    }

    #[test]
    fn per_task_waves_become_the_parallel_groups() {
        let text = "id: F\ntasks:\n  - id: B\n    wave: 2\n  - id: A\n    wave: 1\n  - id: C\n    wave: 2\n";
        let feature = FeatureFile::parse(Path::new("f.yaml"), text).unwrap();
        let groups: Vec<Vec<&str>> = feature
            .parallel_groups
            .as_ref()
            .unwrap()
            .iter()
            .map(|g| g.iter().map(|l| l.value.as_str()).collect())
            .collect();
        assert_eq!(groups, [vec!["A"], vec!["B", "C"]]);
        assert!(feature.groups_from_waves);
        assert_eq!(feature.parallel_groups.unwrap()[1][0].pos.location.line, 4);

        let text = "id: F\ntasks:\n  - id: A\n    wave: 1\n  - id: B\n";
        let problems = FeatureFile::parse(Path::new("f.yaml"), text).unwrap_err();
        let text = problems[0].to_string();
        assert!(
            text.starts_with(
                "f.yaml:5:5: task `B` has no `wave`, but other tasks of the feature do"
            ),
            "{text}"
        );
    }

    #[test]
    fn declared_parallel_groups_win_over_waves() {
        let text =
            "id: F\ntasks:\n  - id: A\n    wave: 2\norchestration:\n  parallel_groups: [[A]]\n";
        let feature = FeatureFile::parse(Path::new("f.yaml"), text).unwrap();
        assert_eq!(feature.parallel_groups.unwrap()[0][0].pos.location.line, 6);
    }

    #[test]
    fn a_feature_wrapper_is_read_like_top_level_keys() {
        let text = "feature:\n  id: FEAT-W\n  name: Wrapped\ntasks:\n  - id: A\n";
        let feature = FeatureFile::parse(Path::new("f.yaml"), text).unwrap();
        assert_eq!(
            (feature.id.value.as_str(), feature.name.as_str()),
            ("FEAT-W", "Wrapped")
        );
        assert_eq!(feature.id.pos.location.line, 2);
        assert_eq!(feature.tasks[0].id.value, "A");
        let text = "feature:\n  id: FEAT-W\n  tasks:\n    - id: A\n";
        assert_eq!(
            FeatureFile::parse(Path::new("f.yaml"), text)
                .unwrap()
                .tasks
                .len(),
            1
        );
    }

    #[test]
    fn missing_dependencies_key_is_not_an_empty_list() {
        let text = "id: F\ntasks:\n  - id: A\n";
        let feature = FeatureFile::parse(Path::new("f.yaml"), text).unwrap();
        assert!(feature.tasks[0].dependencies.is_none());
        assert_eq!(feature.name, "F");
        assert!(feature.parallel_groups.is_none());
    }

    #[test]
    fn a_misspelled_key_is_an_error_with_a_suggestion() {
        let text = "id: F\ntasks:\n  - id: A\n    dependancies: [B]\n";
        let problems = FeatureFile::parse(Path::new("f.yaml"), text).unwrap_err();
        assert_eq!(problems.len(), 1);
        let text = problems[0].to_string();
        assert!(
            text.starts_with("f.yaml:4:5: unknown key `dependancies`"),
            "{text}"
        );
        assert!(text.contains("did you mean `dependencies`?"), "{text}");
    }

    #[test]
    fn wrong_types_are_located() {
        let text = "id: F\ntasks:\n  - id: A\n    dependencies: B\n";
        let problems = FeatureFile::parse(Path::new("f.yaml"), text).unwrap_err();
        assert_eq!(problems[0].location.unwrap().line, 4, "{}", problems[0]);
    }

    #[test]
    fn syntax_errors_are_located() {
        let text = "id: F\ntasks: [\n";
        let problems = FeatureFile::parse(Path::new("f.yaml"), text).unwrap_err();
        assert!(problems[0].location.is_some(), "{}", problems[0]);
    }
}
