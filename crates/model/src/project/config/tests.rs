use std::fs;

use super::*;

fn parse(source: &str) -> Result<Config, String> {
    Config::parse(Path::new("config.toml"), source).map_err(|d| d.to_string())
}

/// A problem as `(line:column, message, help)`.
pub(super) type Problem = (String, String, Option<String>);

/// Every problem of the config text `source`, in the order written (none when it is valid).
pub(super) fn problems(source: &str) -> Vec<Problem> {
    match Config::parse(Path::new("config.toml"), source) {
        Ok(_) => Vec::new(),
        Err(problems) => problems
            .0
            .into_iter()
            .map(|d| {
                let at = d
                    .location
                    .map_or_else(String::new, |l| format!("{}:{}", l.line, l.column));
                (at, d.message, d.help)
            })
            .collect(),
    }
}

/// Where each problem is, and the start of its message.
fn assert_problems(found: &[Problem], expected: &[(&str, &str)]) {
    let brief: Vec<(&str, &str)> = found
        .iter()
        .map(|(at, message, _)| (at.as_str(), message.as_str()))
        .collect();
    assert_eq!(brief.len(), expected.len(), "{brief:#?}");
    for ((at, message), (want_at, want)) in brief.iter().zip(expected) {
        assert!(
            at == want_at && message.starts_with(want),
            "{at}: {message}\n  expected {want_at}: {want}…\n{brief:#?}"
        );
    }
}

#[test]
fn reads_the_documented_example() {
    let config = parse(
        r#"
[project]
base_branch = "main"
merge_strategy = "ff"

[env]
vars = { DATABASE_URL = "sqlite:///tmp/dev.db" }
path_prepend = [".venv/bin"]
setup = "source .venv/bin/activate"

[checks.test]
cmd = "python -m pytest -q"
timeout = "10m"
[checks.lint]
cmd = "ruff check ."

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]

[profiles.feature]
require = ["checks.test", "checks.lint", "criteria", "coach"]
"#,
    )
    .unwrap();
    assert_eq!(config.project.base_branch.as_deref(), Some("main"));
    assert_eq!(config.project.merge_strategy, Some(MergeStrategy::Ff));
    assert_eq!(config.env.vars["DATABASE_URL"], "sqlite:///tmp/dev.db");
    assert_eq!(config.env.path_prepend, vec![".venv/bin"]);
    assert_eq!(
        config.checks["test"].timeout,
        Some(Duration::from_secs(600))
    );
    assert_eq!(config.checks["lint"].timeout, None);
    assert!(config.roles["player"].contains_key("command"));
    assert!(config.profiles.contains_key("feature"));
}

#[test]
fn empty_and_absent_files_mean_defaults() {
    assert_eq!(parse("").unwrap(), Config::default());
    let dir = tempfile::tempdir().unwrap();
    let config = Config::load(&Layout::new(dir.path())).unwrap();
    assert_eq!(config, Config::default());
}

#[test]
fn unknown_key_is_located_with_a_suggestion() {
    let found = problems("[project]\nbase_brnch = \"main\"\n");
    assert_eq!(
        found,
        [(
            "2:1".into(),
            "unknown key `base_brnch`".into(),
            Some("did you mean `base_branch`?".into())
        )]
    );
    let found = problems("[chekcs.test]\ncmd = \"x\"\n");
    assert_eq!(
        found,
        [(
            "1:2".into(),
            "unknown key `chekcs`".into(),
            Some("did you mean `checks`?".into())
        )]
    );
}

#[test]
fn reports_every_invalid_value_at_its_place() {
    let found = problems(
        "[env]\nvars = { \"BAD-NAME\" = \"1\", PATH = \"/bin\" }\n\n[checks.Test]\ncmd = \"x\"\n\n[checks.lint]\ncmd = \"  \"\ntimeout = \"0s\"\n\n[checks.slow]\ncmd = \"x\"\ntimeout = \"ten minutes\"\n",
    );
    // A name that breaks its rule is pointed at, not its value.
    assert_problems(
        &found,
        &[
            (
                "2:10",
                "`BAD-NAME` is not a valid environment variable name",
            ),
            ("2:28", "`PATH` cannot be set in `env.vars`"),
            ("4:9", "check name `Test` is invalid"),
            ("8:7", "the command is empty"),
            ("9:11", "the timeout must be greater than zero"),
            (
                "13:11",
                r#"invalid duration "ten minutes": write it like "90s", "20m" or "1h 30m""#,
            ),
        ],
    );
}

