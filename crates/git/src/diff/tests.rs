use super::*;

fn change(path: &str, insertions: usize, deletions: usize) -> FileChange {
    FileChange {
        path: path.to_string(),
        old_path: None,
        status: ChangeStatus::Modified,
        insertions,
        deletions,
        binary: false,
    }
}

#[test]
fn the_budget_is_shared_so_one_large_file_never_hides_the_others() {
    assert_eq!(shares(&[100, 100], 1000), [100, 100]);
    assert_eq!(shares(&[10_000, 300, 20_000], 3000), [1350, 300, 1350]);
    assert_eq!(shares(&[], 10), Vec::<usize>::new());
    let big = "+".repeat(20_000);
    let files = vec![
        ("tests/a_big.py".to_string(), big.clone().into_bytes()),
        (
            "tests/z_weakened.py".to_string(),
            b"-    assert slug(x) == y\n".to_vec(),
        ),
    ];
    let text = within_budget(&files, 1000);
    assert!(text.contains("assert slug(x) == y"), "{text}");
    assert!(text.contains("(tests/a_big.py: "), "{text}");
    // Too many files for the budget: the ones that cannot be shown are named.
    let many: Vec<(String, Vec<u8>)> = (0..10)
        .map(|i| (format!("t{i}.py"), big.clone().into_bytes()))
        .collect();
    let text = within_budget(&many, 1000);
    assert!(
        text.contains("left out, the diff being too large: t0.py, t1.py"),
        "{text}"
    );
}

#[test]
fn from_files_sorts_merges_duplicates_and_totals() {
    let stat = DiffStat::from_files(vec![
        change("b.rs", 1, 0),
        change("a.rs", 2, 3),
        change("b.rs", 4, 1),
    ]);
    assert_eq!(stat.paths(), ["a.rs", "b.rs"]);
    assert_eq!((stat.files[1].insertions, stat.files[1].deletions), (5, 1));
    assert_eq!((stat.insertions, stat.deletions), (7, 4));
}

#[test]
fn render_matches_git_layout() {
    let stat = DiffStat::from_files(vec![
        change("src/utils.py", 8, 4),
        change("tests/test_utils.py", 30, 0),
    ]);
    assert_eq!(
        stat.render(),
        " src/utils.py        | 12 ++++++++----\n \
         tests/test_utils.py | 30 ++++++++++++++++++++++++++++++\n \
         2 files changed, 38 insertions(+), 4 deletions(-)"
    );
}

#[test]
fn render_omits_zero_totals_and_shows_binary_and_renames() {
    let mut image = change("logo.png", 0, 0);
    image.binary = true;
    image.status = ChangeStatus::Added;
    let mut moved = change("new.rs", 0, 1);
    moved.old_path = Some("old.rs".to_string());
    moved.status = ChangeStatus::Renamed;
    let stat = DiffStat::from_files(vec![image, moved]);
    assert_eq!(
        stat.render(),
        " logo.png         | Bin\n new.rs           |   1 -\n 2 files changed, 1 deletion(-)"
            .replace("new.rs          ", "old.rs => new.rs")
    );
}

#[test]
fn render_of_nothing_says_so() {
    assert_eq!(DiffStat::default().render(), " 0 files changed");
}

#[test]
fn render_is_bounded_for_huge_diffs() {
    let files = (0..500)
        .map(|i| change(&format!("{}/f{i:03}.rs", "d".repeat(200)), 10_000, 0))
        .collect();
    let rendered = DiffStat::from_files(files).render();
    let lines: Vec<&str> = rendered.lines().collect();
    assert_eq!(lines.len(), MAX_RENDERED_FILES + 2);
    assert_eq!(lines[MAX_RENDERED_FILES], " ... and 450 more files");
    assert!(lines
        .iter()
        .all(|line| line.chars().count() <= MAX_PATH_WIDTH + MAX_BAR_WIDTH + 20));
    assert!(lines[0].starts_with(" ...ddd"), "{}", lines[0]);
    assert!(lines[0].contains("d/f000.rs |"), "{}", lines[0]);
}

#[test]
fn bar_scales_large_changes_to_the_maximum_width() {
    assert_eq!(bar(1000, 0, 1000), "+".repeat(MAX_BAR_WIDTH));
    assert_eq!(bar(500, 500, 1000).len(), MAX_BAR_WIDTH);
    assert_eq!(bar(1, 0, 1000), "+");
    assert_eq!(bar(3, 2, 10), "+++--");
}
