//! The gate: whether a turn is approved, as a typed predicate over runner-produced facts.
//!
//! Approval never depends on text an agent wrote, only on what the runner observed (did the
//! player process succeed, what changed, which checks passed) and on the schema-validated coach
//! verdict. Some rules hold whatever the profile says: a failed player turn, a read-only step
//! that changed the worktree, or an invalid coach verdict can never be approved. The rest are
//! the profile's requirements. Every unmet requirement is reported, not just the first, so the
//! next turn's feedback is complete.

use std::fmt;

use base::Keyword;
use serde::{Deserialize, Serialize};

use crate::profile::Requirement;
use crate::steps::check::{CheckResult, CheckStatus, FailureClass};
use crate::steps::coverage::{CoverageResult, Measurement, UncoveredFile};
use crate::steps::verdict::{CriterionStatus, CriterionVerdict, Verdict};
use crate::workflow::kinds::GateOutputs;

/// Everything the gate judges, gathered by the engine from the turn's records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateInput {
    pub requirements: Vec<Requirement>,
    pub player: PlayerFacts,
    /// The project checks that ran this turn.
    pub checks: Vec<CheckResult>,
    /// Every acceptance criterion of the task, with its runner result when it is executable.
    pub criteria: Vec<CriterionFacts>,
    /// `None` when no coach ran this turn.
    pub verdict: Option<Verdict>,
    pub coach_ran: bool,
    /// What agents changed outside their scope this turn (and the runner reverted): a
    /// read-only role's worktree edits, the shared git directory, other branches and tags.
    pub scope_violation: Option<Vec<String>>,
    /// The reviewer roles whose verdict did not approve, in step order: the gate's reasons
    /// name them ("the security reviewer did not approve").
    #[serde(default)]
    pub objecting: Vec<String>,
    /// The coverage command's run and its report this turn, when the verify step measured it.
    #[serde(default)]
    pub coverage: Option<CoverageResult>,
}

/// What the runner computed about the player step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlayerFacts {
    pub succeeded: bool,
    /// The task branch differs from its base, or this turn changed something (the runner's
    /// own diffs, never the agent's claim): what the `changes` requirement asks for. A turn
    /// that rightly changes nothing on a branch that holds the work passes it.
    pub changed: bool,
    pub failure: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionFacts {
    pub id: String,
    pub text: String,
    pub verify: Option<String>,
    /// The result of the `verify` command, when it ran.
    pub result: Option<CheckResult>,
}

/// The gate's decision on a turn — the one shape of its approval: the gate record
/// (`gate_turn_N.json`) holds it, and the gate step's outputs ([`GateOutputs`]), the turn's
/// summary and the facts stall detection compares are derived from it. Made by [`evaluate`]
/// (through [`GateDecision::new`]), so `approved` is exactly "nothing is unmet".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GateDecision {
    pub approved: bool,
    /// One human-readable line per unmet requirement; empty when approved.
    pub reasons: Vec<String>,
    /// Absent from gate records written before the record held the decision.
    #[serde(default)]
    pub unmet: Vec<UnmetRequirement>,
}

impl GateDecision {
    /// The decision that these requirements are unmet (approved when there are none).
    pub fn new(unmet: Vec<UnmetRequirement>) -> GateDecision {
        GateDecision {
            approved: unmet.is_empty(),
            reasons: unmet.iter().map(UnmetRequirement::to_string).collect(),
            unmet,
        }
    }

    /// What the gate step publishes to expressions: the decision and how many reasons.
    pub fn outputs(&self) -> GateOutputs {
        GateOutputs {
            approved: self.approved,
            unmet: self.reasons.len(),
        }
    }
}

