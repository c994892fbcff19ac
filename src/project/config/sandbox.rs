//! `[sandbox]`: whether agents and checks run confined (`mode`), and what they may write
//! beyond the worktree, its git files, the run's scratch directory and a private `/tmp`
//! (`writable`). See [`crate::sandbox`].

use strum::IntoEnumIterator;
use toml::de::DeTable;

use super::reader::{Item, Reader};
use crate::sandbox::{Mode, Settings};

const SANDBOX_KEYS: [&str; 2] = ["mode", "writable"];

pub(super) fn sandbox(reader: &mut Reader<'_>, table: &DeTable<'_>) -> Settings {
    let mut settings = Settings::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "mode" => settings.mode = mode(reader, item).unwrap_or_default(),
            "writable" => settings.writable = writable(reader, item),
            _ => reader.unknown_key(key, "in [sandbox]", &SANDBOX_KEYS),
        }
    }
    settings
}

fn mode(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<Mode> {
    reader.one_of(
        "sandbox.mode",
        "sandbox.mode",
        item,
        &Mode::iter().collect::<Vec<_>>(),
        Mode::as_str,
    )
}

/// Absolute paths, `~` or `~/…`: a relative path would have no obvious base (the worktree is
/// writable anyway), and `/` would make the sandbox pointless.
fn writable(reader: &mut Reader<'_>, item: &Item<'_>) -> Vec<String> {
    let Some(entries) = reader.array("sandbox.writable", item) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for entry in entries {
        let Some(path) = reader.string("a `sandbox.writable` entry", entry) else {
            continue;
        };
        let path = path.trim();
        let problem = if path.is_empty() {
            Some("empty `writable` entry".to_string())
        } else if path.trim_end_matches('/').is_empty() {
            Some(
                "`/` cannot be writable: that would switch the sandbox off; set `mode = \"off\"` \
                 instead"
                    .to_string(),
            )
        } else if !(path.starts_with('/') || path == "~" || path.starts_with("~/")) {
            Some(format!(
                "`writable` entry `{path}` must be an absolute path or start with `~/` (the \
                 worktree itself is always writable)"
            ))
        } else {
            None
        };
        match problem {
            Some(message) => reader.report(entry.span(), message, None),
            None => paths.push(path.to_string()),
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::project::Config;
    use crate::sandbox::Mode;

    fn parse(source: &str) -> Result<Config, String> {
        Config::parse(Path::new("config.toml"), source).map_err(|d| d.to_string())
    }

    #[test]
    fn reads_mode_and_writable_paths() {
        let config =
            parse("[sandbox]\nmode = \"on\"\nwritable = [\"~/.cache\", \"~\", \"/opt/cache/\"]\n")
                .unwrap();
        assert_eq!(config.sandbox.mode, Mode::On);
        assert_eq!(config.sandbox.writable, ["~/.cache", "~", "/opt/cache/"]);
        assert_eq!(parse("").unwrap().sandbox.mode, Mode::Auto);
        assert_eq!(
            parse("[sandbox]\nmode = \"off\"\n").unwrap().sandbox.mode,
            Mode::Off
        );
    }

    #[test]
    fn every_problem_is_reported_with_its_location() {
        let err = parse(
            "[sandbox]\nmode = \"onn\"\nwritable = [\"cache\", \"/\", \"\", 3]\nwriteable = []\n",
        )
        .unwrap_err();
        let lines: Vec<&str> = err.lines().collect();
        assert!(
            lines[0].starts_with("config.toml:2:8: unknown value `onn` for `sandbox.mode`"),
            "{err}"
        );
        assert!(err.contains("did you mean `on`"), "{err}");
        assert!(
            err.contains("config.toml:3:13: `writable` entry `cache` must be an absolute path"),
            "{err}"
        );
        assert!(
            err.contains("config.toml:3:22: `/` cannot be writable"),
            "{err}"
        );
        assert!(
            err.contains("config.toml:3:27: empty `writable` entry"),
            "{err}"
        );
        assert!(err.contains("config.toml:3:31:"), "{err}");
        assert!(
            err.contains("config.toml:4:1: unknown key `writeable` in [sandbox]"),
            "{err}"
        );
        let err = parse("[sandbx]\n").unwrap_err();
        assert!(err.contains("did you mean `sandbox`"), "{err}");
    }
}
