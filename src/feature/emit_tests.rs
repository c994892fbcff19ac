//! The emitted workflow, parsed back: its jobs, their order, matrices, permissions and secrets.

use yaml_serde::Value;

use super::*;

fn plan(agents: Vec<AgentKind>) -> EmitPlan {
    EmitPlan {
        feature_id: "FEAT-X".into(),
        file: ".autobuild/features/FEAT-X.yaml".into(),
        waves: vec![vec!["A".into(), "B".into()], vec!["C".into()]],
        max_parallel: 2,
        agents,
    }
}

fn parsed(plan: &EmitPlan) -> Value {
    yaml_serde::from_str(&render(plan)).unwrap()
}

fn steps(job: &Value) -> &Vec<Value> {
    job["steps"].as_sequence().unwrap()
}

#[test]
fn jobs_chain_plan_then_each_wave_then_its_landing() {
    let workflow = parsed(&plan(vec![AgentKind::Command]));
    let jobs = workflow["jobs"].as_mapping().unwrap();
    let names: Vec<&str> = jobs.keys().map(|k| k.as_str().unwrap()).collect();
    assert_eq!(names, ["plan", "wave-1", "land-1", "wave-2", "land-2"]);
    assert_eq!(workflow["jobs"]["wave-1"]["needs"], "plan");
    assert_eq!(workflow["jobs"]["land-1"]["needs"], "wave-1");
    assert_eq!(workflow["jobs"]["wave-2"]["needs"], "land-1");
    assert_eq!(workflow["jobs"]["land-2"]["needs"], "wave-2");
    assert!(workflow["on"]["workflow_dispatch"]["inputs"]["max_turns"].is_mapping());
    assert!(workflow["on"]["workflow_dispatch"]["inputs"]["auto_merge"].is_mapping());
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
    assert!(runs
        .iter()
        .any(|r| r.starts_with("autobuild feature \"$FEATURE\" --ready")));
    assert!(runs
        .iter()
        .any(|r| r.contains("autobuild task \"$TASK\" --base \"$FEATURE_BRANCH\" --no-merge")));
    let upload = steps(wave)
        .iter()
        .find(|s| s["uses"] == "actions/upload-artifact@v4")
        .unwrap();
    assert!(upload["if"].as_str().unwrap().starts_with("always()"));
    assert_eq!(upload["with"]["path"], ".autobuild/runs/${{ matrix.task }}");
    let landing = steps(&workflow["jobs"]["land-1"])
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("--land"))
        .unwrap();
    assert!(
        landing.contains("--from-remote origin --artifacts artifacts"),
        "{landing}"
    );
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
fn permissions_are_read_by_default_and_write_only_for_the_jobs_that_push() {
    let workflow = parsed(&plan(vec![AgentKind::Command]));
    assert_eq!(workflow["permissions"]["contents"], "read");
    for (name, job) in workflow["jobs"].as_mapping().unwrap() {
        let pushes = steps(job)
            .iter()
            .any(|s| s["run"].as_str().is_some_and(|r| r.contains("git push")));
        assert!(pushes, "{name:?}");
        assert_eq!(
            job["permissions"].as_mapping().unwrap().len(),
            1,
            "{name:?}"
        );
        assert_eq!(job["permissions"]["contents"], "write", "{name:?}");
    }
}

#[test]
fn agents_get_their_pinned_cli_and_secrets_only_in_the_env_of_the_step_that_runs_them() {
    let text = render(&plan(vec![AgentKind::ClaudeCode, AgentKind::Codex]));
    let workflow: Value = yaml_serde::from_str(&text).unwrap();
    let wave = &workflow["jobs"]["wave-1"];
    let install = steps(wave)
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.starts_with("npm install"))
        .unwrap();
    assert!(install.contains("@anthropic-ai/claude-code@"), "{install}");
    assert!(install.contains("@openai/codex@"), "{install}");
    let mut with_secrets = 0;
    for job in workflow["jobs"].as_mapping().unwrap().values() {
        for step in steps(job) {
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
    }
    assert_eq!(with_secrets, 2, "one task step per wave");
    assert_eq!(text.matches("secrets.").count(), 4);
}

#[test]
fn command_agents_need_no_cli_and_no_secret() {
    let text = render(&plan(vec![AgentKind::Command]));
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
