//! `read`, `write` and `edit`: files of the worktree, by path (module `paths` keeps them
//! inside it).
//!
//! `read` numbers its lines and takes a range, so a model can page through a long file;
//! `edit` replaces an exact text that must occur once (or everywhere, when asked), so an
//! edit never lands somewhere the model did not mean.

use std::fs;
use std::path::Path;

use serde::Deserialize;

use super::paths::{inside, shown};
use super::Problem;

/// Lines `read` returns when no `limit` is given.
const DEFAULT_LINES: usize = 2000;
/// Characters of one line `read` shows.
const MAX_LINE: usize = 2000;

#[derive(Debug, Deserialize)]
pub struct ReadArgs {
    pub path: String,
    /// First line to show, from 1.
    #[serde(default)]
    pub offset: Option<usize>,
    #[serde(default)]
    pub limit: Option<usize>,
}

#[derive(Debug, Deserialize)]
pub struct WriteArgs {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Deserialize)]
pub struct EditArgs {
    pub path: String,
    pub old_string: String,
    pub new_string: String,
    #[serde(default)]
    pub replace_all: bool,
}

pub fn read(worktree: &Path, args: ReadArgs) -> Result<String, Problem> {
    let path = inside(worktree, &args.path)?;
    let text = fs::read(&path).map_err(|e| format!("cannot read `{}`: {e}", args.path))?;
    let text = String::from_utf8_lossy(&text);
    let first = args.offset.unwrap_or(1).max(1);
    let limit = args.limit.unwrap_or(DEFAULT_LINES).max(1);
    let total = text.lines().count();
    let mut out = String::new();
    for (index, line) in text.lines().enumerate().skip(first - 1).take(limit) {
        let line = match base::text::cut_chars(line, MAX_LINE) {
            Some(head) => format!("{head}… (line cut)"),
            None => line.to_string(),
        };
        out.push_str(&format!("{:>6}\t{line}\n", index + 1));
    }
    let last = (first - 1 + limit).min(total);
    if total == 0 {
        out.push_str("(empty file)\n");
    } else if first > total {
        out.push_str(&format!("(the file has {total} lines)\n"));
    } else if last < total {
        out.push_str(&format!(
            "(lines {first}-{last} of {total}; read on with offset {})\n",
            last + 1
        ));
    }
    Ok(out)
}

pub fn write(worktree: &Path, args: WriteArgs) -> Result<String, Problem> {
    let path = inside(worktree, &args.path)?;
    if path.is_dir() {
        return Err(Problem::Failed(format!("`{}` is a directory", args.path)));
    }
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create the directory of `{}`: {e}", args.path))?;
    }
    fs::write(&path, args.content.as_bytes())
        .map_err(|e| format!("cannot write `{}`: {e}", args.path))?;
    Ok(format!(
        "wrote {} bytes to {}",
        args.content.len(),
        shown(worktree, &path)
    ))
}

pub fn edit(worktree: &Path, args: EditArgs) -> Result<String, Problem> {
    let path = inside(worktree, &args.path)?;
    if args.old_string.is_empty() {
        return Err(Problem::Failed(
            "`old_string` is empty; use `write` to create a file".to_string(),
        ));
    }
    let text =
        fs::read_to_string(&path).map_err(|e| format!("cannot read `{}`: {e}", args.path))?;
    let found = text.matches(&args.old_string).count();
    let edited = match found {
        0 => {
            return Err(Problem::Failed(format!(
                "`old_string` does not occur in `{}`; read the file and copy the text exactly",
                args.path
            )))
        }
        1 => text.replacen(&args.old_string, &args.new_string, 1),
        _ if args.replace_all => text.replace(&args.old_string, &args.new_string),
        many => {
            return Err(Problem::Failed(format!(
                "`old_string` occurs {many} times in `{}`; give more surrounding text so it \
                 occurs once, or set replace_all",
                args.path
            )))
        }
    };
    fs::write(&path, edited).map_err(|e| format!("cannot write `{}`: {e}", args.path))?;
    Ok(format!(
        "replaced {} occurrence{} in {}",
        found,
        if found == 1 { "" } else { "s" },
        shown(worktree, &path)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worktree() -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().canonicalize().unwrap();
        (dir, path)
    }

    #[test]
    fn read_numbers_lines_and_pages() {
        let (_dir, wt) = worktree();
        fs::write(wt.join("a.txt"), "one\ntwo\nthree\n").unwrap();
        let args = |offset, limit| ReadArgs {
            path: "a.txt".into(),
            offset,
            limit,
        };
        assert_eq!(
            read(&wt, args(None, None)).unwrap(),
            "     1\tone\n     2\ttwo\n     3\tthree\n"
        );
        let page = read(&wt, args(Some(2), Some(1))).unwrap();
        assert!(
            page.starts_with("     2\ttwo\n(lines 2-2 of 3; read on with offset 3)"),
            "{page}"
        );
        assert!(read(
            &wt,
            ReadArgs {
                path: "missing".into(),
                offset: None,
                limit: None
            }
        )
        .is_err());
    }

    #[test]
    fn edit_replaces_exactly_once_and_fails_on_ambiguity_or_no_match() {
        let (_dir, wt) = worktree();
        fs::write(wt.join("a.rs"), "x = 1;\nx = 1;\ny = 2;\n").unwrap();
        let args = |old: &str, new: &str, all| EditArgs {
            path: "a.rs".into(),
            old_string: old.into(),
            new_string: new.into(),
            replace_all: all,
        };
        let twice = edit(&wt, args("x = 1;", "x = 3;", false)).unwrap_err();
        assert!(
            matches!(&twice, Problem::Failed(m) if m.contains("occurs 2 times")),
            "{twice:?}"
        );
        let absent = edit(&wt, args("z = 9;", "", false)).unwrap_err();
        assert!(
            matches!(&absent, Problem::Failed(m) if m.contains("does not occur")),
            "{absent:?}"
        );
        edit(&wt, args("y = 2;", "y = 5;", false)).unwrap();
        edit(&wt, args("x = 1;", "x = 4;", true)).unwrap();
        assert_eq!(
            fs::read_to_string(wt.join("a.rs")).unwrap(),
            "x = 4;\nx = 4;\ny = 5;\n"
        );
    }

    #[test]
    fn write_creates_directories_inside_only() {
        let (_dir, wt) = worktree();
        write(
            &wt,
            WriteArgs {
                path: "src/new/b.rs".into(),
                content: "fn b() {}\n".into(),
            },
        )
        .unwrap();
        assert_eq!(
            fs::read_to_string(wt.join("src/new/b.rs")).unwrap(),
            "fn b() {}\n"
        );
        let refused = write(
            &wt,
            WriteArgs {
                path: "../out.txt".into(),
                content: String::new(),
            },
        );
        assert!(matches!(refused, Err(Problem::Refused(m)) if m.contains("outside the worktree")));
    }
}