#[test]
fn path_prepend_entries_are_single_directories() {
    let found = problems("[env]\npath_prepend = [\"bin\", \"a:b\", \"\"]\n");
    assert_problems(
        &found,
        &[
            ("2:24", "a `path_prepend` entry cannot contain `:`"),
            ("2:31", "empty `path_prepend` entry"),
        ],
    );
    let config = parse("[env]\npath_prepend = [\" .venv/bin \"]\n").unwrap();
    assert_eq!(config.env.path_prepend, [".venv/bin"]);
}

#[test]
fn reads_model_prices() {
    let config = parse(
            "[pricing.\"gpt-5-codex\"]\ninput = 1.25\ncached_input = 0.125\noutput = 10\n\n[pricing.o3]\ninput = 2\noutput = 8.0\n",
        )
        .unwrap();
    assert_eq!(
        config.pricing["gpt-5-codex"],
        ModelPrice {
            input: 1.25,
            cached_input: Some(0.125),
            output: 10.0
        }
    );
    assert_eq!(
        config.pricing["o3"],
        ModelPrice {
            input: 2.0,
            cached_input: None,
            output: 8.0
        }
    );
    assert_eq!(
        config.pricing["o3"].cached_input(),
        2.0,
        "without a cache price, cached input costs as much as input"
    );
}

#[test]
fn invalid_prices_are_located() {
    let found = problems("[pricing.m]\ninput = 1\noutput = 10\ncahced_input = 0.1\n");
    assert_eq!(
        found,
        [(
            "4:1".into(),
            "unknown key `cahced_input`".into(),
            Some("did you mean `cached_input`?".into())
        )]
    );
    assert_problems(
        &problems("[pricing.m]\ninput = -1\noutput = -0.5\n"),
        &[
            ("2:9", "-1 is not a price in USD per million tokens"),
            ("3:10", "-0.5 is not a price in USD per million tokens"),
        ],
    );
    assert_problems(
        &problems("[pricing.m]\ninput = 1\noutput = nan\n"),
        &[("3:10", "not a finite number")],
    );
    assert_problems(
        &problems("[pricing.m]\ninput = 1.0\n"),
        &[("1:10", "missing key `output`")],
    );
    assert_problems(
        &problems("[pricing.m]\ninput = \"cheap\"\noutput = 1\n"),
        &[(
            "2:9",
            r#"invalid type: string "cheap", expected a price in USD per million tokens"#,
        )],
    );
}

#[test]
fn a_check_without_cmd_is_located() {
    assert_problems(
        &problems("[checks.test]\ntimeout = \"1m\"\n"),
        &[("1:9", "missing key `cmd`")],
    );
}

#[test]
fn one_load_reports_every_kind_of_problem_at_once() {
    let found = problems(
        r#"[project]
base_brnch = "main"
merge_strategy = "rebase"

[chekcs.test]
cmd = "cargo test"

[checks.lint]
cmd = 5
timeout = "10 parsecs"
"#,
    );
    assert_eq!(
        found,
        [
            (
                "2:1".into(),
                "unknown key `base_brnch`".into(),
                Some("did you mean `base_branch`?".into())
            ),
            (
                "3:18".into(),
                "unknown value `rebase` for `merge_strategy`".into(),
                Some("expected one of: squash, merge, ff".into())
            ),
            (
                "5:2".into(),
                "unknown key `chekcs`".into(),
                Some("did you mean `checks`?".into())
            ),
            (
                "9:7".into(),
                "invalid type: integer `5`, expected a shell command, run by `sh -c`".into(),
                None
            ),
            (
                "10:11".into(),
                r#"invalid duration "10 parsecs": write it like "90s", "20m" or "1h 30m""#.into(),
                None
            ),
        ]
    );
}

