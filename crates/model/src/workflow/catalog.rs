//! Discovery: every workflow, prompt template and profile file visible from a repository, and
//! the role/profile overrides of its `.autobuild/config.toml`, in precedence order.
//!
//! Lowest to highest (docs/workflows.md): built-in (embedded) → user directory
//! (`$AUTOBUILD_CONFIG_DIR`, else `$XDG_CONFIG_HOME/autobuild`, else `~/.config/autobuild`) →
//! repository `.autobuild/` → `[roles.*]`/`[profiles.*]` of `.autobuild/config.toml` → command
//! line. Each directory holds `workflows/*.toml|yaml|yml`, `prompts/*.md` and
//! `profiles/*.toml`. Files are read once here; resolution ([`crate::workflow::resolve`]) and the
//! profile set ([`crate::profile::ProfileSet`]) work from this catalog.
//!
//! Every file is read through [`base::user_file`] (1 MiB cap, UTF-8). A workflow file that is
//! over the cap or not UTF-8 is kept as a [`Document`] whose tree is that problem, like one that
//! does not parse: only a command that needs that workflow fails on it, and a run of another
//! workflow names it in a warning ([`Catalog::unusable`]). Workflow names live inside the files,
//! so finding a workflow by name reads every file; the size cap and the YAML bounds
//! ([`base::user_file::yaml_limits`]) keep that cheap whatever the files hold. Prompt templates
//! and profile files that are over the cap or not UTF-8 stop discovery with a located error.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::profile;
use crate::workflow::builtin;
use base::diagnostic::Diagnostic;
use base::error::{Class, Error, Problem};
use base::unknown::{self, Unknown};
use base::user_file::source::{Layer, Source};
use base::user_file::tree::Node;
use base::user_file::{self, ReadError};
use base::user_file::{parse_toml, parse_yaml};

/// Environment variable naming the user configuration directory (tests set it so they never
/// read the real home directory).
pub const CONFIG_DIR_ENV: &str = "AUTOBUILD_CONFIG_DIR";

const WORKFLOW_EXTENSIONS: &[&str] = &["toml", "yaml", "yml"];

/// One workflow file.
#[derive(Debug, Clone)]
pub struct Document {
    pub source: Arc<Source>,
    /// The parsed tree, or why the file could not be parsed.
    pub tree: Result<Node, Vec<Diagnostic>>,
    /// The `name` the file declares; its file stem when it declares none or does not parse.
    pub name: String,
    /// The file could not be read as input (too large, not UTF-8): `source.text` is empty and
    /// `tree` says why.
    unreadable: bool,
}

impl Document {
    /// Reads and parses the workflow file at `path`; a file that cannot be taken as input (too
    /// large, not UTF-8) is a document whose tree is that problem.
    fn read(path: &Path, root: Option<&Path>, layer: Layer) -> Result<Document, Error> {
        match read_source(path, root, layer) {
            Ok(source) => Ok(Document::parse(source)),
            Err(Unreadable::Input(problem)) => {
                let source = Source::new(problem.path.clone(), String::new(), layer);
                Ok(Document {
                    name: stem(&source.path),
                    source,
                    tree: Err(vec![problem]),
                    unreadable: true,
                })
            }
            Err(Unreadable::Io(error)) => Err(error),
        }
    }

    /// Parses a workflow file by its extension (`.yaml`/`.yml` are YAML, anything else TOML).
    pub fn parse(source: Arc<Source>) -> Document {
        let yaml = matches!(
            source.path.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml")
        );
        let tree = if yaml {
            parse_yaml::parse(&source)
        } else {
            parse_toml::parse(&source)
        };
        let name = tree
            .as_ref()
            .ok()
            .and_then(|t| t.get_str("name"))
            .map_or_else(|| stem(&source.path), str::to_string);
        Document {
            source,
            tree,
            name,
            unreadable: false,
        }
    }

