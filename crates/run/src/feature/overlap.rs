//! Tasks of one wave that would write the same files run in separate waves (docs/features.md,
//! "Tasks that write the same files"): a pure decision over the waves and each task's declared
//! write set (front matter `files_to_modify:` and `files_to_create:`, GuardKit's keys).
//!
//! Two tasks of a wave are branched from the same tip and squashed onto the feature branch one
//! after the other; when both change a file, the second often cannot land. Running it one wave
//! later branches it from a tip that holds the first one's work, so it is written, checked and
//! reviewed against exactly what it lands on. GuardKit's planner makes the same choice for its
//! parallel groups (file conflicts split a group). A wave is split first-fit in its own order:
//! each task goes into the first part where it meets no other task's writes, so dependencies
//! stay satisfied (every part of wave *n* comes after every part of wave *n − 1*) and a wave
//! without overlaps is left as it is.

/// A task moved after another because both write `paths`. Indices are into the tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Separation {
    pub task: usize,
    /// The first task of an earlier part of its wave it meets.
    pub after: usize,
    /// The entries of the task's write set that meet the other's.
    pub paths: Vec<String>,
}

/// The waves with no two tasks of a wave whose write sets meet, and why each task moved.
/// `writes[i]` is task `i`'s write set (empty when it declares none, or will not run).
pub fn separate(
    waves: &[Vec<usize>],
    writes: &[Vec<String>],
) -> (Vec<Vec<usize>>, Vec<Separation>) {
    let empty = Vec::new();
    let writes_of = |task: usize| writes.get(task).unwrap_or(&empty);
    let mut separated = Vec::new();
    let mut out = Vec::new();
    for wave in waves {
        let mut parts: Vec<Vec<usize>> = Vec::new();
        for &task in wave {
            let mut first_met: Option<(usize, Vec<String>)> = None;
            let free = parts.iter().position(|part| {
                let met = part.iter().find_map(|&other| {
                    let paths = meeting(writes_of(task), writes_of(other));
                    (!paths.is_empty()).then_some((other, paths))
                });
                if first_met.is_none() {
                    first_met.clone_from(&met);
                }
                met.is_none()
            });
            match free {
                Some(part) => parts[part].push(task),
                None => parts.push(vec![task]),
            }
            if let (Some((after, paths)), true) = (first_met, free != Some(0)) {
                separated.push(Separation { task, after, paths });
            }
        }
        out.extend(parts);
    }
    (out, separated)
}

/// The entries of `a` that meet an entry of `b`.
pub fn meeting(a: &[String], b: &[String]) -> Vec<String> {
    a.iter()
        .filter(|x| b.iter().any(|y| meet(x, y)))
        .cloned()
        .collect()
}

/// Whether two write-set entries can name a common file: equal paths, a directory (`docs/`,
/// or a path another entry lies under) and what lies under it, or a glob and a path it
/// matches. Two globs are compared by the directories their literal beginnings name — they
/// may meet, and a wave more is cheaper than a conflict.
pub fn meet(a: &str, b: &str) -> bool {
    let (a, b) = (normal(a), normal(b));
    if a.is_empty() || b.is_empty() {
        return false;
    }
    match (is_glob(a), is_glob(b)) {
        (false, false) => a == b || under(a, b) || under(b, a),
        (true, false) => glob_meets_path(a, b),
        (false, true) => glob_meets_path(b, a),
        (true, true) => {
            let (pa, pb) = (literal_dir(a), literal_dir(b));
            pa.is_empty() || pb.is_empty() || pa == pb || under(pa, pb) || under(pb, pa)
        }
    }
}

fn normal(entry: &str) -> &str {
    let entry = entry.trim();
    let entry = entry.strip_prefix("./").unwrap_or(entry);
    entry.trim_end_matches('/')
}

fn is_glob(entry: &str) -> bool {
    entry.contains(['*', '?', '[', '{'])
}

/// `path` lies under the directory `dir`.
fn under(path: &str, dir: &str) -> bool {
    path.strip_prefix(dir)
        .is_some_and(|rest| rest.starts_with('/'))
}

