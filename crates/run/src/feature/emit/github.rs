//! The plan as a GitHub Actions workflow (`--emit github-actions`).
//!
//! Jobs: `plan` (builds autobuild once and shares it as the artifact `autobuild-bin`, checks
//! the feature, creates the feature branch); per wave a matrix job `wave-N` over its tasks and
//! a landing job `land-N`; `finish`, which fails naming every task that did not land. A wave
//! runs when the landing before it succeeded — `if: !cancelled() && needs.land-N.result ==
//! 'success'`: a plain `needs:` would also require every earlier job to have succeeded, so one
//! blocked task would skip every later wave (actions/runner#2205). Checkouts keep no
//! credentials; the run's token is given only to the steps that fetch or push.

use yaml_serde::{Mapping, Value};

use super::actions::{self, Pinned};
use super::yaml::{insert, map, num, prepend, s, seq, to_text};
use super::{install_agents, secrets, EmitPlan};
use super::{sandbox, scripts};

/// The artifact the `plan` job shares autobuild's binary as.
const BIN_ARTIFACT: &str = "autobuild-bin";

/// Minutes for jobs that run no agent (checkout, installs, landing, the integration check).
const SHORT_JOB_MINUTES: u64 = 60;

/// Overrides `git` in a step's script so that it authenticates with the step's `PUSH_TOKEN`.
const GIT_WITH_TOKEN: &str = r#"REMOTE=origin
git() { command git -c "http.$GITHUB_SERVER_URL/.extraheader=AUTHORIZATION: basic $(printf 'x-access-token:%s' "$PUSH_TOKEN" | base64 | tr -d '\n')" "$@"; }
"#;

/// The condition of a task job's steps after the task was selected.
const READY: &str = "steps.select.outputs.ready == 'true'";

pub fn render(plan: &EmitPlan) -> String {
    let mut jobs = Mapping::new();
    jobs.insert("plan".into(), plan_job(plan));
    let mut all = vec!["plan".to_string()];
    for (index, tasks) in plan.waves.iter().enumerate() {
        let wave = index + 1;
        let before = if wave == 1 {
            "plan".to_string()
        } else {
            format!("land-{}", wave - 1)
        };
        jobs.insert(
            format!("wave-{wave}").into(),
            wave_job(plan, wave, tasks, &before),
        );
        jobs.insert(format!("land-{wave}").into(), land_job(plan, wave, &before));
        all.push(format!("wave-{wave}"));
        all.push(format!("land-{wave}"));
    }
    jobs.insert("finish".into(), finish_job(plan, &all));
    let workflow = map([
        ("name", s(&format!("autobuild {}", plan.feature_id))),
        ("on", dispatch()),
        ("permissions", map([("contents", s("read"))])),
        (
            "concurrency",
            map([
                ("group", s(&format!("autobuild-{}", plan.feature_id))),
                ("cancel-in-progress", Value::Bool(false)),
            ]),
        ),
        ("env", environment(plan)),
        ("jobs", Value::Mapping(jobs)),
    ]);
    let body = explain_permissions(&actions::annotate(&to_text(&workflow)));
    format!(
        "{header}\n\
         # Regenerate with `{again}`; do not edit:\n\
         # project set-up goes in {hook}. Set-up (secrets, permissions, runners): docs/scale-out.md.\n{body}",
        header = super::header(plan, "one job per task, waves as job dependencies"),
        again = super::regenerate(plan, "github-actions"),
        hook = scripts::SETUP_HOOK,
    )
}

/// Says why each permission is granted, on its line.
fn explain_permissions(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 512);
    for line in text.lines() {
        out.push_str(line);
        match line.trim() {
            "contents: write" => out.push_str(" # pushes the feature branch or a task branch"),
            "contents: read" => out.push_str(" # checks out the repository"),
            "pull-requests: write" => {
                out.push_str(" # opens the feature's pull request (the pull_request input)")
            }
            _ => {}
        }
        out.push('\n');
    }
    out
}

fn environment(plan: &EmitPlan) -> Value {
    let mut env = Mapping::new();
    for (key, value) in super::variables(plan) {
        env.insert(key.into(), s(&value));
    }
    for (key, value) in [
        ("BASE_BRANCH", "${{ github.ref_name }}"),
        ("MAX_TURNS", "${{ inputs.max_turns }}"),
        ("ONLY_TASKS", "${{ inputs.only }}"),
        ("SKIP_TASKS", "${{ inputs.skip }}"),
        ("ABANDON_TASKS", "${{ inputs.abandon }}"),
    ] {
        env.insert(key.into(), s(value));
    }
    Value::Mapping(env)
}

