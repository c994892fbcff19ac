//! Task lookup across `.autobuild/tasks/` and GuardKit's `tasks/<state>/` directories.

use std::fs;
use std::path::Path;

use autobuild::error::Error;
use autobuild::task::{list_tasks, locate};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

fn task(id: &str) -> String {
    format!("---\nid: {id}\n---\n# {id}\n\n## Acceptance Criteria\n- done\n")
}

fn help(error: &Error) -> String {
    error.help().unwrap_or_default().to_string()
}

#[test]
fn finds_tasks_in_every_documented_place() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".autobuild/tasks/nested/a.md", &task("TASK-A"));
    write(root, "tasks/backlog/b.md", &task("TASK-B"));
    write(root, "tasks/in_progress/deep/er/c.md", &task("TASK-C"));
    write(root, "tasks/design_approved/d.md", &task("TASK-D"));
    write(root, "tasks/in_review/e.md", &task("TASK-E"));
    write(root, "tasks/blocked/f.md", &task("TASK-F"));
    write(root, "tasks/completed/g.md", &task("TASK-G"));
    write(root, "tasks/backlog/notes.txt", &task("TASK-H"));

    for (id, rel) in [
        ("TASK-A", ".autobuild/tasks/nested/a.md"),
        ("TASK-B", "tasks/backlog/b.md"),
        ("TASK-C", "tasks/in_progress/deep/er/c.md"),
        ("TASK-D", "tasks/design_approved/d.md"),
        ("TASK-E", "tasks/in_review/e.md"),
        ("TASK-F", "tasks/blocked/f.md"),
    ] {
        let found = locate(root, id).unwrap();
        assert_eq!(found.id, id);
        assert_eq!(found.path, root.join(rel));
    }
    // Lookup by id also finds a finished task (issue 24); the list of tasks to run does not.
    assert_eq!(
        locate(root, "TASK-G").unwrap().path,
        root.join("tasks/completed/g.md")
    );
    assert!(locate(root, "TASK-H").is_err());
    let scan = list_tasks(root).unwrap();
    assert_eq!(scan.tasks.len(), 6);
    assert!(scan.invalid.is_empty());
}

#[test]
fn matches_the_front_matter_id_exactly_not_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".autobuild/tasks/TASK-1.md", &task("TASK-10"));
    write(dir.path(), ".autobuild/tasks/other.md", &task("TASK-1"));
    let found = locate(dir.path(), "TASK-1").unwrap();
    assert!(found.path.ends_with("other.md"));
}

/// Lookup by id parses only the files whose name or text carries the id: the answers are the
/// same as a parse of every file (issue 24).
#[test]
fn lookup_by_id_table() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Named after one id, declaring another.
    write(root, "tasks/backlog/TASK-7-misnamed.md", &task("TASK-70"));
    // Named after nothing, declaring its id.
    write(root, "tasks/in_review/notes.md", &task("TASK-7"));
    // Directly in .guardkit/tasks/.
    write(root, ".guardkit/tasks/TASK-9-loose.md", &task("TASK-9"));
    // Finished copy and an active one: the active one counts.
    write(root, "tasks/completed/TASK-5.md", &task("TASK-5"));
    write(root, "tasks/backlog/TASK-5.md", &task("TASK-5"));
    // Only finished.
    write(root, ".guardkit/tasks/archived/old.md", &task("TASK-OLD"));
    // Broken, id only in the file name.
    write(
        root,
        "tasks/blocked/TASK-8-broken.md",
        "---\ntitle: [\n---\n",
    );
    // A stranger that mentions an id in its text without declaring it.
    write(
        root,
        "tasks/backlog/other.md",
        &format!("{}\nSee TASK-7.\n", task("TASK-1")),
    );
    for (id, found) in [
        ("TASK-7", Some("tasks/in_review/notes.md")),
        ("TASK-70", Some("tasks/backlog/TASK-7-misnamed.md")),
        ("TASK-9", Some(".guardkit/tasks/TASK-9-loose.md")),
        ("TASK-5", Some("tasks/backlog/TASK-5.md")),
        ("TASK-OLD", Some(".guardkit/tasks/archived/old.md")),
        ("TASK-1", Some("tasks/backlog/other.md")),
        ("TASK-8", None),
        ("TASK-2", None),
    ] {
        let result = locate(root, id);
        match found {
            Some(rel) => assert_eq!(result.unwrap().path, root.join(rel), "{id}"),
            None => assert!(result.is_err(), "{id}"),
        }
    }
    // The broken file whose name carries the id is what the user is shown.
    let broken = locate(root, "TASK-8").unwrap_err().to_string();
    assert!(
        broken.contains("tasks/blocked/TASK-8-broken.md"),
        "{broken}"
    );
    // Not found: close ids are still suggested from every file.
    let missing = locate(root, "TASK-77").unwrap_err();
    assert!(help(&missing).contains("TASK-7"), "{}", help(&missing));
}

