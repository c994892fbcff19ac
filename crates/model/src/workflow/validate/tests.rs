use super::*;
use crate::workflow::builtin;
use crate::workflow::decode::decode_workflow;
use base::user_file::parse_toml;
use base::user_file::source::{Layer, Source};

fn prompts() -> Prompts {
    Prompts::new(
        builtin::PROMPTS
            .iter()
            .map(|(file, text)| Source::new(*file, *text, Layer::BuiltIn)),
    )
}

fn problems(text: &str) -> Vec<Diagnostic> {
    let tree = parse_toml::parse(&Source::new("w.toml", text, Layer::Repo)).unwrap();
    let workflow = decode_workflow(&tree).unwrap();
    validate(&workflow, &tree, &prompts())
}

/// The built-in player-coach workflow with `from` replaced by `to`.
fn player_coach_with(from: &str, to: &str) -> String {
    let text = builtin::WORKFLOWS[0].1;
    assert!(text.contains(from), "`{from}` is not in player-coach.toml");
    text.replacen(from, to, 1)
}

/// (line, message) of every problem.
fn found(text: &str) -> Vec<(usize, String)> {
    problems(text)
        .into_iter()
        .map(|d| (d.location.map_or(0, |l| l.line), d.message))
        .collect()
}

#[test]
fn shipped_workflows_are_valid() {
    for (file, text) in builtin::WORKFLOWS {
        assert!(problems(text).is_empty(), "{file}: {:#?}", problems(text));
    }
}

#[test]
fn schema_and_limits_are_checked() {
    let text = player_coach_with("schema = 1", "schema = 2")
        .replace("max_cost_usd = 25.0", "max_cost_usd = 0.0")
        .replace("max_wall_time = \"60m\"", "max_wall_time = \"0s\"");
    let found = found(&text);
    assert_eq!(found.len(), 3, "{found:#?}");
    assert!(found
        .iter()
        .any(|(l, m)| *l == 1 && m.contains("schema version 2")));
    assert!(found
        .iter()
        .any(|(l, m)| *l == 7 && m.contains("max_wall_time")));
    assert!(found
        .iter()
        .any(|(l, m)| *l == 8 && m.contains("max_cost_usd")));
}

#[test]
fn duplicate_ids_and_loop_bounds() {
    let text = player_coach_with("id = \"verify\"", "id = \"implement\"")
        .replace("max_iterations = 5 ", "max_iterations = 0 ");
    let found = found(&text);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].1.contains("must be at least 1"));
    assert_eq!(found[1], (44, "duplicate step id `implement`".to_string()));
}

#[test]
fn unknown_roles_are_suggested() {
    let problems = problems(&player_coach_with("role = \"coach\"", "role = \"caoch\""));
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].message,
        "step `review` uses unknown role `caoch`"
    );
    assert_eq!(problems[0].help.as_deref(), Some("did you mean `coach`?"));
}

#[test]
fn expressions_read_only_earlier_steps() {
    let text = player_coach_with(
        "if = \"steps.cycle.outputs.exit == 'done'\"",
        "if = \"steps.report.outputs.path and steps.gate.outputs.aproved and prev.gate.outputs.approved\"",
    );
    let problems = problems(&text);
    let messages: Vec<_> = problems.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`prev.gate` is only defined inside a loop",
            "step `gate` (uses = \"gate\") has no output `aproved`",
            "step `report` runs after this expression is evaluated",
        ]
    );
    assert_eq!(
        problems[1].help.as_deref(),
        Some("did you mean `approved`?")
    );
    // Columns point into the expression: after `if = "`.
    let report = &problems[2];
    assert_eq!(report.location.unwrap().column, 7);
}