fn dispatch() -> Value {
    let text = |description: &str| {
        map([
            ("description", s(description)),
            ("required", Value::Bool(false)),
            ("type", s("string")),
            ("default", s("")),
        ])
    };
    let mut inputs = Mapping::new();
    for (name, description) in super::INPUTS {
        inputs.insert((*name).into(), text(description));
    }
    for (name, description) in [
        ("auto_merge", super::AUTO_MERGE),
        ("pull_request", super::PULL_REQUEST),
    ] {
        inputs.insert(
            name.into(),
            map([
                ("description", s(description)),
                ("required", Value::Bool(false)),
                ("type", s("boolean")),
                ("default", Value::Bool(false)),
            ]),
        );
    }
    map([(
        "workflow_dispatch",
        map([("inputs", Value::Mapping(inputs))]),
    )])
}

fn plan_job(plan: &EmitPlan) -> Value {
    let key = super::cache_key(plan, "${{ runner.os }}-", "${{ github.sha }}");
    let steps = vec![
        checkout(None),
        uses(
            "Cache autobuild",
            actions::CACHE,
            map([
                ("path", s("${{ runner.temp }}/autobuild")),
                ("key", s(&key)),
            ]),
        ),
        run_step(
            "Build autobuild (once per run)",
            &format!(
                "AUTOBUILD_HOME=\"$RUNNER_TEMP/autobuild\"\n{}echo \"$AUTOBUILD_HOME/bin\" >> \"$GITHUB_PATH\"\n",
                scripts::BUILD
            ),
        ),
        uses(
            "Share autobuild with the other jobs",
            actions::UPLOAD_ARTIFACT,
            map([
                ("name", s(BIN_ARTIFACT)),
                ("path", s("${{ runner.temp }}/autobuild/bin/autobuild")),
                ("if-no-files-found", s("error")),
                ("retention-days", num(1)),
            ]),
        ),
        run_step(
            "Check the feature",
            "autobuild feature \"$FEATURE\" --dry-run",
        ),
        with_token(run_step(
            "Create the feature branch",
            scripts::CREATE_FEATURE_BRANCH,
        )),
    ];
    named("plan", job(None, None, SHORT_JOB_MINUTES, true, steps))
}

fn wave_job(plan: &EmitPlan, wave: usize, tasks: &[String], before: &str) -> Value {
    let mut steps = vec![checkout(Some("${{ env.FEATURE_BRANCH }}"))];
    steps.extend(autobuild_on_path());
    steps.push(run_step("Project set-up", &scripts::setup()));
    if let Some(install) = install_agents(&plan.agents) {
        steps.push(run_step("Install the agent CLIs", &install));
    }
    steps.push(prepend(
        run_step(
            "Should the task run?",
            &scripts::select("$GITHUB_OUTPUT", true),
        ),
        "id",
        s("select"),
    ));
    let mut restore = with_token(run_step(
        "Restore its blocked earlier run",
        &scripts::restore("$GITHUB_OUTPUT"),
    ));
    insert(&mut restore, "if", s(READY));
    steps.push(prepend(restore, "id", s("restore")));
    if sandbox::needed(plan, tasks) {
        let mut provide = run_step(sandbox::STEP, sandbox::PROVIDE);
        insert(&mut provide, "if", s(READY));
        steps.push(provide);
    }
    let mut run = run_step("Run the task", scripts::RUN_TASK);
    let mut env = Mapping::new();
    env.insert("RESUME".into(), s("${{ steps.restore.outputs.resume }}"));
    for secret in secrets(&plan.agents) {
        env.insert(secret.into(), s(&format!("${{{{ secrets.{secret} }}}}")));
    }
    insert(&mut run, "if", s(READY));
    insert(&mut run, "env", Value::Mapping(env));
    steps.push(run);
    let after = format!("${{{{ !cancelled() && {READY} }}}}");
    // A cancelled or timed-out job keeps what its turns paid for: the branch and the run
    // (its engine run ended cancelled and resumes from its last completed step).
    let mut push = with_token(run_step("Push the task branch", scripts::PUSH_TASK));
    insert(
        &mut push,
        "if",
        s(&format!("${{{{ always() && {READY} }}}}")),
    );
    steps.push(push);
    let mut keep = with_token(run_step("Keep the run to resume it", &scripts::keep_run()));
    insert(
        &mut keep,
        "if",
        s(&format!("${{{{ (failure() || cancelled()) && {READY} }}}}")),
    );
    steps.push(keep);
    let mut summary = run_step(
        "Report",
        &scripts::report(
            ".autobuild/runs/$TASK/report.md",
            Some("$GITHUB_STEP_SUMMARY"),
        ),
    );
    insert(&mut summary, "if", s(&after));
    steps.push(summary);
    let mut upload = uses(
        "Upload the run directory",
        actions::UPLOAD_ARTIFACT,
        map([
            ("name", s("${{ matrix.task }}")),
            ("path", s(".autobuild/runs/${{ matrix.task }}")),
            ("include-hidden-files", Value::Bool(true)),
            ("if-no-files-found", s("ignore")),
            ("overwrite", Value::Bool(true)),
        ]),
    );
    insert(&mut upload, "if", s(&after));
    steps.push(upload);
    let strategy = map([
        ("fail-fast", Value::Bool(false)),
        ("max-parallel", num(plan.max_parallel.max(1) as u64)),
        ("matrix", map([("task", seq(tasks.iter().map(|t| s(t))))])),
    ]);
    let condition = (wave > 1).then(|| gate(before));
    let mut job = job(
        Some(seq([s(before)])),
        condition.as_deref(),
        super::task_minutes(plan, tasks),
        true,
        steps,
    );
    insert(&mut job, "strategy", strategy);
    insert(&mut job, "env", map([("TASK", s("${{ matrix.task }}"))]));
    // The agents' API keys are the environment's (its protection rules apply to them);
    // repository secrets of the same names are seen there too.
    if !secrets(&plan.agents).is_empty() {
        insert(&mut job, "environment", s(AGENTS_ENVIRONMENT));
    }
    named(&format!("wave {wave}: ${{{{ matrix.task }}}}"), job)
}

