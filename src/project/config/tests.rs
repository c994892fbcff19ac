use std::fs;

use super::*;

fn parse(source: &str) -> Result<Config, String> {
    Config::parse(Path::new("config.toml"), source).map_err(|d| d.to_string())
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
    assert!(config.roles["player"]
        .as_table()
        .unwrap()
        .contains_key("command"));
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
    let err = parse("[project]\nbase_brnch = \"main\"\n").unwrap_err();
    assert!(
        err.starts_with("config.toml:2:1: unknown key `base_brnch` in [project]"),
        "{err}"
    );
    assert!(err.contains("help: did you mean `base_branch`?"), "{err}");

    let err = parse("[chekcs.test]\ncmd = \"x\"\n").unwrap_err();
    assert!(
        err.starts_with("config.toml:1:2: unknown key `chekcs` at the top level"),
        "{err}"
    );
    assert!(err.contains("did you mean `checks`?"), "{err}");
}

#[test]
fn reports_every_invalid_value_at_its_place() {
    let err = parse(
            "[env]\nvars = { \"BAD-NAME\" = \"1\", PATH = \"/bin\" }\n\n[checks.Test]\ncmd = \"x\"\n\n[checks.lint]\ncmd = \"  \"\ntimeout = \"0s\"\n\n[checks.slow]\ncmd = \"x\"\ntimeout = \"ten minutes\"\n",
        )
        .unwrap_err();
    let headers: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("config.toml:"))
        .collect();
    assert_eq!(headers.len(), 6, "{err}");
    assert!(headers[0]
        .starts_with("config.toml:2:10: `BAD-NAME` is not a valid environment variable name"));
    assert!(headers[1].starts_with("config.toml:2:28: `PATH` cannot be set"));
    assert!(headers[2].starts_with("config.toml:4:9: check name `Test` is invalid"));
    assert!(headers[3].starts_with("config.toml:8:7: `cmd` is empty"));
    assert!(headers[4].starts_with("config.toml:9:11: `timeout` must be greater than zero"));
    assert_eq!(
        headers[5],
        r#"config.toml:13:11: invalid duration "ten minutes": write it like "90s", "20m" or "1h 30m""#
    );
}

#[test]
fn path_prepend_entries_are_single_directories() {
    let err = parse("[env]\npath_prepend = [\"bin\", \"a:b\", \"\"]\n").unwrap_err();
    let headers: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("config.toml:"))
        .collect();
    assert_eq!(headers.len(), 2, "{err}");
    assert!(headers[0].starts_with("config.toml:2:24: a `path_prepend` entry cannot contain `:`"));
    assert!(headers[1].starts_with("config.toml:2:31: empty `path_prepend` entry"));
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
            cached_input: 0.125,
            output: 10.0
        }
    );
    assert_eq!(
        config.pricing["o3"],
        ModelPrice {
            input: 2.0,
            cached_input: 2.0,
            output: 8.0
        },
        "without a cache price, cached input costs as much as input"
    );
}

#[test]
fn invalid_prices_are_located() {
    let err = parse("[pricing.m]\ninput = 1\noutput = 10\ncahced_input = 0.1\n").unwrap_err();
    assert!(
        err.starts_with("config.toml:4:1: unknown key `cahced_input` in [pricing.m]"),
        "{err}"
    );
    assert!(err.contains("did you mean `cached_input`?"), "{err}");

    let err = parse("[pricing.m]\ninput = -1\noutput = nan\n").unwrap_err();
    let headers: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("config.toml:"))
        .collect();
    assert_eq!(headers.len(), 2, "{err}");
    assert!(headers[0].starts_with("config.toml:2:9: `input` must be a price"));
    assert!(headers[1].starts_with("config.toml:3:10: `output` must be a price"));

    let err = parse("[pricing.m]\ninput = 1.0\n").unwrap_err();
    assert!(
        err.starts_with("config.toml:1:10: missing key `output` in [pricing.m]"),
        "{err}"
    );
    let err = parse("[pricing.m]\ninput = \"cheap\"\noutput = 1\n").unwrap_err();
    assert!(
        err.starts_with(
            "config.toml:2:9: `input` must be a number (USD per million tokens), found the string \"cheap\""
        ),
        "{err}"
    );
}

#[test]
fn a_check_without_cmd_is_located() {
    let err = parse("[checks.test]\ntimeout = \"1m\"\n").unwrap_err();
    assert!(
        err.starts_with("config.toml:1:9: missing key `cmd` in [checks.test]"),
        "{err}"
    );
    assert!(err.contains("help: give the command to run"), "{err}");
}

