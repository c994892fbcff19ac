//! The shell every engine's jobs run, engine-neutral: GitHub Actions and GitLab CI wrap the
//! same scripts in their own YAML. They read only these variables, which each engine sets:
//! `FEATURE`, `FEATURE_BRANCH`, `BASE_BRANCH` (the branch the run was started on), `TASK`,
//! `ONLY_TASKS`, `SKIP_TASKS`, `ABANDON_TASKS` (ids separated by spaces or commas),
//! `MAX_TURNS`, `AUTOBUILD_VERSION`, `AUTOBUILD_HOME` (autobuild is `$AUTOBUILD_HOME/bin`)
//! and `AUTOBUILD_CRATE` (`cargo install` arguments naming the exact source).
//!
//! Scripts that talk to the remote (fetch, push) name it `$REMOTE` and are the only ones an
//! engine gives its push token, through its own prelude (a `git` wrapper or a remote URL); no
//! script that runs an agent, a check or the project's set-up hook can see it.

/// The project's own set-up (toolchains, `pip install …`): a file of the project, so it
/// survives regenerating the workflow.
pub const SETUP_HOOK: &str = ".autobuild/ci-setup.sh";

/// The branch a blocked task's run directory is kept on, so a later run resumes it.
pub const RUN_RECORD_PREFIX: &str = "autobuild-runs/";

/// Builds autobuild once per run (unless the cache or the runner already has this exact
/// version), into `$AUTOBUILD_HOME/bin`.
pub const BUILD: &str = r#"bin="$AUTOBUILD_HOME/bin"
if [ -x "$bin/autobuild" ]; then
  echo "autobuild from the cache: $("$bin/autobuild" --version)"
elif command -v autobuild >/dev/null 2>&1 && [ "$(autobuild --version)" = "autobuild $AUTOBUILD_VERSION" ]; then
  echo "autobuild $AUTOBUILD_VERSION is installed on this runner: $(command -v autobuild)"
  mkdir -p "$bin"
  cp "$(command -v autobuild)" "$bin/autobuild"
else
  # shellcheck disable=SC2086 # several arguments
  cargo install --locked --root "$AUTOBUILD_HOME" $AUTOBUILD_CRATE
fi
"$bin/autobuild" --version
"#;

/// The project's set-up hook, when it has one.
pub fn setup() -> String {
    format!(
        "if [ -f {SETUP_HOOK} ]; then\n  sh {SETUP_HOOK}\nelse\n  echo \"no {SETUP_HOOK}: nothing to set up\"\nfi\n"
    )
}

/// Creates the feature branch on the remote from the run's commit, unless it exists; an
/// existing one takes what the run's branch gained since (a fixed criterion, a new file) by a
/// merge of the run's commit, so the tasks of a later dispatch see it. The merge keeps the
/// feature branch's first-parent history (the landed tasks) and lands nothing unchecked: the
/// next landing's integration check runs on the merged tip. A merge that conflicts pushes
/// nothing and fails the job, saying how to go on.
pub const CREATE_FEATURE_BRANCH: &str = r#"if git ls-remote --exit-code --heads "$REMOTE" "$FEATURE_BRANCH" >/dev/null; then
  run_commit=$(git rev-parse HEAD)
  git fetch --no-tags "$REMOTE" "+refs/heads/$FEATURE_BRANCH:refs/remotes/autobuild/feature"
  if git merge-base --is-ancestor "$run_commit" refs/remotes/autobuild/feature; then
    echo "$FEATURE_BRANCH exists and holds $BASE_BRANCH: tasks already on it are not run again"
  else
    git checkout -q --detach refs/remotes/autobuild/feature
    if GIT_AUTHOR_NAME=autobuild GIT_AUTHOR_EMAIL=autobuild@localhost GIT_COMMITTER_NAME=autobuild GIT_COMMITTER_EMAIL=autobuild@localhost \
      git merge -q --no-ff --no-edit -m "autobuild: $BASE_BRANCH into $FEATURE_BRANCH" "$run_commit"; then
      git push "$REMOTE" "HEAD:refs/heads/$FEATURE_BRANCH"
      echo "$FEATURE_BRANCH takes what $BASE_BRANCH gained since it was made: this dispatch's tasks run on it"
    else
      git merge --abort || true
      echo "$FEATURE_BRANCH cannot take what $BASE_BRANCH gained since it was made: the merge conflicts; merge $BASE_BRANCH into $FEATURE_BRANCH yourself, push it, and dispatch again" >&2
      exit 1
    fi
    git checkout -q --detach "$run_commit"
  fi
