//! Resolution across layers: precedence, `extends`/`replaces`, config and command-line
//! overrides, origins, prompts, profiles, and TOML/YAML equivalence.

use std::fs;
use std::path::Path;
use std::sync::Once;

use autobuild::diagnostic::Diagnostic;
use autobuild::error::Error;
use autobuild::profile::{resolve_profile, Requirement};
use autobuild::unknown::{Catalog, Unknown};
use autobuild::user_file::source::{Layer, Source};
use autobuild::user_file::{parse_toml, parse_yaml};
use autobuild::workflow::catalog::{read_source, CONFIG_DIR_ENV};
use autobuild::workflow::context::PromptContext;
use autobuild::workflow::decode::decode_workflow;
use autobuild::workflow::kinds::LoopStep;
use autobuild::workflow::model::{Action, Workflow};
use autobuild::workflow::{resolve, Overrides};
use tempfile::TempDir;

/// Every test here sees no user configuration directory.
fn no_user_dir() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| std::env::set_var(CONFIG_DIR_ENV, "/nonexistent/autobuild-test-config"));
}

/// A repository root with the given files under it.
fn repo(files: &[(&str, &str)]) -> TempDir {
    no_user_dir();
    let dir = TempDir::new().unwrap();
    for (path, text) in files {
        let path = dir.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    dir
}

fn problems(result: Result<impl std::fmt::Debug, Error>) -> Vec<Diagnostic> {
    match result {
        Err(Error::Invalid(found)) => found.0,
        other => panic!("expected validation errors, got {other:?}"),
    }
}

fn loop_bound(workflow: &Workflow) -> u32 {
    workflow
        .steps
        .iter()
        .find_map(|s| match s.action {
            Action::Loop(LoopStep { max_iterations, .. }) => Some(max_iterations),
            _ => None,
        })
        .unwrap()
}

const EXTENDS: &str = r#"name = "x"
extends = "player-coach"
description = "Player-coach with a stronger coach."

[roles.coach]
model = "opus"

[[steps]]
id = "cycle"
max_iterations = 8
"#;

#[test]
fn extends_patches_roles_and_steps_by_id() {
    let dir = repo(&[(".autobuild/workflows/x.toml", EXTENDS)]);
    let resolved = resolve(Some(dir.path()), "x", &Overrides::default()).unwrap();
    let w = &resolved.workflow;
    assert_eq!(w.name, "x");
    assert_eq!(w.roles["coach"].model.as_deref(), Some("opus"));
    assert_eq!(w.roles["player"].model.as_deref(), Some("sonnet"));
    assert_eq!(loop_bound(w), 8);
    let ids: Vec<_> = w.all_steps().iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        [
            "worktree",
            "cycle",
            "implement",
            "verify",
            "review",
            "gate",
            "merge",
            "report"
        ]
    );
    assert_eq!(resolved.source, Path::new(".autobuild/workflows/x.toml"));
    assert_eq!(resolved.layer, Layer::Repo);

    let annotated = resolved.annotated_toml();
    assert!(
        annotated.contains("model = \"opus\"  # .autobuild/workflows/x.toml:6"),
        "{annotated}"
    );
    assert!(annotated.contains("max_iterations = 8  # .autobuild/workflows/x.toml:10"));
    assert!(
        annotated.contains("model = \"sonnet\"\n"),
        "base values stay unmarked"
    );
}

#[test]
fn resolved_toml_round_trips_and_is_hashed() {
    no_user_dir();
    let resolved = resolve(None, "player-coach", &Overrides::default()).unwrap();
    let tree =
        parse_toml::parse(&Source::new("r.toml", resolved.toml.as_str(), Layer::File)).unwrap();
    assert_eq!(decode_workflow(&tree).unwrap(), resolved.workflow);
    assert_eq!(resolved.hash.len(), 64);
    let again = resolve(None, "player-coach", &Overrides::default()).unwrap();
    assert_eq!(again.hash, resolved.hash);
}

