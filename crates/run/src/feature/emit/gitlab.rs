//! The plan as a GitLab CI pipeline (`--emit gitlab-ci`), from the same plan and the same
//! scripts as the GitHub workflow.
//!
//! A stage per job kind and wave: `plan`, then `wave-N` (a `parallel:matrix` over the wave's
//! tasks) and `land-N`, then `finish`. Jobs wait through `needs:` (which, unlike GitHub's,
//! looks only at the jobs named), carrying the run directories as artifacts. A task job's
//! expected endings — failed (1), blocked (3), stalled (4), waiting (6), skipped (8) — are explicit
//! `allow_failure: exit_codes`: shown as warnings, and the landing after them still runs; any
//! other failure stops the waves after it. The jobs that push the feature branch share the
//! `resource_group` of the feature, its lock across pipelines. `finish` runs `when: always`.

use yaml_serde::{Mapping, Value};

use super::yaml::{map, num, s, seq, to_text};
use super::{install_agents, EmitPlan, AUTO_MERGE, INPUTS, PULL_REQUEST};
use super::{sandbox, scripts};

/// The endings of a task job the landing after it deals with: `autobuild task`'s failed (1),
/// blocked (3), stalled (4) and waiting (6), and a task skipped for a dependency that did not
/// land ([`scripts::SKIPPED_EXIT`]).
const TASK_ENDINGS: [u64; 5] = [1, 3, 4, 6, scripts::SKIPPED_EXIT as u64];

/// Where the `plan` job's autobuild travels to the other jobs (artifacts live in the project).
const HOME: &str = "$CI_PROJECT_DIR/.autobuild-bin";

/// The remote every script talks to: with the `AUTOBUILD_PUSH_TOKEN` variable (a project
/// access token that may write the repository), the project's URL with that token; only the
/// scripts that fetch or push are given it, and the variable is unset before anything else
/// runs.
const REMOTE: &str = r#"REMOTE=origin
if [ -n "$PUSH_TOKEN" ]; then REMOTE=$(printf '%s' "$CI_REPOSITORY_URL" | sed "s#//[^@]*@#//oauth2:$PUSH_TOKEN@#"); fi
"#;

/// How far a task job's script got, in the git directory (shared with the after-script on
/// every executor, never part of the tree): `<job id> started` once its run began, `<job id>
/// kept` once its branch and run were pushed.
const MARK: &str = "$CI_PROJECT_DIR/.git/autobuild-task-job";

/// The minutes a task job's after-script has to push what its cancelled or timed-out run
/// left (the rest of the job's timeout is the script's).
const AFTER_MINUTES: u64 = 5;

/// Every job's first lines: the token out of the environment, autobuild on PATH.
const PRELUDE: &str = r#"PUSH_TOKEN=${AUTOBUILD_PUSH_TOKEN:-}
unset AUTOBUILD_PUSH_TOKEN
export PATH="$AUTOBUILD_HOME/bin:$PATH"
"#;

pub fn render(plan: &EmitPlan) -> String {
    let mut root = Mapping::new();
    root.insert(
        "workflow".into(),
        map([(
            "rules",
            seq([map([(
                "if",
                s("$CI_PIPELINE_SOURCE == \"web\" || $CI_PIPELINE_SOURCE == \"api\" || $CI_PIPELINE_SOURCE == \"trigger\" || $CI_PIPELINE_SOURCE == \"parent_pipeline\""),
            )])]),
        )]),
    );
    root.insert("variables".into(), variables(plan));
    let mut stages = vec![s("plan")];
    for wave in 1..=plan.waves.len() {
        stages.push(s(&format!("wave-{wave}")));
        stages.push(s(&format!("land-{wave}")));
    }
    stages.push(s("finish"));
    root.insert("stages".into(), Value::Sequence(stages));
    root.insert("plan".into(), plan_job(plan));
    for (index, tasks) in plan.waves.iter().enumerate() {
        let wave = index + 1;
        root.insert(format!("wave-{wave}").into(), wave_job(plan, wave, tasks));
        root.insert(format!("land-{wave}").into(), land_job(plan, wave));
    }
    root.insert("finish".into(), finish_job(plan));
    format!(
        "{header}\n\
         # Regenerate with `{again}`; do not edit:\n\
         # project set-up goes in {hook}. Run it with Build → Pipelines → Run pipeline;\n\
         # set-up (variables, the push token, runners): docs/scale-out.md.\n\
         # Beside a pipeline of your own, never `include:` this file (its stages and workflow\n\
         # rules would replace yours): write it to a file of its own (`--output\n\
         # .gitlab/autobuild.yml`) and run it as a child pipeline from a job of yours:\n\
         #   autobuild:\n\
         #     trigger: {{include: .gitlab/autobuild.yml, strategy: depend, forward: {{pipeline_variables: true}}}}\n\
         #     rules: [{{if: '$CI_PIPELINE_SOURCE == \"web\"'}}]\n{body}",
        header = super::header(plan, "one job per task, waves as stages with needs"),
        again = super::regenerate(plan, "gitlab-ci"),
        hook = scripts::SETUP_HOOK,
        body = to_text(&Value::Mapping(root)),
    )
}

