//! Graph problems (indices into the feature file's lists) as diagnostics at the lines that
//! cause them, with the help a user needs to fix each.

use crate::feature::file::{FeatureFile, Located};
use crate::feature::graph::Problem;
use base::diagnostic::Diagnostic;

use super::LazyScan;

/// Turns graph problems (indices) into diagnostics at the lines that cause them.
pub(super) struct Locator<'a> {
    pub(super) file: &'a FeatureFile,
    pub(super) dependencies: &'a [Vec<Located>],
}

impl Locator<'_> {
    fn id(&self, task: usize) -> &str {
        &self.file.tasks[task].id.value
    }

    fn group_item(&self, group: usize, item: usize) -> &Located {
        &self
            .file
            .parallel_groups
            .as_ref()
            .expect("group problems need groups")[group][item]
    }

    pub(super) fn diagnostic(&self, problem: &Problem, scan: &mut LazyScan<'_>) -> Diagnostic {
        let tasks = &self.file.tasks;
        match problem {
            Problem::DuplicateTask { index, first } => tasks[*index]
                .id
                .pos
                .error(format!("task `{}` is listed twice", self.id(*index)))
                .with_help(format!(
                    "it is first listed on line {}; remove one of the entries",
                    tasks[*first].id.pos.location.line
                )),
            Problem::UnknownDependency {
                task,
                dependency,
                suggestion,
            } => {
                let dep = &self.dependencies[*task][*dependency];
                let diagnostic = dep.pos.error(format!(
                    "`{}` depends on `{}`, which is not a task of this feature",
                    self.id(*task),
                    dep.value
                ));
                let in_project = scan
                    .get()
                    .is_ok_and(|s| s.tasks.iter().any(|t| t.id == dep.value));
                match (suggestion, in_project) {
                    (Some(close), false) => diagnostic.with_help(format!("did you mean `{close}`?")),
                    (_, true) => diagnostic.with_help(format!(
                        "`{}` is a task of this project; add it to the feature's `tasks`, or remove the dependency",
                        dep.value
                    )),
                    (None, false) => diagnostic.with_help(format!(
                        "the feature's tasks are: {}",
                        tasks
                            .iter()
                            .map(|t| t.id.value.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )),
                }
            }
            Problem::Cycle { cycle } => {
                let names: Vec<&str> = cycle
                    .iter()
                    .chain(cycle.first())
                    .map(|&i| self.id(i))
                    .collect();
                let next = self.id(cycle[1 % cycle.len()]);
                let pos = self.dependencies[cycle[0]]
                    .iter()
                    .find(|d| d.value == next)
                    .map_or(&tasks[cycle[0]].id.pos, |d| &d.pos);
                pos.error(format!("dependency cycle: {}", names.join(" → ")))
                    .with_help(
                        "each task depends on the next, so none can start; remove one of these dependencies",
                    )
            }
            Problem::UnknownInGroup {
                group,
                item,
                suggestion,
            } => {
                let entry = self.group_item(*group, *item);
                let diagnostic = entry.pos.error(format!(
                    "`parallel_groups` lists `{}`, which is not a task of this feature",
                    entry.value
                ));
                match suggestion {
                    Some(close) => diagnostic.with_help(format!("did you mean `{close}`?")),
                    None => diagnostic,
                }
            }
            Problem::DuplicateInGroups {
                group,
                item,
                first_group,
                first_item,
            } => {
                let entry = self.group_item(*group, *item);
                let first = self.group_item(*first_group, *first_item);
                entry
                    .pos
                    .error(format!(
                        "task `{}` is in `parallel_groups` twice",
                        entry.value
                    ))
                    .with_help(format!(
                        "it is already in group {} (line {}); a task runs in exactly one wave",
                        first_group + 1,
                        first.pos.location.line
                    ))
            }
            Problem::MissingFromGroups { task } => tasks[*task]
                .id
                .pos
                .error(format!(
                    "task `{}` is in none of the `parallel_groups`",
                    self.id(*task)
                ))
                .with_help(
                    "add it to a group after its dependencies' groups, or remove `parallel_groups` to have the waves computed",
                ),
            Problem::DependencyNotEarlier {
                task,
                dependency,
                task_group,
                dependency_group,
            } => {
                let dep = &self.dependencies[*task][*dependency];
                let groups = self.file.parallel_groups.as_ref().expect("groups");
                let pos = groups[*task_group]
                    .iter()
                    .find(|l| l.value == self.id(*task))
                    .map_or(&dep.pos, |l| &l.pos);
                let relation = if dependency_group == task_group {
                    "the same group".to_string()
                } else {
                    format!("a later group ({})", dependency_group + 1)
                };
                pos.error(format!(
                    "`{}` is in group {} but depends on `{}`, which is in {relation}",
                    self.id(*task),
                    task_group + 1,
                    dep.value
                ))
                .with_help(format!(
                    "a task runs after the waves of all its dependencies; move `{}` to a group after `{}`'s",
                    self.id(*task),
                    dep.value
                ))
            }
        }
    }
}