/// The GitHub environment the task jobs that need agent API keys run in.
pub const AGENTS_ENVIRONMENT: &str = "autobuild-agents";

fn named(name: &str, job: Value) -> Value {
    prepend(job, "name", s(name))
}

/// Runs after `before` succeeded, whatever happened to the jobs before it.
fn gate(before: &str) -> String {
    format!("${{{{ !cancelled() && needs.{before}.result == 'success' }}}}")
}

fn land_job(plan: &EmitPlan, wave: usize, before: &str) -> Value {
    let mut steps = vec![checkout(None)];
    steps.extend(autobuild_on_path());
    steps.push(run_step("Project set-up", &scripts::setup()));
    steps.push(uses(
        "Download the run directories",
        actions::DOWNLOAD_ARTIFACT,
        map([("path", s("artifacts"))]),
    ));
    steps.push(with_token(run_step(
        "Fetch the task branches",
        scripts::FETCH_BRANCHES,
    )));
    steps.push(run_step(
        "Land the approved tasks",
        &scripts::land("artifacts"),
    ));
    let mut push = with_token(run_step("Push the feature branch", scripts::PUSH_FEATURE));
    insert(&mut push, "if", s("${{ !cancelled() }}"));
    steps.push(push);
    let mut summary = run_step(
        "Report",
        &scripts::report(
            &format!(".autobuild/runs/{}/report.md", plan.feature_id),
            Some("$GITHUB_STEP_SUMMARY"),
        ),
    );
    insert(&mut summary, "if", s("${{ !cancelled() }}"));
    steps.push(summary);
    if wave == plan.waves.len() {
        let merging = "${{ success() && inputs.auto_merge }}";
        let mut merge = run_step("Merge the feature", scripts::MERGE);
        insert(&mut merge, "if", s(merging));
        steps.push(merge);
        let mut push = with_token(run_step("Push the base branch", scripts::PUSH_BASE));
        insert(&mut push, "if", s(merging));
        steps.push(push);
        // `--pr`: the feature branch's pull request, with the job's own token.
        let mut pr = run_step("Open the pull request", scripts::PULL_REQUEST);
        insert(
            &mut pr,
            "if",
            s("${{ success() && inputs.pull_request && !inputs.auto_merge }}"),
        );
        insert(
            &mut pr,
            "env",
            map([("GITHUB_TOKEN", s("${{ github.token }}"))]),
        );
        steps.push(pr);
    }
    let mut upload = uses(
        "Upload the feature's record",
        actions::UPLOAD_ARTIFACT,
        map([
            ("name", s(&format!("{}-land-{wave}", plan.feature_id))),
            ("path", s(&format!(".autobuild/runs/{}", plan.feature_id))),
            ("include-hidden-files", Value::Bool(true)),
            ("if-no-files-found", s("ignore")),
            ("overwrite", Value::Bool(true)),
        ]),
    );
    insert(&mut upload, "if", s("${{ !cancelled() }}"));
    steps.push(upload);
    // Lands what the wave approved even when some of its tasks failed (their dependants are
    // skipped); a cancelled run lands nothing.
    let mut job = job(
        Some(seq([s(&format!("wave-{wave}")), s(before)])),
        Some(&gate(before)),
        SHORT_JOB_MINUTES,
        true,
        steps,
    );
    if wave == plan.waves.len() {
        if let Value::Mapping(job) = &mut job {
            job.insert(
                "permissions".into(),
                map([("contents", s("write")), ("pull-requests", s("write"))]),
            );
        }
    }
    named(&format!("land wave {wave}"), job)
}

