//! What changed between two commits, computed by the runner itself (never taken from an agent's
//! claims): per-file status and line counts, and a compact `git diff --stat`-like rendering that
//! stays bounded however large the change is.

use std::collections::BTreeSet;
use std::path::Path;

use git2::{Commit, Delta, DiffDelta, DiffFindOptions, DiffOptions, Oid, Patch, Repository};
use serde::{Deserialize, Serialize};

use super::error::{Context, GitError};
use super::repo::find_commit;
use super::tree_diff::{changed_leaves_in, diff_of, open_for_diffs};

/// At most this many file lines in [`DiffStat::render`]; the rest are counted in one line.
const MAX_RENDERED_FILES: usize = 50;
/// Longer paths are shortened from the left, keeping the file name visible.
const MAX_PATH_WIDTH: usize = 60;
/// The `+++---` bar is scaled down to this width, like git's.
const MAX_BAR_WIDTH: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeStatus {
    Added,
    Modified,
    Deleted,
    Renamed,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Relative to the repository root, `/`-separated; the new path of a rename.
    pub path: String,
    /// The previous path of a renamed file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub status: ChangeStatus,
    pub insertions: usize,
    pub deletions: usize,
    /// Binary files have no line counts.
    #[serde(default)]
    pub binary: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffStat {
    /// Sorted by path, one entry per path.
    pub files: Vec<FileChange>,
    pub insertions: usize,
    pub deletions: usize,
}

/// The unified diff (`git diff` format) from `from_commit` to `to_commit` of the files `wanted`
/// selects, cut to at most `limit` bytes with a note of how much was left out.
pub fn diff_text(
    checkout: &Path,
    from_commit: &str,
    to_commit: &str,
    wanted: &dyn Fn(&str) -> bool,
    limit: usize,
) -> Result<String, GitError> {
    let repo = open_for_diffs(checkout)?;
    let from = find_commit(&repo, from_commit, checkout)?;
    let to = find_commit(&repo, to_commit, checkout)?;
    diff_text_in(&repo, &from, &to, wanted, limit, checkout)
}

/// [`diff_text`] on an open repository. Only the files `wanted` selects are rendered.
pub(crate) fn diff_text_in(
    repo: &Repository,
    from: &Commit<'_>,
    to: &Commit<'_>,
    wanted: &dyn Fn(&str) -> bool,
    limit: usize,
    checkout: &Path,
) -> Result<String, GitError> {
    let from = from.tree().context("read a commit's tree", checkout)?;
    let to = to.tree().context("read a commit's tree", checkout)?;
    let mut paths =
        changed_leaves_in(repo, from.id(), to.id()).context("compare trees", checkout)?;
    // Only a wanted delta is rendered, and without rename detection each delta has one path.
    paths.retain(|path| wanted(&String::from_utf8_lossy(path)));
    let Some(diff) = diff_of(repo, &from, &to, &paths).context("diff two commits", checkout)?
    else {
        return Ok(String::new());
    };
    // Each file's patch on its own, so the budget can be shared out per file.
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut binary_diff: Option<git2::Diff<'_>> = None;
    for (index, delta) in diff.deltas().enumerate() {
        let path = delta
            .new_file()
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !wanted(&path) {
            continue;
        }
        let patch = if binary_content(repo, &delta) {
            // Rendered from a diff that takes every file as binary: git's header and
            // "Binary files … differ" line, and never the bytes.
            if binary_diff.is_none() {
                let mut options = DiffOptions::new();
                options.disable_pathspec_match(true).force_binary(true);
                for path in &paths {
                    options.pathspec(path.as_slice());
                }
                binary_diff = Some(
                    repo.diff_tree_to_tree(Some(&from), Some(&to), Some(&mut options))
                        .context("diff two commits", checkout)?,
                );
            }
            let Some(binary) = binary_diff.as_ref() else {
                continue;
            };
            // The same trees and paths: the same deltas, in the same order.
            let same = |d: &DiffDelta<'_>| {
                d.old_file().id() == delta.old_file().id()
                    && d.new_file().id() == delta.new_file().id()
                    && d.new_file().path() == delta.new_file().path()
            };
            let Some(at) = binary.get_delta(index).filter(same).map(|_| index) else {
                continue;
            };
            Patch::from_diff(binary, at).context("render a diff", checkout)?
        } else {
            Patch::from_diff(&diff, index).context("render a diff", checkout)?
        };
        let Some(mut patch) = patch else {
            continue;
        };
        let mut text = Vec::new();
        patch
            .print(&mut |_delta, _hunk, line| {
                if matches!(line.origin(), '+' | '-' | ' ') {
                    text.push(line.origin() as u8);
                }
                text.extend_from_slice(line.content());
                true
            })
            .context("render a diff", checkout)?;
        files.push((path, text));
    }
    Ok(within_budget(&files, limit))
}

/// Below this share a file's diff is not shown at all, only named.
const MIN_FILE_SHARE: usize = 256;

