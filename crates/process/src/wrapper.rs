//! How a confinement (crate `sandbox`) takes part in starting a child: it may put a program
//! of its own in front (bubblewrap), set variables, and have the child restrict itself between
//! fork and exec (a Landlock ruleset and a seccomp filter, both prepared in the parent so the
//! child only makes system calls).

use std::ffi::OsString;
use std::io;
use std::path::Path;
use std::path::PathBuf;

/// What the child runs between fork and exec. Called once, in the forked child: it may only
/// make async-signal-safe calls (no allocation, no locks).
pub type BeforeExec = Box<dyn FnMut() -> io::Result<()> + Send + Sync>;

/// A program as a confinement runs it.
pub struct Wrapped {
    pub program: PathBuf,
    pub args: Vec<OsString>,
    /// Set in the child's environment over the spec's own.
    pub env: Vec<(String, String)>,
    /// `program` is a wrapper of its own (bwrap) that leads the child's process group and is
    /// spared the polite stop signals, which it passes on.
    pub leads: bool,
    pub before_exec: Option<BeforeExec>,
}

impl Wrapped {
    /// `program args` as they are, unwrapped.
    pub fn plain(program: &Path, args: &[String]) -> Wrapped {
        Wrapped {
            program: program.to_path_buf(),
            args: args.iter().map(OsString::from).collect(),
            env: Vec::new(),
            leads: false,
            before_exec: None,
        }
    }
}

/// A confinement that runs programs (the OS sandbox, crate `sandbox`).
pub trait Wrapper: Send + Sync + std::fmt::Debug {
    /// How `program` with `args` runs confined in `cwd`; `Err` when the confinement cannot be
    /// set up (the child is then not started).
    fn wrap(&self, program: &Path, args: &[String], cwd: &Path) -> io::Result<Wrapped>;
}