#[test]
fn a_path_is_parsed_directly() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "elsewhere/x.md", &task("TASK-X"));
    let by_root_relative = locate(dir.path(), "elsewhere/x.md").unwrap();
    assert_eq!(by_root_relative.id, "TASK-X");
    let absolute = dir.path().join("elsewhere/x.md");
    assert_eq!(
        locate(dir.path(), absolute.to_str().unwrap()).unwrap().id,
        "TASK-X"
    );
    let err = locate(dir.path(), "elsewhere/missing.md").unwrap_err();
    assert!(err.to_string().contains("does not exist"), "{err}");
}

#[test]
fn two_files_with_one_id_in_the_same_state_name_both_relative_to_the_repository() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "tasks/backlog/one.md", &task("TASK-DUP"));
    write(
        dir.path(),
        ".guardkit/tasks/backlog/sub/two.md",
        &task("TASK-DUP"),
    );
    write(dir.path(), "tasks/completed/three.md", &task("TASK-DUP"));
    let err = locate(dir.path(), "TASK-DUP").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("more than one file in the same state"),
        "{text}"
    );
    assert!(
        text.contains(".guardkit/tasks/backlog/sub/two.md and tasks/backlog/one.md"),
        "{text}"
    );
    assert!(!text.contains(&dir.path().display().to_string()), "{text}");
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn copies_in_different_state_folders_are_settled_by_lifecycle_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "tasks/backlog/TASK-DUP-old.md", &task("TASK-DUP"));
    write(root, "tasks/in_review/TASK-DUP.md", &task("TASK-DUP"));
    write(
        root,
        "tasks/blocked/TASK-DUP.md",
        "---\nid: TASK-DUP\n---\nbroken\n",
    );
    let found = locate(root, "TASK-DUP").unwrap();
    assert_eq!(found.path, root.join("tasks/in_review/TASK-DUP.md"));
    assert_eq!(found.warnings.len(), 1);
    let warning = found.warnings[0].to_string();
    assert_eq!(
        warning,
        "tasks/in_review/TASK-DUP.md: task `TASK-DUP` is also declared by tasks/backlog/TASK-DUP-old.md (backlog), tasks/blocked/TASK-DUP.md (blocked); using this copy, the one in the most advanced state (in_review)"
    );

    // The copy that counts is the one whose problems are shown, however many stale ones parse.
    write(
        root,
        "tasks/in_progress/TASK-DUP.md",
        "---\nid: TASK-DUP\n---\nno criteria\n",
    );
    let err = locate(root, "TASK-DUP").unwrap_err().to_string();
    assert!(
        err.starts_with(
            "tasks/in_progress/TASK-DUP.md:4:1: the task has no `## Acceptance Criteria` section"
        ),
        "{err}"
    );
}

#[test]
fn guardkit_dot_folder_tasks_and_file_name_ids_are_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        ".guardkit/tasks/backlog/auth/TASK-NOID-7-add-login.md",
        "---\ntitle: Add login\n---\n## Acceptance Criteria\n- works\n",
    );
    let task = locate(root, "TASK-NOID-7").unwrap();
    assert_eq!(task.title, "Add login");
}

#[test]
fn a_broken_file_named_after_the_id_is_the_one_reported() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "tasks/backlog/TASK-069-fix-it.md",
        "---\ntitle: [\n---\n",
    );
    write(
        root,
        "tasks/backlog/TASK-070-other.md",
        "---\ntitle: [\n---\n",
    );
    let err = locate(root, "TASK-069").unwrap_err().to_string();
    assert!(
        err.starts_with("tasks/backlog/TASK-069-fix-it.md:"),
        "{err}"
    );
    assert!(!err.contains("TASK-070"), "{err}");
}