/// One requirement that does not hold; its `Display` is the reason shown to users and agents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UnmetRequirement {
    PlayerFailed {
        failure: Option<String>,
    },
    ScopeViolation {
        reverted: Vec<String>,
    },
    CoachOutputInvalid {
        problem: String,
    },
    CheckFailed {
        name: String,
        status: CheckStatus,
        exit_code: Option<i32>,
        failure_class: Option<FailureClass>,
    },
    CheckNotRun {
        name: String,
    },
    Criterion {
        id: String,
        shortfall: Shortfall,
    },
    CoachNotRun,
    CoachNoVerdict,
    CoachRequestedChanges {
        must_fix: usize,
        /// The reviewer roles that did not approve (empty in records written before it was
        /// kept: "the coach").
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        by: Vec<String>,
    },
    NoChanges,
    /// The profile sets a coverage minimum and the report could not say whether it holds.
    CoverageNotMeasured {
        reason: String,
    },
    CoverageBelow {
        minimum: u8,
        covered: u64,
        total: u64,
        /// The uncovered lines of the files the task branch changed.
        uncovered: Vec<UncoveredFile>,
        #[serde(default)]
        more_files: usize,
    },
}

/// Why one acceptance criterion is not met.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "by", rename_all = "snake_case")]
pub enum Shortfall {
    VerifyFailed {
        status: CheckStatus,
        exit_code: Option<i32>,
    },
    VerifyNotRun,
    CoachNotMet {
        evidence: String,
    },
}

impl fmt::Display for UnmetRequirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnmetRequirement::PlayerFailed {
                failure: Some(failure),
            } => {
                write!(f, "the player's turn failed: {failure}")
            }
            UnmetRequirement::PlayerFailed { failure: None } => {
                f.write_str("the player's turn failed")
            }
            UnmetRequirement::ScopeViolation { reverted } if reverted.is_empty() => f.write_str(
                "an agent changed what its role may not change; the runner reverted the changes",
            ),
            UnmetRequirement::ScopeViolation { reverted } => write!(
                f,
                "an agent changed what its role may not change; the runner reverted {}",
                reverted.join(", ")
            ),
            UnmetRequirement::CoachOutputInvalid { problem } => f.write_str(problem),
            UnmetRequirement::CheckFailed {
                name,
                status,
                exit_code,
                failure_class,
            } => write!(
                f,
                "required check `{name}` {}",
                outcome_with_class(*status, *exit_code, *failure_class)
            ),
            UnmetRequirement::CheckNotRun { name } => write!(
                f,
                "required check `{name}` did not run: it is neither configured nor detected, or \
                 the verify step leaves it out; configure it in .autobuild/config.toml as \
                 `[checks.{name}]` with `cmd = \"...\"`"
            ),
            UnmetRequirement::Criterion { id, shortfall } => match shortfall {
                Shortfall::VerifyFailed { status, exit_code } => write!(
                    f,
                    "criterion {id} is not met: its verify command {}",
                    outcome(*status, *exit_code)
                ),
                Shortfall::VerifyNotRun => write!(
                    f,
                    "criterion {id} is not verified: its verify command did not run this turn"
                ),
                Shortfall::CoachNotMet { evidence } if evidence.trim().is_empty() => {
                    write!(f, "criterion {id} is not met according to the coach")
                }
                Shortfall::CoachNotMet { evidence } => write!(
                    f,
                    "criterion {id} is not met according to the coach: {}",
                    evidence.trim()
                ),
            },
            UnmetRequirement::CoachNotRun => f.write_str(
                "the profile requires a coach verdict but no coach step ran (use a profile \
                 without `coach` or add a coach step to the workflow)",
            ),
            UnmetRequirement::CoachNoVerdict => {
                f.write_str("the coach ran but returned no verdict")
            }
            UnmetRequirement::CoachRequestedChanges { must_fix, by } => {
                let who = match by.as_slice() {
                    [] => "the coach".to_string(),
                    [one] if one == "coach" => "the coach".to_string(),
                    [one] => format!("the {one} reviewer"),
                    many => format!("the {} reviewers", many.join(" and ")),
                };
                match must_fix {
                    0 => write!(f, "{who} did not approve"),
                    n => write!(
                        f,
                        "{who} did not approve ({n} must-fix issue{})",
                        if *n == 1 { "" } else { "s" }
                    ),
                }
            }
            UnmetRequirement::NoChanges => {
                f.write_str("the task branch holds no changes against its base")
            }
            UnmetRequirement::CoverageNotMeasured { reason } => {
                write!(f, "line coverage could not be measured: {reason}")
            }
            UnmetRequirement::CoverageBelow {
                minimum,
                covered,
                total,
                uncovered,
                more_files,
            } => {
                write!(
                    f,
                    "line coverage is {}, below the required {minimum}%",
                    crate::steps::coverage::describe(*covered, *total)
                )?;
                if uncovered.is_empty() && *more_files == 0 {
                    f.write_str(
                        "; the files the branch changed have no uncovered lines, so the \
                         missing coverage is in other files of the report",
                    )
                } else {
                    write!(
                        f,
                        "; uncovered lines in the files the branch changed: {}",
                        crate::steps::coverage::uncovered_text(uncovered, *more_files)
                    )
                }
            }
        }
    }
}