/// Shares `limit` bytes out among `sizes` fairly: no file gets more than it needs, and what a
/// small file leaves is shared by the larger ones, so one large file never hides the others.
pub(crate) fn shares(sizes: &[usize], limit: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..sizes.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let mut shares = vec![0; sizes.len()];
    let mut left = limit;
    for (done, &i) in order.iter().enumerate() {
        let share = left / (sizes.len() - done);
        shares[i] = sizes[i].min(share);
        left -= shares[i];
    }
    shares
}

/// The files' patches, in their order, each cut to its share of `limit` ([`shares`]) with a
/// note naming the file and what was left out; a file whose share is too small to show is
/// named at the end.
pub(crate) fn within_budget(files: &[(String, Vec<u8>)], limit: usize) -> String {
    let sizes: Vec<usize> = files.iter().map(|(_, text)| text.len()).collect();
    let shares = shares(&sizes, limit);
    let mut out = String::new();
    let mut left_out = Vec::new();
    for ((path, bytes), share) in files.iter().zip(shares) {
        let text = String::from_utf8_lossy(bytes);
        if share == text.len() {
            out.push_str(&text);
        } else if share < MIN_FILE_SHARE {
            left_out.push(path.as_str());
        } else {
            let cut = base::text::floor_char_boundary(&text, share);
            out.push_str(&text[..cut]);
            out.push_str(&format!(
                "\n… ({path}: {} more bytes of its diff left out)\n",
                text.len() - cut
            ));
        }
    }
    if !left_out.is_empty() {
        out.push_str(&format!(
            "\n… (left out, the diff being too large: {})\n",
            left_out.join(", ")
        ));
    }
    out
}

/// The changes from `from_commit` to `to_commit` (hex ids or revisions), in the repository or
/// worktree at `checkout`. Renames are detected.
pub fn diff_stat(
    checkout: &Path,
    from_commit: &str,
    to_commit: &str,
) -> Result<DiffStat, GitError> {
    let repo = open_for_diffs(checkout)?;
    let from = find_commit(&repo, from_commit, checkout)?;
    let to = find_commit(&repo, to_commit, checkout)?;
    diff_stat_in(&repo, &from, &to, checkout)
}

/// [`diff_stat`] on an open repository.
pub(crate) fn diff_stat_in(
    repo: &Repository,
    from: &Commit<'_>,
    to: &Commit<'_>,
    checkout: &Path,
) -> Result<DiffStat, GitError> {
    let (from_tree, to_tree) = (
        from.tree().context("read a commit's tree", checkout)?,
        to.tree().context("read a commit's tree", checkout)?,
    );
    let paths =
        changed_leaves_in(repo, from_tree.id(), to_tree.id()).context("compare trees", checkout)?;
    let Some(mut diff) = diff_of(repo, &from_tree, &to_tree, &paths)
        .context(format_args!("diff {}..{}", from.id(), to.id()), checkout)?
    else {
        return Ok(DiffStat::default());
    };
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .context("detect renames", checkout)?;

    let mut files = Vec::with_capacity(diff.deltas().len());
    for (index, delta) in diff.deltas().enumerate() {
        if binary_content(repo, &delta) {
            files.push(file_change(&delta, 0, 0, true));
            continue;
        }
        let patch = Patch::from_diff(&diff, index).context("compute line counts", checkout)?;
        let (insertions, deletions) = match &patch {
            Some(patch) => {
                let (_, insertions, deletions) = patch
                    .line_stats()
                    .context("compute line counts", checkout)?;
                (insertions, deletions)
            }
            None => (0, 0),
        };
        let binary = delta.flags().is_binary() || patch.is_none();
        files.push(file_change(&delta, insertions, deletions, binary));
    }
    Ok(DiffStat::from_files(files))
}

/// Whether either side of `delta` is binary by its content (git's rule: a NUL byte early in
/// the file). The runner's diffs never take this from `.gitattributes`: a branch whose
/// `.gitattributes` says `* -diff` would otherwise show the reviewer every source file as
/// binary, with no line of it (the diffs are made with `force_text`, see [`diff_of`]).
pub(crate) fn binary_content(repo: &Repository, delta: &DiffDelta<'_>) -> bool {
    [delta.old_file().id(), delta.new_file().id()]
        .into_iter()
        .filter(|id| !id.is_zero())
        .any(|id| repo.find_blob(id).is_ok_and(|blob| blob.is_binary()))
}

pub(super) fn file_change(
    delta: &DiffDelta<'_>,
    insertions: usize,
    deletions: usize,
    binary: bool,
) -> FileChange {
    let old = delta.old_file().path_bytes().map(git_path);
    let new = delta.new_file().path_bytes().map(git_path);
    let (status, path, old_path) = match delta.status() {
        Delta::Added | Delta::Copied | Delta::Untracked => (ChangeStatus::Added, new, None),
        Delta::Deleted => (ChangeStatus::Deleted, old, None),
        Delta::Renamed => (ChangeStatus::Renamed, new, old),
        _ => (ChangeStatus::Modified, new, None),
    };
    FileChange {
        path: path.unwrap_or_default(),
        old_path,
        status,
        insertions,
        deletions,
        binary,
    }
}

