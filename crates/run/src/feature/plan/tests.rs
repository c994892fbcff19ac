use std::fs;
use std::path::Path;

use super::*;

fn task_file(id: &str, deps: &[&str]) -> String {
    format!(
        "---\nid: {id}\ntitle: Task {id}\ndependencies: [{}]\n---\n# Task {id}\n\nDo it.\n\n## Acceptance Criteria\n- [ ] done\n",
        deps.join(", ")
    )
}

struct Repo {
    dir: tempfile::TempDir,
}

impl Repo {
    fn new() -> Repo {
        Repo {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn write(&self, path: &str, text: &str) -> &Repo {
        let file = self.root().join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
        self
    }

    fn task(&self, id: &str, deps: &[&str]) -> &Repo {
        self.write(&format!(".autobuild/tasks/{id}.md"), &task_file(id, deps))
    }

    fn feature(&self, text: &str) -> Result<FeaturePlan, Error> {
        self.write(".autobuild/features/FEAT-1.yaml", text);
        load(self.root(), "FEAT-1")
    }
}

fn messages(error: Error) -> String {
    match error {
        Error::Invalid(d) => d.to_string(),
        other => panic!("expected located problems, got: {other}"),
    }
}

#[test]
fn tasks_are_found_by_id_and_by_file_path_and_waves_computed() {
    let repo = Repo::new();
    repo.task("A", &[])
        .task("B", &[])
        .write("tasks/backlog/c.md", &task_file("C", &["A", "B"]));
    let plan = repo
        .feature(
            "id: FEAT-1\nname: Demo\ntasks:\n  - id: A\n  - id: B\n  - id: C\n    file_path: tasks/backlog/c.md\n",
        )
        .unwrap();
    assert_eq!(plan.waves, vec![vec!["A", "B"], vec!["C"]]);
    assert!(!plan.declared_waves);
    let c = plan.task("C").unwrap();
    assert_eq!(c.dependencies, vec!["A", "B"], "taken from the task file");
    assert_eq!(c.wave, 1);
    assert_eq!(
        plan.shown_path(&c.task.path),
        Path::new("tasks/backlog/c.md")
    );
    assert_eq!(plan.file, Path::new(".autobuild/features/FEAT-1.yaml"));
}

#[test]
fn the_feature_file_dependencies_override_the_task_file() {
    let repo = Repo::new();
    repo.task("A", &[]).task("B", &["A"]);
    let plan = repo
        .feature("id: FEAT-1\ntasks:\n  - id: A\n  - id: B\n    dependencies: []\n")
        .unwrap();
    assert_eq!(plan.waves, vec![vec!["A", "B"]]);
}

#[test]
fn unknown_task_and_unknown_dependency_are_located_with_suggestions() {
    let repo = Repo::new();
    repo.task("TASK-001", &[]).task("TASK-002", &[]);
    let text = messages(
        repo.feature(
            "id: FEAT-1\ntasks:\n  - id: TASK-001\n  - id: TASK-02\n  - id: TASK-002\n    dependencies: [TASK-01]\n",
        )
        .unwrap_err(),
    );
    assert!(
        text.contains(".autobuild/features/FEAT-1.yaml:4:9: unknown task `TASK-02`"),
        "{text}"
    );
    assert!(text.contains("did you mean `TASK-002`?"), "{text}");
    assert!(
        text.contains(
            ".autobuild/features/FEAT-1.yaml:6:20: `TASK-002` depends on `TASK-01`, which is not a task of this feature"
        ),
        "{text}"
    );
    assert!(text.contains("did you mean `TASK-001`?"), "{text}");
}

#[test]
fn a_cycle_is_printed_at_the_dependency_that_closes_it() {
    let repo = Repo::new();
    repo.task("A", &[]).task("B", &[]);
    let text = messages(
        repo.feature(
            "id: FEAT-1\ntasks:\n  - id: A\n    dependencies: [B]\n  - id: B\n    dependencies: [A]\n",
        )
        .unwrap_err(),
    );
    assert!(
        text.starts_with(".autobuild/features/FEAT-1.yaml:4:20: dependency cycle: A → B → A"),
        "{text}"
    );
}

#[test]
fn a_cycle_from_task_files_is_located_in_the_task_file() {
    let repo = Repo::new();
    repo.task("A", &["B"]).task("B", &["A"]);
    let text = messages(
        repo.feature("id: FEAT-1\ntasks:\n  - id: A\n  - id: B\n")
            .unwrap_err(),
    );
    assert!(
        text.starts_with(".autobuild/tasks/A.md:4:16: dependency cycle: A → B → A"),
        "{text}"
    );
}

#[test]
fn a_stale_file_path_falls_back_to_the_task_id_with_a_located_warning() {
    // GuardKit moves task files between its state folders; its feature files keep the old path.
    let repo = Repo::new();
    repo.write("tasks/in_review/A.md", &task_file("A", &[]))
        .task("B", &["A"]);
    let plan = repo
        .feature("id: FEAT-1\ntasks:\n  - id: A\n    file_path: tasks/backlog/A.md\n  - id: B\n")
        .unwrap();
    let a = plan.task("A").unwrap();
    assert!(
        a.task.path.ends_with("tasks/in_review/A.md"),
        "{:?}",
        a.task.path
    );
    assert_eq!(
        plan.waves,
        vec![vec!["A".to_string()], vec!["B".to_string()]]
    );
    let warning = &a.task.warnings[0];
    assert!(warning.is_warning());
    let text = warning.to_string();
    assert!(
        text.starts_with("warning: .autobuild/features/FEAT-1.yaml:4:16: task file `tasks/backlog/A.md` does not exist; using task `A` found by its id at tasks/in_review/A.md"),
        "{text}"
    );
    assert!(text.contains("correct `file_path`"), "{text}");
}

#[test]
fn a_stale_file_path_whose_id_no_task_declares_is_reported_at_its_file_path() {
    let repo = Repo::new();
    repo.task("B", &[]);
    let text = messages(
        repo.feature("id: FEAT-1\ntasks:\n  - id: A\n    file_path: tasks/backlog/A.md\n")
            .unwrap_err(),
    );
    assert!(
        text.contains("FEAT-1.yaml:4:16: task file `tasks/backlog/A.md` does not exist"),
        "{text}"
    );
    assert!(
        text.contains("no task file declares this id either"),
        "{text}"
    );
}

#[test]
fn a_task_only_in_a_finished_folder_is_done_and_its_dependants_plan_as_if_it_had_landed() {
    let repo = Repo::new();
    repo.write("tasks/completed/A/A.md", &task_file("A", &[]))
        .write("tasks/obsolete/O.md", &task_file("O", &[]))
        .write("tasks/archived/R.md", &task_file("R", &[]))
        .write("tasks/backlog/B.md", &task_file("B", &["A", "O", "R"]));
    let plan = repo
        .feature(
            "id: FEAT-1\ntasks:\n  - id: A\n    file_path: tasks/backlog/A.md\n  - id: O\n  - id: R\n    file_path: tasks/archived/R.md\n  - id: B\n    file_path: tasks/backlog/B.md\n",
        )
        .unwrap();
    // A stale path, a lookup by id and a path straight into a finished folder: all done.
    for (id, state, line) in [
        ("A", "completed", "4:16"),
        ("O", "obsolete", "5:9"),
        ("R", "archived", "7:16"),
    ] {
        let task = plan.task(id).unwrap();
        assert_eq!(task.done.as_deref(), Some(state), "{id}");
        let warning = &task.task.warnings[0];
        assert!(warning.is_warning(), "{id}");
        let text = warning.to_string();
        assert!(
            text.contains(&format!("FEAT-1.yaml:{line}: "))
                && text.contains(&format!("task `{id}` is done ({state}: tasks/")),
            "{text}"
        );
        assert!(text.contains("it is not run again"), "{text}");
    }
    let a = plan.task("A").unwrap().task.warnings[0].to_string();
    assert!(a.contains("task file `tasks/backlog/A.md` does not exist; task `A` is done (completed: tasks/completed/A/A.md)"), "{a}");
    let b = plan.task("B").unwrap();
    assert_eq!(b.done, None, "an active task is not done");
    assert_eq!(b.wave, 1);
    assert_eq!(plan.waves[1], vec!["B".to_string()]);
}

#[test]
fn a_finished_copy_that_no_longer_parses_is_still_done_never_run() {
    let repo = Repo::new();
    repo.write(
        "tasks/completed/A.md",
        "---\nid: A\ntitle: [broken\n---\n# A\n",
    );
    let plan = repo
        .feature("id: FEAT-1\ntasks:\n  - id: A\n    file_path: tasks/backlog/A.md\n")
        .unwrap();
    let a = plan.task("A").unwrap();
    assert_eq!(a.done.as_deref(), Some("completed"));
    assert!(
        a.task.path.ends_with("tasks/completed/A.md"),
        "{:?}",
        a.task.path
    );
}

#[test]
fn a_stale_file_path_whose_id_is_ambiguous_is_reported() {
    let repo = Repo::new();
    repo.write("tasks/backlog/one.md", &task_file("A", &[]))
        .write("tasks/backlog/two.md", &task_file("A", &[]));
    let text = messages(
        repo.feature("id: FEAT-1\ntasks:\n  - id: A\n    file_path: tasks/gone/A.md\n")
            .unwrap_err(),
    );
    assert!(
        text.contains("FEAT-1.yaml:4:16: task file `tasks/gone/A.md` does not exist"),
        "{text}"
    );
    assert!(
        text.contains("more than one file in the same state"),
        "{text}"
    );
}

#[test]
fn declared_groups_are_checked_against_dependencies() {
    let repo = Repo::new();
    repo.task("A", &[]).task("B", &["A"]).task("C", &[]);
    let text = messages(
        repo.feature(
            "id: FEAT-1\ntasks:\n  - id: A\n  - id: B\n  - id: C\norchestration:\n  parallel_groups:\n    - [A, B]\n    - [A]\n",
        )
        .unwrap_err(),
    );
    assert!(
        text.contains("FEAT-1.yaml:5:9: task `C` is in none of the `parallel_groups`"),
        "{text}"
    );
    assert!(
        text.contains(
            "FEAT-1.yaml:8:11: `B` is in group 1 but depends on `A`, which is in the same group"
        ),
        "{text}"
    );
    assert!(
        text.contains("FEAT-1.yaml:9:8: task `A` is in `parallel_groups` twice"),
        "{text}"
    );
}

#[test]
fn a_task_listed_twice_and_a_bad_feature_id_are_reported() {
    let repo = Repo::new();
    repo.task("A", &[]);
    let text = messages(
        repo.feature("id: FEAT 1\ntasks:\n  - id: A\n  - id: A\n")
            .unwrap_err(),
    );
    assert!(
        text.contains("FEAT-1.yaml:1:5: invalid feature id"),
        "{text}"
    );
    assert!(
        text.contains("FEAT-1.yaml:4:9: task `A` is listed twice"),
        "{text}"
    );
}

#[test]
fn a_file_declaring_another_id_is_reported() {
    let repo = Repo::new();
    repo.task("A", &[]);
    let text = messages(
        repo.feature("id: FEAT-1\ntasks:\n  - id: B\n    file_path: .autobuild/tasks/A.md\n")
            .unwrap_err(),
    );
    assert!(
        text.contains("FEAT-1.yaml:3:9: .autobuild/tasks/A.md declares the id `A`, not `B`"),
        "{text}"
    );
}

#[test]
fn tasks_of_a_wave_that_write_the_same_files_are_planned_a_wave_apart() {
    let repo = Repo::new();
    let writing = |id: &str, keys: &str| {
        format!(
            "---\nid: {id}\ntitle: Task {id}\n{keys}---\n# Task {id}\n\nDo it.\n\n## Acceptance Criteria\n- [ ] done\n"
        )
    };
    repo.write(
        ".autobuild/tasks/A.md",
        &writing(
            "A",
            "files_to_modify: [CHANGELOG.md]\nfiles_to_create: [src/a.py]\n",
        ),
    )
    .write(
        ".autobuild/tasks/B.md",
        &writing("B", "files_to_create: [src/b.py]\n"),
    )
    .write(
        ".autobuild/tasks/C.md",
        &writing("C", "files_to_modify:\n  - ./CHANGELOG.md\n"),
    )
    .task("D", &["A", "B", "C"]);
    let plan = repo
        .feature("id: FEAT-1\ntasks:\n  - id: A\n  - id: B\n  - id: C\n  - id: D\n")
        .unwrap();
    assert_eq!(plan.waves, vec![vec!["A", "B"], vec!["C"], vec!["D"]]);
    assert_eq!(plan.task("C").unwrap().wave, 1);
    assert_eq!(plan.task("D").unwrap().wave, 2);
    assert_eq!(
        plan.separated,
        vec![crate::feature::overlap::Separated {
            task: "C".into(),
            after: "A".into(),
            paths: vec!["./CHANGELOG.md".into()],
        }]
    );

    // Declared groups are split the same way.
    let plan = repo
        .feature("id: FEAT-1\ntasks:\n  - id: A\n  - id: B\n  - id: C\n  - id: D\norchestration:\n  parallel_groups:\n    - [A, B, C]\n    - [D]\n")
        .unwrap();
    assert_eq!(plan.waves, vec![vec!["A", "B"], vec!["C"], vec!["D"]]);
}