#[test]
fn wrong_types_are_reported_in_every_table() {
    let found = problems(
        r#"project = "main"
roles = { player = "command" }

[env]
vars = { PORT = 8080 }
path_prepend = ".venv/bin"
setup = true

[checks.test]
cmd = "pytest"
timeout = 600
nme = "x"

[pricing.m]
input = "cheap"
output = 1
"#,
    );
    assert_problems(
        &found,
        &[
            ("1:11", r#"invalid type: string "main", expected a table"#),
            ("2:20", r#"invalid type: string "command", expected a table"#),
            (
                "5:17",
                "invalid type: integer `8080`, expected text in quotes (environment values are strings",
            ),
            ("6:16", r#"invalid type: string ".venv/bin", expected an array"#),
            ("7:9", "invalid type: boolean `true`, expected a shell command"),
            (
                "11:11",
                r#"invalid type: integer `600`, expected a duration greater than zero, in quotes, such as "90s""#,
            ),
            ("12:1", "unknown key `nme`"),
            ("15:9", r#"invalid type: string "cheap", expected a price"#),
        ],
    );
}

#[test]
fn syntax_errors_are_located() {
    let err = parse("[project]\nbase_branch = main\n").unwrap_err();
    assert!(err.starts_with("config.toml:2:15: invalid TOML:"), "{err}");
}

#[test]
fn problems_name_the_file_relative_to_the_repository_root() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    fs::create_dir_all(layout.dir()).unwrap();
    fs::write(layout.config(), "[project]\nbase_brnch = \"main\"\n").unwrap();
    let err = Config::load(&layout).unwrap_err().to_string();
    assert!(
        err.starts_with(".autobuild/config.toml:2:1: unknown key `base_brnch`"),
        "{err}"
    );
    let err = Config::load_file(&layout.config()).unwrap_err().to_string();
    assert!(
        err.starts_with(&format!("{}:2:1:", layout.config().display())),
        "{err}"
    );
}

#[test]
fn a_config_that_is_not_utf8_or_too_large_is_invalid_input_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let layout = Layout::new(dir.path());
    fs::create_dir_all(layout.dir()).unwrap();
    fs::write(layout.config(), b"[checks.test]\ncmd = \"\xff\"\n").unwrap();
    let err = Config::load(&layout).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string()
            .starts_with(".autobuild/config.toml:2:8: the file is not valid UTF-8"),
        "{err}"
    );
    let big = format!("# {}\n", "x".repeat(base::user_file::MAX_BYTES as usize));
    fs::write(layout.config(), big).unwrap();
    let err = Config::load(&layout).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(
        err.to_string()
            .starts_with(".autobuild/config.toml: the file is 1048579 bytes (1.0 MiB)"),
        "{err}"
    );
}

#[test]
fn reads_the_worktree_section() {
    let config = parse(
        "[worktree]\nlink = [\".venv\", \"./web/node_modules/\"]\ncopy = [\".env.local\"]\nsetup = \"uv sync\"\n",
    )
    .unwrap();
    assert_eq!(config.worktree.link, [".venv", "web/node_modules"]);
    assert_eq!(config.worktree.copy, [".env.local"]);
    assert_eq!(config.worktree.setup.as_deref(), Some("uv sync"));
}

#[test]
fn worktree_paths_must_stay_inside_the_repository() {
    let found = problems(
        "[worktree]\nlink = [\"../shared\", \"/opt/venv\", \".git\"]\ncopy = [\"a\"]\nsetup = \" \"\nlinks = []\n",
    );
    assert_problems(
        &found,
        &[
            (
                "2:9",
                "`../shared` is not a path inside the repository: it leaves the repository",
            ),
            (
                "2:22",
                "`/opt/venv` is not a path inside the repository: it is absolute",
            ),
            (
                "2:35",
                "`.git` is not a path inside the repository: `.git` belongs to git",
            ),
            ("4:9", "the command is empty"),
            ("5:1", "unknown key `links`"),
        ],
    );
    assert_eq!(found[4].2.as_deref(), Some("did you mean `link`?"));
    assert_problems(
        &problems("[worktree]\nlink = [\"x\"]\ncopy = [\"x\"]\n"),
        &[("3:8", "`x` is in both `link` and `copy`")],
    );
}

#[test]
fn context_files_are_paths_inside_the_repository_located_at_their_entry() {
    let config = parse("[context]\nfiles = [\"docs/a.md\"]\n").unwrap();
    assert_eq!(config.context.files.len(), 1);
    assert_eq!(config.context.files[0].path, "docs/a.md");
    let missing = config.context.files[0].missing.to_string();
    assert!(
        missing.starts_with("config.toml:2:10: context file `docs/a.md` does not exist"),
        "{missing}"
    );
    assert_problems(
        &problems("[context]\nfiles = [\"../x\", 3]\nfile = []\n"),
        &[
            (
                "2:10",
                "context file `../x` must be relative to the repository root",
            ),
            (
                "2:18",
                "invalid type: integer `3`, expected a file relative to the repository root",
            ),
            ("3:1", "unknown key `file`"),
        ],
    );
}

#[test]
fn reads_hidden_paths_reveal_and_hidden_checks() {
    let config = parse(
        "[scope]\nhidden = [\"tests/acceptance/**\"]\nreveal = \"summary\"\n\n\
         [checks.acceptance]\ncmd = \"pytest tests/acceptance\"\nhidden = true\n",
    )
    .unwrap();
    assert_eq!(config.scope.hidden, ["tests/acceptance/**"]);
    assert_eq!(config.scope.reveal, crate::steps::reveal::Reveal::Summary);
    assert!(config.checks["acceptance"].hidden);
    let defaults = parse("[checks.test]\ncmd = \"true\"\n").unwrap();
    assert_eq!(defaults.scope.reveal, crate::steps::reveal::Reveal::Names);
    assert!(!defaults.checks["test"].hidden);
    assert_problems(
        &problems(
            "[scope]\nhidden = [\"src/[\"]\nreveal = \"all\"\n[checks.a]\ncmd = \"x\"\nhidden = 1\n",
        ),
        &[
            ("2:11", "`src/[` is not a valid glob"),
            ("3:10", "unknown value `all` for `reveal`"),
            ("6:10", "invalid type: integer `1`, expected a boolean"),
        ],
    );
}

#[test]
fn reads_the_sandbox_mode_and_writable_paths() {
    let config =
        parse("[sandbox]\nmode = \"on\"\nwritable = [\"~/.cache\", \"~\", \"/opt/cache/\"]\n")
            .unwrap();
    assert_eq!(config.sandbox.mode, sandbox::Mode::On);
    assert_eq!(config.sandbox.writable, ["~/.cache", "~", "/opt/cache/"]);
    assert_eq!(parse("").unwrap().sandbox.mode, sandbox::Mode::Auto);
}

#[test]
fn every_sandbox_problem_is_reported_with_its_location() {
    let found = problems(
        "[sandbox]\nmode = \"onn\"\nwritable = [\"cache\", \"/\", \"\", 3]\nwriteable = []\n",
    );
    assert_problems(
        &found,
        &[
            ("2:8", "unknown value `onn` for `mode`"),
            ("3:13", "`writable` entry `cache` must be an absolute path"),
            ("3:22", "`/` cannot be writable"),
            ("3:27", "empty `writable` entry"),
            (
                "3:31",
                "invalid type: integer `3`, expected an absolute path",
            ),
            ("4:1", "unknown key `writeable`"),
        ],
    );
    assert_eq!(found[0].2.as_deref(), Some("did you mean `on`?"));
    assert_eq!(
        problems("[sandbx]\n")[0].2.as_deref(),
        Some("did you mean `sandbox`?")
    );
}