/// The paths that differ between two trees (both sides of a rename), sorted and unique.
pub(crate) fn changed_paths(
    repo: &Repository,
    old: Oid,
    new: Oid,
    path: &Path,
) -> Result<Vec<String>, GitError> {
    let paths: BTreeSet<String> = changed_leaves_in(repo, old, new)
        .context("compare trees", path)?
        .iter()
        .map(|leaf| git_path(leaf))
        .collect();
    Ok(paths.into_iter().collect())
}

/// Git stores paths `/`-separated and relative to the root; keep them that way as text.
fn git_path(path: &[u8]) -> String {
    String::from_utf8_lossy(path).replace('\\', "/")
}

impl DiffStat {
    /// Sorts by path, merges duplicate entries for one path and computes the totals.
    pub fn from_files(files: Vec<FileChange>) -> DiffStat {
        let mut merged: Vec<FileChange> = Vec::with_capacity(files.len());
        let mut sorted = files;
        sorted.sort_by(|a, b| a.path.cmp(&b.path));
        for file in sorted {
            match merged.last_mut() {
                Some(last) if last.path == file.path => {
                    last.insertions += file.insertions;
                    last.deletions += file.deletions;
                    last.binary |= file.binary;
                }
                _ => merged.push(file),
            }
        }
        let insertions = merged.iter().map(|f| f.insertions).sum();
        let deletions = merged.iter().map(|f| f.deletions).sum();
        DiffStat {
            files: merged,
            insertions,
            deletions,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Every changed path (new paths of renames), sorted.
    pub fn paths(&self) -> Vec<String> {
        self.files.iter().map(|f| f.path.clone()).collect()
    }

    /// A `git diff --stat`-like summary: one line per file (at most [`MAX_RENDERED_FILES`]),
    /// then the totals.
    pub fn render(&self) -> String {
        let shown = &self.files[..self.files.len().min(MAX_RENDERED_FILES)];
        let labels: Vec<String> = shown.iter().map(label).collect();
        let label_width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let counts: Vec<String> = shown
            .iter()
            .map(|f| {
                if f.binary {
                    "Bin".to_string()
                } else {
                    (f.insertions + f.deletions).to_string()
                }
            })
            .collect();
        let count_width = counts.iter().map(String::len).max().unwrap_or(0);
        let largest = shown
            .iter()
            .map(|f| f.insertions + f.deletions)
            .max()
            .unwrap_or(0);

        let mut out = String::new();
        for ((file, label), count) in shown.iter().zip(&labels).zip(&counts) {
            let bar = if file.binary {
                String::new()
            } else {
                bar(file.insertions, file.deletions, largest)
            };
            let line = format!(" {label:<label_width$} | {count:>count_width$} {bar}");
            out.push_str(line.trim_end());
            out.push('\n');
        }
        let hidden = self.files.len() - shown.len();
        if hidden > 0 {
            out.push_str(&format!(
                " ... and {hidden} more {}\n",
                plural(hidden, "file")
            ));
        }
        out.push_str(&self.summary_line());
        out
    }

    /// ` 2 files changed, 5 insertions(+), 1 deletion(-)`, omitting zero counts like git.
    fn summary_line(&self) -> String {
        let files = self.files.len();
        let mut line = format!(" {files} {} changed", plural(files, "file"));
        if self.insertions > 0 {
            let word = plural(self.insertions, "insertion");
            line.push_str(&format!(", {} {word}(+)", self.insertions));
        }
        if self.deletions > 0 {
            let word = plural(self.deletions, "deletion");
            line.push_str(&format!(", {} {word}(-)", self.deletions));
        }
        line
    }
}

fn label(file: &FileChange) -> String {
    let path = base::quoted::path(&file.path);
    let full = match &file.old_path {
        Some(old) => format!("{} => {path}", base::quoted::path(old)),
        None => path.into_owned(),
    };
    shorten_left(&full, MAX_PATH_WIDTH)
}

/// `...` plus the last characters of `text`, so it is at most `width` characters.
fn shorten_left(text: &str, width: usize) -> String {
    let length = text.chars().count();
    if length <= width {
        return text.to_string();
    }
    let keep = width.saturating_sub(3);
    let tail: String = text.chars().skip(length - keep).collect();
    format!("...{tail}")
}

/// The `+`/`-` bar, scaled like git's when the largest file exceeds [`MAX_BAR_WIDTH`].
fn bar(insertions: usize, deletions: usize, largest: usize) -> String {
    let (plus, minus) = if largest <= MAX_BAR_WIDTH {
        (insertions, deletions)
    } else {
        let scale = |n: usize| {
            if n == 0 {
                0
            } else {
                1 + n * (MAX_BAR_WIDTH - 1) / largest
            }
        };
        let total = scale(insertions + deletions);
        let minus = scale(deletions).min(total);
        (total - minus, minus)
    };
    format!("{}{}", "+".repeat(plus), "-".repeat(minus))
}

fn plural(count: usize, word: &str) -> String {
    if count == 1 {
        word.to_string()
    } else {
        format!("{word}s")
    }
}

#[cfg(test)]
mod tests;