#[test]
fn not_found_suggests_close_ids_and_says_where_it_looked() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".autobuild/tasks/a.md", &task("TASK-001"));
    write(dir.path(), ".autobuild/tasks/b.md", &task("OTHER-9"));
    let err = locate(dir.path(), "task-001").unwrap_err();
    assert_eq!(err.to_string(), "no task with id `task-001`");
    let help = help(&err);
    assert!(help.starts_with("did you mean `TASK-001`?"), "{help}");
    assert!(!help.contains("OTHER-9"), "{help}");
    assert!(
        help.contains(".autobuild/tasks/")
            && help.contains("tasks/STATE/ and .guardkit/tasks/STATE/")
            && help.contains("backlog"),
        "{help}"
    );

    let err = locate(dir.path(), "ZZZ").unwrap_err();
    assert!(
        help_of(&err).starts_with("searched .autobuild/tasks/"),
        "{}",
        help_of(&err)
    );
}

fn help_of(error: &Error) -> String {
    help(error)
}

#[test]
fn broken_files_are_skipped_unless_they_declare_the_wanted_id() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".autobuild/tasks/good.md", &task("TASK-GOOD"));
    write(
        dir.path(),
        ".autobuild/tasks/README.md",
        "How we write tasks.\n",
    );
    write(
        dir.path(),
        ".autobuild/tasks/broken.md",
        "---\nid: TASK-BROKEN\ntitle: [oops\n---\n# x\n",
    );
    assert_eq!(locate(dir.path(), "TASK-GOOD").unwrap().id, "TASK-GOOD");

    let err = locate(dir.path(), "TASK-BROKEN").unwrap_err();
    let text = err.to_string();
    assert!(text.contains("broken.md:"), "{text}");
    assert!(text.contains("malformed YAML front matter"), "{text}");

    let scan = list_tasks(dir.path()).unwrap();
    assert_eq!(scan.tasks.len(), 1);
    let ids: Vec<Option<&str>> = scan.invalid.iter().map(|t| t.id.as_deref()).collect();
    assert_eq!(ids, vec![None, Some("TASK-BROKEN")]);
}

#[test]
fn an_unclosed_front_matter_that_visibly_declares_the_id_is_the_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".autobuild/tasks/good.md", &task("B5"));
    write(
        dir.path(),
        ".autobuild/tasks/b6.md",
        "---\nid: B6\ntitle: Add a farewell\n\n# Add a farewell\n\n## Acceptance Criteria\n- done\n",
    );
    let err = locate(dir.path(), "B6").unwrap_err();
    assert_eq!(err.exit_code(), 2);
    let Error::Invalid(problems) = &err else {
        panic!("expected the file's problems, got {err}");
    };
    assert_eq!(problems.0.len(), 1, "{err}");
    assert_eq!(problems.0[0].path, Path::new(".autobuild/tasks/b6.md"));
    assert!(
        err.to_string().starts_with(
            ".autobuild/tasks/b6.md:1:1: the front matter opened here is never closed"
        ),
        "{err}"
    );
}

#[test]
fn not_found_lists_the_broken_task_files_that_may_declare_the_id() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".autobuild/tasks/good.md", &task("TASK-GOOD"));
    write(
        dir.path(),
        ".autobuild/tasks/README.md",
        "How we write tasks.\n",
    );
    write(
        dir.path(),
        ".autobuild/tasks/other.md",
        "---\nid: TASK-OTHER\ntitle: [oops\n---\n# x\n",
    );
    write(
        dir.path(),
        "tasks/backlog/unclosed.md",
        "---\ntitle: Farewell\n\n# Farewell\n",
    );
    write(
        dir.path(),
        "tasks/backlog/yaml.md",
        "---\n\tid: [B6\n---\n# x\n\n## Acceptance Criteria\n- done\n",
    );
    let err = locate(dir.path(), "B6").unwrap_err();
    assert_eq!(err.exit_code(), 2);
    let lines: Vec<String> = err.to_string().lines().map(str::to_string).collect();
    assert_eq!(
        lines[0],
        "no task with id `B6`; 2 task files could not be read and may declare it:"
    );
    assert_eq!(
        lines[1],
        "  tasks/backlog/unclosed.md:1:1: the front matter opened here is never closed by a `---` line"
    );
    assert!(
        lines[2].starts_with("  tasks/backlog/yaml.md:2:6: malformed YAML front matter"),
        "{}",
        lines[2]
    );
    assert_eq!(
        lines.len(),
        3,
        "README.md and a file declaring another id are not listed"
    );
    let help = help(&err);
    assert!(help.starts_with("fix the task files above"), "{help}");
    assert!(help.contains(".autobuild/tasks/"), "{help}");
}

