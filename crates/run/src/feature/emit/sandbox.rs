//! Task jobs whose tasks hide paths (`[scope] hidden`, a task's `hidden:`) need the sandbox:
//! bubblewrap with unprivileged user namespaces. Which jobs need it is [`needed`], from the
//! plan's [`EmitPlan::sandboxed`]; what provides it is [`PROVIDE`], the one script both
//! engines run before `autobuild task`. It never fails the job itself: when the sandbox still
//! cannot run, `autobuild task` refuses the run before anything is created (exit 2, naming
//! the reason), so a hidden task never runs unconfined whatever the runner is.

use super::EmitPlan;
use crate::feature::plan::FeaturePlan;
use model::project::Config;

/// Makes bubblewrap available: installs it only when missing (as root, or with `sudo -n`
/// where the job is not root, as on GitHub's runners), and where AppArmor restricts
/// unprivileged user namespaces (GitHub's Ubuntu 24.04 images) lifts that restriction.
pub const PROVIDE: &str = r#"as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }
if command -v bwrap >/dev/null 2>&1; then
  echo "bubblewrap is installed: $(command -v bwrap)"
elif command -v apt-get >/dev/null 2>&1; then
  as_root apt-get update -q || echo "apt-get update failed"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap || echo "bubblewrap could not be installed: autobuild task confines with Landlock where the kernel has it, else refuses the run"
else
  echo "bubblewrap is missing and this runner has no apt-get: install it in the job's image, or autobuild task confines with Landlock where the kernel has it, else refuses the run"
fi
userns=/proc/sys/kernel/apparmor_restrict_unprivileged_userns
if [ -e "$userns" ] && [ "$(cat "$userns")" != 0 ]; then
  as_root sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 || echo "AppArmor still restricts user namespaces: autobuild task confines with Landlock where the kernel has it, else refuses the run"
fi
"#;

/// The name the step that runs [`PROVIDE`] goes by.
pub const STEP: &str = "Provide the sandbox (bubblewrap) for hidden paths";

/// Whether the task jobs running `tasks` need the sandbox: one of them hides paths.
pub fn needed(plan: &EmitPlan, tasks: &[String]) -> bool {
    tasks.iter().any(|task| plan.sandboxed.contains(task))
}

