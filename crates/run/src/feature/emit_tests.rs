//! The emitted GitHub workflow, parsed back: its jobs, their order and gates, matrices,
//! permissions, pinned actions, tokens and secrets. How it behaves on a real engine is
//! tests/suite/scaleout_simulation.rs's `act` tests.

use yaml_serde::Value;

use super::*;

fn plan(agents: Vec<AgentKind>) -> EmitPlan {
    EmitPlan {
        feature_id: "FEAT-X".into(),
        file: ".autobuild/features/FEAT-X.yaml".into(),
        waves: vec![vec!["A".into(), "B".into()], vec!["C".into()]],
        max_parallel: 2,
        agents,
        wall_times: BTreeMap::new(),
        source: Source {
            version: "9.8.7".into(),
            args: vec![
                "--git".into(),
                "file:///srv/autobuild.git".into(),
                "--rev".into(),
                "c0ffee".into(),
                "autobuild".into(),
            ],
            origin: source::Origin::Given,
        },
        sandboxed: Vec::new(),
    }
}

fn parsed(plan: &EmitPlan) -> Value {
    yaml_serde::from_str(&github::render(plan)).unwrap()
}

fn steps(job: &Value) -> &Vec<Value> {
    job["steps"].as_sequence().unwrap()
}

fn all_steps(workflow: &Value) -> Vec<&Value> {
    workflow["jobs"]
        .as_mapping()
        .unwrap()
        .values()
        .flat_map(steps)
        .collect()
}

fn needs(job: &Value) -> Vec<&str> {
    job["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect()
}

#[test]
fn each_wave_runs_once_the_landing_before_it_succeeded_whatever_failed_earlier() {
    let workflow = parsed(&plan(vec![AgentKind::Command]));
    let jobs = &workflow["jobs"];
    let names: Vec<&str> = jobs
        .as_mapping()
        .unwrap()
        .keys()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["plan", "wave-1", "land-1", "wave-2", "land-2", "finish"]
    );
    assert_eq!(needs(&jobs["wave-1"]), ["plan"]);
    assert!(jobs["wave-1"]["if"].is_null());
    assert_eq!(needs(&jobs["land-1"]), ["wave-1", "plan"]);
    assert_eq!(
        jobs["land-1"]["if"],
        "${{ !cancelled() && needs.plan.result == 'success' }}"
    );
    // A plain `needs: land-1` would also require wave-1 to have succeeded.
    assert_eq!(needs(&jobs["wave-2"]), ["land-1"]);
    assert_eq!(
        jobs["wave-2"]["if"],
        "${{ !cancelled() && needs.land-1.result == 'success' }}"
    );
    assert_eq!(needs(&jobs["land-2"]), ["wave-2", "land-1"]);
    assert_eq!(
        needs(&jobs["finish"]),
        ["plan", "wave-1", "land-1", "wave-2", "land-2"]
    );
    assert_eq!(jobs["finish"]["if"], "${{ always() }}");
    let outcome = steps(&jobs["finish"])
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("--outcome"))
        .unwrap();
    assert!(
        outcome.contains("--abandon \"$ABANDON_TASKS\""),
        "{outcome}"
    );
    for input in ["max_turns", "auto_merge", "only", "skip", "abandon"] {
        assert!(
            workflow["on"]["workflow_dispatch"]["inputs"][input].is_mapping(),
            "{input}"
        );
    }
    assert_eq!(workflow["env"]["ABANDON_TASKS"], "${{ inputs.abandon }}");
    assert_eq!(workflow["concurrency"]["group"], "autobuild-FEAT-X");
    assert_eq!(workflow["concurrency"]["cancel-in-progress"], false);
}

