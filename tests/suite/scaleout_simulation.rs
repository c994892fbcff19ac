//! The workflow `autobuild feature <FEAT> --emit github-actions` writes, played the way GitHub's
//! runners would play it: jobs in `needs:` order, each job (each matrix entry) in its own fresh
//! clone of a bare "remote", matrix entries at once on threads, branches passed only through the
//! remote and run directories only through a shared artifact directory. The jobs' `run:` scripts
//! run as written (with `${{ … }}` substituted); install steps and `uses:` actions other than
//! checkout and the artifact actions are skipped. Agents are the scripted feature agents.
//!
//! What a real engine does with the file (scheduling, `needs:`/`if:`, matrices, outputs) is
//! tested under act (module `act`, `#[ignore]`d: scripts/ci-engines.sh); this simulation keeps
//! only what act cannot do: GitHub's "Re-run failed jobs".

use crate::feature_fixture;

/// The same workflows on real engines and checkers (`#[ignore]`d: scripts/ci-engines.sh).
#[path = "scaleout/act.rs"]
mod act;
#[path = "scaleout/checkers.rs"]
mod checkers;
#[path = "scaleout/engine.rs"]
mod engine;
#[path = "scaleout/gitlab.rs"]
mod gitlab;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use feature_fixture::{assert_exit, copy_files, git, Project};
use yaml_serde::Value;

const FEAT: &str = "FEAT-S";
const BRANCH: &str = "autobuild/FEAT-S";

/// The feature branch once every approved task landed: one commit each, in dependency order.
const LANDED: [&str; 4] = [
    "TASK-E: Task TASK-E",
    "TASK-C: Task TASK-C",
    "TASK-A: Task TASK-A",
    "initial",
];

/// Waves [A, B], [C, D], [E]: C after A, D after B, E after C. B never passes its criterion.
fn project() -> Project {
    Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .task("TASK-B", "test -f lib/never.txt", "echo b > lib/b.txt")
        .task("TASK-C", "grep -q a lib/c.txt", "cat lib/a.txt > lib/c.txt")
        .task("TASK-D", "test -f lib/d.txt", "echo d > lib/d.txt")
        .task("TASK-E", "grep -q a lib/e.txt", "cat lib/c.txt > lib/e.txt")
        .feature(
            FEAT,
            "id: FEAT-S\nname: Scale out\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n  - id: TASK-C\n    dependencies: [TASK-A]\n  - id: TASK-D\n    dependencies: [TASK-B]\n  - id: TASK-E\n    dependencies: [TASK-C]\n",
        )
        .logged()
        .commit()
}

/// How a job ended, as `needs.<job>.result` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Success,
    Failure,
    Skipped,
    Cancelled,
}

/// One workflow run: the remote, the artifact store, and every job's result so far.
struct Simulation<'a> {
    project: &'a Project,
    workflow: Value,
    remote: PathBuf,
    artifacts: PathBuf,
    results: BTreeMap<String, Outcome>,
    /// Attempt number, so a re-run's clones do not collide with the first run's.
    attempt: u32,
}