    /// The text of the file, or why it could not be read.
    pub fn text(&self) -> Result<&str, Error> {
        match &self.tree {
            Err(problems) if self.unreadable => Err(Error::from(problems.clone())),
            _ => Ok(&self.source.text),
        }
    }
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The `[roles]` and `[profiles]` tables of `.autobuild/config.toml`.
#[derive(Debug, Clone, Default)]
pub struct ConfigOverrides {
    pub roles: Option<Node>,
    pub profiles: Option<Node>,
    /// Whether the config declares `[coverage]`, which a profile's `coverage` needs.
    pub coverage: bool,
}

/// Everything visible from one repository (or from the user directory alone).
#[derive(Debug, Clone)]
pub struct Catalog {
    pub root: Option<PathBuf>,
    /// Workflow files, lowest precedence first.
    pub documents: Vec<Document>,
    /// Prompt templates, lowest precedence first.
    pub prompts: Vec<Arc<Source>>,
    /// Profile files, lowest precedence first.
    pub profiles: Vec<Arc<Source>>,
    pub config: ConfigOverrides,
}

impl Catalog {
    /// Reads the built-ins, the user directory and, with a root, the repository's `.autobuild/`.
    pub fn discover(root: Option<&Path>) -> Result<Catalog, Error> {
        let mut catalog = Catalog::builtin();
        catalog.root = root.map(Path::to_path_buf);
        if let Some(dir) = user_dir() {
            catalog.read_dir(&dir, None, Layer::User)?;
        }
        if let Some(root) = root {
            let dir = root.join(".autobuild");
            catalog.read_dir(&dir, Some(root), Layer::Repo)?;
            catalog.config = read_config(&dir.join("config.toml"), root)?;
        }
        Ok(catalog)
    }

    /// The built-in layer alone: parsed once per process (a feature's preflight discovers the
    /// catalog twice per task), a copy each time.
    pub fn builtin() -> Catalog {
        static BUILTIN: std::sync::OnceLock<Catalog> = std::sync::OnceLock::new();
        BUILTIN.get_or_init(Catalog::parse_builtin).clone()
    }

    fn parse_builtin() -> Catalog {
        let sources = |dir: &str, files: &[(&str, &'static str)]| -> Vec<Arc<Source>> {
            let source = |(file, text): &(&str, &'static str)| {
                Source::new(builtin::display_path(dir, file), *text, Layer::BuiltIn)
            };
            files.iter().map(source).collect()
        };
        Catalog {
            root: None,
            documents: sources("workflows", builtin::WORKFLOWS)
                .into_iter()
                .map(Document::parse)
                .collect(),
            prompts: sources("prompts", builtin::PROMPTS),
            profiles: sources("profiles", profile::builtin::PROFILES),
            config: ConfigOverrides::default(),
        }
    }

    fn read_dir(&mut self, dir: &Path, root: Option<&Path>, layer: Layer) -> Result<(), Error> {
        for path in files(&dir.join("workflows"), WORKFLOW_EXTENSIONS)? {
            self.documents.push(Document::read(&path, root, layer)?);
        }
        for path in files(&dir.join("prompts"), &["md"])? {
            self.prompts.push(read_source(&path, root, layer)?);
        }
        for path in files(&dir.join("profiles"), &["toml"])? {
            self.profiles.push(read_source(&path, root, layer)?);
        }
        Ok(())
    }

    /// The repository's and the user's workflow files that cannot be used (they do not parse,
    /// or cannot be read as input), each with its first problem: a run of another workflow
    /// warns about them, since one of them may be a patch the user meant to apply.
    pub fn unusable(&self) -> Vec<&Diagnostic> {
        self.documents
            .iter()
            .filter_map(|doc| {
                doc.tree
                    .as_ref()
                    .err()
                    .and_then(|problems| problems.first())
            })
            .collect()
    }

    /// Reads a workflow file named on the command line. When it is one of the discovered files,
    /// that document's index is returned instead, so it keeps its place in the precedence order.
    pub fn open_file(&self, path: &Path) -> Result<Opened, Error> {
        let canonical = fs::canonicalize(path).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => self.missing_file(path),
            _ => Error::io("cannot read", path, e),
        })?;
        let discovered = self.documents.iter().position(|doc| {
            doc.source.layer != Layer::BuiltIn
                && self
                    .absolute(&doc.source.path)
                    .and_then(|p| fs::canonicalize(p).ok())
                    .is_some_and(|p| p == canonical)
        });
        // The shipped workflow files themselves (`workflows/*.toml` in autobuild's own source)
        // are the built-ins, not user files shadowing them.
        let builtin = || {
            let text = user_file::read(&canonical, path).ok()?;
            self.documents.iter().position(|doc| {
                doc.source.layer == Layer::BuiltIn
                    && doc.source.path.file_name() == canonical.file_name()
                    && doc.source.text == text
            })
        };
        match discovered.or_else(builtin) {
            Some(index) => Ok(Opened::Discovered(index)),
            None => Ok(Opened::File(Document::read(
                path,
                self.root.as_deref(),
                Layer::File,
            )?)),
        }
    }

    /// A workflow file named on the command line does not exist. When its stem is a workflow's
    /// name, the user probably meant that workflow.
    fn missing_file(&self, path: &Path) -> Error {
        let stem = path.file_stem().map(|s| s.to_string_lossy());
        MissingFile {
            path: path.to_path_buf(),
            workflow: stem
                .filter(|stem| self.find(stem, None).is_some())
                .map(|name| name.into_owned()),
        }
        .into()
    }