#[test]
fn until_reads_its_body_and_prev_its_loop() {
    let text = player_coach_with(
        "until = \"steps.gate.outputs.approved\"",
        "until = \"steps.gate.outputs.approved and not prev.gate.outputs.approved and turn > 1\"",
    );
    assert!(found(&text).is_empty(), "{:#?}", found(&text));

    let own = player_coach_with(
        "until = \"steps.gate.outputs.approved\"",
        "until = \"steps.cycle.outputs.iterations > 2\"",
    );
    assert!(found(&own)[0].1.contains("cannot read its own outputs"));
}

#[test]
fn syntax_errors_and_unknown_variables_in_expressions() {
    let found = found(&player_coach_with(
        "if = \"steps.cycle.outputs.exit == 'done'\"",
        "if = \"steps.cycle.outputs.exit ==\"",
    ));
    assert_eq!(found.len(), 1);
    assert!(found[0].1.starts_with("invalid expression"), "{found:#?}");

    let problems = problems(&player_coach_with(
        "if = \"steps.cycle.outputs.exit == 'done'\"",
        "if = \"stepz.cycle.outputs.exit == 'done' and task.titel\"",
    ));
    assert_eq!(problems[0].message, "unknown variable `stepz`");
    assert_eq!(problems[0].help.as_deref(), Some("did you mean `steps`?"));
    assert_eq!(problems[1].message, "a task has no field `titel`");
}

#[test]
fn run_steps_pass_data_through_env_only() {
    let text = player_coach_with(
        "[[steps]]\nid = \"report\"",
        "[[steps]]\nid = \"notify\"\nuses = \"run\"\nrun = \"echo ${{ task.id }}\"\nenv = { EXIT = \"${{ steps.cycle.outputs.exit }}\", BAD = \"${{ steps.nope.outputs.x }}\" }\n\n[[steps]]\nid = \"report\"",
    );
    let found = found(&text);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0].1.contains("do not interpolate"));
    assert_eq!(found[1].1, "no step `nope`");
}

#[test]
fn read_only_roles_cannot_write_and_command_roles_need_a_program() {
    let text = player_coach_with(
        "tools = [\"read\", \"grep\", \"glob\", \"bash\"]",
        "tools = [\"read\", \"write\", \"glob\"]",
    )
    .replacen("agent = \"claude-code\"", "agent = \"command\"", 1);
    let found = found(&text);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found
        .iter()
        .any(|(l, m)| *l == 11 && m.contains("names no program")));
    assert!(found
        .iter()
        .any(|(l, m)| *l == 23 && m == "role `coach` is read-only but has the `write` tool"));
}

#[test]
fn endpoint_keys_belong_to_the_native_adapters() {
    let text = player_coach_with(
        "agent = \"claude-code\"",
        "agent = \"claude-code\"\nbase_url = \"http://127.0.0.1:11434/v1\"",
    );
    let problems = found(&text);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].1,
        "role `player` sets `base_url`, which the `claude-code` adapter does not read"
    );
    let native = text.replacen("agent = \"claude-code\"", "agent = \"openai\"", 1);
    assert!(found(&native).is_empty(), "{:#?}", found(&native));
    let tokens = player_coach_with(
        "agent = \"claude-code\"",
        "agent = \"codex\"\nmax_tokens = 0",
    );
    let problems = found(&tokens);
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert!(problems
        .iter()
        .any(|(_, m)| m
            == "role `player` sets `max_tokens`, which the `codex` adapter does not read"));
    assert!(problems
        .iter()
        .any(|(_, m)| m == "`max_tokens` must be at least 1"));
    let choice = player_coach_with(
        "agent = \"claude-code\"",
        "agent = \"codex\"\ntool_choice = \"required\"",
    );
    let problems = found(&choice);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].1,
        "role `player` sets `tool_choice`, which the `codex` adapter does not read"
    );
    let native = choice.replacen("agent = \"codex\"", "agent = \"openai\"", 1);
    assert!(found(&native).is_empty(), "{:#?}", found(&native));
}

