//! Documentation blocks that trycmd cannot run are compared with real behaviour here, so they
//! cannot drift: the doctor output and the agent command lines in docs/claude-code.md and
//! docs/codex.md against the outputs the trycmd cases check, the feature file in
//! docs/features.md and the task, config and workflow examples of README.md and docs/config.md
//! against the binary's validation, every config.toml key the config type declares against
//! docs/config.md, every flag the documents name against `--help`, and every link between the
//! documents and every section a source cites against the headings it names.

use crate::support;

use std::fs;
use std::path::Path;
use std::process::Command;

use regex::Regex;
use support::copy_tree;

/// The fenced blocks of `markdown` whose info string starts with `lang`, in order.
fn blocks(markdown: &str, lang: &str) -> Vec<String> {
    let mut found = Vec::new();
    // The block being read: whether it is wanted, and its text.
    let mut open: Option<(bool, String)> = None;
    for line in markdown.lines() {
        let fence = line.trim_start().strip_prefix("```");
        open = match (open, fence) {
            (Some((wanted, text)), Some(_)) => {
                if wanted {
                    found.push(text);
                }
                None
            }
            (Some((wanted, mut text)), None) => {
                text.push_str(line);
                text.push('\n');
                Some((wanted, text))
            }
            (None, Some(info)) => Some((info.trim().starts_with(lang), String::new())),
            (None, None) => None,
        };
    }
    found
}

fn read(path: &str) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// The expected stdout of a trycmd `.toml` case.
fn case_stdout(path: &str) -> String {
    let case: toml::Value = toml::from_str(&read(path)).unwrap();
    case["stdout"].as_str().unwrap().to_string()
}

/// The `$ <program> …` command lines shown by a dry run (trycmd case output).
fn shown_commands(output: &str, program: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.trim().strip_prefix("$ "))
        .filter(|line| line.starts_with(&format!("{program} ")))
        .map(str::to_string)
        .collect()
}