#[test]
fn each_wave_is_a_matrix_over_its_tasks_that_runs_them_on_the_feature_branch() {
    let workflow = parsed(&plan(vec![AgentKind::Command]));
    let wave = &workflow["jobs"]["wave-1"];
    assert_eq!(wave["strategy"]["fail-fast"], false);
    assert_eq!(wave["strategy"]["max-parallel"], 2);
    let tasks: Vec<&str> = wave["strategy"]["matrix"]["task"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert_eq!(tasks, ["A", "B"]);
    let runs: Vec<&str> = steps(wave)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect();
    assert!(runs.iter().any(|r| r.contains("--ready \"$TASK\"")));
    assert!(runs.iter().any(|r| r.contains(scripts::SETUP_HOOK)));
    let run = runs
        .iter()
        .find(|r| r.contains("autobuild task \"$TASK\""))
        .unwrap();
    assert!(
        run.contains("--base \"$FEATURE_BRANCH\" --no-merge"),
        "{run}"
    );
    // A restored run goes on, also where the job's workspace moved; never afresh.
    assert!(run.contains("--resume --moved-checkout"), "{run}");
    assert!(!run.contains("--fresh"), "{run}");
    // A task whose dependency did not land ends its job as not passed, saying why.
    let select = runs.iter().find(|r| r.contains("--ready")).unwrap();
    assert!(select.contains("::error title=$TASK skipped::"), "{select}");
    assert!(
        select.contains(&format!("exit {}", scripts::SKIPPED_EXIT)),
        "{select}"
    );
    // A blocked run is kept (branch and run directory) for a later run to resume.
    let keep = steps(wave)
        .iter()
        .find(|s| s["name"] == "Keep the run to resume it")
        .unwrap();
    assert!(keep["if"].as_str().unwrap().contains("failure()"));
    let landing = steps(&workflow["jobs"]["land-1"])
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("--land"))
        .unwrap();
    assert!(landing.contains("--artifacts artifacts"), "{landing}");
    // Only the last landing may merge the feature.
    let merges = |job: &str| {
        steps(&workflow["jobs"][job]).iter().any(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("autobuild complete"))
        })
    };
    assert!(!merges("land-1"));
    assert!(merges("land-2"));
}

#[test]
fn every_action_is_a_pinned_node24_release_from_the_one_table() {
    let text = github::render(&plan(vec![AgentKind::ClaudeCode]));
    let workflow: Value = yaml_serde::from_str(&text).unwrap();
    let mut used = 0;
    for step in all_steps(&workflow) {
        if let Some(uses) = step["uses"].as_str() {
            used += 1;
            let pin = actions::ALL
                .iter()
                .find(|p| p.uses() == uses)
                .unwrap_or_else(|| panic!("{uses} is not in the table"));
            assert_eq!(pin.commit.len(), 40);
        }
    }
    assert!(used > 0);
    for line in text.lines().filter(|l| l.contains("uses:")) {
        let pin = actions::ALL
            .iter()
            .find(|p| line.contains(p.commit))
            .unwrap();
        assert!(line.ends_with(&format!(" # {}", pin.version)), "{line}");
    }
}

#[test]
fn checkouts_keep_no_credentials_and_only_remote_steps_get_the_token() {
    let workflow = parsed(&plan(vec![AgentKind::ClaudeCode]));
    for step in all_steps(&workflow) {
        if step["uses"]
            .as_str()
            .is_some_and(|u| u.starts_with(actions::CHECKOUT.name))
        {
            assert_eq!(step["with"]["persist-credentials"], false);
        }
        let run = step["run"].as_str().unwrap_or("");
        let token = !step["env"]["PUSH_TOKEN"].is_null();
        let remote = run.contains("git push") || run.contains("git fetch");
        assert_eq!(token, remote, "{}", step["name"].as_str().unwrap());
        if token {
            // No autobuild command (an agent, a check) runs where the token is.
            assert!(
                !run.lines()
                    .any(|l| l.trim_start().starts_with("autobuild ")),
                "{run}"
            );
            assert!(!run.contains(scripts::SETUP_HOOK), "{run}");
        }
    }
}

