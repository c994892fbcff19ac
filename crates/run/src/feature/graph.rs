//! A feature's task graph as plain data: which tasks run in which wave, and every structural
//! problem that makes a feature unrunnable.
//!
//! Waves are the declared `parallel_groups` when a feature gives them, otherwise the layers of
//! the dependency graph (a task runs one wave after its latest dependency). Problems refer to
//! tasks and group entries by index, so the caller can point at the exact line of the feature
//! file; nothing here knows about files or positions.

use std::collections::{BTreeSet, HashMap, VecDeque};

use base::diagnostic::did_you_mean;

/// One task of the feature, in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphTask {
    pub id: String,
    /// Ids of the tasks it depends on, in the order written.
    pub dependencies: Vec<String>,
}

impl GraphTask {
    pub fn new(id: &str, dependencies: &[&str]) -> GraphTask {
        GraphTask {
            id: id.to_string(),
            dependencies: dependencies.iter().map(|d| d.to_string()).collect(),
        }
    }
}

/// Something that makes the graph unrunnable. Indices are into the inputs of [`plan_waves`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// `tasks[index]` repeats the id of `tasks[first]`.
    DuplicateTask { index: usize, first: usize },
    /// `tasks[task].dependencies[dependency]` names no task of the feature.
    UnknownDependency {
        task: usize,
        dependency: usize,
        suggestion: Option<String>,
    },
    /// Tasks that depend on each other in a circle; `tasks[cycle[0]]` depends on
    /// `tasks[cycle[1]]`, …, and the last depends on the first.
    Cycle { cycle: Vec<usize> },
    /// `groups[group][item]` names no task of the feature.
    UnknownInGroup {
        group: usize,
        item: usize,
        suggestion: Option<String>,
    },
    /// `groups[group][item]` lists a task already listed at `groups[first_group][first_item]`.
    DuplicateInGroups {
        group: usize,
        item: usize,
        first_group: usize,
        first_item: usize,
    },
    /// `tasks[task]` appears in no group.
    MissingFromGroups { task: usize },
    /// `tasks[task]` is in group `task_group` but depends on `tasks[dependency_task]`
    /// (its `dependency`-th dependency), which is in the same or a later group.
    DependencyNotEarlier {
        task: usize,
        dependency: usize,
        task_group: usize,
        dependency_group: usize,
    },
}

/// The waves of the feature, each a list of task indices in file (or group) order; or every
/// problem found. Problems are reported in input order; dependency-order problems of declared
/// groups are only checked when the graph has no cycle (a cycle already explains them).
pub fn plan_waves(
    tasks: &[GraphTask],
    groups: Option<&[Vec<String>]>,
) -> Result<Vec<Vec<usize>>, Vec<Problem>> {
    let mut problems = Vec::new();
    let index = first_indices(tasks, &mut problems);
    let edges = resolve_edges(tasks, &index, &mut problems);
    let cycles = find_cycles(&edges);
    let has_cycle = !cycles.is_empty();
    problems.extend(cycles.into_iter().map(|cycle| Problem::Cycle { cycle }));

    let waves = match groups.filter(|g| !g.is_empty()) {
        Some(groups) => declared_waves(tasks, groups, &index, &edges, has_cycle, &mut problems),
        None if has_cycle => Vec::new(),
        None => layered_waves(tasks.len(), &index, &edges),
    };
    if problems.is_empty() {
        Ok(waves)
    } else {
        Err(problems)
    }
}

/// The first index of each id; later repeats are problems.
fn first_indices(tasks: &[GraphTask], problems: &mut Vec<Problem>) -> HashMap<String, usize> {
    let mut index = HashMap::new();
    for (i, task) in tasks.iter().enumerate() {
        match index.get(&task.id) {
            Some(&first) => problems.push(Problem::DuplicateTask { index: i, first }),
            None => {
                index.insert(task.id.clone(), i);
            }
        }
    }
    index
}

/// For each task, the indices of the tasks it depends on (as `(dependency position, task)`);
/// unknown ids are problems. Duplicate tasks get no edges of their own.
fn resolve_edges(
    tasks: &[GraphTask],
    index: &HashMap<String, usize>,
    problems: &mut Vec<Problem>,
) -> Vec<Vec<(usize, usize)>> {
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    tasks
        .iter()
        .enumerate()
        .map(|(i, task)| {
            if index.get(&task.id) != Some(&i) {
                return Vec::new();
            }
            let mut edges = Vec::new();
            for (d, dependency) in task.dependencies.iter().enumerate() {
                match index.get(dependency) {
                    Some(&target) => {
                        if !edges.iter().any(|&(_, t)| t == target) {
                            edges.push((d, target));
                        }
                    }
                    None => problems.push(Problem::UnknownDependency {
                        task: i,
                        dependency: d,
                        suggestion: did_you_mean(dependency, ids.iter().copied())
                            .map(str::to_string),
                    }),
                }
            }
            edges
        })
        .collect()
}

/// One cycle per strongly connected component that has one, each starting at the component's
/// first task in file order.
fn find_cycles(edges: &[Vec<(usize, usize)>]) -> Vec<Vec<usize>> {
    let mut cycles = Vec::new();
    for component in strongly_connected(edges) {
        let start = component[0];
        let cyclic = component.len() > 1 || edges[start].iter().any(|&(_, t)| t == start);
        if !cyclic {
            continue;
        }
        let members: BTreeSet<usize> = component.iter().copied().collect();
        if let Some(cycle) = shortest_cycle(edges, start, &members) {
            cycles.push(cycle);
        }
    }
    cycles.sort_by_key(|cycle| cycle[0]);
    cycles
}

