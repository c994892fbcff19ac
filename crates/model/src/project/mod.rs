//! Project facts shared by every run: where autobuild's files live ([`layout`]), the project
//! config ([`config`]), the checks to run ([`detect`]) and the environment given to agents and
//! checks alike ([`env`]), and what a task worktree gets besides its checked-out files
//! ([`worktree_files`]).

pub mod config;
pub mod context_files;
pub mod detect;
pub mod env;
pub mod ignores;
pub mod layout;
pub mod worktree_files;

pub use config::{
    CheckConfig, Config, CoverageConfig, EnvConfig, FeatureConfig, ForgeConfig, ForgeKind,
    Integration, ProjectConfig, WorktreeConfig,
};
pub use detect::{effective_checks, CheckOrigin, EffectiveCheck, DEFAULT_CHECK_TIMEOUT};
pub use env::ProjectEnv;
pub use layout::{find_repo_root, GitignoreUpdate, Layout};
