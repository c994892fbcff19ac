//! The workflows and prompt templates shipped in the binary, embedded from the crate's
//! `workflows/` and `prompts/` directories. They are the lowest precedence layer: users patch or
//! replace them from their config directory or the repository's `.autobuild/`.

/// The default workflow when neither the command line nor the task names one.
pub const DEFAULT_WORKFLOW: &str = "player-coach";

/// Built-in workflow files: (file name, text).
pub const WORKFLOWS: &[(&str, &str)] = &[
    (
        "player-coach.toml",
        include_str!("../../../../workflows/player-coach.toml"),
    ),
    ("solo.toml", include_str!("../../../../workflows/solo.toml")),
    (
        "guardkit.toml",
        include_str!("../../../../workflows/guardkit.toml"),
    ),
    (
        "planned.toml",
        include_str!("../../../../workflows/planned.toml"),
    ),
    ("tdd.toml", include_str!("../../../../workflows/tdd.toml")),
];

/// Built-in prompt templates: (file name, text).
pub const PROMPTS: &[(&str, &str)] = &[
    ("player.md", include_str!("../../../../prompts/player.md")),
    ("coach.md", include_str!("../../../../prompts/coach.md")),
    ("planner.md", include_str!("../../../../prompts/planner.md")),
    (
        "planned-player.md",
        include_str!("../../../../prompts/planned-player.md"),
    ),
    (
        "planned-coach.md",
        include_str!("../../../../prompts/planned-coach.md"),
    ),
    (
        "context-files.md",
        include_str!("../../../../prompts/context-files.md"),
    ),
    (
        "tdd-tester.md",
        include_str!("../../../../prompts/tdd-tester.md"),
    ),
    (
        "tdd-test-coach.md",
        include_str!("../../../../prompts/tdd-test-coach.md"),
    ),
];

/// How embedded files are named in messages: visibly not a path on disk.
pub fn display_path(dir: &str, file: &str) -> String {
    format!("<built-in>/{dir}/{file}")
}