#[test]
fn permissions_are_read_by_default_and_write_only_for_the_jobs_that_push() {
    let workflow = parsed(&plan(vec![AgentKind::Command]));
    assert_eq!(workflow["permissions"]["contents"], "read");
    for (name, job) in workflow["jobs"].as_mapping().unwrap() {
        let pushes = steps(job)
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains("git push")));
        // The last landing also opens the feature's pull request (the `pull_request` input).
        let last_landing = name.as_str() == Some("land-2");
        assert_eq!(
            job["permissions"].as_mapping().unwrap().len(),
            if last_landing { 2 } else { 1 },
            "{name:?}"
        );
        if last_landing {
            assert_eq!(job["permissions"]["pull-requests"], "write");
        }
        let access = if pushes { "write" } else { "read" };
        assert_eq!(job["permissions"]["contents"], access, "{name:?}");
    }
    assert_eq!(
        workflow["jobs"]["finish"]["permissions"]["contents"],
        "read"
    );
}

#[test]
fn job_timeouts_follow_the_tasks_wall_time_limits() {
    let mut limited = plan(vec![AgentKind::Command]);
    limited
        .wall_times
        .insert("A".into(), Duration::from_secs(30 * 60));
    limited
        .wall_times
        .insert("B".into(), Duration::from_secs(45 * 60 + 1));
    let workflow = parsed(&limited);
    assert_eq!(workflow["jobs"]["wave-1"]["timeout-minutes"], 46 + 20);
    // C has no limit: the default.
    assert_eq!(workflow["jobs"]["wave-2"]["timeout-minutes"], 360);
    for job in workflow["jobs"].as_mapping().unwrap().values() {
        assert!(job["timeout-minutes"].as_u64().is_some());
    }
}

#[test]
fn autobuild_is_built_once_from_the_exact_source_and_shared_as_an_artifact() {
    let text = github::render(&plan(vec![AgentKind::Command]));
    assert!(text.starts_with(&format!("{HEADER} {}", env!("CARGO_PKG_VERSION"))));
    // The header names the exact source, and how to write the file again with it.
    let args = "--git file:///srv/autobuild.git --rev c0ffee autobuild";
    assert!(
        text.contains(&format!("cargo install --locked {args}")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "--emit github-actions --ci-install=\"{args}\" --force"
        )),
        "{text}"
    );
    assert!(
        !text.contains("crates.io") && !text.contains("--version ="),
        "{text}"
    );
    let workflow: Value = yaml_serde::from_str(&text).unwrap();
    assert_eq!(workflow["env"]["AUTOBUILD_CRATE"], args);
    let builds: Vec<&Value> = all_steps(&workflow)
        .into_iter()
        .filter(|s| {
            s["run"]
                .as_str()
                .is_some_and(|r| r.contains("cargo install"))
        })
        .collect();
    assert_eq!(builds.len(), 1);
    assert!(builds[0]["run"]
        .as_str()
        .unwrap()
        .contains("cargo install --locked --root \"$AUTOBUILD_HOME\" $AUTOBUILD_CRATE"));
    // The cache entry is the version's and the source's: another source is another entry.
    let cache = steps(&workflow["jobs"]["plan"])
        .iter()
        .find(|s| {
            s["uses"]
                .as_str()
                .is_some_and(|u| u.starts_with(actions::CACHE.name))
        })
        .unwrap();
    let key = cache["with"]["key"].as_str().unwrap();
    let mut other = plan(vec![AgentKind::Command]);
    assert!(key.contains(&other.source.fingerprint()), "{key}");
    other.source.args[3] = "beef".into();
    assert!(!key.contains(&other.source.fingerprint()), "{key}");
    for (name, job) in workflow["jobs"].as_mapping().unwrap() {
        if name == "plan" {
            continue;
        }
        let download = steps(job)
            .iter()
            .find(|s| s["with"]["name"] == "autobuild-bin")
            .unwrap_or_else(|| panic!("{name:?}"));
        assert!(download["uses"]
            .as_str()
            .unwrap()
            .starts_with(actions::DOWNLOAD_ARTIFACT.name));
    }
    // The GitLab pipeline installs the same, as the same variable.
    let gitlab: Value = yaml_serde::from_str(&gitlab::render(&plan(vec![]))).unwrap();
    assert_eq!(gitlab["variables"]["AUTOBUILD_CRATE"], args);
    assert!(gitlab["plan"]["cache"]["key"]
        .as_str()
        .unwrap()
        .ends_with(&plan(vec![]).source.fingerprint()));
}