#[test]
fn config_roles_and_command_line_overrides_apply_in_order() {
    let dir = repo(&[(
        ".autobuild/config.toml",
        "[project]\nbase_branch = \"main\"\n\n[roles.coach]\nmodel = \"opus\"\n\n[roles.player]\nagent = \"command\"\ncommand = [\"sh\", \"p.sh\"]\n",
    )]);
    let overrides = Overrides {
        set: vec![
            "roles.coach.model=haiku".into(),
            "limits.max_cost_usd=5".into(),
        ],
        max_turns: Some(2),
        models: vec!["player=big".into()],
        ..Overrides::default()
    };
    let resolved = resolve(Some(dir.path()), "player-coach", &overrides).unwrap();
    let w = &resolved.workflow;
    assert_eq!(w.roles["coach"].model.as_deref(), Some("haiku"));
    assert_eq!(w.roles["player"].model.as_deref(), Some("big"));
    assert_eq!(w.roles["player"].command.as_deref().unwrap()[0], "sh");
    assert_eq!(w.limits.max_cost_usd, Some(5.0));
    assert_eq!(loop_bound(w), 2);
    let annotated = resolved.annotated_toml();
    assert!(
        annotated.contains("agent = \"command\"  # .autobuild/config.toml:8"),
        "{annotated}"
    );
    assert!(
        annotated.contains("model = \"haiku\"  # --set roles.coach.model=haiku"),
        "{annotated}"
    );
}

#[test]
fn unknown_set_keys_and_config_roles_are_located_errors() {
    let dir = repo(&[(
        ".autobuild/config.toml",
        "[roles.coahc]\nmodel = \"opus\"\n",
    )]);
    let overrides = Overrides {
        set: vec![
            "roles.coach.modle=opus".into(),
            "limit.max_cost_usd=3".into(),
        ],
        ..Overrides::default()
    };
    let found = problems(resolve(Some(dir.path()), "player-coach", &overrides));
    let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(found.len(), 3, "{shown:#?}");
    assert!(shown[0].starts_with(".autobuild/config.toml:1:8: no workflow has a role `coahc`"));
    assert!(shown[0].contains("did you mean `coach`?"));
    assert!(shown
        .iter()
        .any(|s| s.starts_with("--set:1:13: unknown key `modle`")
            && s.contains("did you mean `model`?")));
    assert!(shown
        .iter()
        .any(|s| s.starts_with("--set:1:1: unknown key `limit`")
            && s.contains("did you mean `limits`?")));
}

#[test]
fn an_unknown_agent_flag_is_reported_once() {
    let dir = repo(&[]);
    for (agent, help) in [
        ("claude", "did you mean `claude-code`?"),
        (
            "bogus",
            "the agents are: claude-code, codex, command, openai, anthropic",
        ),
    ] {
        let overrides = Overrides {
            agent: Some(agent.into()),
            ..Overrides::default()
        };
        let found = problems(resolve(Some(dir.path()), "player-coach", &overrides));
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].message, format!("unknown agent `{agent}`"));
        assert_eq!(found[0].help.as_deref(), Some(help));
        assert!(found[0].to_string().starts_with("--agent:1:1: "));
    }
}

#[test]
fn shadowing_a_builtin_needs_extends_or_replaces() {
    let shadow =
        "schema = 1\nname = \"player-coach\"\n[[steps]]\nid = \"report\"\nuses = \"report\"\n";
    let dir = repo(&[(".autobuild/workflows/pc.toml", shadow)]);
    let found = problems(resolve(
        Some(dir.path()),
        "player-coach",
        &Overrides::default(),
    ));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].location.unwrap().line, 2);
    assert!(found[0].to_string().contains("extends = \"player-coach\""));

    let replacing = shadow.replace(
        "name = \"player-coach\"",
        "name = \"player-coach\"\nreplaces = \"player-coach\"",
    );
    let dir = repo(&[(".autobuild/workflows/pc.toml", replacing.as_str())]);
    let resolved = resolve(Some(dir.path()), "player-coach", &Overrides::default()).unwrap();
    assert_eq!(
        resolved.workflow.all_steps().len(),
        1,
        "replaces takes nothing from the built-in"
    );
    assert!(resolved.workflow.roles.is_empty());

    let patching =
        "name = \"player-coach\"\nextends = \"player-coach\"\n[roles.player]\nmodel = \"opus\"\n";
    let dir = repo(&[(".autobuild/workflows/pc.toml", patching)]);
    let resolved = resolve(Some(dir.path()), "player-coach", &Overrides::default()).unwrap();
    assert_eq!(
        resolved.workflow.roles["player"].model.as_deref(),
        Some("opus")
    );
    assert_eq!(resolved.workflow.all_steps().len(), 8);
}