fn variables(plan: &EmitPlan) -> Value {
    let mut vars = Mapping::new();
    for (key, value) in super::variables(plan) {
        vars.insert(key.into(), s(&value));
    }
    vars.insert("BASE_BRANCH".into(), s("$CI_COMMIT_REF_NAME"));
    vars.insert("AUTOBUILD_HOME".into(), s(HOME));
    // Landing and `--ready` read the branches' history.
    vars.insert("GIT_DEPTH".into(), s("0"));
    let names = [
        ("max_turns", "MAX_TURNS"),
        ("only", "ONLY_TASKS"),
        ("skip", "SKIP_TASKS"),
        ("abandon", "ABANDON_TASKS"),
    ];
    for (input, description) in INPUTS {
        let name = names
            .iter()
            .find(|(i, _)| i == input)
            .map_or(*input, |n| n.1);
        vars.insert(
            name.into(),
            map([("value", s("")), ("description", s(description))]),
        );
    }
    for (name, description) in [("AUTO_MERGE", AUTO_MERGE), ("PULL_REQUEST", PULL_REQUEST)] {
        vars.insert(
            name.into(),
            map([
                ("value", s("false")),
                ("options", seq([s("false"), s("true")])),
                ("description", s(description)),
            ]),
        );
    }
    Value::Mapping(vars)
}

fn plan_job(plan: &EmitPlan) -> Value {
    let key = super::cache_key(plan, "", "$CI_COMMIT_SHA");
    let script = format!(
        "{PRELUDE}{build}autobuild feature \"$FEATURE\" --dry-run\n{}",
        with_token(scripts::CREATE_FEATURE_BRANCH),
        build = scripts::BUILD,
    );
    let mut job = job("plan", &[], 60, script);
    job.insert("resource_group".into(), s(&lock(plan)));
    job.insert(
        "cache".into(),
        map([("key", s(&key)), ("paths", seq([s(".autobuild-bin/")]))]),
    );
    job.insert(
        "artifacts".into(),
        map([
            ("paths", seq([s(".autobuild-bin/bin/")])),
            ("expire_in", s("1 day")),
        ]),
    );
    Value::Mapping(job)
}

fn wave_job(plan: &EmitPlan, wave: usize, tasks: &[String]) -> Value {
    let agents = install_agents(&plan.agents).unwrap_or_default();
    let script = format!(
        r#"{PRELUDE}{fetch}{setup}{agents}out=$(mktemp)
{select}if [ "$(sed -n 's/^ready=//p' "$out" | tail -n 1)" != true ]; then exit 0; fi
{sandbox}{restore}RESUME=$(sed -n 's/^resume=//p' "$out" | tail -n 1)
echo "$CI_JOB_ID started" > "{MARK}"
status=0
( {run} ) || status=$?
{push}if [ "$status" -ne 0 ]; then
{keep}fi
echo "$CI_JOB_ID kept" > "{MARK}"
{report}exit "$status"
"#,
        fetch = with_token(scripts::FETCH_FEATURE),
        setup = scripts::setup(),
        select = scripts::select("$out", false),
        sandbox = if sandbox::needed(plan, tasks) {
            sandbox::PROVIDE
        } else {
            ""
        },
        restore = with_token(&scripts::restore("$out")),
        run = scripts::RUN_TASK.trim_end(),
        push = with_token(scripts::PUSH_TASK),
        keep = with_token(&scripts::keep_run()),
        report = scripts::report(".autobuild/runs/$TASK/report.md", None),
    );
    let mut needs = vec![needed("plan", true)];
    if wave > 1 {
        needs.push(needed(&format!("land-{}", wave - 1), false));
    }
    let minutes = super::task_minutes(plan, tasks);
    let mut job = job(&format!("wave-{wave}"), &needs, minutes, script);
    // A job cancelled (GitLab 17.0 on runs `after_script` then) or out of time (the script's
    // own timeout leaves the after-script its minutes) before its script kept the run does it
    // there: the turns already paid for resume at the next dispatch.
    job.insert(
        "after_script".into(),
        seq([s(&format!(
            "{PRELUDE}if [ \"$(cat \"{MARK}\" 2>/dev/null)\" = \"$CI_JOB_ID started\" ]; then\n\
             echo \"$TASK: the job ended ($CI_JOB_STATUS) before its run was kept; keeping it\"\n\
             {}{}fi\n",
            with_token(scripts::PUSH_TASK),
            with_token(&scripts::keep_run()),
        ))]),
    );
    job.insert(
        "variables".into(),
        map([
            (
                "RUNNER_SCRIPT_TIMEOUT",
                s(&format!(
                    "{}m",
                    minutes.saturating_sub(AFTER_MINUTES).max(1)
                )),
            ),
            (
                "RUNNER_AFTER_SCRIPT_TIMEOUT",
                s(&format!("{AFTER_MINUTES}m")),
            ),
        ]),
    );
    job.insert(
        "parallel".into(),
        map([(
            "matrix",
            seq([map([("TASK", seq(tasks.iter().map(|t| s(t))))])]),
        )]),
    );
    job.insert(
        "allow_failure".into(),
        map([("exit_codes", seq(TASK_ENDINGS.iter().map(|c| num(*c))))]),
    );
    job.insert(
        "artifacts".into(),
        map([
            ("when", s("always")),
            ("paths", seq([s(".autobuild/runs/$TASK/")])),
            ("expire_in", s("1 week")),
        ]),
    );
    Value::Mapping(job)
}

