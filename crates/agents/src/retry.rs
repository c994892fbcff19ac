//! The one retry loop of the process adapters: run an attempt, and while its failure is
//! transient (a rate limit, an overloaded server) and a pause is left in the adapter's list
//! and the role's `timeout` still leaves time, pause and run another. Each adapter says what
//! an attempt is, whether it is worth retrying and what to keep of it before the next one; how
//! long to wait, how the deadline is shared and how a Ctrl-C during a pause ends it are here.
//! (The native adapters retry one HTTP request inside a conversation, not the whole
//! invocation; they share [`super::pause`] and [`super::retry_fits`].)

use std::time::{Duration, Instant};

use super::{pause, retry_fits, role_for_attempt, AgentError, AgentRequest};
use process::CancelToken;

/// Every attempt of one invocation, the last one apart.
#[derive(Debug)]
pub struct Attempts<T> {
    /// The attempts before the last, in order.
    pub earlier: Vec<T>,
    pub last: T,
    /// Cancelled during the pause after `last`.
    pub cancelled: bool,
    pub started: Instant,
}

impl<T> Attempts<T> {
    /// How many attempts ran.
    pub fn count(&self) -> usize {
        self.earlier.len() + 1
    }
}

/// Runs `attempt` (given the request with the role's remaining time) once, then again after
/// each of `delays` as long as `transient` says the last one is worth retrying and the role's
/// timeout leaves room. `before_retry(last, number, delay)` runs before each pause (to log and
/// to move the attempt's files aside). `Err` only when an attempt could not start.
pub fn with_retries<T>(
    req: &AgentRequest<'_>,
    delays: &[Duration],
    cancel: &CancelToken,
    mut attempt: impl FnMut(&AgentRequest<'_>) -> Result<T, AgentError>,
    transient: impl Fn(&T) -> bool,
    mut before_retry: impl FnMut(&T, usize, Duration),
) -> Result<Attempts<T>, AgentError> {
    let started = Instant::now();
    let mut earlier = Vec::new();
    loop {
        let role = role_for_attempt(req.role, started);
        let last = attempt(&AgentRequest {
            role: &role,
            ..*req
        })?;
        let delay = delays
            .get(earlier.len())
            .copied()
            .filter(|delay| transient(&last) && retry_fits(req.role, started, *delay));
        let Some(delay) = delay else {
            return Ok(Attempts {
                earlier,
                last,
                cancelled: false,
                started,
            });
        };
        before_retry(&last, earlier.len() + 1, delay);
        if !pause(delay, cancel) {
            return Ok(Attempts {
                earlier,
                last,
                cancelled: true,
                started,
            });
        }
        earlier.push(last);
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use model::workflow::model::Role;

    fn request<'a>(role: &'a Role) -> AgentRequest<'a> {
        AgentRequest {
            role_name: "player",
            role,
            prompt: "",
            worktree: Path::new("."),
            env: &[],
            run_dir: Path::new("."),
            prompt_file: Path::new("prompt.md"),
            transcript_path: Path::new("t.log"),
            task_id: "TASK-1",
            turn: 1,
            wants_verdict: false,
            verdict_schema: "",
            pricing: None,
            sandbox: None,
        }
    }

    fn role() -> Role {
        serde_json::from_value(serde_json::json!({"agent": "command", "prompt": "x.md"})).unwrap()
    }

    #[test]
    fn a_transient_failure_is_retried_once_per_delay_and_then_given_up() {
        let role = role();
        let delays = [Duration::ZERO, Duration::ZERO];
        let mut numbers = Vec::new();
        let mut runs = 0;
        let attempts = with_retries(
            &request(&role),
            &delays,
            &CancelToken::new(),
            |_| {
                runs += 1;
                Ok(runs)
            },
            |_| true,
            |_, number, _| numbers.push(number),
        )
        .unwrap();
        assert_eq!(attempts.count(), 3);
        assert_eq!((attempts.earlier, attempts.last), (vec![1, 2], 3));
        assert!(!attempts.cancelled);
        assert_eq!(numbers, [1, 2]);
    }

    #[test]
    fn a_lasting_failure_or_a_success_is_not_retried() {
        let role = role();
        let attempts = with_retries(
            &request(&role),
            &[Duration::ZERO],
            &CancelToken::new(),
            |_| Ok("auth_missing"),
            |_| false,
            |_, _, _| panic!("no retry"),
        )
        .unwrap();
        assert_eq!(attempts.count(), 1);
    }

    #[test]
    fn a_cancel_during_the_pause_ends_with_the_last_attempt() {
        let role = role();
        let cancel = CancelToken::new();
        cancel.cancel();
        let attempts = with_retries(
            &request(&role),
            &[Duration::from_secs(60)],
            &cancel,
            |_| Ok(()),
            |_| true,
            |_, _, _| {},
        )
        .unwrap();
        assert!(attempts.cancelled);
        assert_eq!(attempts.count(), 1);
    }

    #[test]
    fn no_retry_outlives_the_roles_timeout() {
        let mut role = role();
        role.timeout = Some(Duration::from_millis(1));
        let attempts = with_retries(
            &request(&role),
            &[Duration::from_secs(5)],
            &CancelToken::new(),
            |_| Ok(()),
            |_| true,
            |_, _, _| panic!("the pause does not fit"),
        )
        .unwrap();
        assert_eq!(attempts.count(), 1);
    }

    #[test]
    fn an_attempt_that_cannot_start_is_an_error() {
        let role = role();
        let result = with_retries(
            &request(&role),
            &[Duration::ZERO],
            &CancelToken::new(),
            |req| -> Result<(), AgentError> {
                Err(AgentError::NoCommand {
                    role: req.role_name.to_string(),
                })
            },
            |_| true,
            |_, _, _| {},
        );
        assert!(matches!(result, Err(AgentError::NoCommand { .. })));
    }
}
