//! What the real-engine tests share: the tools (installed by scripts/ci-engines.sh, which
//! names them in `AUTOBUILD_<TOOL>` variables), the feature they run, and the tree a local
//! `autobuild feature` run lands, which every engine's landing must equal.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::feature_fixture::{assert_exit, git, Project};

pub const FEAT: &str = "FEAT-S";
pub const BRANCH: &str = "autobuild/FEAT-S";

/// The tool `variable` names, else `name` on PATH; a test that needs it fails saying how to
/// get it (these tests are `#[ignore]`d and run by scripts/ci-engines.sh).
pub fn tool(variable: &str, name: &str) -> PathBuf {
    if let Some(path) = std::env::var_os(variable) {
        return PathBuf::from(path);
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("needs {name}: run scripts/ci-engines.sh (or set {variable})"))
}

/// Waves [A, B], [C, D], [E]: C after A, D after B, E after C. B is blocked after one turn
/// (its criterion needs lib/never.txt, which its Player writes from turn 2 on); C is the
/// later-wave task that does not depend on it.
pub fn project() -> Project {
    Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .task(
            "TASK-B",
            "test -f lib/never.txt",
            "echo b > lib/b.txt\nif [ \"$AUTOBUILD_TURN\" -ge 2 ]; then echo b > lib/never.txt; fi\n",
        )
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

/// What the feature branch a local `autobuild feature FEAT-S --max-turns 1` leaves.
pub fn local_tree() -> String {
    let project = project();
    let output = project.run(&["feature", FEAT, "--max-turns", "1"]);
    assert_exit(&output, 3);
    tree(&project.root, BRANCH)
}

/// What `rev` changed from `main`: each file's old and new mode and object, and its path
/// (each project's config names its own temp directory, so whole trees never match).
pub fn tree(repo: &Path, rev: &str) -> String {
    git(repo, &["diff-tree", "-r", "main", rev])
}

/// `autobuild feature FEAT-S --emit <format> --output <file>` in `project`, installing
/// autobuild from this source tree (the runner has that version on PATH, so nothing is
/// compiled: [`path_with_autobuild`]); the file.
pub fn emit(project: &Project, format: &str, file: &Path) -> String {
    let source = format!("--path {}", env!("CARGO_MANIFEST_DIR"));
    emit_with(project, format, file, &source)
}

/// [`emit`] with the jobs installing autobuild with `cargo install <source>`.
pub fn emit_with(project: &Project, format: &str, file: &Path, source: &str) -> String {
    let output = project.run(&[
        "feature",
        FEAT,
        "--emit",
        format,
        &format!("--ci-install={source}"),
        "--output",
        file.to_str().unwrap(),
    ]);
    assert_exit(&output, 0);
    fs::read_to_string(file).unwrap()
}

/// `PATH` with the autobuild under test first: the runner has that exact version installed,
/// so the workflow's build step copies it instead of compiling.
pub fn path_with_autobuild() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_autobuild")).parent().unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs `command`, echoing its output as it comes; returns its exit status and output.
pub fn run_logged(mut command: Command) -> (bool, String) {
    let output = command.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    eprintln!("{text}");
    (output.status.success(), text)
}

/// The hidden acceptance test of [`hidden_project`].
pub const HIDDEN_TEST: &str = "tests/acceptance/check.sh";

/// FEAT-S as one task, TASK-A, under a hidden acceptance test (`[scope] hidden`, a check
/// marked `hidden = true` that the profile requires), in the sandbox (`mode = "on"`), outside
/// the system's `/tmp` (the sandbox's own).
pub fn hidden_project() -> Project {
    let project = Project::new_in(&super::feature_fixture::outside_system_tmp())
        .sandbox_mode("on")
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt\n")
        .feature(FEAT, "id: FEAT-S\nname: Hidden\ntasks:\n  - id: TASK-A\n");
    project.write(
        HIDDEN_TEST,
        "grep -qx a lib/a.txt || { echo \"lib/a.txt is not a\"; exit 1; }\necho \"1 passed\"\n",
    );
    let config = project.root.join(".autobuild/config.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        format!(
            "[scope]\nhidden = [\"tests/acceptance/**\"]\n\n{text}\n\
             [checks.acceptance]\ncmd = \"sh {HIDDEN_TEST}\"\nhidden = true\n\n\
             [profiles.feature]\nrequire = [\"checks.test\", \"checks.acceptance\", \"criteria\", \"coach\", \"changes\"]\n"
        ),
    )
    .unwrap();
    project.logged().commit()
}
