//! The integration test suite: one binary with a module per area, so a change links it once
//! (ARCHITECTURE.md, "Testing"). Shared fixtures are the `*_fixture` and `support` modules.
//! `workflow_user_dir` (process-wide `AUTOBUILD_CONFIG_DIR`) and `real_agents` (needs the
//! real CLIs) stay separate binaries.

#[path = "../claude_fixture/mod.rs"]
mod claude_fixture;
#[path = "../codex_fixture/mod.rs"]
mod codex_fixture;
#[path = "../feature_fixture/mod.rs"]
mod feature_fixture;
#[path = "../git_fixture/mod.rs"]
mod git_fixture;
#[path = "../loop_fixture/mod.rs"]
mod loop_fixture;
#[path = "../native_fixture/mod.rs"]
mod native_fixture;
#[path = "../support/mod.rs"]
mod support;

mod architecture;
mod bench;
mod ci_secrets;
mod claude_adapter;
mod claude_loop;
mod claude_signals;
mod cli;
mod codex_adapter;
mod codex_failures;
mod codex_loop;
mod completions;
mod crash_recovery;
mod crash_worktree;
mod doc_blocks;
mod doctor_checks;
mod dry_run;
mod feature_done;
mod feature_files;
mod feature_hidden;
mod feature_land;
mod feature_recovery;
mod feature_run;
mod git_identity;
mod git_merge;
mod git_snapshot;
mod git_worktree;
mod guardkit_board;
mod html_report;
mod init_cli;
mod input_limits;
mod log_colour;
mod logs_cli;
mod loop_approval;
mod loop_coverage;
mod loop_integrity;
mod loop_judgement;
mod loop_merge;
mod loop_moved;
mod loop_oracle;
mod loop_profile_checks;
mod loop_resume;
mod loop_scenarios;
mod loop_scope;
mod loop_walks;
mod loop_workflows;
mod native_adapter;
mod native_loop;
mod notify;
mod otel;
mod process_command_adapter;
mod process_run;
mod pull_requests;
mod replay;
mod review_classify;
mod run_ids;
mod sandbox_loop;
mod sandbox_process;
mod scaleout_simulation;
mod schemas;
mod task_base;
mod task_fixtures;
mod task_lookup;
mod verify_checks;
mod verify_summary;
mod workflow_corpus;
mod workflow_resolve;
mod worktree_env;