/// Every adapter against every adapter-specific role key: a key is refused exactly when the
/// adapter's description does not list it, and the help names the adapters that read it.
#[test]
fn a_role_sets_only_the_keys_its_adapter_reads() {
    use strum::IntoEnumIterator;

    use crate::workflow::model::{AgentKind, RoleKey};
    let reads = |kind: AgentKind| -> Vec<RoleKey> { kind.role_keys().to_vec() };
    // The table declared today.
    let all: Vec<RoleKey> = RoleKey::iter().collect();
    for (kind, expected) in [
        (AgentKind::ClaudeCode, vec![]),
        (AgentKind::Codex, vec![]),
        (AgentKind::Command, vec![]),
        (AgentKind::Openai, all.clone()),
        (AgentKind::Anthropic, all.clone()),
    ] {
        assert_eq!(reads(kind), expected, "{kind}");
    }
    for kind in AgentKind::iter() {
        for key in RoleKey::iter() {
            let value = match key {
                RoleKey::BaseUrl => "\"http://127.0.0.1:11434/v1\"",
                RoleKey::ApiKeyEnv => "\"MY_KEY\"",
                RoleKey::Headers => "{ X = \"1\" }",
                RoleKey::MaxTokens => "100",
                RoleKey::ToolChoice => "\"required\"",
            };
            let mut text = player_coach_with(
                "agent = \"claude-code\"",
                &format!("agent = \"{kind}\"\n{key} = {value}"),
            );
            if kind == AgentKind::Command {
                text = text.replacen(
                    "agent = \"command\"",
                    "agent = \"command\"\ncommand = [\"sh\", \"p.sh\"]",
                    1,
                );
            }
            let refused: Vec<Diagnostic> = problems(&text)
                .into_iter()
                .filter(|d| d.message.contains(&format!("sets `{key}`")))
                .collect();
            assert_eq!(
                refused.is_empty(),
                reads(kind).contains(&key),
                "{kind} {key}"
            );
            if let Some(problem) = refused.first() {
                assert_eq!(
                    problem.help.as_deref(),
                    Some("remove it, or set agent = \"openai\" or \"anthropic\"")
                );
            }
        }
    }
}

#[test]
fn prompt_templates_must_exist() {
    let problems = problems(&player_coach_with(
        "prompt = \"coach.md\"",
        "prompt = \"coah.md\"",
    ));
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].help.as_deref(),
        Some("did you mean `coach.md`?")
    );
}

#[test]
fn a_gate_without_a_verdict_must_waive_coach() {
    let text = player_coach_with("output = \"verdict\"", "");
    let found = found(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].1.contains("`coach` requirement can never hold"));
}

#[test]
fn steps_that_need_a_worktree_come_after_one() {
    let text = player_coach_with(
        "id = \"worktree\"\nuses = \"worktree\"",
        "id = \"setup\"\nuses = \"report\"",
    );
    let problems = problems(&text);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].message,
        "step `implement` (uses = \"agent\") needs a worktree, but no `worktree` step comes before it"
    );
    assert_eq!(
        problems[0].source_line.as_deref(),
        Some("  uses = \"agent\"")
    );

    let merge_first = player_coach_with(
        "[[steps]]\nid = \"worktree\"",
        "[[steps]]\nid = \"early\"\nuses = \"merge\"\n\n[[steps]]\nid = \"worktree\"",
    );
    let found = found(&merge_first);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0]
        .1
        .starts_with("step `early` (uses = \"merge\") needs a worktree"));
}

#[test]
fn gates_are_inside_loops() {
    let text = player_coach_with(
        "[[steps]]\nid = \"merge\"",
        "[[steps]]\nid = \"final_gate\"\nuses = \"gate\"\n\n[[steps]]\nid = \"merge\"",
    );
    let found = found(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert_eq!(
        found[0].1,
        "the `gate` step `final_gate` must be inside a loop"
    );
}

#[test]
fn a_run_step_needs_a_worktree_too() {
    let text = player_coach_with(
        "id = \"worktree\"\nuses = \"worktree\"",
        "id = \"setup\"\nuses = \"run\"\nrun = \"true\"",
    );
    let problems = problems(&text);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0]
        .message
        .starts_with("step `setup` (uses = \"run\") needs a worktree"));
}

