//! The quality-gate profiles shipped in the binary, embedded from the crate's `profiles/`.
//! Each file is named after its profile: `bugfix.toml` defines `bugfix`.
//!
//! Besides autobuild's own task types they cover GuardKit's vocabulary, so GuardKit tasks get
//! the gate GuardKit meant instead of a fallback warning: `implementation` and `enhancement`
//! are features, `bug_fix` a bug fix, `benchmark` testing, `research` documentation, `config`
//! and `dto` declarative; `declarative`, `infrastructure`, `integration`, `glue` and `wiring`
//! are profiles of their own (each can be overridden on its own); `review` requires no code
//! change. GuardKit's `operator_handoff` is work for a human: no agent runs it
//! ([`HUMAN_TASK_TYPES`]).

/// The profile used when a task names none, and for unknown task types.
pub const DEFAULT_PROFILE: &str = "feature";

/// Built-in profile files: (file name, text).
pub const PROFILES: &[(&str, &str)] = &[
    (
        "feature.toml",
        include_str!("../../../../profiles/feature.toml"),
    ),
    (
        "bugfix.toml",
        include_str!("../../../../profiles/bugfix.toml"),
    ),
    (
        "refactor.toml",
        include_str!("../../../../profiles/refactor.toml"),
    ),
    (
        "testing.toml",
        include_str!("../../../../profiles/testing.toml"),
    ),
    (
        "scaffolding.toml",
        include_str!("../../../../profiles/scaffolding.toml"),
    ),
    (
        "documentation.toml",
        include_str!("../../../../profiles/documentation.toml"),
    ),
    (
        "declarative.toml",
        include_str!("../../../../profiles/declarative.toml"),
    ),
    (
        "infrastructure.toml",
        include_str!("../../../../profiles/infrastructure.toml"),
    ),
    (
        "integration.toml",
        include_str!("../../../../profiles/integration.toml"),
    ),
    ("glue.toml", include_str!("../../../../profiles/glue.toml")),
    (
        "wiring.toml",
        include_str!("../../../../profiles/wiring.toml"),
    ),
    (
        "review.toml",
        include_str!("../../../../profiles/review.toml"),
    ),
];

/// Task types that hand work to a person (GuardKit defers them to an operator): refused unless
/// a project defines a profile of that name.
pub const HUMAN_TASK_TYPES: &[&str] = &["operator_handoff", "operator-handoff"];