else
  git push "$REMOTE" "HEAD:refs/heads/$FEATURE_BRANCH"
fi
"#;

/// The exit code of a task job whose task is skipped because a dependency did not land: not
/// one of `autobuild task`'s (0–6), so the engine shows the job as not passed (GitHub: failed,
/// with an error annotation naming the dependency; GitLab: an allowed failure, a warning).
pub const SKIPPED_EXIT: u8 = 8;

/// Writes `ready=true|false` to `output`: false for a task the run's inputs leave out, else
/// what `autobuild feature --ready` says. A task waiting for a dependency that did not land is
/// skipped: the job ends with [`SKIPPED_EXIT`], saying why (`annotate`: as a GitHub error
/// annotation, which the run's summary shows) — unless every such dependency is abandoned by
/// the run's inputs (then the task is given up with them, and its job passes).
pub fn select(output: &str, annotate: bool) -> String {
    let say = if annotate {
        "echo \"::error title=$TASK skipped::$why\""
    } else {
        "echo \"$why\""
    };
    format!(
        r#"listed_id() {{ case " $(printf '%s' "$2" | tr ',' ' ') " in *" $1 "*) return 0 ;; esac; return 1; }}
listed() {{ listed_id "$TASK" "$1"; }}
why=""
if listed "$ABANDON_TASKS"; then why="abandoned by this run's inputs"
elif listed "$SKIP_TASKS"; then why="skipped by this run's inputs"
elif [ -n "$ONLY_TASKS" ] && ! listed "$ONLY_TASKS"; then why="not among the tasks this run is to run"
fi
if [ -n "$why" ]; then
  echo "ready=false" >> "{output}"
  echo "$TASK: $why"
else
  answer=$(autobuild feature "$FEATURE" --ready "$TASK")
  printf '%s\n' "$answer" >> "{output}"
  waits=$(printf '%s\n' "$answer" | sed -n 's/^waits_for=//p')
  given_up=true
  for dep in $(printf '%s' "$waits" | tr ',' ' '); do
    if ! listed_id "$dep" "$ABANDON_TASKS"; then given_up=false; fi
  done
  if [ -z "$waits" ]; then :
  elif [ "$given_up" = true ]; then
    echo "$TASK: not run: $waits abandoned by this run's inputs"
  else
    why="$TASK skipped: it needs $waits, which did not land on $FEATURE_BRANCH"
    {say}
    exit {SKIPPED_EXIT}
  fi
fi
"#
    )
}

/// Brings back a blocked earlier run of the task (its branch and run directory), so this run
/// goes on from it; writes `resume=true` to `output` then.
pub fn restore(output: &str) -> String {
    format!(
        r#"if git ls-remote --exit-code --heads "$REMOTE" "{RUN_RECORD_PREFIX}$TASK" >/dev/null; then
  git fetch --no-tags --update-head-ok "$REMOTE" "+refs/heads/{RUN_RECORD_PREFIX}$TASK:refs/autobuild/runs/$TASK" "+refs/heads/autobuild/$TASK:refs/heads/autobuild/$TASK"
  mkdir -p .autobuild/runs
  git archive "refs/autobuild/runs/$TASK" | tar -x -C .autobuild/runs
  echo "resume=true" >> "{output}"
  echo "$TASK: resuming its blocked run"
fi
"#
    )
}

/// The task on the feature branch, left unmerged for the landing job. With `RESUME` set, its
/// restored blocked run goes on (`--moved-checkout`: the job's workspace may not be the one
/// that kept it; autobuild takes the record over only when it names that run's own branch and
/// worktree, and otherwise refuses it with exit 2, which fails the job — nothing runs afresh
/// behind a person's back).
pub const RUN_TASK: &str = r#"set -- --base "$FEATURE_BRANCH" --no-merge ${MAX_TURNS:+--max-turns "$MAX_TURNS"}
if [ -n "$RESUME" ]; then set -- "$@" --resume --moved-checkout; fi
autobuild task "$TASK" "$@"
"#;

/// Pushes the task's branch (approved or not: a blocked one is resumed from it).
pub const PUSH_TASK: &str = r#"if git rev-parse --verify -q "refs/heads/autobuild/$TASK" >/dev/null; then
  git push --force "$REMOTE" "refs/heads/autobuild/$TASK:refs/heads/autobuild/$TASK"
