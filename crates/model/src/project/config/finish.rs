//! What decoding config.toml cannot say about single values: rules across values, and problems
//! that are reported later but located where the value was written. Pure passes over the
//! decoded [`Config`] and the positioned tree it comes from.

use crate::project::context_files;
use base::diagnostic::Diagnostic;
use base::user_file::tree::{Node, Seg};

use super::Config;

/// Completes `config` decoded from `tree`, returning the problems found.
pub(super) fn finish(config: &mut Config, tree: &Node) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    let worktree = &mut config.worktree;
    dedup(&mut worktree.link);
    dedup(&mut worktree.copy);
    if let Some(copy) = tree.at(&path(&["worktree", "copy"])) {
        for both in worktree.link.iter().filter(|p| worktree.copy.contains(p)) {
            problems.push(copy.pos.error(format!(
                "`{both}` is in both `link` and `copy`; a path is either linked or copied"
            )));
        }
    }
    for (name, check) in &config.checks {
        let at = path(&["checks", name, "results"]);
        if let (Some(results), Some(node)) = (&check.results, tree.at(&at)) {
            let relative = std::path::Path::new(results);
            if results.is_empty()
                || relative.is_absolute()
                || relative
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                problems.push(
                    node.pos
                        .error(format!("`results` of check `{name}` must be a path inside the worktree"))
                        .with_help("write it relative to the worktree, without `..`: results = \"junit.xml\""),
                );
            }
        }
        let at = path(&["checks", name, "required"]);
        if let (true, Some(false), Some(required)) = (check.hidden, check.required, tree.at(&at)) {
            problems.push(
                required
                    .pos
                    .error(format!("hidden check `{name}` cannot be advisory"))
                    .with_help(
                        "a hidden check is the task's acceptance oracle and always blocks \
                         approval when it fails: remove `required = false`, or `hidden = true` \
                         to run it where agents can see it",
                    ),
            );
        }
    }
    if let (Some(notify), Some(command)) = (&config.notify, tree.at(&path(&["notify", "command"])))
    {
        if notify
            .command
            .first()
            .is_none_or(|program| program.trim().is_empty())
        {
            problems.push(
                command
                    .pos
                    .error("`[notify] command` names no program")
                    .with_help("give the program and its arguments, e.g. `command = [\"notify-send\", \"autobuild\"]`"),
            );
        }
    }
    for (index, file) in config.context.files.iter_mut().enumerate() {
        let at = [path(&["context", "files"]), vec![Seg::Index(index)]].concat();
        if let Some(entry) = tree.at(&at) {
            file.missing = context_files::missing(entry.pos.error(""), &file.path);
        }
    }
    problems
}

fn path(keys: &[&str]) -> Vec<Seg> {
    keys.iter().map(|key| Seg::key(key)).collect()
}

/// `paths` without repeats, in the order first written.
fn dedup(paths: &mut Vec<String>) {
    let mut seen = Vec::new();
    paths.retain(|path| {
        let first = !seen.contains(path);
        if first {
            seen.push(path.clone());
        }
        first
    });
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::project::Config;

    #[test]
    fn a_hidden_check_cannot_be_made_advisory() {
        let text = "[checks.acceptance]\ncmd = \"sh a.sh\"\nhidden = true\nrequired = false\n";
        let problems = Config::parse(Path::new("c.toml"), text).unwrap_err().0;
        let found: Vec<(usize, &str)> = problems
            .iter()
            .map(|d| (d.location.unwrap().line, d.message.as_str()))
            .collect();
        assert_eq!(found, [(4, "hidden check `acceptance` cannot be advisory")]);
        for results in ["/tmp/junit.xml", "../junit.xml", ""] {
            let text = format!("[checks.test]\ncmd = \"pytest\"\nresults = {results:?}\n");
            let problems = Config::parse(Path::new("c.toml"), &text).unwrap_err().0;
            assert_eq!(problems[0].location.unwrap().line, 3, "{results}");
        }
        let advisory = "[checks.lint]\ncmd = \"true\"\nrequired = false\n";
        let config = Config::parse(Path::new("c.toml"), advisory).unwrap();
        assert_eq!(config.checks["lint"].required, Some(false));
    }

    #[test]
    fn repeated_worktree_paths_count_once_and_a_path_is_linked_or_copied() {
        let config = Config::parse(
            Path::new("c.toml"),
            "[worktree]\nlink = [\".venv\", \"./.venv/\"]\ncopy = [\"a\", \"a\"]\n",
        )
        .unwrap();
        assert_eq!(config.worktree.link, [".venv"]);
        assert_eq!(config.worktree.copy, ["a"]);
        let problems = Config::parse(
            Path::new("c.toml"),
            "[worktree]\nlink = [\"x\", \"y\"]\ncopy = [\"y\", \"x\"]\n",
        )
        .unwrap_err()
        .0;
        let found: Vec<(usize, &str)> = problems
            .iter()
            .map(|d| (d.location.unwrap().line, d.message.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (
                    3,
                    "`x` is in both `link` and `copy`; a path is either linked or copied"
                ),
                (
                    3,
                    "`y` is in both `link` and `copy`; a path is either linked or copied"
                ),
            ]
        );
    }

    #[test]
    fn a_missing_context_file_is_located_at_its_entry() {
        let config = Config::parse(
            Path::new("c.toml"),
            "[context]\nfiles = [\"a.md\",\n  \"docs/b.md\"]\n",
        )
        .unwrap();
        let missing: Vec<String> = config
            .context
            .files
            .iter()
            .map(|f| f.missing.headline())
            .collect();
        assert_eq!(
            missing,
            [
                "c.toml:2:10: context file `a.md` does not exist",
                "c.toml:3:3: context file `docs/b.md` does not exist",
            ]
        );
    }
}