/// The feature's tasks that hide paths: every task when the project does (`[scope] hidden`),
/// else those with a `hidden:` of their own.
pub fn hiding(config: &Config, plan: &FeaturePlan) -> Vec<String> {
    plan.tasks
        .iter()
        .filter(|planned| !config.scope.hidden.is_empty() || !planned.task.hidden.is_empty())
        .map(|planned| planned.task.id.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use yaml_serde::Value;

    use super::super::{github, gitlab, scripts, Source};
    use super::*;

    /// Waves [A, B] and [C]; `sandboxed` hide paths.
    fn plan(sandboxed: &[&str]) -> EmitPlan {
        EmitPlan {
            feature_id: "FEAT-X".into(),
            file: ".autobuild/features/FEAT-X.yaml".into(),
            waves: vec![vec!["A".into(), "B".into()], vec!["C".into()]],
            max_parallel: 2,
            agents: Vec::new(),
            wall_times: BTreeMap::new(),
            source: Source {
                version: "9.8.7".into(),
                args: vec!["autobuild".into(), "--version".into(), "=9.8.7".into()],
                origin: super::super::source::Origin::Given,
            },
            sandboxed: sandboxed.iter().map(|t| t.to_string()).collect(),
        }
    }

    /// The names of a GitHub wave job's steps, in order.
    fn github_steps(plan: &EmitPlan, wave: usize) -> Vec<(String, Option<String>)> {
        let workflow: Value = yaml_serde::from_str(&github::render(plan)).unwrap();
        workflow["jobs"][format!("wave-{wave}").as_str()]["steps"]
            .as_sequence()
            .unwrap()
            .iter()
            .map(|step| {
                let name = step["name"].as_str().unwrap().to_string();
                (name, step["if"].as_str().map(str::to_string))
            })
            .collect()
    }

    /// A GitLab wave job's script.
    fn gitlab_script(plan: &EmitPlan, wave: usize) -> String {
        let pipeline: Value = yaml_serde::from_str(&gitlab::render(plan)).unwrap();
        pipeline[format!("wave-{wave}").as_str()]["script"][0]
            .as_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn github_task_jobs_provide_the_sandbox_before_the_task_runs_only_where_a_task_hides() {
        let hiding = plan(&["B"]);
        let steps = github_steps(&hiding, 1);
        let names: Vec<&str> = steps.iter().map(|(n, _)| n.as_str()).collect();
        let provide = names
            .iter()
            .position(|n| *n == STEP)
            .expect("no sandbox step");
        let run = names.iter().position(|n| *n == "Run the task").unwrap();
        let select = names
            .iter()
            .position(|n| *n == "Should the task run?")
            .unwrap();
        assert!(select < provide && provide < run, "{names:?}");
        // Only for a task that runs in this run.
        assert_eq!(
            steps[provide].1.as_deref(),
            Some("steps.select.outputs.ready == 'true'")
        );
        let text = github::render(&hiding);
        assert!(text.contains("sudo -n \"$@\""), "{text}");
        assert!(text.contains("sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"));
        // Wave 2 hides nothing; a feature that hides nothing gets no such step anywhere.
        assert!(!github_steps(&hiding, 2).iter().any(|(n, _)| n == STEP));
        let plain = github::render(&plan(&[]));
        assert!(!plain.contains(STEP) && !plain.contains("bwrap"), "{plain}");
    }

    #[test]
    fn gitlab_task_jobs_provide_the_sandbox_before_the_task_runs_only_where_a_task_hides() {
        let hiding = plan(&["C"]);
        let script = gitlab_script(&hiding, 2);
        let provide = script.find(PROVIDE).expect("no sandbox script");
        let ready = script.find("!= true ]; then exit 0; fi").unwrap();
        let run = script.find("autobuild task \"$TASK\"").unwrap();
        assert!(ready < provide && provide < run, "{script}");
        assert!(!gitlab_script(&hiding, 1).contains("bwrap"));
        assert!(!gitlab::render(&plan(&[])).contains("bwrap"));
    }

    #[test]
    fn installs_bubblewrap_only_when_missing_and_lifts_apparmor_only_where_it_restricts() {
        let install = PROVIDE.find("apt-get install -y").unwrap();
        let present = PROVIDE.find("if command -v bwrap").unwrap();
        assert!(present < install);
        assert!(PROVIDE.contains(
            "if [ -e \"$userns\" ] && [ \"$(cat \"$userns\")\" != 0 ]; then\n  as_root sysctl -w"
        ));
    }

    /// The task call passes nothing that could run a task that hides paths unconfined: no
    /// sandbox setting, no other bubblewrap; only the runner's own refusal decides.
    #[test]
    fn the_task_call_cannot_weaken_the_sandbox() {
        for text in [scripts::RUN_TASK, PROVIDE] {
            for weakening in ["--set", "sandbox", "AUTOBUILD_BWRAP", "mode"] {
                assert!(!text.contains(weakening), "{weakening} in {text}");
            }
        }
        let plan = plan(&["A", "B", "C"]);
        for text in [github::render(&plan), gitlab::render(&plan)] {
            assert!(!text.contains("AUTOBUILD_BWRAP"), "{text}");
            assert!(!text.contains("--set"), "{text}");
        }
    }

    #[test]
    fn a_task_needs_the_sandbox_when_it_hides_paths() {
        let plan = plan(&["B"]);
        assert!(needed(&plan, &["A".into(), "B".into()]));
        assert!(!needed(&plan, &["A".into(), "C".into()]));
        assert!(!needed(&plan, &[]));
    }
}