fn headers(err: &str) -> Vec<&str> {
    err.lines()
        .filter(|l| l.starts_with("config.toml:"))
        .collect()
}

#[test]
fn one_load_reports_every_kind_of_problem_at_once() {
    let err = parse(
        r#"[project]
base_brnch = "main"
merge_strategy = "rebase"

[chekcs.test]
cmd = "cargo test"

[checks.lint]
cmd = 5
timeout = "10 parsecs"
"#,
    )
    .unwrap_err();
    assert_eq!(
        headers(&err),
        [
            "config.toml:2:1: unknown key `base_brnch` in [project]",
            "config.toml:3:18: unknown value `rebase` for `merge_strategy`",
            "config.toml:5:2: unknown key `chekcs` at the top level",
            "config.toml:9:7: `checks.lint.cmd` must be a string, found the integer 5",
            r#"config.toml:10:11: invalid duration "10 parsecs": write it like "90s", "20m" or "1h 30m""#,
        ],
        "{err}"
    );
    assert!(err.contains("help: did you mean `base_branch`?"), "{err}");
    assert!(
        err.contains("help: expected one of the values: squash, merge, ff"),
        "{err}"
    );
    assert!(err.contains("help: did you mean `checks`?"), "{err}");
}

#[test]
fn wrong_types_are_reported_in_every_table() {
    let err = parse(
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
    )
    .unwrap_err();
    assert_eq!(
        headers(&err),
        [
            r#"config.toml:1:11: `project` must be a table, found the string "main""#,
            r#"config.toml:2:20: `roles.player` must be a table, found the string "command""#,
            "config.toml:5:17: `env.vars.PORT` must be a string, found the integer 8080",
            r#"config.toml:6:16: `env.path_prepend` must be an array, found the string ".venv/bin""#,
            "config.toml:7:9: `env.setup` must be a string, found the boolean true",
            "config.toml:11:11: `checks.test.timeout` must be a duration string, found the integer 600",
            "config.toml:12:1: unknown key `nme` in [checks.test]",
            r#"config.toml:15:9: `input` must be a number (USD per million tokens), found the string "cheap""#,
        ],
        "{err}"
    );
    assert!(
        err.contains(r#"help: environment values are text: write `PORT = "8080"`"#),
        "{err}"
    );
    assert!(
        err.contains(r#"help: write it like "90s", "20m" or "1h 30m", in quotes"#),
        "{err}"
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
    let big = format!("# {}\n", "x".repeat(crate::user_file::MAX_BYTES as usize));
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
    let err = parse(
        "[worktree]\nlink = [\"../shared\", \"/opt/venv\", \".git\"]\ncopy = [\"a\"]\nsetup = \" \"\nlinks = []\n",
    )
    .unwrap_err();
    let headers: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("config.toml:"))
        .collect();
    let expected = [
        "config.toml:2:9: `../shared` cannot be in `worktree.link`: it leaves the repository",
        "config.toml:2:22: `/opt/venv` cannot be in `worktree.link`: it is absolute",
        "config.toml:2:35: `.git` cannot be in `worktree.link`: `.git` belongs to git",
        "config.toml:4:9: `setup` is empty",
        "config.toml:5:1: unknown key `links` in [worktree]",
    ];
    assert_eq!(headers.len(), expected.len(), "{err}");
    for (header, want) in headers.iter().zip(expected) {
        assert!(header.starts_with(want), "{header}\n  expected {want}");
    }
    assert!(err.contains("did you mean `link`?"), "{err}");

    let err = parse("[worktree]\nlink = [\"x\"]\ncopy = [\"x\"]\n").unwrap_err();
    assert!(err.contains("`x` is in both `link` and `copy`"), "{err}");
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
    let problems = parse("[context]\nfiles = [\"../x\", 3]\nfile = []\n").unwrap_err();
    assert!(
        problems.contains("must be relative to the repository root"),
        "{problems}"
    );
    assert!(problems.contains("config.toml:2:18"), "{problems}");
    assert!(
        problems.contains("unknown key `file` in [context]"),
        "{problems}"
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
    let err = parse(
        "[scope]\nhidden = [\"src/[\"]\nreveal = \"all\"\n[checks.a]\ncmd = \"x\"\nhidden = 1\n",
    )
    .unwrap_err();
    assert!(
        err.contains("unknown value `all` for `scope.reveal`"),
        "{err}"
    );
    assert!(err.contains("checks.a.hidden"), "{err}");
    assert!(err.contains(":2:"), "{err}");
}