fn land_job(plan: &EmitPlan, wave: usize) -> Value {
    let record = format!("records/{}-land-{wave}", plan.feature_id);
    let merge = if wave == plan.waves.len() {
        // PULL_REQUEST: the merge request, with the push token (a project access token whose
        // scopes include `api`) or a GITLAB_TOKEN variable; GitLab is the forge the job runs on
        // unless `[forge]` says otherwise.
        format!(
            "if [ \"$status\" -eq 0 ] && [ \"$AUTO_MERGE\" = true ]; then\n{}{}fi\n\
             if [ \"$status\" -eq 0 ] && [ \"$PULL_REQUEST\" = true ] && [ \"$AUTO_MERGE\" != true ]; then\n\
             GITLAB_TOKEN=\"${{PUSH_TOKEN:-${{GITLAB_TOKEN:-}}}}\" {}fi\n",
            scripts::MERGE,
            with_token(scripts::PUSH_BASE),
            scripts::PULL_REQUEST,
        )
    } else {
        String::new()
    };
    let script = format!(
        "{PRELUDE}{setup}{fetch}status=0\n{land}{push}{report}mkdir -p records\nrm -rf \"{record}\"\ncp -R \".autobuild/runs/$FEATURE\" \"{record}\"\n{merge}exit \"$status\"\n",
        setup = scripts::setup(),
        fetch = with_token(scripts::FETCH_BRANCHES),
        land = scripts::land(".autobuild/runs")
            .trim_end()
            .to_string()
            + " || status=$?\n",
        push = with_token(scripts::PUSH_FEATURE),
        report = scripts::report(
            &format!(".autobuild/runs/{}/report.md", plan.feature_id),
            None
        ),
    );
    let mut needs = vec![needed("plan", true), needed(&format!("wave-{wave}"), true)];
    if wave > 1 {
        needs.push(needed(&format!("land-{}", wave - 1), false));
    }
    let mut job = job(&format!("land-{wave}"), &needs, 60, script);
    job.insert("resource_group".into(), s(&lock(plan)));
    job.insert(
        "artifacts".into(),
        map([
            ("when", s("always")),
            ("paths", seq([s("records/")])),
            ("expire_in", s("1 week")),
        ]),
    );
    Value::Mapping(job)
}

fn finish_job(plan: &EmitPlan) -> Value {
    let mut needs = vec![needed("plan", true)];
    for wave in 1..=plan.waves.len() {
        needs.push(needed(&format!("land-{wave}"), true));
    }
    let script = format!("{PRELUDE}{}", scripts::outcome("records"));
    let mut job = job("finish", &needs, 60, script);
    job.insert("when".into(), s("always"));
    Value::Mapping(job)
}

/// The feature's lock: jobs that push its branch never run in two pipelines at once.
fn lock(plan: &EmitPlan) -> String {
    format!("autobuild-{}", plan.feature_id)
}

fn needed(job: &str, artifacts: bool) -> Value {
    map([("job", s(job)), ("artifacts", Value::Bool(artifacts))])
}

fn job(stage: &str, needs: &[Value], minutes: u64, script: String) -> Mapping {
    let mut job = Mapping::new();
    job.insert("stage".into(), s(stage));
    if !needs.is_empty() {
        job.insert("needs".into(), seq(needs.iter().cloned()));
    }
    job.insert("timeout".into(), s(&format!("{minutes} minutes")));
    job.insert("script".into(), seq([s(&script)]));
    job
}

/// `script` in a subshell that alone knows the remote with the push token.
fn with_token(script: &str) -> String {
    format!("(\n{REMOTE}{})\n", script)
}