/// `failed (exit 1)`, `timed out`, `could not be run`.
pub fn outcome(status: CheckStatus, exit_code: Option<i32>) -> String {
    outcome_with_class(status, exit_code, None)
}

/// [`outcome`] with the failure class: `failed (exit 1, infrastructure failure)`.
fn outcome_with_class(
    status: CheckStatus,
    exit_code: Option<i32>,
    class: Option<FailureClass>,
) -> String {
    let verb = match (status, exit_code) {
        (CheckStatus::Passed, _) => "passed",
        // The runner's own judgement (a red witness whose tests already pass, the base
        // oracle, a criterion that ran no test): "failed (exit 0)" would read as a paradox.
        (CheckStatus::Failed, Some(0)) => "exited 0 but the runner's verification refused it",
        (CheckStatus::Failed, _) => "failed",
        (CheckStatus::TimedOut, _) => "timed out",
        (CheckStatus::Error, _) => "could not be run",
    };
    let exit = exit_code
        .filter(|code| status == CheckStatus::Failed && *code != 0)
        .map(|code| format!("exit {code}"));
    let class = class.map(|class| format!("{} failure", class.as_str()));
    let details: Vec<String> = exit.into_iter().chain(class).collect();
    if details.is_empty() {
        verb.to_string()
    } else {
        format!("{verb} ({})", details.join(", "))
    }
}

/// Judges one turn: the rules that always hold first, then the profile's requirements in the
/// order the profile lists them.
pub fn evaluate(input: &GateInput) -> GateDecision {
    let mut unmet = Vec::new();
    if !input.player.succeeded {
        unmet.push(UnmetRequirement::PlayerFailed {
            failure: input.player.failure.clone(),
        });
    }
    if let Some(reverted) = &input.scope_violation {
        unmet.push(UnmetRequirement::ScopeViolation {
            reverted: reverted.clone(),
        });
    }
    if let Some(problem) = input.verdict.as_ref().and_then(Verdict::invalid_output) {
        unmet.push(UnmetRequirement::CoachOutputInvalid {
            problem: problem.to_string(),
        });
    }
    for requirement in &input.requirements {
        for found in requirement_shortfalls(input, requirement) {
            if !unmet.contains(&found) {
                unmet.push(found);
            }
        }
    }
    GateDecision::new(unmet)
}

fn requirement_shortfalls(input: &GateInput, requirement: &Requirement) -> Vec<UnmetRequirement> {
    match requirement {
        Requirement::Check(name) => {
            let mut runs = input.checks.iter().filter(|check| &check.name == name);
            let Some(first) = runs.next() else {
                return vec![UnmetRequirement::CheckNotRun { name: name.clone() }];
            };
            std::iter::once(first)
                .chain(runs)
                .find(|check| !check.passed())
                .map(|check| UnmetRequirement::CheckFailed {
                    name: name.clone(),
                    status: check.status,
                    exit_code: check.exit_code,
                    failure_class: check.failure_class,
                })
                .into_iter()
                .collect()
        }
        Requirement::Criteria => unmet_criteria(input)
            .into_iter()
            .map(|(id, shortfall)| UnmetRequirement::Criterion { id, shortfall })
            .collect(),
        Requirement::Coach => match &input.verdict {
            None if input.coach_ran => vec![UnmetRequirement::CoachNoVerdict],
            None => vec![UnmetRequirement::CoachNotRun],
            // Already reported by the rule that always holds.
            Some(verdict) if verdict.invalid_output().is_some() => Vec::new(),
            Some(verdict) if !verdict.approved() => vec![UnmetRequirement::CoachRequestedChanges {
                must_fix: verdict.must_fix_count(),
                by: input.objecting.clone(),
            }],
            Some(_) => Vec::new(),
        },
        Requirement::Changes if !input.player.changed => vec![UnmetRequirement::NoChanges],
        Requirement::Changes => Vec::new(),
        Requirement::Coverage { minimum } => {
            coverage_shortfall(input, *minimum).into_iter().collect()
        }
    }
}

