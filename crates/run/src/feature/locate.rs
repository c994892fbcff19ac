//! Finding a feature file: by path, or by id under `.autobuild/features/` and GuardKit's
//! `.guardkit/features/` (docs/guardkit.md). A file matches an id when its name is `<ID>.yaml`
//! (`.yml`), as GuardKit names them, or when its top-level `id` is the id. Two matching files
//! are an error naming both, never a silent pick. An argument with a directory separator or a
//! YAML extension is a path, and a missing path is reported as such, not searched as an id.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use base::diagnostic::did_you_mean;
use base::error::{Class, Error, Problem};
use base::user_file::parse_yaml;
use base::user_file::source::{Layer, Source};
use model::project::Layout;

/// A feature file: where it is, and how messages name it (relative to the repository root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFeature {
    pub path: PathBuf,
    pub shown: PathBuf,
}

/// The directories searched for feature files, in search order.
pub fn feature_dirs(root: &Path) -> Vec<PathBuf> {
    vec![
        Layout::new(root).features(),
        root.join(".guardkit").join("features"),
    ]
}

/// The feature named by `id_or_path`: an existing file (relative to the current directory or
/// to `root`), else the feature file whose name or `id` is `id_or_path`.
pub fn locate_feature(root: &Path, id_or_path: &str) -> Result<FoundFeature, Error> {
    let as_path = Path::new(id_or_path);
    for candidate in [as_path.to_path_buf(), root.join(as_path)] {
        if candidate.is_file() {
            return Ok(found(root, candidate));
        }
    }
    if names_a_file(id_or_path) {
        return Err(LocateError::NoFile(id_or_path.to_string()).into());
    }
    let mut matches = Vec::new();
    let mut known = Vec::new();
    for file in feature_files(root)? {
        let stem = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let declared = declared_id(&file);
        if stem == id_or_path || declared.as_deref() == Some(id_or_path) {
            matches.push(file);
        } else {
            known.extend(declared);
        }
    }
    match matches.as_slice() {
        [one] => Ok(found(root, one.clone())),
        [] => Err(not_found(root, id_or_path, &known)),
        many => {
            let names: Vec<String> = many
                .iter()
                .map(|p| found(root, p.clone()).shown.display().to_string())
                .collect();
            Err(LocateError::Ambiguous {
                id: id_or_path.to_string(),
                files: names,
            }
            .into())
        }
    }
}

/// Whether an argument can only be a path: ids contain no directory separator and do not end
/// in a YAML extension.
fn names_a_file(id_or_path: &str) -> bool {
    id_or_path.contains(['/', '\\'])
        || [".yaml", ".yml"]
            .iter()
            .any(|extension| id_or_path.ends_with(extension))
}

fn found(root: &Path, path: PathBuf) -> FoundFeature {
    let absolute = std::path::absolute(&path).unwrap_or_else(|_| path.clone());
    let shown = absolute
        .strip_prefix(root)
        .map(Path::to_path_buf)
        .unwrap_or_else(|_| path.clone());
    FoundFeature {
        path: absolute,
        shown,
    }
}

fn not_found(root: &Path, id: &str, known: &[String]) -> Error {
    let searched: Vec<String> = feature_dirs(root)
        .iter()
        .map(|d| format!("{}/", d.strip_prefix(root).unwrap_or(d).display()))
        .collect();
    LocateError::NoFeature {
        id: id.to_string(),
        close: did_you_mean(id, known.iter().map(String::as_str)).map(str::to_string),
        searched,
    }
    .into()
}

/// Why no one feature file is found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LocateError {
    /// A path (it has a separator or a YAML extension) that is not a file.
    #[error("feature file `{0}` does not exist")]
    NoFile(String),
    /// No file is named or declares the id; `searched` are the directories looked in.
    #[error("no feature with id `{id}`")]
    NoFeature {
        id: String,
        close: Option<String>,
        searched: Vec<String>,
    },
    /// More than one file is named or declares the id.
    #[error("more than one feature file is named or declares `{id}`: {}", files.join(" and "))]
    Ambiguous { id: String, files: Vec<String> },
}

