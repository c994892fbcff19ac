//! Finding the program a child runs before anything is spawned, resolved the way the child's
//! shell would, so a missing program is reported by its own name (not as a failed `exec`, and
//! not as a failure of the sandbox wrapper that would otherwise start it).

use std::path::{Path, PathBuf};

use super::{ProcessError, ProcessSpec};

/// Finds the program the way the child's shell would: a bare name on the child's PATH, a
/// name with a `/` relative to the working directory.
pub(super) fn resolve_program(spec: &ProcessSpec) -> Result<PathBuf, ProcessError> {
    if spec.program.contains('/') {
        let path = spec.cwd.join(&spec.program);
        return match which::which_in(&path, None::<&str>, &spec.cwd) {
            Ok(found) => Ok(found),
            Err(_) if path.is_file() => Err(ProcessError::NotExecutable { path }),
            Err(_) => Err(ProcessError::PathNotFound {
                program: spec.program.clone(),
                path,
            }),
        };
    }
    which::which_in(&spec.program, spec.child_path(), &spec.cwd).map_err(|_| {
        ProcessError::NotFound {
            program: spec.program.clone(),
        }
    })
}

/// Where `program` would be found for a child started in `cwd` with `env` on top of the
/// current environment; used by preflight checks that must fail before any side effect.
pub fn locate(
    program: &str,
    cwd: &Path,
    env: &[(String, String)],
) -> Result<PathBuf, ProcessError> {
    let mut spec = ProcessSpec::new(program, cwd, PathBuf::new());
    spec.env = env.to_vec();
    resolve_program(&spec)
}
