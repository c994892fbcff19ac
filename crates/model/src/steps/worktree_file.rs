//! Reading a file a runner command wrote in the worktree (a coverage report, a JUnit results
//! file), where the player's code — which the command ran — could have put a link instead: a
//! path any of whose directories (or the file itself) is a symbolic link is refused, only a
//! regular file is opened, and at most `limit` bytes are read.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why the file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeFileError {
    #[error("`{relative}` does not exist")]
    Missing { relative: String },
    #[error("`{}` in the worktree is a symbolic link; the runner does not follow links", link.display())]
    Link { link: PathBuf },
    #[error("`{relative}` cannot be read: {source}")]
    Unreadable {
        relative: String,
        source: std::io::Error,
    },
    #[error("`{relative}` is larger than {} MiB", limit >> 20)]
    TooLarge { relative: String, limit: u64 },
}

/// `relative` under `worktree`, refusing a path through a symbolic link.
pub fn within(worktree: &Path, relative: &str) -> Result<PathBuf, WorktreeFileError> {
    let mut path = worktree.to_path_buf();
    for part in relative.split('/') {
        path.push(part);
        match std::fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(WorktreeFileError::Link {
                    link: path.strip_prefix(worktree).unwrap_or(&path).to_path_buf(),
                })
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    Ok(worktree.join(relative))
}

/// The bytes of `relative` under `worktree`, at most `limit` of them.
pub fn read(worktree: &Path, relative: &str, limit: u64) -> Result<Vec<u8>, WorktreeFileError> {
    let path = within(worktree, relative)?;
    let unreadable = |source| WorktreeFileError::Unreadable {
        relative: relative.to_string(),
        source,
    };
    let file = match base::user_file::open_regular(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(WorktreeFileError::Missing {
                relative: relative.to_string(),
            })
        }
        Err(e) => return Err(unreadable(e)),
    };
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > limit {
        return Err(WorktreeFileError::TooLarge {
            relative: relative.to_string(),
            limit,
        });
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_regular_file_reached_without_links_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("out")).unwrap();
        std::fs::write(root.join("out/junit.xml"), "<testsuite/>").unwrap();
        std::os::unix::fs::symlink("/etc", root.join("etc")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("out/passwd.xml")).unwrap();
        assert_eq!(read(root, "out/junit.xml", 100).unwrap(), b"<testsuite/>");
        assert!(matches!(
            read(root, "etc/passwd", 100),
            Err(WorktreeFileError::Link { .. })
        ));
        assert!(matches!(
            read(root, "out/passwd.xml", 1 << 20),
            Err(WorktreeFileError::Link { .. })
        ));
        assert!(matches!(
            read(root, "out/none.xml", 100),
            Err(WorktreeFileError::Missing { .. })
        ));
        assert!(matches!(
            read(root, "out/junit.xml", 4),
            Err(WorktreeFileError::TooLarge { .. })
        ));
        assert!(matches!(
            read(root, "out", 100),
            Err(WorktreeFileError::Unreadable { .. })
        ));
    }
}