impl Problem for LocateError {
    fn class(&self) -> Class {
        Class::Usage
    }

    fn help(&self) -> Option<String> {
        match self {
            LocateError::NoFile(_) => None,
            LocateError::NoFeature {
                close: Some(close),
                searched,
                ..
            } => Some(format!(
                "did you mean `{close}`? (searched {})",
                searched.join(", ")
            )),
            LocateError::NoFeature {
                id,
                close: None,
                searched,
            } => Some(format!(
                "searched {} for `{id}.yaml` or a YAML file with `id: {id}`",
                searched.join(", ")
            )),
            LocateError::Ambiguous { .. } => {
                Some("feature ids must be unique; pass the file path instead".into())
            }
        }
    }
}

/// The `*.yaml` / `*.yml` files directly in the [`feature_dirs`], sorted.
fn feature_files(root: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut files = Vec::new();
    for dir in feature_dirs(root) {
        let entries = match fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("cannot list feature directory", &dir, e)),
        };
        let mut here: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml" || e == "yml"))
            .collect();
        here.sort();
        files.extend(here);
    }
    Ok(files)
}

/// The top-level `id` of a YAML file (or the one under its `feature:` wrapper), when it can be
/// read and parses. A file over the size cap
/// or an alias bomb costs little here and is skipped; its problems are reported when it is
/// named by its path or its file name.
fn declared_id(path: &Path) -> Option<String> {
    let text = base::user_file::read(path, path).ok()?;
    let tree = parse_yaml::parse(&Source::new(path, text, Layer::Repo)).ok()?;
    tree.get_str("id")
        .or_else(|| tree.get("feature").and_then(|f| f.get_str("id")))
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let file = root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, text).unwrap();
    }

    #[test]
    fn finds_by_file_name_by_declared_id_and_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, ".autobuild/features/FEAT-1.yaml", "id: FEAT-1\n");
        write(root, ".guardkit/features/auth.yml", "id: FEAT-AUTH\n");
        let one = locate_feature(root, "FEAT-1").unwrap();
        assert_eq!(one.shown, Path::new(".autobuild/features/FEAT-1.yaml"));
        let auth = locate_feature(root, "FEAT-AUTH").unwrap();
        assert_eq!(auth.shown, Path::new(".guardkit/features/auth.yml"));
        let by_path = locate_feature(root, ".guardkit/features/auth.yml").unwrap();
        assert_eq!(by_path, auth);
    }

    #[test]
    fn a_missing_path_is_not_searched_as_an_id() {
        let dir = tempfile::tempdir().unwrap();
        for path in ["nofile.yaml", "nofile.yml", "features/nofile"] {
            let error = locate_feature(dir.path(), path).unwrap_err();
            assert_eq!(
                error.problem::<LocateError>(),
                Some(&LocateError::NoFile(path.into()))
            );
            assert_eq!(error.exit_code(), 2);
        }
    }

    #[test]
    fn an_unknown_id_suggests_a_close_one() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), ".autobuild/features/x.yaml", "id: FEAT-AUTH\n");
        let error = locate_feature(dir.path(), "FEAT-AUTJ").unwrap_err();
        let Some(LocateError::NoFeature { id, close, .. }) = error.problem() else {
            panic!("{error}");
        };
        assert_eq!(
            (id.as_str(), close.as_deref()),
            ("FEAT-AUTJ", Some("FEAT-AUTH"))
        );
    }

    #[test]
    fn two_files_for_one_id_are_an_error_naming_both() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            ".autobuild/features/FEAT-1.yaml",
            "id: FEAT-1\n",
        );
        write(dir.path(), ".guardkit/features/FEAT-1.yaml", "id: FEAT-1\n");
        let error = locate_feature(dir.path(), "FEAT-1").unwrap_err();
        let Some(LocateError::Ambiguous { files, .. }) = error.problem() else {
            panic!("{error}");
        };
        assert_eq!(
            files,
            &[
                ".autobuild/features/FEAT-1.yaml",
                ".guardkit/features/FEAT-1.yaml"
            ]
        );
    }
}
