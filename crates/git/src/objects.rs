//! Importing the objects a confined step wrote into its run-private object directory.
//!
//! Inside the sandbox the shared object store is read-only; git writes new objects to
//! `GIT_OBJECT_DIRECTORY` (private to the run) and reads old ones through
//! `GIT_ALTERNATE_OBJECT_DIRECTORIES` (the shared store). After the step the runner copies each
//! private object into the shared store — but only after hashing its content with its type and
//! comparing the result with the name it was found under: an object planted under another
//! object's name (a forged loose file, a pack whose index lies) is never imported, so it can
//! never shadow the content a later commit of the user's writes. Loose objects and packs are
//! both read (an agent may run `git gc` or `git repack`). The private directory is emptied
//! afterwards.

use std::fs;
use std::path::Path;

use git2::{Odb, Oid, Repository};

use super::error::{Context, GitError};

/// What one import did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Imported {
    /// Objects copied into the shared store (those already there are skipped).
    pub objects: usize,
    /// Objects refused: their content does not hash to their name, or they cannot be read.
    pub forged: Vec<String>,
}

/// Copies every object of `private` (an object directory: `xx/…` loose files, `pack/`) whose
/// content matches its name into the object store of the repository at `repo` (any checkout
/// of it), then empties `private`. Nothing to do when `private` does not exist.
pub fn import_objects(repo: &Path, private: &Path) -> Result<Imported, GitError> {
    let mut imported = Imported::default();
    // Most confined processes (checks, reviewers) write no object: an empty directory is
    // answered without opening the repository.
    let empty = std::fs::read_dir(private).map(|mut entries| entries.next().is_none());
    if !private.is_dir() || empty.unwrap_or(false) {
        return Ok(imported);
    }
    let repository = Repository::open(repo).context("open the repository", repo)?;
    let shared = repository.odb().context("open the object store", repo)?;
    let source = Odb::new().context("open the private object store", private)?;
    let path = private.to_str().ok_or_else(|| GitError::NotARepository {
        path: private.to_path_buf(),
    })?;
    source
        .add_disk_alternate(path)
        .context("open the private object store", private)?;
    let mut names = Vec::new();
    source
        .foreach(|oid| {
            names.push(*oid);
            true
        })
        .context("list the private objects", private)?;
    names.sort();
    names.dedup();
    for name in names {
        // Already in the shared store (an agent's `git repack -a` copies every object): there
        // is nothing to import, and the shared copy is the one git reads.
        if shared.exists(name) {
            continue;
        }
        match verified(&source, name) {
            Some((kind, data)) => {
                shared
                    .write(kind, &data)
                    .context(format_args!("import object {name}"), repo)?;
                imported.objects += 1;
            }
            None => imported.forged.push(name.to_string()),
        }
    }
    clear(private)?;
    Ok(imported)
}

/// The type and content of `name` in `odb` when the content hashes to `name`.
fn verified(odb: &Odb<'_>, name: Oid) -> Option<(git2::ObjectType, Vec<u8>)> {
    let object = odb.read(name).ok()?;
    let kind = object.kind();
    let data = object.data().to_vec();
    let hashed = Oid::hash_object(kind, &data).ok()?;
    (hashed == name).then_some((kind, data))
}

