//! What confines a run: the backend that works on this machine ([`Backend`]), and what a
//! run's record keeps of it ([`Record`]).

use std::path::PathBuf;

use super::{BackendChoice, Effective, Network};
use base::Keyword;

/// What confines processes on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Backend {
    /// bubblewrap: mount and process namespaces.
    Bwrap {
        path: PathBuf,
        /// `bubblewrap 0.8.0`, or what `--version` said.
        version: String,
    },
    /// Landlock (module [`landlock`]) with the seccomp filter.
    Landlock { abi: i32 },
}

impl Backend {
    /// `bwrap` or `landlock`, as `[sandbox] backend` names it.
    pub fn name(&self) -> &'static str {
        match self {
            Backend::Bwrap { .. } => "bwrap",
            Backend::Landlock { .. } => "landlock",
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Bwrap { path, version } => write!(f, "{version}, {}", path.display()),
            Backend::Landlock { abi } => write!(f, "Landlock ABI {abi} and seccomp"),
        }
    }
}

/// How a run's agents and checks were confined, as its `state.json` keeps it (the report says
/// it): the backend (`None`: unconfined), Landlock's ABI, and the network setting.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub backend: Option<BackendChoice>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abi: Option<i32>,
    pub network: Network,
}

impl Effective {
    /// What a run's record keeps of this setting.
    pub fn record(&self) -> Record {
        match self {
            Effective::Off(_) => Record {
                backend: None,
                abi: None,
                network: Network::Host,
            },
            Effective::On(sandbox) => Record {
                backend: Some(match sandbox.backend {
                    Backend::Bwrap { .. } => BackendChoice::Bwrap,
                    Backend::Landlock { .. } => BackendChoice::Landlock,
                }),
                abi: match sandbox.backend {
                    Backend::Landlock { abi } => Some(abi),
                    Backend::Bwrap { .. } => None,
                },
                network: sandbox.network,
            },
        }
    }
}

impl std::fmt::Display for Record {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Some(backend) = self.backend else {
            return write!(f, "none: agents and checks ran unconfined");
        };
        let abi = self
            .abi
            .map(|abi| format!(" (ABI {abi})"))
            .unwrap_or_default();
        let network = self.network.as_str();
        write!(f, "{}{abi}, network \"{network}\"", backend.as_str())
    }
}
