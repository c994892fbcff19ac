//! The quality-gate profiles shipped in the binary, embedded from the crate's `profiles/`.
//! Each file is named after its profile: `bugfix.toml` defines `bugfix`.

/// The profile used when a task names none, and for unknown task types.
pub const DEFAULT_PROFILE: &str = "feature";

/// Built-in profile files: (file name, text).
pub const PROFILES: &[(&str, &str)] = &[
    ("feature.toml", include_str!("../../profiles/feature.toml")),
    ("bugfix.toml", include_str!("../../profiles/bugfix.toml")),
    (
        "refactor.toml",
        include_str!("../../profiles/refactor.toml"),
    ),
    ("testing.toml", include_str!("../../profiles/testing.toml")),
    (
        "scaffolding.toml",
        include_str!("../../profiles/scaffolding.toml"),
    ),
    (
        "documentation.toml",
        include_str!("../../profiles/documentation.toml"),
    ),
];
