//! The Player/Coach loop end to end through the REAL `claude` and `codex` executables, each
//! talking to a scripted model server on 127.0.0.1 (module `model_server`) instead of a model.
//!
//! Every scenario exists for each CLI and is `#[ignore]`d, so a plain `cargo test` reports them
//! ignored and needs neither the CLIs nor the network; run with `--ignored`, a scenario needs its
//! CLI's binary named by `AUTOBUILD_REAL_CLAUDE` / `AUTOBUILD_REAL_CODEX` and fails without it. `scripts/e2e-real-agents.sh` installs the
//! pinned versions (scripts/real-agents.versions) and runs this suite:
//!
//! ```text
//! cargo test --locked --test real_agents -- --ignored --nocapture --test-threads=1 [claude:: codex::]
//! ```

#[path = "../loop_fixture/mod.rs"]
mod loop_fixture;
#[path = "../support/mod.rs"]
mod support;

mod harness;
mod model_server;
mod moves;
mod scenarios;

macro_rules! for_each_cli {
    ($($scenario:ident),* $(,)?) => {
        mod claude {
            $(#[test]
            #[ignore = "needs the real claude CLI: scripts/e2e-real-agents.sh"]
            fn $scenario() {
                crate::scenarios::$scenario(crate::harness::Cli::Claude);
            })*
        }
        mod codex {
            $(#[test]
            #[ignore = "needs the real codex CLI: scripts/e2e-real-agents.sh"]
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
