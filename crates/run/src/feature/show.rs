//! `autobuild feature --dry-run`: the computed waves, what runs in parallel, each task's file,
//! workflow and dependencies, and where the work lands. Nothing is created.

use std::fmt::Write as _;

use crate::feature::preflight::FeatureSetup;
use crate::feature::schedule::parallelism;
use base::Keyword;

pub fn render_plan(setup: &FeatureSetup) -> String {
    let plan = &setup.plan;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Plan for {}: {} (dry run: nothing is created)",
        plan.id, plan.name
    );
    let _ = writeln!(out, "  feature file:  {}", plan.file.display());
    let _ = writeln!(
        out,
        "  branch:        {} from {}{}",
        setup.branch,
        setup.base_branch,
        if setup.branch_exists {
            " (exists: the run would continue on it)"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "  waves:         {}, {}{}",
        plan.waves.len(),
        if plan.waves_from_task_keys {
            "as declared by the tasks' `wave:` keys"
        } else if plan.declared_waves {
            "as declared in orchestration.parallel_groups"
        } else {
            "computed from dependencies"
        },
        if plan.separated.is_empty() {
            ""
        } else {
            "; split where tasks write the same files"
        }
    );
    for separated in &plan.separated {
        let _ = writeln!(out, "  separated:     {}", separated.sentence());
    }
    let strategy = setup.strategy.as_str();
    let base = &setup.base_branch;
    let landing = if setup.settings.run.no_merge {
        format!("left for `autobuild complete` ({strategy} into {base})")
    } else if setup.settings.run.auto_merge {
        format!("merged into {base} ({strategy})")
    } else {
        format!("merged into {base} ({strategy}) after a question on a terminal, else left for `autobuild complete`")
    };
    let _ = writeln!(
        out,
        "  tasks land:    squashed onto {} after their wave",
        setup.branch
    );
    let _ = writeln!(
        out,
        "  feature lands: once every task is approved: {landing}"
    );
    if setup.settings.stop_on_failure {
        let _ = writeln!(out, "  on failure:    stop the feature (--stop-on-failure)");
    } else {
        let _ = writeln!(
            out,
            "  on failure:    skip the task's dependants; independent tasks still run"
        );
    }
    let width = plan.tasks.iter().map(|t| t.id().len()).max().unwrap_or(0);
    for (w, wave) in plan.waves.iter().enumerate() {
        let at_once = parallelism(
            setup.settings.max_parallel,
            plan.recommended_parallel,
            wave.len(),
        )
        .min(wave.len());
        let _ = writeln!(
            out,
            "\nWave {} ({} task(s), up to {at_once} at once):",
            w + 1,
            wave.len()
        );
        for id in wave {
            let Some(task) = plan.task(id) else {
                continue;
            };
            let _ = writeln!(out, "  {id:<width$}  {}", task.task.title);
            let mut details = vec![plan.shown_path(&task.task.path).display().to_string()];
            if let Some(state) = &task.done {
                details.push(format!("done ({state}): not run again"));
            } else if let Some(check) = setup.check(id) {
                details.push(format!(
                    "workflow {}, up to {} turn(s)",
                    check.workflow, check.max_turns
                ));
                if !check.hidden.is_empty() {
                    details.push(format!("hides {}", check.hidden.join(", ")));
                }
            }
            if !task.dependencies.is_empty() {
                details.push(format!("after {}", task.dependencies.join(", ")));
            }
            let _ = writeln!(out, "  {:width$}  {}", "", details.join(" · "));
        }
    }
    out.trim_end().to_string()
}