/// The commands of a documentation block: comment lines dropped, `\` continuations joined.
fn documented_commands(block: &str) -> Vec<String> {
    let joined = block.replace("\\\n", " ");
    joined
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| line.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// A command line with the values that legitimately differ replaced by placeholders: the
/// verdict schema, the worktree, the model, the repository path, and shell quoting.
fn normalized(command: &str) -> String {
    let command = match command.split_once("--json-schema ") {
        Some((before, _)) => format!("{before}--json-schema <schema>"),
        None => command.to_string(),
    };
    let mut tokens: Vec<String> = Vec::new();
    let mut words = command.split_whitespace();
    while let Some(word) = words.next() {
        let word = word.replace('\'', "");
        tokens.push(word.clone());
        let placeholder = match word.as_str() {
            "-C" => Some("<worktree>"),
            "-m" | "--model" => Some("<model>"),
            _ => None,
        };
        if let Some(placeholder) = placeholder {
            words.next();
            tokens.push(placeholder.to_string());
        }
    }
    let runs = Regex::new(r"^.*\.autobuild/runs/[^/]+/").unwrap();
    tokens
        .iter()
        .map(|t| runs.replace(t, ".autobuild/runs/<ID>/").to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The documented command lines (the block of `doc` that starts with `# player`) and the ones
/// `dry_run` shows for `program`, normalized and checked to be the same; the documented ones.
fn compare_command_lines(doc: &str, dry_run: &str, program: &str) -> Vec<String> {
    let block = blocks(&read(doc), "text")
        .into_iter()
        .find(|b| b.contains("# player"))
        .unwrap_or_else(|| panic!("{doc} has no command-line block"));
    let documented = documented_commands(&block);
    let real: Vec<String> = shown_commands(dry_run, program)
        .iter()
        .map(|c| normalized(c))
        .collect();
    assert_eq!(real.len(), 2, "{dry_run}");
    let normal: Vec<String> = documented.iter().map(|c| normalized(c)).collect();
    assert_eq!(normal, real, "{doc}");
    documented
}

#[test]
fn the_claude_code_command_lines_are_the_ones_a_dry_run_shows() {
    // The shipped player-coach workflow on claude-code, as `init` leaves a project.
    let dry_run = read("tests/cmd-repo/init/first-steps.trycmd");
    let documented = compare_command_lines("docs/claude-code.md", &dry_run, "claude");
    // The models are the shipped roles' own.
    assert_eq!(
        documented
            .iter()
            .filter(|c| c.contains("--model sonnet"))
            .count(),
        2
    );
}

#[test]
fn the_codex_command_lines_are_the_ones_a_dry_run_shows() {
    let dry_run = case_stdout("tests/cmd-repo/task-dry-run-codex.toml");
    compare_command_lines("docs/codex.md", &dry_run, "codex");
}

#[test]
fn the_documented_doctor_output_is_the_checked_one() {
    let doc = read("docs/claude-code.md");
    let block = blocks(&doc, "text")
        .into_iter()
        .find(|b| b.starts_with("$ autobuild doctor\n"))
        .expect("the doctor block");
    let documented: Vec<&str> = block.lines().skip(1).collect();
    let checked = case_stdout("tests/cmd/doctor-outside-repo.toml");
    let expected: Vec<&str> = checked.lines().collect();
    assert_eq!(documented.len(), expected.len(), "{block}\n---\n{checked}");
    for (doc_line, case_line) in documented.iter().zip(&expected) {
        let pattern = regex::escape(case_line)
            .replace(r"\[\.\.\]", ".*")
            .replace(r"\[CWD\]", ".*");
        let re = Regex::new(&format!("^{pattern}$")).unwrap();
        assert!(
            re.is_match(doc_line),
            "docs:  {doc_line}\ncase:  {case_line}"
        );
    }
}

/// `autobuild ARGS` in `dir`, with the fake agent CLIs first on the PATH.
fn autobuild(dir: &Path, args: &[&str]) -> std::process::Output {
    let fakes = ["tests/fixtures/fake-claude", "tests/fixtures/fake-codex"]
        .map(|d| Path::new(d).canonicalize().unwrap().display().to_string());
    Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("-C")
        .arg(dir)
        .args(args)
        .env(
            "PATH",
            format!(
                "{}:{}:{}",
                fakes[0],
                fakes[1],
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env("FAKE_CLAUDE_AUTH", "logged_in")
        .env("AUTOBUILD_CONFIG_DIR", "/nonexistent/autobuild-config")
        .env(
            "AUTOBUILD_BWRAP",
            Path::new("tests/fixtures/fake-bwrap/bwrap")
                .canonicalize()
                .unwrap(),
        )
        .output()
        .unwrap()
}

fn assert_ok(output: &std::process::Output, what: &str) {
    assert!(
        output.status.success(),
        "{what}: exit {:?}\n{}\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_documented_feature_file_is_a_valid_feature() {
    let doc = read("docs/features.md");
    let yaml = blocks(&doc, "yaml")
        .into_iter()
        .find(|b| b.starts_with("id: FEAT-GREET"))
        .expect("the feature file block");
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("demo/project"), dir.path());
    copy_tree(Path::new("tests/fixtures/features/demo"), dir.path());
    fs::write(dir.path().join(".autobuild/features/FEAT-GREET.yaml"), yaml).unwrap();
    autobuild::git::init_with_commit(dir.path(), "main", "demo").unwrap();
    let output = autobuild(dir.path(), &["feature", "FEAT-GREET", "--dry-run"]);
    assert_ok(&output, "feature --dry-run of the documented file");
}

/// A temporary repository holding `task` as TASK-001, `config` and, when given, `workflow` as
/// `careful.toml`; its dry run of TASK-001 must print the plan, with no error. Returns the plan.
fn dry_run_of_examples(task: &str, config: &str, workflow: Option<&str>, what: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join(".autobuild/tasks")).unwrap();
    fs::create_dir_all(root.join(".autobuild/workflows")).unwrap();
    fs::write(root.join(".autobuild/tasks/TASK-001.md"), task).unwrap();
    fs::write(root.join(".autobuild/config.toml"), config).unwrap();
    if let Some(workflow) = workflow {
        fs::write(root.join(".autobuild/workflows/careful.toml"), workflow).unwrap();
    }
    // What the config examples link and run must exist for a dry run to pass preflight.
    fs::create_dir_all(root.join(".venv/bin")).unwrap();
    fs::write(root.join(".gitignore"), "/.venv\n").unwrap();
    autobuild::git::init_with_commit(root, "main", "documented examples").unwrap();

    assert_ok(
        &autobuild(root, &["workflows", "validate", "player-coach"]),
        &format!("{what}: the workflow and config"),
    );
    let dry_run = autobuild(root, &["task", "TASK-001", "--dry-run"]);
    let out = String::from_utf8_lossy(&dry_run.stdout).to_string();
    let err = String::from_utf8_lossy(&dry_run.stderr);
    // The task, config and workflow parse and resolve: the plan is printed. (It may name
    // blockers of this machine, such as the example's `command` agent script.)
    assert!(
        out.starts_with("Plan for TASK-001: Add greeting function"),
        "{what}\n{out}\n{err}"
    );
    assert!(!err.contains("error"), "{what}\n{err}");
    out
}

/// The task example of `doc` (the Markdown block holding `id: TASK-001`).
fn task_example(doc: &str) -> String {
    blocks(&read(doc), "markdown")
        .into_iter()
        .find(|b| b.contains("id: TASK-001"))
        .unwrap_or_else(|| panic!("the task example of {doc}"))
}

#[test]
fn the_reference_task_config_and_workflow_examples_are_valid() {
    let tomls = blocks(&read("docs/config.md"), "toml");
    let config = tomls
        .iter()
        .find(|b| b.starts_with("[project]"))
        .expect("the config example");
    let workflow = tomls
        .iter()
        .find(|b| b.starts_with("# .autobuild/workflows/careful.toml"))
        .expect("the workflow example");
    let plan = dry_run_of_examples(
        &task_example("docs/config.md"),
        config,
        Some(workflow),
        "docs/config.md",
    );
    assert!(
        plan.contains("up to 8 turn(s)"),
        "the careful workflow's bound: {plan}"
    );
}

/// The README's task example, and each of its `config.toml` examples, are what the binary
/// accepts.
#[test]
fn the_readme_task_and_config_examples_are_valid() {
    let task = task_example("README.md");
    let configs: Vec<String> = blocks(&read("README.md"), "toml")
        .into_iter()
        .filter(|b| b.starts_with("# .autobuild/config.toml"))
        .collect();
    assert!(configs.len() >= 2, "{configs:?}");
    for config in configs {
        dry_run_of_examples(&task, &config, None, &format!("README.md:\n{config}"));
    }
}

/// The keys of config.toml's own tables, from the schema derived from the type the config is
/// decoded into (`[roles]` and `[profiles]` hold workflow roles and profiles, documented with
/// those).
fn config_keys() -> Vec<(String, Vec<String>)> {
    let schema = autobuild::schema::SchemaKind::Config.schema();
    let definitions = &schema["definitions"];
    let resolve = |node: &serde_json::Value| -> serde_json::Value {
        let reference = node
            .pointer("/allOf/0/$ref")
            .or_else(|| node.get("$ref"))
            .and_then(serde_json::Value::as_str);
        match reference {
            Some(r) => definitions[r.trim_start_matches("#/definitions/")].clone(),
            None => node.clone(),
        }
    };
    let mut tables = Vec::new();
    for (table, node) in schema["properties"].as_object().unwrap() {
        if table == "roles" || table == "profiles" {
            continue;
        }
        let node = resolve(node);
        // A table of named tables (`[checks.<name>]`, `[pricing."<model>"]`) lists the keys of
        // its entries.
        let entries = node
            .get("patternProperties")
            .and_then(|p| p.as_object()?.values().next().cloned())
            .or_else(|| node.get("additionalProperties").cloned())
            .filter(serde_json::Value::is_object);
        let keys = match entries {
            Some(entry) => resolve(&entry)["properties"].clone(),
            None => node["properties"].clone(),
        };
        let keys = keys
            .as_object()
            .map(|keys| keys.keys().cloned().collect())
            .unwrap_or_default();
        tables.push((table.clone(), keys));
    }
    tables
}

/// docs/config.md is the reference of config.toml: every table and key the type declares is
/// named there, so a new key cannot land undocumented.
#[test]
fn the_reference_names_every_config_key() {
    let reference = read("docs/config.md");
    let tables = config_keys();
    assert!(tables.len() >= 10, "{tables:?}");
    for (table, keys) in tables {
        assert!(
            reference.contains(&format!("[{table}")),
            "docs/config.md does not show the `[{table}]` table of config.toml"
        );
        for key in keys {
            let named = [
                format!("{key} ="),
                format!("`{key}`"),
                format!("[{table}] {key}"),
            ]
            .iter()
            .any(|form| reference.contains(form));
            assert!(named, "docs/config.md does not name `{key}` of `[{table}]`");
        }
    }
}

/// Every `--flag` in `text`.
fn flags(text: &str) -> Vec<String> {
    let re = Regex::new(r"`(--[a-z][a-z-]*)").unwrap();
    let mut found: Vec<String> = re.captures_iter(text).map(|c| c[1].to_string()).collect();
    found.sort();
    found.dedup();
    found
}

fn help(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .args(args)
        .arg("--help")
        .output()
        .unwrap();
    String::from_utf8_lossy(&output.stdout).to_string()
}

#[test]
fn the_flags_the_documents_name_exist() {
    let commands = read("docs/commands.md");
    let task_flags = commands
        .split("Flags of `task`:")
        .nth(1)
        .and_then(|rest| rest.split("\n\n").next())
        .expect("the task flags paragraph");
    let task_help = format!("{}{}", help(&["task"]), help(&[]));
    for flag in flags(task_flags) {
        assert!(
            task_help.contains(&flag),
            "docs/commands.md names {flag}; `task --help` has no such flag"
        );
    }
    let feature_help = format!("{}{}", help(&["feature"]), help(&[]));
    for flag in flags(&read("docs/features.md")) {
        assert!(
            feature_help.contains(&flag),
            "docs/features.md names {flag}; `feature --help` has no such flag"
        );
    }
}

#[test]
fn the_workflow_reference_examples_are_valid() {
    let doc = read("docs/workflows.md");
    let toml = blocks(&doc, "toml")
        .into_iter()
        .find(|b| b.starts_with("# .autobuild/workflows/careful.toml"))
        .expect("the TOML workflow example");
    let yaml = blocks(&doc, "yaml")
        .into_iter()
        .find(|b| b.starts_with("schema: 1"))
        .expect("the YAML workflow example");
    let signoff = blocks(&doc, "toml")
        .into_iter()
        .find(|b| b.contains("uses = \"approval\""))
        .expect("the expression example");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join(".autobuild/workflows")).unwrap();
    fs::write(root.join(".autobuild/workflows/careful.toml"), &toml).unwrap();
    fs::write(
        root.join(".autobuild/workflows/careful-yaml.yaml"),
        yaml.replace("name: careful", "name: careful-yaml"),
    )
    .unwrap();
    // The expression example is a step: as a patch of player-coach it must validate too.
    fs::write(
        root.join(".autobuild/workflows/signoff.toml"),
        format!("schema = 1\nname = \"signoff\"\nextends = \"player-coach\"\n\n{signoff}"),
    )
    .unwrap();
    autobuild::git::init_with_commit(root, "main", "workflow reference examples").unwrap();
    for name in ["careful", "careful-yaml", "signoff"] {
        assert_ok(
            &autobuild(root, &["workflows", "validate", name]),
            &format!("docs/workflows.md example `{name}`"),
        );
    }
    let shown = autobuild(root, &["workflows", "show", "careful-yaml", "--resolved"]);
    assert!(
        String::from_utf8_lossy(&shown.stdout).contains("max_iterations = 8"),
        "the YAML example means the same as the TOML one"
    );
}

/// The documents: README.md, ARCHITECTURE.md and docs/*.md.
fn documents() -> Vec<String> {
    let mut docs: Vec<String> = fs::read_dir("docs")
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .map(|path| path.display().to_string())
        .collect();
    docs.sort();
    docs.extend(["README.md".to_string(), "ARCHITECTURE.md".to_string()]);
    docs
}

/// `markdown` without its fenced blocks.
fn prose(markdown: &str) -> String {
    let mut fenced = false;
    let mut text = String::new();
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            text.push_str(line);
            text.push('\n');
        }
    }
    text
}

/// The titles a section can be cited by: every heading and every bold lead-in, without
/// backticks, lower-cased.
fn titles(markdown: &str) -> Vec<String> {
    let bold = Regex::new(r"\*\*([^*]+)\*\*").unwrap();
    prose(markdown)
        .lines()
        .flat_map(|line| {
            let heading = line
                .starts_with('#')
                .then(|| line.trim_start_matches('#').trim().to_string());
            heading
                .into_iter()
                .chain(bold.captures_iter(line).map(|c| c[1].to_string()))
                .collect::<Vec<_>>()
        })
        .map(|title| title.replace('`', "").to_lowercase())
        .collect()
}

/// GitHub's anchor of a heading: lower case, spaces as hyphens, other punctuation dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

#[test]
fn anchors_are_the_ones_github_makes() {
    for (heading, expected) in [
        ("Quick start", "quick-start"),
        (
            "Run directory `.autobuild/runs/<ID>/`",
            "run-directory-autobuildrunsid",
        ),
        (
            "Refs and the runner's guards",
            "refs-and-the-runners-guards",
        ),
        (
            "What an agent can and cannot do, by mode",
            "what-an-agent-can-and-cannot-do-by-mode",
        ),
    ] {
        assert_eq!(anchor(heading), expected);
    }
}

/// Every relative link of a document names a file the repository carries and, with a `#`, a
/// heading of that file: moving a section cannot leave a link behind.
#[test]
fn every_link_between_the_documents_resolves() {
    let link = Regex::new(r"\]\(([^)\s]+)\)").unwrap();
    let mut broken = Vec::new();
    let mut checked = 0;
    for doc in documents() {
        let dir = Path::new(&doc).parent().unwrap();
        for found in link.captures_iter(&prose(&read(&doc))) {
            let target = &found[1];
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
            let file = if path.is_empty() {
                Path::new(&doc).to_path_buf()
            } else {
                dir.join(path)
            };
            if !file.exists() {
                broken.push(format!("{doc}: {target}: no such file"));
                continue;
            }
            let is_markdown = file.extension().is_some_and(|e| e == "md");
            if fragment.is_empty() || !is_markdown {
                continue;
            }
            let text = read(&file.display().to_string());
            let headings: Vec<String> = prose(&text)
                .lines()
                .filter(|line| line.starts_with('#'))
                .map(|line| anchor(line.trim_start_matches('#')))
                .collect();
            if !headings.iter().any(|h| h == fragment) {
                broken.push(format!("{doc}: {target}: no such heading"));
            }
        }
    }
    assert!(checked > 50, "the walk found the links: {checked}");
    assert!(broken.is_empty(), "{broken:#?}");
}

/// Every file of the repository that can cite a document: sources, tests, scripts, documents.
fn citing_files() -> Vec<std::path::PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| {
                ["rs", "md", "sh", "toml", "versions"]
                    .iter()
                    .any(|x| e == *x)
            }) {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    for dir in [
        "src", "crates", "tests", "benches", "scripts", "docs", ".ci",
    ] {
        walk(Path::new(dir), &mut files);
    }
    files.extend(["README.md", "ARCHITECTURE.md", ".ci/run"].map(Into::into));
    files
}