#[test]
fn agents_get_their_pinned_cli_and_secrets_only_in_the_env_of_the_step_that_runs_them() {
    let text = github::render(&plan(vec![AgentKind::ClaudeCode, AgentKind::Codex]));
    let workflow: Value = yaml_serde::from_str(&text).unwrap();
    let wave = &workflow["jobs"]["wave-1"];
    let install = steps(wave)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("npm ci"))
        .unwrap();
    // Each CLI from its shipped lockfile, never resolved at install time.
    assert!(!install.contains("npm install"), "{install}");
    assert!(
        install.contains("\"@anthropic-ai/claude-code\": \"2."),
        "{install}"
    );
    assert!(install.contains("\"@openai/codex\": \"0."), "{install}");
    assert_eq!(install.matches("npm ci --prefix").count(), 2, "{install}");
    let mut with_secrets = 0;
    for step in all_steps(&workflow) {
        if let Some(run) = step["run"].as_str() {
            assert!(!run.contains("secrets."), "{run}");
            assert!(!run.contains("API_KEY"), "{run}");
        }
        if let Some(env) = step["env"].as_mapping() {
            if env
                .values()
                .any(|v| v.as_str().is_some_and(|v| v.contains("secrets.")))
            {
                with_secrets += 1;
                assert_eq!(step["name"], "Run the task");
                assert_eq!(env["ANTHROPIC_API_KEY"], "${{ secrets.ANTHROPIC_API_KEY }}");
                assert_eq!(env["OPENAI_API_KEY"], "${{ secrets.OPENAI_API_KEY }}");
            }
        }
    }
    assert_eq!(with_secrets, 2, "one task step per wave");
    assert_eq!(text.matches("secrets.").count(), 4);
}

#[test]
fn command_agents_need_no_cli_and_no_secret() {
    let text = github::render(&plan(vec![AgentKind::Command]));
    assert!(!text.contains("npm install"));
    assert!(!text.contains("secrets."));
    assert!(text.starts_with(HEADER));
}

#[test]
fn a_file_autobuild_did_not_write_is_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("wf/ci.yml");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, "name: mine\n").unwrap();
    assert!(write(&path, "# Generated by autobuild\n", false).is_err());
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "name: mine\n");
    write(&path, "# Generated by autobuild\nv1\n", true).unwrap();
    // A generated file is replaced without --force.
    write(&path, "# Generated by autobuild\nv2\n", false).unwrap();
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("v2\n"));
}

#[test]
fn on_gitlab_a_skipped_task_is_an_allowed_failure_and_a_kept_run_resumes_in_any_checkout() {
    let pipeline: Value = yaml_serde::from_str(&gitlab::render(&plan(vec![]))).unwrap();
    let wave = &pipeline["wave-2"];
    let codes: Vec<u64> = wave["allow_failure"]["exit_codes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    assert_eq!(codes, [1, 3, 4, 6, u64::from(scripts::SKIPPED_EXIT)]);
    let script = wave["script"][0].as_str().unwrap();
    assert!(
        script.contains(&format!("exit {}", scripts::SKIPPED_EXIT)),
        "{script}"
    );
    assert!(!script.contains("::error"), "{script}");
    assert!(script.contains("--resume --moved-checkout"), "{script}");
}

#[test]
fn every_pinned_agent_cli_has_a_lockfile_of_exactly_its_pin() {
    for description in agents::descriptions() {
        let (Some(package), Some(binary)) = (description.package, description.program) else {
            continue;
        };
        let (_, lock) = super::AGENT_LOCKS
            .iter()
            .find(|(b, _)| *b == binary)
            .unwrap_or_else(|| panic!("no lockfile for {binary}: run scripts/agent-locks.sh"));
        let lock: serde_json::Value = serde_json::from_str(lock).unwrap();
        assert_eq!(
            lock["packages"][""]["dependencies"][package.name], package.version,
            "{binary}'s lockfile is not of its pin: run scripts/agent-locks.sh"
        );
        let entry = &lock["packages"][format!("node_modules/{}", package.name)];
        assert!(
            entry["integrity"]
                .as_str()
                .is_some_and(|i| i.starts_with("sha512-")),
            "{entry}"
        );
    }
}
