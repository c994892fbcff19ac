//! Project facts shared by every run: where autobuild's files live ([`layout`]), the project
//! config ([`config`]), the checks to run ([`detect`]) and the environment given to agents and
//! checks alike ([`env`]).

pub mod config;
pub mod detect;
pub mod env;
pub mod layout;

pub use config::{CheckConfig, Config, EnvConfig, ProjectConfig};
pub use detect::{effective_checks, CheckOrigin, EffectiveCheck, DEFAULT_CHECK_TIMEOUT};
pub use env::ProjectEnv;
pub use layout::{find_repo_root, GitignoreUpdate, Layout};