/// Why the coverage minimum does not hold, if it does not: no measurement is never a pass.
fn coverage_shortfall(input: &GateInput, minimum: u8) -> Option<UnmetRequirement> {
    let Some(result) = &input.coverage else {
        return Some(UnmetRequirement::CoverageNotMeasured {
            reason: "the coverage command did not run this turn (a `verify` step runs it)".into(),
        });
    };
    match &result.measurement {
        Measurement::NotMeasured { reason } => Some(UnmetRequirement::CoverageNotMeasured {
            reason: reason.clone(),
        }),
        // Measured although the command failed (a failing test of a `pytest --cov`): the
        // failure stands, and its output is the player's to read.
        Measurement::Measured(_) if !result.check.passed() => Some(UnmetRequirement::CheckFailed {
            name: result.check.name.clone(),
            status: result.check.status,
            exit_code: result.check.exit_code,
            failure_class: result.check.failure_class,
        }),
        Measurement::Measured(measured) if measured.meets(minimum) => None,
        Measurement::Measured(measured) => Some(UnmetRequirement::CoverageBelow {
            minimum,
            covered: measured.covered,
            total: measured.total,
            uncovered: measured.uncovered_changed.clone(),
            more_files: measured.more_files,
        }),
    }
}

/// Every shortfall of every criterion, in task order: an executable criterion whose command did
/// not pass (or did not run), and any criterion the coach marked `not_met`. A criterion can
/// have both.
pub fn unmet_criteria(input: &GateInput) -> Vec<(String, Shortfall)> {
    let mut unmet = Vec::new();
    for criterion in &input.criteria {
        if criterion.verify.is_some() {
            match &criterion.result {
                None => unmet.push((criterion.id.clone(), Shortfall::VerifyNotRun)),
                Some(result) if !result.passed() => unmet.push((
                    criterion.id.clone(),
                    Shortfall::VerifyFailed {
                        status: result.status,
                        exit_code: result.exit_code,
                    },
                )),
                Some(_) => {}
            }
        }
        if let Some(judged) = coach_judgement(input, &criterion.id) {
            if judged.status == CriterionStatus::NotMet {
                unmet.push((
                    criterion.id.clone(),
                    Shortfall::CoachNotMet {
                        evidence: judged.evidence.clone(),
                    },
                ));
            }
        }
    }
    unmet
}

/// How many criteria are met this turn: an executable one when its command passed, any other
/// when the coach marked it `met`; either way not when the coach marked it `not_met`. The stall
/// detector watches this number for progress.
pub fn criteria_met(input: &GateInput) -> usize {
    input
        .criteria
        .iter()
        .filter(|criterion| {
            let judged = coach_judgement(input, &criterion.id).map(|judged| judged.status);
            if judged == Some(CriterionStatus::NotMet) {
                return false;
            }
            match (&criterion.verify, &criterion.result) {
                (Some(_), Some(result)) => result.passed(),
                (Some(_), None) => false,
                (None, _) => judged == Some(CriterionStatus::Met),
            }
        })
        .count()
}

fn coach_judgement<'a>(input: &'a GateInput, id: &str) -> Option<&'a CriterionVerdict> {
    input
        .verdict
        .as_ref()
        .and_then(|verdict| verdict.criterion(id))
}

/// Builders for gate inputs, shared by the gate, feedback and stall tests.
#[cfg(test)]
#[path = "gate/fixtures_tests.rs"]
pub(crate) mod fixtures;

#[cfg(test)]
mod tests;
