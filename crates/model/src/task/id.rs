//! Task ids become directory names and git branch names (`autobuild/<ID>`), so they are held to
//! a strict alphabet: `^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`. The validator explains *why* an id is
//! rejected, because "invalid id" alone leaves a user guessing which character is wrong.

/// The longest accepted id, in characters.
pub const MAX_ID_LEN: usize = 64;

/// Checks `id` against the task id alphabet; the error says what is wrong with it.
pub fn validate_id(id: &str) -> Result<(), String> {
    let Some(first) = id.chars().next() else {
        return Err("the id is empty".to_string());
    };
    if let Some(bad) = id.chars().find(|c| !is_id_char(*c)) {
        return Err(match bad {
            '/' | '\\' => format!(
                "the id `{id}` contains `{bad}`; ids become file and branch names and cannot contain path separators"
            ),
            c if c.is_whitespace() => format!(
                "the id `{id}` contains whitespace; ids become file and branch names"
            ),
            c => format!(
                "the id `{id}` contains `{c}`; only letters, digits, `.`, `_` and `-` are allowed"
            ),
        });
    }
    if !first.is_ascii_alphanumeric() {
        return Err(format!(
            "the id `{id}` starts with `{first}`; it must start with a letter or a digit"
        ));
    }
    let len = id.chars().count();
    if len > MAX_ID_LEN {
        return Err(format!(
            "the id is {len} characters long; at most {MAX_ID_LEN} are allowed"
        ));
    }
    Ok(())
}

/// The task id a file's name carries, as GuardKit names task files: `TASK-001.md`,
/// `TASK-AUTH-001-login-endpoint.md` (the id, then a lower-case slug). The id is the run of
/// leading `-`-separated segments without lower-case letters; it needs at least two segments
/// and a first one of letters only, so `README.md` or `notes.md` carry no id.
pub fn id_from_file_name(path: &std::path::Path) -> Option<String> {
    let stem = path.file_stem()?.to_str()?;
    let segments: Vec<&str> = stem
        .split('-')
        .take_while(|s| {
            !s.is_empty() && s.chars().all(is_id_char) && !s.chars().any(|c| c.is_ascii_lowercase())
        })
        .collect();
    let first = segments.first()?;
    if segments.len() < 2 || !first.chars().all(|c| c.is_ascii_uppercase()) {
        return None;
    }
    let id = segments.join("-");
    validate_id(&id).ok().map(|()| id)
}

fn is_id_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_ordinary_ids() {
        for id in ["TASK-001", "a", "9.x_y-z", &"A".repeat(64)] {
            assert_eq!(validate_id(id), Ok(()), "{id}");
        }
    }

    #[test]
    fn file_names_carry_guardkit_ids() {
        let id = |name: &str| id_from_file_name(std::path::Path::new(name));
        assert_eq!(id("tasks/TASK-001.md").as_deref(), Some("TASK-001"));
        assert_eq!(
            id("TASK-AUTH-001-login-endpoint.md").as_deref(),
            Some("TASK-AUTH-001")
        );
        assert_eq!(id("TASK-FIX-A1B2.md").as_deref(), Some("TASK-FIX-A1B2"));
        for none in [
            "README.md",
            "notes.md",
            "TASK.md",
            "task-001.md",
            "2024-01-notes.md",
        ] {
            assert_eq!(id(none), None, "{none}");
        }
    }

    #[test]
    fn explains_each_rejection() {
        let cases = [
            ("", "empty"),
            ("TASK/001", "path separators"),
            ("TASK 001", "whitespace"),
            ("TASK:1", "contains `:`"),
            ("-TASK", "starts with `-`"),
            (".hidden", "starts with `.`"),
            (&"A".repeat(65), "65 characters"),
            ("TÄSK", "contains `Ä`"),
        ];
        for (id, reason) in cases {
            let err = validate_id(id).unwrap_err();
            assert!(err.contains(reason), "{id}: {err}");
        }
    }
}
