//! The Player/Coach loop end to end through the REAL `claude` and `codex` executables, each
//! talking to a scripted model server on 127.0.0.1 (module `model_server`) instead of a model.
//!
//! Every scenario runs for each CLI whose binary is named by `AUTOBUILD_REAL_CLAUDE` /
//! `AUTOBUILD_REAL_CODEX`; without them each test returns at once with a message, so a plain
//! `cargo test` needs neither the CLIs nor the network. `scripts/e2e-real-agents.sh` installs the
//! pinned versions (scripts/real-agents.versions) and runs this suite:
//!
//! ```text
//! cargo test --locked --test real_agents -- --nocapture --test-threads=1
//! ```

#[path = "../loop_fixture/mod.rs"]
mod loop_fixture;

mod harness;
mod model_server;
mod moves;
mod scenarios;

macro_rules! for_each_cli {
    ($($scenario:ident),* $(,)?) => {
        mod claude {
            $(#[test]
            fn $scenario() {
                crate::scenarios::$scenario(crate::harness::Cli::Claude);
            })*
        }
        mod codex {
            $(#[test]
            fn $scenario() {
                crate::scenarios::$scenario(crate::harness::Cli::Codex);
            })*
        }
    };
}

for_each_cli!(
    player_tools_run_in_the_worktree_and_the_verdict_is_structured,
    the_read_only_coach_cannot_write,
    turn_1_rejected_then_turn_2_approved,
    an_auth_failure_stops_the_run_with_the_fix,
    a_rate_limit_is_retried_and_the_run_succeeds,
    doctor_sees_the_cli_and_its_credentials,
);
