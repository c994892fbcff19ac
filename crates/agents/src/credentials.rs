//! Whether an agent CLI can authenticate, from the names of variables and files that provide
//! its credentials: the fallback for when the CLI itself cannot be asked (it is not installed,
//! or too old to have `auth status` / `login status`; module [`crate::login`]). Each
//! adapter with credentials declares its [`Detect`] in its [`super::Description`]. Values are
//! never read or printed: a variable counts when it is set and non-empty, a file when it
//! exists.

use std::path::{Path, PathBuf};

/// Reads a variable: set and non-empty, or `None`.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Finds one agent CLI's credentials from variables and the home directory.
pub type Detect = fn(Lookup<'_>, Option<&Path>) -> Credentials;

/// What provides an agent CLI's credentials (names only, never values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    Present(String),
    /// Something was found, but it does not log the CLI in (the CLI says it is not logged in,
    /// or a variable it does not read is set): what, and how to fix it.
    Refused {
        detail: String,
        fix: String,
    },
    /// How to provide them.
    Absent(String),
}

impl Credentials {
    /// The check's detail and the fix.
    pub fn describe(&self) -> (String, String) {
        match self {
            Credentials::Present(what) => (what.clone(), String::new()),
            Credentials::Refused { detail, fix } => (detail.clone(), fix.clone()),
            Credentials::Absent(fix) => ("none found".to_string(), fix.clone()),
        }
    }
}

/// A stored login: `file` in the CLI's directory (`dir_var`, else `home/default_dir`), when it
/// exists.
pub fn login_file(
    var: Lookup<'_>,
    home: Option<&Path>,
    (dir_var, default_dir): (&str, &str),
    file: &str,
) -> Option<Credentials> {
    let dir = var(dir_var)
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(default_dir)))?;
    let file = dir.join(file);
    file.is_file()
        .then(|| Credentials::Present(format!("logged in ({})", file.display())))
}