/// Empties `dir`, keeping the directory itself.
fn clear(dir: &Path) -> Result<(), GitError> {
    let entries = fs::read_dir(dir).context("read", dir)?;
    for entry in entries {
        let entry = entry.context("read", dir)?;
        let path = entry.path();
        let is_dir = entry.file_type().context("inspect", &path)?.is_dir();
        if is_dir {
            fs::remove_dir_all(&path).context("remove", &path)?;
        } else {
            fs::remove_file(&path).context("remove", &path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::process::Command;

    use super::*;

    use testkit::git_with as git;

    /// A repository and a private object directory git writes to with the shared store as
    /// its alternate, as the sandbox sets them up.
    fn setup() -> (tempfile::TempDir, std::path::PathBuf, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().join("repo");
        fs::create_dir_all(&repo).unwrap();
        git(&repo, &[], &["init", "-q", "-b", "main"]);
        git(&repo, &[], &["commit", "-q", "--allow-empty", "-m", "init"]);
        let private = dir.path().join("private");
        fs::create_dir_all(&private).unwrap();
        (dir, repo, private)
    }

    #[test]
    fn objects_written_privately_are_imported_and_the_directory_emptied() {
        let (_dir, repo, private) = setup();
        let shared = repo.join(".git/objects");
        let env = [
            ("GIT_OBJECT_DIRECTORY", private.as_path()),
            ("GIT_ALTERNATE_OBJECT_DIRECTORIES", shared.as_path()),
        ];
        fs::write(repo.join("a.txt"), "hello\n").unwrap();
        git(&repo, &env, &["add", "a.txt"]);
        git(&repo, &env, &["commit", "-q", "-m", "a"]);
        // Packed as well as loose: an agent may repack its own objects.
        fs::write(repo.join("b.txt"), "packed\n").unwrap();
        git(&repo, &env, &["add", "b.txt"]);
        git(&repo, &env, &["commit", "-q", "-m", "b"]);
        git(&repo, &env, &["repack", "-q", "-a", "-d", "-l"]);
        let broken = Command::new("git")
            .args(["fsck", "--no-dangling"])
            .current_dir(&repo)
            .output()
            .unwrap();
        assert!(
            !broken.status.success(),
            "the shared store lacks the commits"
        );
        let imported = import_objects(&repo, &private).unwrap();
        assert!(imported.objects >= 6, "{imported:?}");
        assert!(imported.forged.is_empty(), "{imported:?}");
        git(&repo, &[], &["fsck", "--no-dangling"]);
        assert_eq!(git(&repo, &[], &["show", "HEAD~1:a.txt"]), "hello");
        assert_eq!(fs::read_dir(&private).unwrap().count(), 0);
    }

    #[test]
    fn a_loose_object_under_a_wrong_name_is_never_imported() {
        let (_dir, repo, private) = setup();
        // The name of the blob the user will commit later, with other content.
        let future = Oid::hash_object(git2::ObjectType::Blob, b"user content\n").unwrap();
        let hex = future.to_string();
        // A well-formed loose object of other content, renamed.
        let elsewhere = private.join("elsewhere");
        fs::create_dir_all(&elsewhere).unwrap();
        fs::write(elsewhere.join("f"), "forged\n").unwrap();
        let env = [("GIT_OBJECT_DIRECTORY", private.as_path())];
        let real = git(
            &repo,
            &env,
            &["hash-object", "-w", "../private/elsewhere/f"],
        );
        fs::remove_dir_all(&elsewhere).unwrap();
        let loose = private.join(&hex[..2]);
        fs::create_dir_all(&loose).unwrap();
        fs::rename(
            private.join(&real[..2]).join(&real[2..]),
            loose.join(&hex[2..]),
        )
        .unwrap();
        let imported = import_objects(&repo, &private).unwrap();
        assert_eq!(imported.objects, 0);
        assert_eq!(imported.forged, vec![hex.clone()]);
        let shared = Repository::open(&repo).unwrap();
        assert!(!shared.odb().unwrap().exists(future));
        fs::write(repo.join("u.txt"), "user content\n").unwrap();
        git(&repo, &[], &["add", "u.txt"]);
        assert_eq!(git(&repo, &[], &["cat-file", "-p", &hex]), "user content");
    }

    #[test]
    fn a_missing_private_directory_imports_nothing() {
        let (_dir, repo, private) = setup();
        let imported = import_objects(&repo, &private.join("absent")).unwrap();
        assert_eq!(imported, Imported::default());
    }
    #[test]
    fn an_empty_private_directory_imports_nothing_without_opening_the_repository() {
        let dir = tempfile::tempdir().unwrap();
        let private = dir.path().join("private");
        fs::create_dir_all(&private).unwrap();
        let imported = import_objects(&dir.path().join("no-repository"), &private).unwrap();
        assert_eq!(imported.objects, 0);
        assert!(imported.forged.is_empty());
        // One entry is enough to look: here the repository is missing, which is an error.
        fs::create_dir_all(private.join("ab")).unwrap();
        assert!(import_objects(&dir.path().join("no-repository"), &private).is_err());
    }
}