/// GuardKit names task files after their ids: those are parsed first (issue 24), in every
/// state folder, finished ones included; a file named otherwise is found by its text only when
/// no file named after the id declares it.
#[test]
fn lookup_by_id_reads_file_names_first_in_every_state_folder() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "tasks/completed/TASK-C1-shipped.md", &task("TASK-C1"));
    write(root, "tasks/backlog/TASK-C10-other.md", &task("TASK-C10"));
    write(root, "tasks/in_review/untitled.md", &task("TASK-N1"));
    let found = locate(root, "TASK-C1").unwrap();
    assert_eq!(found.path, root.join("tasks/completed/TASK-C1-shipped.md"));
    assert!(found.warnings.is_empty(), "{:?}", found.warnings);
    // Its name does not carry the id: found by parsing the files that mention it.
    let found = locate(root, "TASK-N1").unwrap();
    assert_eq!(found.path, root.join("tasks/in_review/untitled.md"));

    // Two files named after one id in the same state: the duplicate rule holds.
    write(root, ".guardkit/tasks/backlog/TASK-C1.md", &task("TASK-C1"));
    write(root, "tasks/backlog/TASK-C1-copy.md", &task("TASK-C1"));
    let text = locate(root, "TASK-C1").unwrap_err().to_string();
    assert!(
        text.contains(
            "more than one file in the same state: .guardkit/tasks/backlog/TASK-C1.md and tasks/backlog/TASK-C1-copy.md"
        ),
        "{text}"
    );
    // In different states, the most advanced copy is taken with a warning naming the others.
    fs::remove_file(root.join("tasks/backlog/TASK-C1-copy.md")).unwrap();
    let found = locate(root, "TASK-C1").unwrap();
    assert_eq!(found.path, root.join(".guardkit/tasks/backlog/TASK-C1.md"));
    let warning = found.warnings[0].to_string();
    assert!(
        warning.contains("also declared by tasks/completed/TASK-C1-shipped.md (completed)"),
        "{warning}"
    );
    // The price of reading names first: a copy named after nothing is not seen while one
    // named after the id declares it.
    write(root, "tasks/backlog/stray.md", &task("TASK-C1"));
    let found = locate(root, "TASK-C1").unwrap();
    assert_eq!(found.path, root.join(".guardkit/tasks/backlog/TASK-C1.md"));
}

/// Listing a board reads each entry's type from its directory entry; only a link is followed
/// (issue 24): a linked task file is a task, a link to a directory or to nothing is not, and a
/// `.md` directory is searched, not read.
#[test]
fn a_linked_task_file_is_found_and_links_to_anything_else_are_not_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "elsewhere/TASK-L1.md", &task("TASK-L1"));
    write(root, "elsewhere/dir.md/TASK-L2.md", &task("TASK-L2"));
    fs::create_dir_all(root.join("tasks/backlog")).unwrap();
    let link = |target: &str, name: &str| {
        std::os::unix::fs::symlink(root.join(target), root.join("tasks/backlog").join(name))
            .unwrap()
    };
    link("elsewhere/TASK-L1.md", "TASK-L1-linked.md");
    link("elsewhere/dir.md", "TASK-L2-dir.md");
    link("elsewhere/missing.md", "TASK-L3-dangling.md");
    write(
        root,
        "tasks/in_review/TASK-L4.md/TASK-L4.md",
        &task("TASK-L4"),
    );

    let found = locate(root, "TASK-L1").unwrap();
    assert_eq!(found.path, root.join("tasks/backlog/TASK-L1-linked.md"));
    assert!(
        locate(root, "TASK-L2").is_err(),
        "a linked directory is not followed"
    );
    assert!(locate(root, "TASK-L3").is_err());
    let found = locate(root, "TASK-L4").unwrap();
    assert_eq!(
        found.path,
        root.join("tasks/in_review/TASK-L4.md/TASK-L4.md")
    );
    let scan = list_tasks(root).unwrap();
    let ids: Vec<&str> = scan.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, ["TASK-L1", "TASK-L4"]);
    let invalid: Vec<_> = scan.invalid.iter().map(|t| &t.path).collect();
    assert!(
        invalid.is_empty(),
        "links to no file are not task files: {invalid:?}"
    );
}
