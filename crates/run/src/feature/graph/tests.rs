use super::*;

fn ids(tasks: &[GraphTask], waves: &[Vec<usize>]) -> Vec<Vec<String>> {
    waves
        .iter()
        .map(|w| w.iter().map(|&i| tasks[i].id.clone()).collect())
        .collect()
}

fn groups(spec: &[&[&str]]) -> Vec<Vec<String>> {
    spec.iter()
        .map(|g| g.iter().map(|s| s.to_string()).collect())
        .collect()
}

#[test]
fn independent_tasks_share_the_first_wave_and_dependants_follow() {
    let tasks = [
        GraphTask::new("A", &[]),
        GraphTask::new("B", &[]),
        GraphTask::new("C", &["A", "B"]),
        GraphTask::new("D", &["C"]),
        GraphTask::new("E", &["A"]),
    ];
    let waves = plan_waves(&tasks, None).unwrap();
    assert_eq!(
        ids(&tasks, &waves),
        vec![vec!["A", "B"], vec!["C", "E"], vec!["D"]]
    );
}

#[test]
fn a_dependency_listed_later_in_the_file_still_runs_first() {
    let tasks = [GraphTask::new("B", &["A"]), GraphTask::new("A", &[])];
    let waves = plan_waves(&tasks, None).unwrap();
    assert_eq!(ids(&tasks, &waves), vec![vec!["A"], vec!["B"]]);
}

#[test]
fn declared_groups_are_the_waves() {
    let tasks = [
        GraphTask::new("A", &[]),
        GraphTask::new("B", &[]),
        GraphTask::new("C", &["A"]),
    ];
    // B could run in wave 1, but the file puts it in wave 2: the declaration wins.
    let declared = groups(&[&["A"], &["C", "B"]]);
    let waves = plan_waves(&tasks, Some(&declared)).unwrap();
    assert_eq!(ids(&tasks, &waves), vec![vec!["A"], vec!["C", "B"]]);
}

#[test]
fn empty_groups_mean_computed_waves() {
    let tasks = [GraphTask::new("A", &[]), GraphTask::new("B", &["A"])];
    let waves = plan_waves(&tasks, Some(&[])).unwrap();
    assert_eq!(ids(&tasks, &waves), vec![vec!["A"], vec!["B"]]);
}

#[test]
fn unknown_dependency_is_reported_with_a_suggestion() {
    let tasks = [
        GraphTask::new("TASK-001", &[]),
        GraphTask::new("TASK-002", &["TASK-01"]),
    ];
    assert_eq!(
        plan_waves(&tasks, None).unwrap_err(),
        vec![Problem::UnknownDependency {
            task: 1,
            dependency: 0,
            suggestion: Some("TASK-001".into())
        }]
    );
}

#[test]
fn a_cycle_is_reported_once_in_dependency_order() {
    let tasks = [
        GraphTask::new("A", &["C"]),
        GraphTask::new("B", &["A"]),
        GraphTask::new("C", &["B"]),
        GraphTask::new("D", &["A"]),
    ];
    assert_eq!(
        plan_waves(&tasks, None).unwrap_err(),
        vec![Problem::Cycle {
            cycle: vec![0, 2, 1]
        }]
    );
}

#[test]
fn a_task_depending_on_itself_is_a_cycle() {
    let tasks = [GraphTask::new("A", &["A"])];
    assert_eq!(
        plan_waves(&tasks, None).unwrap_err(),
        vec![Problem::Cycle { cycle: vec![0] }]
    );
}

#[test]
fn separate_cycles_are_each_reported() {
    let tasks = [
        GraphTask::new("A", &["B"]),
        GraphTask::new("B", &["A"]),
        GraphTask::new("C", &["D"]),
        GraphTask::new("D", &["C"]),
    ];
    assert_eq!(
        plan_waves(&tasks, None).unwrap_err(),
        vec![
            Problem::Cycle { cycle: vec![0, 1] },
            Problem::Cycle { cycle: vec![2, 3] }
        ]
    );
}

#[test]
fn a_task_listed_twice_is_reported() {
    let tasks = [
        GraphTask::new("A", &[]),
        GraphTask::new("B", &[]),
        GraphTask::new("A", &[]),
    ];
    assert_eq!(
        plan_waves(&tasks, None).unwrap_err(),
        vec![Problem::DuplicateTask { index: 2, first: 0 }]
    );
}

#[test]
fn group_problems_are_all_reported() {
    let tasks = [
        GraphTask::new("A", &[]),
        GraphTask::new("B", &["A"]),
        GraphTask::new("C", &[]),
        GraphTask::new("D", &["B"]),
    ];
    let declared = groups(&[&["A", "B"], &["A", "X"], &["D"]]);
    assert_eq!(
        plan_waves(&tasks, Some(&declared)).unwrap_err(),
        vec![
            Problem::DuplicateInGroups {
                group: 1,
                item: 0,
                first_group: 0,
                first_item: 0
            },
            Problem::UnknownInGroup {
                group: 1,
                item: 1,
                suggestion: None
            },
            Problem::MissingFromGroups { task: 2 },
            Problem::DependencyNotEarlier {
                task: 1,
                dependency: 0,
                task_group: 0,
                dependency_group: 0
            },
        ]
    );
}

#[test]
fn a_dependency_in_a_later_group_is_reported() {
    let tasks = [GraphTask::new("A", &["B"]), GraphTask::new("B", &[])];
    let declared = groups(&[&["A"], &["B"]]);
    assert_eq!(
        plan_waves(&tasks, Some(&declared)).unwrap_err(),
        vec![Problem::DependencyNotEarlier {
            task: 0,
            dependency: 0,
            task_group: 0,
            dependency_group: 1
        }]
    );
}

#[test]
fn group_order_is_not_checked_against_a_cycle() {
    let tasks = [GraphTask::new("A", &["B"]), GraphTask::new("B", &["A"])];
    let declared = groups(&[&["A"], &["B"]]);
    assert_eq!(
        plan_waves(&tasks, Some(&declared)).unwrap_err(),
        vec![Problem::Cycle { cycle: vec![0, 1] }]
    );
}