#[test]
fn a_gate_weighs_only_reviewing_steps_of_its_loop() {
    let text = player_coach_with(
        "  id = \"gate\"\n  uses = \"gate\"",
        "  id = \"gate\"\n  uses = \"gate\"\n  reviews = [\"reviw\", \"implement\"]",
    );
    let found = found(&text);
    assert_eq!(found.len(), 2, "{found:#?}");
    assert!(found[0]
        .1
        .contains("weighs `reviw`, which is not a reviewing step of its loop"));
    assert!(found[1].1.contains("weighs `implement`"));
    let first = &problems(&text)[0];
    assert_eq!(first.help.as_deref(), Some("did you mean `review`?"));

    let fine = player_coach_with(
        "  id = \"gate\"\n  uses = \"gate\"",
        "  id = \"gate\"\n  uses = \"gate\"\n  reviews = [\"review\"]",
    );
    assert!(problems(&fine).is_empty());
}

#[test]
fn a_long_loop_without_until_is_a_warning() {
    let text = player_coach_with("until = ", "# until = ");
    let text = text.replacen("max_iterations = 5", "max_iterations = 50", 1);
    let found = problems(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].is_warning());
    assert!(found[0]
        .message
        .contains("has no `until` and runs up to 50 turns"));
    let bounded = player_coach_with("until = ", "# until = ");
    assert!(
        problems(&bounded).is_empty(),
        "a short loop is fine without `until`"
    );
}

#[test]
fn what_decoded_is_validated_with_the_decoding_mistakes() {
    let text = player_coach_with(
        "prompt = \"player.md\"",
        "prompt = \"player.md\"\nmodle = \"x\"",
    )
    .replacen(
        "uses = \"gate\"",
        "uses = \"gate\"\nif = \"turn > 1 && true\"",
        1,
    );
    let tree = parse_toml::parse(&Source::new("w.toml", &text, Layer::Repo)).unwrap();
    let decoded = crate::workflow::decode::decode_parts(&tree);
    assert_eq!(decoded.problems.len(), 1, "{:#?}", decoded.problems);
    let part = decoded.part.unwrap();
    assert_eq!(part.left_out, ["player"]);
    let semantic = validate_decoded_part(&part.workflow, &part.tree, &prompts(), &part.left_out);
    let messages: Vec<&str> = semantic.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages.len(), 1, "{messages:#?}");
    assert!(
        messages[0].contains("`&&` is not an operator"),
        "{messages:#?}"
    );
}

#[test]
fn criteria_belong_to_reviewer_steps_only() {
    let workflow = player_coach_with("[roles.coach]", "[roles.coach]");
    let on_player = workflow.replacen(
        "  role = \"player\"\n",
        "  role = \"player\"\n  criteria = \"none\"\n",
        1,
    );
    assert_ne!(on_player, workflow, "the fixture has a player step");
    let found = problems(&on_player);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0]
        .message
        .contains("sets `criteria`, but its role `player` returns no verdict"));
    let on_coach = workflow.replacen(
        "  role = \"coach\"\n",
        "  role = \"coach\"\n  criteria = [\"AC-001\"]\n",
        1,
    );
    assert_ne!(on_coach, workflow, "the fixture has a coach step");
    assert!(problems(&on_coach).is_empty());
}