fn glob_meets_path(glob: &str, path: &str) -> bool {
    let matches = base::pattern::glob(glob).is_ok_and(|g| g.compile_matcher().is_match(path));
    // A directory entry meets a glob that reaches into it.
    matches || {
        let dir = literal_dir(glob);
        dir == path || under(dir, path)
    }
}

/// The directories before a glob's first wildcard (`src/api` of `src/api/*.py`).
fn literal_dir(glob: &str) -> &str {
    let literal = &glob[..glob.find(['*', '?', '[', '{']).unwrap_or(glob.len())];
    literal.rfind('/').map_or("", |slash| &literal[..slash])
}

/// A [`Separation`] by task ids, as the plan, `feature.json` and the reports keep it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Separated {
    pub task: String,
    pub after: String,
    pub paths: Vec<String>,
}

impl Separated {
    /// `TASK-B runs after TASK-A: both write CHANGELOG.md`.
    pub fn sentence(&self) -> String {
        format!(
            "{} runs a wave after {}: both write {}",
            self.task,
            self.after,
            self.paths.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_meet_when_they_can_name_a_common_file() {
        let cases = [
            ("CHANGELOG.md", "CHANGELOG.md", true),
            ("./CHANGELOG.md", "CHANGELOG.md", true),
            ("src/a.py", "src/b.py", false),
            ("docs/", "docs/guide.md", true),
            ("docs", "docs/guide.md", true),
            ("doc", "docs/guide.md", false),
            ("src/**/*.py", "src/api/app.py", true),
            ("src/*.py", "tests/test_app.py", false),
            ("src/*.py", "src", true),
            ("src/api/*.py", "src/**", true),
            ("src/api/*.py", "tests/*.py", false),
            ("**/*.md", "lib/x.sh", false),
            ("**/*.md", "tests/*.py", true),
            ("", "x", false),
        ];
        for (a, b, expected) in cases {
            assert_eq!(meet(a, b), expected, "{a} / {b}");
            assert_eq!(meet(b, a), expected, "{b} / {a}");
        }
    }

    fn sets(spec: &[&[&str]]) -> Vec<Vec<String>> {
        spec.iter()
            .map(|s| s.iter().map(|p| p.to_string()).collect())
            .collect()
    }

    #[test]
    fn a_wave_is_split_first_fit_so_no_two_of_its_tasks_write_the_same_file() {
        // 0 and 2 both write CHANGELOG.md; 1 writes its own file; 3 writes nothing declared.
        let writes = sets(&[
            &["CHANGELOG.md", "src/a.py"],
            &["src/b.py"],
            &["CHANGELOG.md"],
            &[],
            &["src/a.py", "CHANGELOG.md"],
        ]);
        let (waves, moved) = separate(&[vec![0, 1, 2, 3, 4], vec![5]], &writes);
        assert_eq!(waves, vec![vec![0, 1, 3], vec![2], vec![4], vec![5]]);
        assert_eq!(
            moved,
            vec![
                Separation {
                    task: 2,
                    after: 0,
                    paths: vec!["CHANGELOG.md".into()]
                },
                Separation {
                    task: 4,
                    after: 0,
                    paths: vec!["src/a.py".into(), "CHANGELOG.md".into()]
                },
            ]
        );
    }

    #[test]
    fn waves_without_overlaps_are_left_as_they_are() {
        let writes = sets(&[&["a"], &["b"], &["a"]]);
        let waves = vec![vec![0, 1], vec![2]];
        assert_eq!(separate(&waves, &writes), (waves, Vec::new()));
        assert_eq!(separate(&[vec![0, 1]], &[]), (vec![vec![0, 1]], Vec::new()));
    }

    #[test]
    fn a_task_goes_into_the_first_part_it_fits() {
        // 1 meets 0; 2 meets 1 only, so it joins 0's part.
        let writes = sets(&[&["a"], &["a", "b"], &["b"]]);
        let (waves, moved) = separate(&[vec![0, 1, 2]], &writes);
        assert_eq!(waves, vec![vec![0, 2], vec![1]]);
        assert_eq!(moved.len(), 1);
    }
}