/// A source that cites a section (`README.md, "Exit codes"`, `docs/sandbox.md ("Landlock")`)
/// names a heading or bold lead-in that document has: a section moved to another document
/// takes its citations along.
#[test]
fn every_cited_section_exists() {
    let citation = Regex::new(
        r#"(README(?:\.md)?|ARCHITECTURE\.md|docs/[\w-]+\.md)[,:]?\s+\(?\\?"([^"\\\n]+)\\?""#,
    )
    .unwrap();
    let mut missing = Vec::new();
    let mut checked = 0;
    for file in citing_files() {
        let Ok(text) = fs::read_to_string(&file) else {
            continue;
        };
        for (number, line) in text.lines().enumerate() {
            for found in citation.captures_iter(line) {
                let doc = match &found[1] {
                    "README" => "README.md",
                    doc => doc,
                };
                checked += 1;
                let cited = found[2].replace('`', "").to_lowercase();
                let exists = Path::new(doc).is_file()
                    && titles(&read(doc)).iter().any(|t| t.starts_with(&cited));
                if !exists {
                    missing.push(format!(
                        "{}:{}: {doc}, {:?}",
                        file.display(),
                        number + 1,
                        &found[2]
                    ));
                }
            }
        }
    }
    assert!(checked > 20, "the walk found the citations: {checked}");
    assert!(missing.is_empty(), "{missing:#?}");
}

/// The README is the way in, not the reference (issue 45): the reference lives in docs/.
#[test]
fn the_readme_stays_a_way_in() {
    let lines = read("README.md").lines().count();
    assert!(
        lines <= 450,
        "README.md has {lines} lines; move reference to docs/"
    );
}