#[test]
fn a_read_only_step_without_a_verdict_in_a_gated_loop_must_say_it_is_advisory() {
    let notes = "[roles.notes]\nagent = \"command\"\ncommand = [\"true\"]\nprompt = \"coach.md\"\naccess = \"read-only\"\n\n[roles.coach]";
    let step = "  [[steps.steps]]\n  id = \"gate\"";
    let silent = player_coach_with("[roles.coach]", notes).replacen(
        step,
        "  [[steps.steps]]\n  id = \"notes\"\n  uses = \"agent\"\n  role = \"notes\"\n  [[steps.steps]]\n  id = \"gate\"",
        1,
    );
    let problems = problems(&silent);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert!(problems[0]
        .message
        .contains("the read-only step `notes` (role `notes`) returns no verdict"));
    assert!(problems[0].help.as_deref().is_some_and(
        |help| help.contains("output = \"verdict\"") && help.contains("advisory = true")
    ));

    let advisory = silent.replace(
        "  role = \"notes\"\n",
        "  role = \"notes\"\n  advisory = true\n",
    );
    assert!(super::tests::problems(&advisory).is_empty());
}

#[test]
fn prompts_read_only_the_outputs_of_steps_that_ran_before_them() {
    let template = "Plan: {{ steps.plan.outputs.text }}\n\
                    {{ steps.plna.outputs.text }}\n\
                    {{ steps.review.outputs.decision }}\n\
                    {{ steps.plan.outputs.txt }}\n\
                    {% if steps.plan is defined %}ok{% endif %}\n";
    let workflow = player_coach_with(
        "[[steps]]\nid = \"cycle\"",
        "[[steps]]\nid = \"plan\"\nuses = \"agent\"\nrole = \"planner\"\n\n[[steps]]\nid = \"cycle\"",
    )
    .replace(
        "[roles.coach]",
        "[roles.planner]\nagent = \"command\"\ncommand = [\"true\"]\nprompt = \"coach.md\"\naccess = \"read-only\"\n\n[roles.coach]",
    )
    .replace("prompt = \"player.md\"", "prompt = \"mine.md\"");
    let tree = parse_toml::parse(&Source::new("w.toml", &workflow, Layer::Repo)).unwrap();
    let decoded = decode_workflow(&tree).unwrap();
    let prompts = Prompts::new(
        builtin::PROMPTS
            .iter()
            .map(|(file, text)| Source::new(*file, *text, Layer::BuiltIn))
            .chain([Source::new("prompts/mine.md", template, Layer::Repo)]),
    );
    let problems = validate(&decoded, &tree, &prompts);
    let messages: Vec<(usize, &str, Option<&str>)> = problems
        .iter()
        .map(|d| {
            (
                d.location.map_or(0, |l| l.line),
                d.message.as_str(),
                d.help.as_deref(),
            )
        })
        .collect();
    assert_eq!(messages.len(), 3, "{messages:#?}");
    let at = |line: usize| {
        messages
            .iter()
            .find(|m| m.0 == line)
            .unwrap_or_else(|| panic!("no problem on line {line}: {messages:#?}"))
    };
    assert!(
        at(3).1.contains("step `review` runs after"),
        "{messages:#?}"
    );
    assert!(at(4).1.contains("has no output `txt`"));
    assert_eq!(at(4).2, Some("did you mean `text`?"));
    assert!(at(2).1.starts_with(
        "`steps.plna.outputs.text` in prompt `mine.md` (role `player`, step `implement`): no step `plna`"
    ));
    assert_eq!(at(2).2, Some("did you mean `plan`?"));
}

#[test]
fn an_agents_free_text_never_decides_a_condition() {
    let text = player_coach_with(
        "if = \"steps.cycle.outputs.exit == 'done'\"",
        "if = \"steps.review.outputs.text != ''\"",
    );
    let found = found(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0]
        .1
        .contains("`steps.review.outputs.text` is an agent's free text and cannot decide"));
}