#[test]
fn extends_cycles_and_unknown_bases_are_errors() {
    let dir = repo(&[
        (
            ".autobuild/workflows/a.toml",
            "name = \"a\"\nextends = \"b\"\n",
        ),
        (
            ".autobuild/workflows/b.toml",
            "name = \"b\"\nextends = \"a\"\n",
        ),
        (
            ".autobuild/workflows/c.toml",
            "name = \"c\"\nextends = \"player-coch\"\n",
        ),
    ]);
    let found = problems(resolve(Some(dir.path()), "a", &Overrides::default()));
    assert!(found[0].message.contains("goes in a circle"), "{found:#?}");
    let found = problems(resolve(Some(dir.path()), "c", &Overrides::default()));
    assert_eq!(found[0].message, "unknown workflow `player-coch`");
    assert_eq!(
        found[0].help.as_deref(),
        Some("did you mean `player-coach`?")
    );
    match resolve(Some(dir.path()), "solo2", &Overrides::default()) {
        Err(e) => {
            let unknown = e.problem::<Unknown>().expect("an unknown name");
            assert_eq!(
                (unknown.catalog, unknown.name.as_str()),
                (Catalog::Workflow, "solo2")
            );
            assert_eq!(e.exit_code(), 2);
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn repo_prompts_override_builtins_and_are_checked() {
    let dir = repo(&[(
        ".autobuild/prompts/coach.md",
        "Review {{ task.id }}.\n\nTitle: {{ task.titel }}\n",
    )]);
    let found = problems(resolve(
        Some(dir.path()),
        "player-coach",
        &Overrides::default(),
    ));
    assert_eq!(found.len(), 1, "{found:#?}");
    let shown = found[0].to_string();
    assert!(
        shown.starts_with(".autobuild/prompts/coach.md:3:11: unknown variable `task.titel`"),
        "{shown}"
    );
    assert!(shown.contains("did you mean `task.title`?"));

    let dir = repo(&[(".autobuild/prompts/coach.md", "Review {{ task.id }}.\n")]);
    let resolved = resolve(Some(dir.path()), "player-coach", &Overrides::default()).unwrap();
    let text = resolved
        .render_prompt("coach.md", &PromptContext::example())
        .unwrap();
    assert_eq!(text, "Review TASK-001.\n");
}

#[test]
fn builtin_prompts_render_on_the_first_and_later_turns() {
    no_user_dir();
    let resolved = resolve(None, "player-coach", &Overrides::default()).unwrap();
    let later = PromptContext::example();
    let mut first = PromptContext::example();
    first.turn = 1;
    first.feedback = None;
    first.verify = None;
    first.player = None;
    first.stall_notice = None;
    first.task.complexity = None;
    first.task.criteria[0].verify = None;

    let player = resolved.render_prompt("player.md", &later).unwrap();
    for expected in [
        "# Task TASK-001: Add greeting function",
        "`python -c 'import x'`",
        "[must_fix] wrong punctuation (src/utils.py:3)",
        "exit code 101",
        ".autobuild/runs/TASK-001/logs/verify_turn_1_test.log",
        "test tests::greets ... FAILED",
        "**AC-001** greeting works: verify command exited 1",
        "No progress in 3 turns.",
        "Do not commit",
    ] {
        assert!(
            player.contains(expected),
            "player prompt lacks `{expected}`:\n{player}"
        );
    }
    let player_first = resolved.render_prompt("player.md", &first).unwrap();
    assert!(!player_first.contains("Feedback from the previous turn"));

    let coach = resolved.render_prompt("coach.md", &later).unwrap();
    for expected in [
        "- src/utils.py",
        " src/utils.py | 2 ++",
        "> Done.",
        "check `test` (`cargo test`): failed, exit code 101",
        "exactly one fenced JSON block",
        // The verdict is asked for as a filled example with the task's criterion ids, not as
        // the schema (the adapter or the corrective retry carries that).
        "{\"id\": \"AC-001\", \"status\": \"met\"",
    ] {
        assert!(
            coach.contains(expected),
            "coach prompt lacks `{expected}`:\n{coach}"
        );
    }
    assert!(!coach.contains("{\"type\": \"object\"}"), "{coach}");
    let mut structured = later.clone();
    structured.structured_verdict = true;
    let coach_structured = resolved.render_prompt("coach.md", &structured).unwrap();
    assert!(coach_structured.contains("through your structured output"));
    assert!(!coach_structured.contains("fenced"));
    let coach_first = resolved.render_prompt("coach.md", &first).unwrap();
    assert!(coach_first.contains("The runner has not verified this turn."));
}

#[test]
fn yaml_and_toml_forms_of_player_coach_are_the_same_workflow() {
    let (file, text) = autobuild::workflow::builtin::WORKFLOWS[0];
    let toml_tree = parse_toml::parse(&Source::new(file, text, Layer::BuiltIn)).unwrap();
    let yaml_path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/workflows/player-coach.yaml");
    let yaml_tree =
        parse_yaml::parse(&read_source(&yaml_path, None, Layer::File).unwrap()).unwrap();
    assert_eq!(
        decode_workflow(&yaml_tree).unwrap(),
        decode_workflow(&toml_tree).unwrap()
    );
}

#[test]
fn yaml_workflows_resolve_from_the_repo() {
    let yaml = "name: y\nextends: solo\nroles:\n  player:\n    model: opus\n";
    let dir = repo(&[(".autobuild/workflows/y.yml", yaml)]);
    let resolved = resolve(Some(dir.path()), "y", &Overrides::default()).unwrap();
    assert_eq!(
        resolved.workflow.roles["player"].model.as_deref(),
        Some("opus")
    );
    assert_eq!(resolved.workflow.gate.waive, [Requirement::Coach]);
}

#[test]
fn profiles_merge_repo_files_and_config_and_resolve_aliases() {
    let dir = repo(&[
        (
            ".autobuild/profiles/feature.toml",
            "require = [\"checks.test\", \"checks.lint\", \"criteria\", \"coach\"]\n",
        ),
        (
            ".autobuild/profiles/spike.toml",
            "description = \"Throwaway.\"\nrequire = [\"changes\"]\n",
        ),
        (
            ".autobuild/config.toml",
            "[profiles.bugfix]\naliases = [\"hotfix\"]\n",
        ),
    ]);
    let (feature, warning) = resolve_profile(Some(dir.path()), "feature").unwrap();
    assert!(warning.is_none());
    assert_eq!(feature.require.len(), 4);
    assert!(
        feature.description.starts_with("New behaviour"),
        "description kept from the built-in"
    );
    assert_eq!(
        resolve_profile(Some(dir.path()), "hotfix").unwrap().0.name,
        "bugfix"
    );
    assert_eq!(
        resolve_profile(Some(dir.path()), "spike")
            .unwrap()
            .0
            .require,
        [Requirement::Changes]
    );
    // (`research` used to be unknown; it is GuardKit's and an alias of `documentation` now.)
    let (fallback, warning) = resolve_profile(Some(dir.path()), "exploration").unwrap();
    assert_eq!(fallback.name, "feature");
    assert!(warning.unwrap().contains("spike"));
}

#[test]
fn invalid_profiles_are_located_errors() {
    let dir = repo(&[(
        ".autobuild/config.toml",
        "[profiles.feature]\nrequire = [\"checks.test\", \"coahc\"]\nalias = [\"f\"]\n",
    )]);
    let found = problems(resolve_profile(Some(dir.path()), "feature"));
    let shown: Vec<String> = found.iter().map(ToString::to_string).collect();
    assert_eq!(found.len(), 2, "{shown:#?}");
    assert!(shown.iter().any(|s| s
        .starts_with(".autobuild/config.toml:2:27: unknown value `coahc` for `require`")
        && s.contains("did you mean `coach`?")));
    assert!(shown
        .iter()
        .any(|s| s.starts_with(".autobuild/config.toml:3:1: unknown key `alias`")));
}