fn finish_job(plan: &EmitPlan, all: &[String]) -> Value {
    let mut steps = vec![checkout(None)];
    steps.extend(autobuild_on_path());
    steps.push(uses(
        "Download the landing records",
        actions::DOWNLOAD_ARTIFACT,
        map([
            ("pattern", s(&format!("{}-land-*", plan.feature_id))),
            ("path", s("records")),
        ]),
    ));
    steps.push(run_step(
        "Did every task land?",
        &scripts::outcome("records"),
    ));
    let job = job(
        Some(seq(all.iter().map(|j| s(j)))),
        Some("${{ always() }}"),
        SHORT_JOB_MINUTES,
        false,
        steps,
    );
    named("finish", job)
}

fn job(
    needs: Option<Value>,
    condition: Option<&str>,
    minutes: u64,
    pushes: bool,
    steps: Vec<Value>,
) -> Value {
    let mut job = Mapping::new();
    if let Some(needs) = needs {
        job.insert("needs".into(), needs);
    }
    if let Some(condition) = condition {
        job.insert("if".into(), s(condition));
    }
    job.insert("runs-on".into(), s("ubuntu-latest"));
    job.insert("timeout-minutes".into(), num(minutes));
    // A job that pushes a branch may write contents; nothing else is granted.
    let access = if pushes { "write" } else { "read" };
    job.insert("permissions".into(), map([("contents", s(access))]));
    job.insert("steps".into(), Value::Sequence(steps));
    Value::Mapping(job)
}

/// A checkout that keeps no credentials in `.git/config` (the task's worktree shares it).
fn checkout(reference: Option<&str>) -> Value {
    let mut with = Mapping::new();
    if let Some(reference) = reference {
        with.insert("ref".into(), s(reference));
    }
    // Landing and `--ready` read the feature branch's history.
    with.insert("fetch-depth".into(), num(0));
    with.insert("persist-credentials".into(), Value::Bool(false));
    map([
        ("name", s("Check out")),
        ("uses", s(&actions::CHECKOUT.uses())),
        ("with", Value::Mapping(with)),
    ])
}

/// The binary the `plan` job built, on `PATH`.
fn autobuild_on_path() -> Vec<Value> {
    vec![
        uses(
            "Download autobuild",
            actions::DOWNLOAD_ARTIFACT,
            map([
                ("name", s(BIN_ARTIFACT)),
                ("path", s("${{ runner.temp }}/autobuild/bin")),
            ]),
        ),
        run_step(
            "Put autobuild on PATH",
            "chmod +x \"$RUNNER_TEMP/autobuild/bin/autobuild\"\necho \"$RUNNER_TEMP/autobuild/bin\" >> \"$GITHUB_PATH\"\n",
        ),
    ]
}

fn uses(name: &str, action: Pinned, with: Value) -> Value {
    map([
        ("name", s(name)),
        ("uses", s(&action.uses())),
        ("with", with),
    ])
}

fn run_step(name: &str, script: &str) -> Value {
    map([("name", s(name)), ("run", s(script))])
}

/// The step's `git` authenticates with the run's token; no other step sees it.
fn with_token(step: Value) -> Value {
    let mut step = step;
    if let Value::Mapping(m) = &mut step {
        if let Some(Value::String(script)) = m.get_mut("run") {
            *script = format!("{GIT_WITH_TOKEN}{script}");
        }
        m.insert(
            "env".into(),
            map([("PUSH_TOKEN", s("${{ github.token }}"))]),
        );
    }
    step
}
