//! The one glob dialect of every path pattern users and workflows write (`[scope] protect`,
//! roles' `writes`, hidden paths, front matter's `protect:`): `globset` globs matched against
//! worktree-relative, `/`-separated paths; `*` stays within one path segment and `**` crosses
//! them, as in `.gitignore`.

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// One compiled glob, or why the pattern is not one.
pub fn glob(pattern: &str) -> Result<Glob, String> {
    if pattern.trim().is_empty() {
        return Err("an empty pattern matches nothing".to_string());
    }
    if pattern.starts_with('/') {
        return Err(format!(
            "`{pattern}` is absolute; patterns are relative to the repository root (drop the leading `/`)"
        ));
    }
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|e| format!("`{pattern}` is not a valid glob: {}", e.kind()))
}

/// The compiled set of `patterns`, or why one of them is not a glob.
pub fn set(patterns: &[String]) -> Result<GlobSet, String> {
    let mut builder = GlobSetBuilder::new();
    for pattern in patterns {
        builder.add(glob(pattern)?);
    }
    builder.build().map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_patterns_say_why() {
        assert!(glob("src/[").unwrap_err().contains("not a valid glob"));
        assert!(glob("/etc/**").unwrap_err().contains("absolute"));
        assert!(glob(" ").unwrap_err().contains("empty"));
    }
}
