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
