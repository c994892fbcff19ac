//! A problem with the value of one front-matter key, found after the task was read (an unknown
//! workflow name, a task type that is a typo): located at that key in the task file, so the
//! message reads `path:line:col` like every problem the reader itself finds.

use std::path::Path;

use base::diagnostic::Diagnostic;

use super::Task;

impl Task {
    /// `message` at the value of front-matter key `key`, the path shown relative to `root`; the
    /// whole file when it cannot be read again or the key is not written there.
    pub fn key_problem(&self, root: &Path, key: &str, message: impl Into<String>) -> Diagnostic {
        let shown = self.path.strip_prefix(root).unwrap_or(&self.path);
        let source = base::user_file::read(&self.path, shown).ok();
        match source
            .as_deref()
            .and_then(|s| value_offset(s, key).map(|o| (s, o)))
        {
            Some((source, offset)) => Diagnostic::at_offset(shown, source, offset, message),
            None => Diagnostic::new(shown, message),
        }
    }
}

/// Where the value of top-level key `key` starts in the front matter of `source`.
fn value_offset(source: &str, key: &str) -> Option<usize> {
    let mut offset = 0;
    let mut lines = source.split_inclusive('\n');
    let first = lines.next()?;
    if first.trim_end() != "---" {
        return None;
    }
    offset += first.len();
    for line in lines {
        if line.trim_end() == "---" {
            return None;
        }
        let unquoted = [key.to_string(), format!("\"{key}\""), format!("'{key}'")]
            .into_iter()
            .find_map(|k| line.strip_prefix(k.as_str()).map(str::len));
        if let Some(rest_len) = unquoted {
            let rest = &line[line.len() - rest_len..];
            if let Some(value) = rest.trim_start().strip_prefix(':') {
                let start = line.len() - value.len();
                let skipped = value.len() - value.trim_start_matches([' ', '\t']).len();
                return Some(offset + start + skipped);
            }
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_value_of_a_front_matter_key_is_found_not_a_longer_key_or_the_body() {
        let source = "---\nid: T-1\nworkflows: x\nworkflow:  secuer\n---\nworkflow: body\n";
        let at = value_offset(source, "workflow").unwrap();
        assert!(source[at..].starts_with("secuer\n"), "{}", &source[at..]);
        assert_eq!(value_offset(source, "task_type"), None);
        assert_eq!(value_offset("workflow: x\n", "workflow"), None);
    }
}