/// Tarjan's algorithm, iteratively; each component's members are sorted.
fn strongly_connected(edges: &[Vec<(usize, usize)>]) -> Vec<Vec<usize>> {
    let n = edges.len();
    let mut order = vec![usize::MAX; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut counter = 0;
    for root in 0..n {
        if order[root] != usize::MAX {
            continue;
        }
        // (node, next edge to look at)
        let mut work = vec![(root, 0usize)];
        order[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(&mut (node, ref mut next)) = work.last_mut() {
            if let Some(&(_, target)) = edges[node].get(*next) {
                *next += 1;
                if order[target] == usize::MAX {
                    order[target] = counter;
                    low[target] = counter;
                    counter += 1;
                    stack.push(target);
                    on_stack[target] = true;
                    work.push((target, 0));
                } else if on_stack[target] {
                    low[node] = low[node].min(order[target]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == order[node] {
                let mut component = Vec::new();
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    component.push(member);
                    if member == node {
                        break;
                    }
                }
                component.sort_unstable();
                components.push(component);
            }
        }
    }
    components
}

/// The shortest path from `start` back to itself inside `members` (breadth first, edges in
/// the order written), without repeating `start` at the end.
fn shortest_cycle(
    edges: &[Vec<(usize, usize)>],
    start: usize,
    members: &BTreeSet<usize>,
) -> Option<Vec<usize>> {
    let mut came_from: HashMap<usize, usize> = Default::default();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &(_, target) in &edges[node] {
            if !members.contains(&target) {
                continue;
            }
            if target == start {
                let mut path = vec![node];
                let mut at = node;
                while at != start {
                    at = came_from[&at];
                    path.push(at);
                }
                path.reverse();
                return Some(path);
            }
            if target != start && !came_from.contains_key(&target) {
                came_from.insert(target, node);
                queue.push_back(target);
            }
        }
    }
    None
}

/// Layers: a task without dependencies is in wave 0, any other one wave after its latest
/// dependency. Requires an acyclic graph.
fn layered_waves(
    count: usize,
    index: &HashMap<String, usize>,
    edges: &[Vec<(usize, usize)>],
) -> Vec<Vec<usize>> {
    let mut wave_of: Vec<Option<usize>> = vec![None; count];
    fn wave(node: usize, edges: &[Vec<(usize, usize)>], wave_of: &mut Vec<Option<usize>>) -> usize {
        if let Some(w) = wave_of[node] {
            return w;
        }
        let w = edges[node]
            .iter()
            .map(|&(_, target)| wave(target, edges, wave_of) + 1)
            .max()
            .unwrap_or(0);
        wave_of[node] = Some(w);
        w
    }
    let mut waves: Vec<Vec<usize>> = Vec::new();
    let mut firsts: Vec<usize> = index.values().copied().collect();
    firsts.sort_unstable();
    for i in firsts {
        let w = wave(i, edges, &mut wave_of);
        if waves.len() <= w {
            waves.resize(w + 1, Vec::new());
        }
        waves[w].push(i);
    }
    waves
}

/// The declared groups as waves, after checking that they list every task exactly once and
/// that every dependency sits in an earlier group.
fn declared_waves(
    tasks: &[GraphTask],
    groups: &[Vec<String>],
    index: &HashMap<String, usize>,
    edges: &[Vec<(usize, usize)>],
    has_cycle: bool,
    problems: &mut Vec<Problem>,
) -> Vec<Vec<usize>> {
    let ids: Vec<&str> = tasks.iter().map(|t| t.id.as_str()).collect();
    let mut placed: HashMap<usize, (usize, usize)> = Default::default();
    let mut waves = Vec::new();
    for (g, group) in groups.iter().enumerate() {
        let mut wave = Vec::new();
        for (item, id) in group.iter().enumerate() {
            let Some(&task) = index.get(id) else {
                problems.push(Problem::UnknownInGroup {
                    group: g,
                    item,
                    suggestion: did_you_mean(id, ids.iter().copied()).map(str::to_string),
                });
                continue;
            };
            if let Some(&(first_group, first_item)) = placed.get(&task) {
                problems.push(Problem::DuplicateInGroups {
                    group: g,
                    item,
                    first_group,
                    first_item,
                });
                continue;
            }
            placed.insert(task, (g, item));
            wave.push(task);
        }
        if !wave.is_empty() {
            waves.push(wave);
        }
    }
    for (task, _) in tasks.iter().enumerate() {
        if index.get(&tasks[task].id) == Some(&task) && !placed.contains_key(&task) {
            problems.push(Problem::MissingFromGroups { task });
        }
    }
    if !has_cycle {
        for (task, task_edges) in edges.iter().enumerate() {
            let Some(&(task_group, _)) = placed.get(&task) else {
                continue;
            };
            for &(dependency, target) in task_edges {
                let Some(&(dependency_group, _)) = placed.get(&target) else {
                    continue;
                };
                if dependency_group >= task_group {
                    problems.push(Problem::DependencyNotEarlier {
                        task,
                        dependency,
                        task_group,
                        dependency_group,
                    });
                }
            }
        }
    }
    waves
}

#[cfg(test)]
mod tests;