#[test]
fn a_role_typo_is_one_error_not_a_gate_error_too() {
    let text = player_coach_with(
        "  id = \"gate\"\n  uses = \"gate\"",
        "  id = \"gate\"\n  uses = \"gate\"\n  reviews = [\"review\"]",
    )
    .replacen("role = \"coach\"", "role = \"cocah\"", 1);
    let found = found(&text);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].1.contains("uses unknown role `cocah`"),
        "{found:#?}"
    );
}

#[test]
fn a_patch_naming_no_step_suggests_the_step_it_meant() {
    let text = "schema = 1\nname = \"p\"\n[[steps]]\nid = \"cycle\"\nuses = \"loop\"\nmax_iterations = 2\n  [[steps.steps]]\n  id = \"g\"\n  uses = \"gate\"\n[[steps]]\nid = \"cylce\"\nmax_iterations = 8\n";
    let tree = parse_toml::parse(&Source::new("w.toml", text, Layer::Repo)).unwrap();
    let problems = match decode_workflow(&tree) {
        Ok(_) => panic!("decoded a step without `uses`"),
        Err(problems) => problems,
    };
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].message,
        "no step `cylce` to patch (a new step needs a `uses`)"
    );
    assert_eq!(problems[0].help.as_deref(), Some("did you mean `cycle`?"));
}