fi
"#;

/// Keeps a run that did not end approved: its run directory as a commit on
/// `autobuild-runs/<TASK>`, so a later run restores it ([`restore`]) and resumes.
pub fn keep_run() -> String {
    format!(
        r#"if [ -d ".autobuild/runs/$TASK" ]; then
  gitdir=$(git rev-parse --absolute-git-dir)
  export GIT_INDEX_FILE="$gitdir/autobuild-run-index"
  rm -f "$GIT_INDEX_FILE"
  git -C .autobuild/runs --git-dir="$gitdir" --work-tree=. add -f -- "$TASK"
  tree=$(git write-tree)
  rm -f "$GIT_INDEX_FILE"
  commit=$(GIT_AUTHOR_NAME=autobuild GIT_AUTHOR_EMAIL=autobuild@localhost GIT_COMMITTER_NAME=autobuild GIT_COMMITTER_EMAIL=autobuild@localhost git commit-tree -m "autobuild: the run of $TASK, kept to resume it" "$tree")
  git push --force "$REMOTE" "$commit:refs/heads/{RUN_RECORD_PREFIX}$TASK"
  echo "kept on {RUN_RECORD_PREFIX}$TASK: run again with a larger max_turns to resume it, or abandon it"
fi
"#
    )
}

/// The feature branch from the remote (where the job's checkout is the base's).
pub const FETCH_FEATURE: &str = "git fetch --no-tags --update-head-ok \"$REMOTE\" \"+refs/heads/$FEATURE_BRANCH:refs/heads/$FEATURE_BRANCH\"\n";

/// Every task branch (and the feature branch) from the remote, for the landing. (A fresh
/// clone has none of them checked out; a runner that keeps one directory for every job may
/// have a task's worktree on its branch, which was pushed from there.)
pub const FETCH_BRANCHES: &str =
    "git fetch --no-tags --update-head-ok \"$REMOTE\" \"+refs/heads/autobuild/*:refs/heads/autobuild/*\"\n";

/// Lands what the wave approved; `artifacts` holds the task jobs' run directories. Tasks the
/// run's inputs abandon are never landed, whatever record a persistent runner kept of them.
pub fn land(artifacts: &str) -> String {
    format!(
        "autobuild feature \"$FEATURE\" --land --artifacts {artifacts} --into \"$BASE_BRANCH\" --abandon \"$ABANDON_TASKS\"\n"
    )
}

pub const PUSH_FEATURE: &str =
    "git push \"$REMOTE\" \"refs/heads/$FEATURE_BRANCH:refs/heads/$FEATURE_BRANCH\"\n";

/// The landed feature onto the base (checked out: the feature branch is not, so `complete`
/// can delete it).
pub const MERGE: &str = "autobuild complete \"$FEATURE\"\n";

/// The landed feature as a pull request against the base (`[forge]`, docs/pull-requests.md).
pub const PULL_REQUEST: &str = "autobuild complete \"$FEATURE\" --pr\n";

pub const PUSH_BASE: &str = "git push \"$REMOTE\" \"refs/heads/$BASE_BRANCH:refs/heads/$BASE_BRANCH\"\ngit push \"$REMOTE\" --delete \"$FEATURE_BRANCH\" || true\n";

/// A report file appended to `summary` (the engine's job summary), or printed to the job's
/// log without one, when there is one.
pub fn report(path: &str, summary: Option<&str>) -> String {
    let to = summary.map_or(String::new(), |s| format!(" >> \"{s}\""));
    format!("if [ -f \"{path}\" ]; then\n  cat \"{path}\"{to}\nfi\n")
}

/// Fails, naming them, unless every task landed or was abandoned; `records` holds the landing
/// jobs' records, one directory each (`<FEAT>-land-<N>`): the last wave's is read.
pub fn outcome(records: &str) -> String {
    format!(
        r#"record=$(find {records} -mindepth 1 -maxdepth 1 -name "$FEATURE-land-*" 2>/dev/null | sort -V | tail -n 1)
if [ -z "$record" ]; then
  echo "$FEATURE: no landing job recorded anything: see the failed jobs of this run"
  exit 1
fi
autobuild feature "$FEATURE" --outcome "$record" --abandon "$ABANDON_TASKS"
"#
    )
}