impl<'a> Simulation<'a> {
    fn new(project: &'a Project, workflow: Value) -> Simulation<'a> {
        let remote = project.bare_remote();
        let artifacts = project.temp().join("artifacts");
        fs::create_dir_all(&artifacts).unwrap();
        Simulation {
            project,
            workflow,
            remote,
            artifacts,
            results: BTreeMap::new(),
            attempt: 0,
        }
    }

    /// Job ids in an order that honours `needs:`.
    fn order(&self) -> Vec<String> {
        let jobs = self.workflow["jobs"].as_mapping().unwrap();
        let mut done: Vec<String> = Vec::new();
        while done.len() < jobs.len() {
            for (id, job) in jobs {
                let id = id.as_str().unwrap().to_string();
                if !done.contains(&id) && needs(job).iter().all(|n| done.contains(n)) {
                    done.push(id);
                }
            }
        }
        done
    }

    /// Plays the jobs that have no result yet ("Re-run failed jobs" keeps the successful ones
    /// and their artifacts); `cancel_at` cancels the run when that job would start.
    fn play(&mut self, cancel_at: Option<&str>) {
        self.attempt += 1;
        self.results
            .retain(|_, outcome| *outcome == Outcome::Success);
        let mut cancelled = false;
        for id in self.order() {
            if self.results.contains_key(&id) {
                continue;
            }
            if cancel_at == Some(id.as_str()) {
                cancelled = true;
            }
            let job = self.workflow["jobs"][id.as_str()].clone();
            let outcome = if cancelled {
                Outcome::Cancelled
            } else if !self.should_run(&job) {
                Outcome::Skipped
            } else {
                let entries = self.run_job(&id, &job);
                let outcome = if entries.iter().all(|(_, o)| *o == Outcome::Success) {
                    Outcome::Success
                } else {
                    Outcome::Failure
                };
                self.results.extend(entries);
                outcome
            };
            self.results.insert(id, outcome);
        }
    }

    /// A job runs when every job it needs succeeded, or, with `if: !cancelled()`, regardless.
    fn should_run(&self, job: &Value) -> bool {
        let condition = job["if"].as_str().unwrap_or("");
        let needs_ok = needs(job)
            .iter()
            .all(|n| self.results.get(n) == Some(&Outcome::Success));
        needs_ok || condition.contains("!cancelled()") || condition.contains("always()")
    }

    /// Runs the job, or each matrix entry without a successful earlier attempt (each entry is
    /// a job of its own to GitHub); returns the entries' outcomes, keyed `job/task`.
    fn run_job(&self, id: &str, job: &Value) -> Vec<(String, Outcome)> {
        let tasks: Vec<String> = job["strategy"]["matrix"]["task"]
            .as_sequence()
            .map(|s| s.iter().map(|t| t.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        if tasks.is_empty() {
            return vec![(format!("{id}/job"), self.run_entry(id, job, None))];
        }
        let mut kept = Vec::new();
        let tasks: Vec<String> = tasks
            .into_iter()
            .filter(|t| {
                let key = format!("{id}/{t}");
                let done = self.results.get(&key) == Some(&Outcome::Success);
                if done {
                    kept.push((key, Outcome::Success));
                }
                !done
            })
            .collect();
        let limit = job["strategy"]["max-parallel"].as_u64().unwrap_or(256) as usize;
        let mut outcomes = Vec::new();
        for chunk in tasks.chunks(limit) {
            std::thread::scope(|scope| {
                let handles: Vec<_> = chunk
                    .iter()
                    .map(|task| {
                        let key = format!("{id}/{task}");
                        scope.spawn(move || (key, self.run_entry(id, job, Some(task))))
                    })
                    .collect();
                outcomes.extend(handles.into_iter().map(|h| h.join().unwrap()));
            });
        }
        outcomes.extend(kept);
        outcomes
    }

    /// One runner: a fresh clone, the steps in order.
    fn run_entry(&self, id: &str, job: &Value, task: Option<&str>) -> Outcome {
        let name = format!("{}-{id}-{}", self.attempt, task.unwrap_or("job"));
        let runner_temp = self.project.temp().join("runner-temp").join(&name);
        fs::create_dir_all(&runner_temp).unwrap();
        let mut env = vec![("RUNNER_TEMP".to_string(), runner_temp.display().to_string())];
        env.extend(self.env_of(&self.workflow["env"], task));
        env.extend(self.env_of(&job["env"], task));
        let mut clone: Option<PathBuf> = None;
        let mut failed = false;
        let mut outputs: BTreeMap<String, String> = BTreeMap::new();
        for step in job["steps"].as_sequence().unwrap() {
            if !self.step_runs(step, failed, &outputs) {
                continue;
            }
            let uses = step["uses"].as_str().unwrap_or("");
            let with = |key: &str| substitute(step["with"][key].as_str().unwrap_or(""), task, &env);
            if uses.starts_with("actions/checkout") {
                let reference = Some(with("ref")).filter(|r| !r.is_empty());
                clone = Some(self.project.clone_remote(
                    &self.remote,
                    &name,
                    reference.as_deref().unwrap_or("main"),
                ));
                continue;
            }
            let dir = clone.as_deref().expect("checkout comes first");
            if uses.starts_with("actions/upload-artifact") {
                let from = dir.join(with("path"));
                let to = self.artifacts.join(with("name"));
                if from.is_dir() {
                    copy_files(&from, &to);
                } else if from.is_file() {
                    // autobuild's binary: linked, not copied, into every job.
                    fs::create_dir_all(&to).unwrap();
                    let target = to.join(from.file_name().unwrap());
                    let _ = fs::remove_file(&target);
                    fs::hard_link(&from, target).unwrap();
                }
            } else if uses.starts_with("actions/download-artifact") {
                let to = dir.join(with("path"));
                let (name, pattern) = (with("name"), with("pattern"));
                if name == "autobuild-bin" {
                    fs::create_dir_all(&to).unwrap();
                    let from = self.artifacts.join(&name).join("autobuild");
                    fs::hard_link(from, to.join("autobuild")).unwrap();
                } else if !name.is_empty() {
                    copy_files(&self.artifacts.join(&name), &to);
                } else {
                    let prefix = pattern.trim_end_matches('*');
                    for entry in fs::read_dir(&self.artifacts).unwrap() {
                        let entry = entry.unwrap().file_name();
                        let entry = entry.to_str().unwrap();
                        if entry.starts_with(prefix) {
                            copy_files(&self.artifacts.join(entry), &to.join(entry));
                        }
                    }
                }
            } else if let Some(script) = step["run"].as_str() {
                if step["name"].as_str().unwrap_or("").starts_with("Install") {
                    continue;
                }
                let mut step_env = env.clone();
                step_env.extend(self.env_of(&step["env"], task));

                let (ok, written) = self.shell(dir, script, &step_env);
                if let Some(step_id) = step["id"].as_str() {
                    for (key, value) in written {
                        outputs.insert(format!("steps.{step_id}.outputs.{key}"), value);
                    }
                }
                failed |= !ok;
            }
        }
        if failed {
            Outcome::Failure
        } else {
            Outcome::Success
        }
    }

    /// `if:` of a step: `always()`, `!cancelled()`, `failure()`, `success()`,
    /// `steps.X.outputs.Y == 'V'` and
    /// `inputs.auto_merge` (false), joined by `&&`; without a status function, only after
    /// success.
    fn step_runs(&self, step: &Value, failed: bool, outputs: &BTreeMap<String, String>) -> bool {
        let condition = step["if"].as_str().unwrap_or("");
        let condition = condition
            .trim()
            .trim_start_matches("${{")
            .trim_end_matches("}}")
            .trim();
        let mut status_checked = false;
        let mut holds = true;
        for term in condition
            .split("&&")
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            match term {
                "always()" | "!cancelled()" => status_checked = true,
                // The simulated runs are never cancelled.
                "failure()" | "(failure() || cancelled())" => {
                    status_checked = true;
                    holds &= failed;
                }
                "success()" => holds &= !failed,
                "inputs.auto_merge" | "inputs.pull_request" => holds = false,
                "!inputs.auto_merge" => {}
                _ => {
                    let (left, right) = term.split_once("==").expect("a comparison");
                    let value = outputs.get(left.trim()).cloned().unwrap_or_default();
                    holds &= value == right.trim().trim_matches('\'');
                }
            }
        }
        holds && (status_checked || !failed)
    }

    fn env_of(&self, env: &Value, task: Option<&str>) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(map) = env.as_mapping() {
            for (key, value) in map {
                let value = substitute(value.as_str().unwrap_or(""), task, &out);
                out.push((key.as_str().unwrap().to_string(), value));
            }
        }
        out
    }

    /// Runs a step's script with `sh -e` as a runner would (autobuild first on PATH); returns
    /// whether it succeeded and what it wrote to `$GITHUB_OUTPUT`.
    fn shell(
        &self,
        dir: &Path,
        script: &str,
        env: &[(String, String)],
    ) -> (bool, Vec<(String, String)>) {
        let output_file = tempfile::NamedTempFile::new().unwrap();
        let summary = tempfile::NamedTempFile::new().unwrap();
        let bin = Path::new(env!("CARGO_BIN_EXE_autobuild")).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut command = Command::new("sh");
        command
            .args(["-e", "-c", script])
            .current_dir(dir)
            .stdin(Stdio::null())
            .env("PATH", path)
            .env("GITHUB_OUTPUT", output_file.path())
            .env("GITHUB_STEP_SUMMARY", summary.path())
            .env("GITHUB_PATH", summary.path())
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REF_NAME", "main")
            .env("GIT_AUTHOR_NAME", "runner")
            .env("GIT_AUTHOR_EMAIL", "runner@example.com")
            .env("GIT_COMMITTER_NAME", "runner")
            .env("GIT_COMMITTER_EMAIL", "runner@example.com")
            .env_remove("RUST_LOG");
        for (key, value) in self
            .project
            .environment()
            .into_iter()
            .chain(env.iter().cloned())
        {
            command.env(key, value);
        }
        let output = command.output().unwrap();
        let written = fs::read_to_string(output_file.path())
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (output.status.success(), written)
    }

    fn subjects(&self) -> Vec<String> {
        git(
            &self.remote,
            &["log", "--first-parent", "--format=%s", BRANCH],
        )
        .lines()
        .map(String::from)
        .collect()
    }
}

fn needs(job: &Value) -> Vec<String> {
    match &job["needs"] {
        Value::String(one) => vec![one.clone()],
        Value::Sequence(many) => many
            .iter()
            .map(|n| n.as_str().unwrap().to_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// `${{ matrix.task }}`, `${{ env.X }}`, `${{ inputs.max_turns }}` (1); secrets and variables
/// are empty, as on a fork without them.
fn substitute(text: &str, task: Option<&str>, env: &[(String, String)]) -> String {
    let mut out = text.to_string();
    while let Some(start) = out.find("${{") {
        let end = out[start..].find("}}").unwrap() + start;
        let expression = out[start + 3..end].trim().to_string();
        let value = if expression == "matrix.task" {
            task.unwrap_or("").to_string()
        } else if expression == "runner.temp" {
            env.iter()
                .find(|(k, _)| k == "RUNNER_TEMP")
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        } else if expression == "github.ref_name" {
            "main".to_string()
        } else if let Some(name) = expression.strip_prefix("env.") {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        } else if expression == "inputs.max_turns" {
            "1".to_string()
        } else {
            String::new()
        };
        out.replace_range(start..end + 2, &value);
    }
    out
}

fn emitted(project: &Project) -> Value {
    let file = project.temp().join("autobuild-feat-s.yml");
    let output = project.run(&[
        "feature",
        FEAT,
        "--emit",
        "github-actions",
        &format!("--ci-install=--path {}", env!("CARGO_MANIFEST_DIR")),
        "--output",
        file.to_str().unwrap(),
    ]);
    assert_exit(&output, 0);
    yaml_serde::from_str(&fs::read_to_string(file).unwrap()).unwrap()
}

#[test]
fn a_rerun_after_a_cancelled_landing_resumes_without_redoing_approved_tasks() {
    let project = project();
    let mut sim = Simulation::new(&project, emitted(&project));

    sim.play(Some("land-1"));

    assert_eq!(sim.results["wave-1"], Outcome::Failure, "B is blocked");
    assert_eq!(sim.results["land-1"], Outcome::Cancelled);
    assert_eq!(sim.subjects(), ["initial"]);

    // "Re-run failed jobs": wave 1's failed entry runs again (B, blocked again), A's approved
    // run is kept with its artifact and branch and lands.
    sim.play(None);

    assert_eq!(sim.subjects(), LANDED);
    assert_eq!(project.starts("TASK-A"), 1);
    assert_eq!(project.starts("TASK-C"), 1);

    // A new dispatch of the finished feature redoes nothing that landed.
    sim.results.clear();
    sim.play(None);

    assert_eq!(project.starts("TASK-A"), 1);
    assert_eq!(project.starts("TASK-C"), 1);
    assert_eq!(project.starts("TASK-E"), 1);
    assert_eq!(sim.subjects().len(), 4);
}