/// The line of `text` that `needle` starts on (1-based).
fn line_of(text: &str, needle: &str) -> usize {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` is not in the workflow"));
    text[..at].lines().count() + 1
}

/// Player-coach with a `security` reviewer role, its `security_review` step and the
/// `[[steps]]` of `extra` (written at the end); `at` is where the reviewer's step goes.
fn with_security_review(at: &str, reviewer: &str, extra: &str) -> String {
    let role = "[roles.security]\nagent = \"command\"\ncommand = [\"true\"]\nprompt = \"coach.md\"\naccess = \"read-only\"\noutput = \"verdict\"\n\n[roles.coach]";
    let step = format!("  [[steps.steps]]\n  id = \"security_review\"\n  uses = \"agent\"\n  role = \"{reviewer}\"\n");
    let text = player_coach_with("[roles.coach]", role);
    let text = match at {
        "" => text,
        at => text.replacen(at, &format!("{at}{step}"), 1),
    };
    format!("{text}\n{extra}")
}

#[test]
fn a_reviewer_runs_before_the_gate_that_weighs_it() {
    let after_gate = "  id = \"gate\"\n  uses = \"gate\"                 # profile requirements + coach verdict → approved, reasons, feedback\n";
    let before_gate = "  role = \"coach\"\n";
    let second_loop = "[[steps]]\nid = \"final\"\nuses = \"loop\"\nmax_iterations = 1\n  [[steps.steps]]\n  id = \"final_review\"\n  uses = \"agent\"\n  role = \"security\"\n  [[steps.steps]]\n  id = \"final_gate\"\n  uses = \"gate\"\n";
    let final_review = "[[steps]]\nid = \"final_review\"\nuses = \"agent\"\nrole = \"security\"\n";
    // (what, where the security reviewer goes, the steps after the workflow's, refused)
    let cases = [
        ("after the gate of its loop", after_gate, "", true),
        ("before the gate", before_gate, "", false),
        (
            "in a later loop, before that loop's gate",
            "",
            second_loop,
            false,
        ),
        ("after the loop, where no gate is", "", final_review, false),
    ];
    for (what, at, extra, refused) in cases {
        let text = with_security_review(at, "security", extra);
        let found = found(&text);
        if !refused {
            assert!(found.is_empty(), "{what}: {found:#?}");
            continue;
        }
        assert_eq!(
            found,
            [(
                line_of(&text, "  id = \"security_review\""),
                "the reviewer `security_review` runs after the gate `gate` of loop `cycle`, so the gate never weighs its verdict".to_string()
            )],
            "{what}"
        );
        assert_eq!(
            problems(&text)[0].help,
            Some(format!("move it before `gate` (w.toml:{}): in a workflow that extends another, list `gate` after it", line_of(&text, "  id = \"gate\""))),
            "{what}"
        );
    }
    // A gate that names the reviewers it weighs does not wait for the others.
    let named = with_security_review(after_gate, "security", "").replacen(
        "  uses = \"gate\"",
        "  reviews = [\"review\"]\n  uses = \"gate\"",
        1,
    );
    assert!(problems(&named).is_empty(), "{:#?}", problems(&named));
    // Nor is a step whose role gives no verdict a reviewer (`advisory` says what it is).
    let advisory = with_security_review(after_gate, "security", "")
        .replacen(
            "output = \"verdict\"\n\n[roles.coach]",
            "\n[roles.coach]",
            1,
        )
        .replacen(
            "  role = \"security\"\n",
            "  role = \"security\"\n  advisory = true\n",
            1,
        );
    assert!(problems(&advisory).is_empty(), "{:#?}", problems(&advisory));
}

#[test]
fn a_sign_off_runs_before_the_merge() {
    let signoff =
        |question: &str| format!("[[steps]]\nid = \"signoff\"\nuses = \"approval\"\n{question}");
    let deploy = "[[steps]]\nid = \"deploy\"\nuses = \"run\"\nrun = \"true\"\n";
    let ask = "question = \"Deploy it?\"\n";
    // (what, the workflow's last steps after `cycle`, refused)
    let cases = [
        (
            "after merge and report",
            vec!["merge", "report", "signoff"],
            "",
            true,
        ),
        (
            "between merge and report",
            vec!["merge", "signoff", "report"],
            "",
            true,
        ),
        (
            "its own question, only the report after it",
            vec!["merge", "signoff", "report"],
            ask,
            true,
        ),
        (
            "before the merge",
            vec!["signoff", "merge", "report"],
            "",
            false,
        ),
        (
            "its own question, guarding a later step",
            vec!["merge", "signoff", "deploy", "report"],
            ask,
            false,
        ),
    ];
    let merge = "[[steps]]\nid = \"merge\"\nuses = \"merge\"\nif = \"steps.cycle.outputs.exit == 'done'\"\n";
    let report = "[[steps]]\nid = \"report\"\nuses = \"report\"\nalways = true\n";
    let head = player_coach_with("", "");
    let head = &head[..head.find("[[steps]]\nid = \"merge\"").unwrap()];
    for (what, order, question, refused) in cases {
        let tail: Vec<String> = order
            .iter()
            .map(|id| match *id {
                "merge" => merge.to_string(),
                "report" => report.to_string(),
                "deploy" => deploy.to_string(),
                _ => signoff(question),
            })
            .collect();
        let text = format!("{head}{}", tail.join("\n"));
        let found = found(&text);
        if !refused {
            assert!(found.is_empty(), "{what}: {found:#?}");
            continue;
        }
        assert_eq!(
            found,
            [(
                line_of(&text, "id = \"signoff\""),
                "the sign-off `signoff` runs after the `merge` step, so the work is merged before a person can refuse it".to_string()
            )],
            "{what}"
        );
        let help = format!(
            "move it before `merge` (w.toml:{}): in a workflow that extends another, list `merge` after it{}",
            line_of(&text, "id = \"merge\""),
            match question {
                "" => "",
                _ => " (a question after the merge needs a step after it to guard, other than the report)",
            }
        );
        assert_eq!(problems(&text)[0].help, Some(help), "{what}");
    }
}

#[test]
fn a_role_that_writes_cannot_be_a_reviewer() {
    let text = player_coach_with("access = \"read-only\"", "access = \"write\"");
    let found = found(&text);
    let line = text
        .lines()
        .position(|l| l.trim_start().starts_with("output = \"verdict\""))
        .map(|i| i + 1)
        .unwrap();
    assert!(
        found
            .iter()
            .any(|(l, m)| *l == line
                && m.contains("writes (access = \"write\") but returns a verdict")),
        "{found:#?}"
    );
}