    /// The path on disk of a discovered file, from the path shown for it.
    fn absolute(&self, shown: &Path) -> Option<PathBuf> {
        if shown.is_absolute() {
            return Some(shown.to_path_buf());
        }
        self.root.as_ref().map(|root| root.join(shown))
    }

    /// The highest-precedence document named `name` among the first `below` documents (all of
    /// them with `None`).
    pub fn find(&self, name: &str, below: Option<usize>) -> Option<usize> {
        let end = below.unwrap_or(self.documents.len());
        self.documents[..end]
            .iter()
            .rposition(|doc| doc.name == name)
    }

    /// Like [`Catalog::find`] over every document, with a usage error suggesting the closest
    /// name when there is no workflow called `name`.
    pub fn find_named(&self, name: &str) -> Result<usize, Error> {
        self.find(name, None).ok_or_else(|| {
            Unknown::new(
                unknown::Catalog::Workflow,
                name,
                self.names().iter().copied(),
            )
            .into()
        })
    }

    /// Every workflow name, each once, in first-seen order.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for doc in &self.documents {
            if !names.contains(&doc.name.as_str()) {
                names.push(&doc.name);
            }
        }
        names
    }
}

/// A workflow file named on the command line.
#[derive(Debug)]
pub enum Opened {
    /// It is the catalog's document at this index.
    Discovered(usize),
    /// It is outside the discovery directories.
    File(Document),
}

/// The user configuration directory.
pub fn user_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("autobuild"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config").join("autobuild"))
}

/// The files of `dir` with one of `extensions`, sorted by name; none when `dir` does not exist.
fn files(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>, Error> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::io("cannot list", dir, e)),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| Error::io("cannot list", dir, e))?.path();
        let wanted = path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e));
        if wanted && path.is_file() {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Why [`read_source`] could not read a file.
#[derive(Debug)]
pub enum Unreadable {
    /// The file is not acceptable input (too large, not UTF-8): a problem in the file.
    Input(Diagnostic),
    /// Reading failed.
    Io(Error),
}

impl From<Unreadable> for Error {
    fn from(unreadable: Unreadable) -> Error {
        match unreadable {
            Unreadable::Input(problem) => Error::from(problem),
            Unreadable::Io(error) => error,
        }
    }
}

/// Reads a file (see [`base::user_file`]); it is shown relative to `root` when it lies inside
/// it.
pub fn read_source(
    path: &Path,
    root: Option<&Path>,
    layer: Layer,
) -> Result<Arc<Source>, Unreadable> {
    let shown = root
        .and_then(|root| path.strip_prefix(root).ok())
        .map_or_else(|| path.to_path_buf(), Path::to_path_buf);
    let text = user_file::read(path, &shown).map_err(|e| match e {
        ReadError::TooLarge(problem) | ReadError::NotUtf8 { problem, .. } => {
            Unreadable::Input(*problem)
        }
        other => Unreadable::Io(other.into_error("cannot read", path)),
    })?;
    Ok(Source::new(shown, text, layer))
}

/// The `roles` and `profiles` tables of the project config; its other keys belong to
/// [`crate::project`].
fn read_config(path: &Path, root: &Path) -> Result<ConfigOverrides, Error> {
    if !path.exists() {
        return Ok(ConfigOverrides::default());
    }
    let source = read_source(path, Some(root), Layer::Config)?;
    let tree = parse_toml::parse(&source)?;
    Ok(ConfigOverrides {
        roles: tree.get("roles").cloned(),
        profiles: tree.get("profiles").cloned(),
        coverage: tree.get("coverage").is_some(),
    })
}

/// A workflow file named on the command line does not exist; `workflow` is the workflow its
/// stem names, when there is one (the user probably meant it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("workflow file {} does not exist", path.display())]
pub struct MissingFile {
    pub path: PathBuf,
    pub workflow: Option<String>,
}

impl Problem for MissingFile {
    fn class(&self) -> Class {
        Class::Usage
    }

    fn help(&self) -> Option<String> {
        self.workflow.as_ref().map(|name| {
            format!(
                "to use the workflow `{name}` listed by `autobuild workflows list`, name it without a path or extension"
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_named_by_their_name_key_or_file_stem() {
        let doc = Document::parse(Source::new("w/a.toml", "name = \"b\"\n", Layer::Repo));
        assert_eq!(doc.name, "b");
        let broken = Document::parse(Source::new("w/c.yaml", "name: [\n", Layer::Repo));
        assert_eq!(broken.name, "c");
        assert!(broken.tree.is_err());
    }
}
