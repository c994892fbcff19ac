//! Why a coach's answer is not a usable verdict, phrased so it can be sent back to the coach.

use std::fmt;

use super::Origin;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    #[error(
        "the final message contains no JSON verdict: there is neither a ```json block nor a JSON \
         object (a decision stated in prose, such as \"IMPLEMENTATION_APPROVED\", is not a verdict)"
    )]
    Missing,
    /// The only verdict is inside the answer's reasoning (`<think>…</think>`): a draft.
    #[error(
        "the final message has a verdict only inside its reasoning (a `<think>`, `<thinking>` or \
         `<reasoning>` block, or before a closing `</think>`), which is a draft, not an answer; \
         write the verdict after the reasoning"
    )]
    OnlyInReasoning,
    /// An object of the verdict gives a key twice: what it says depends on the reader.
    #[error(
        "the {origin} gives the key `{key}` more than once, so it says two things; write each \
         key once"
    )]
    DuplicateKey { origin: Origin, key: String },
    /// The answer holds the prompt's example verdict, not a review.
    #[error(
        "the {origin} is the prompt's example verdict (its placeholder texts are still there), \
         not a review of this work; write your own summary, issues and evidence"
    )]
    EchoedExample { origin: Origin },
    #[error("the {origin} is not valid JSON: {message}")]
    Syntax { origin: Origin, message: String },
    #[error("the {origin} must be a JSON object, but it is {found}")]
    NotAnObject { origin: Origin, found: &'static str },
    #[error("the {origin} does not follow the verdict schema at `{path}`: {message}")]
    Schema {
        origin: Origin,
        path: String,
        message: String,
    },
    /// Several blocks with a `decision` that disagree: one of them is an example, or the coach
    /// changed its mind; either way nobody can tell which one it meant.
    #[error(
        "the final message holds {} verdicts that disagree ({}); a quoted or example verdict \
         counts as one, so write exactly one block with a `decision`",
        .decisions.len(),
        .decisions.iter().map(|(origin, decision)| format!("the {origin} says `{decision}`"))
            .collect::<Vec<_>>().join(", ")
    )]
    Ambiguous { decisions: Vec<(Origin, String)> },
    /// Evidence the runner checked against the repository and found wanting.
    #[error("the verdict's evidence does not hold: {}", join_problems(.problems))]
    Evidence { problems: Vec<Problem> },
    #[error("the verdict in the {origin} is inconsistent: {}", join_problems(.problems))]
    Rejected {
        origin: Origin,
        problems: Vec<Problem>,
    },
}

/// A rule beyond the schema that a verdict broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    BlankSummary,
    BlankIssueDescription {
        index: usize,
    },
    UnknownCriterion {
        id: String,
        known: Vec<String>,
    },
    DuplicateCriterion {
        id: String,
    },
    /// `approve` while criteria the coach judges are `not_verified` or left out.
    ApprovedUnverified {
        ids: Vec<String>,
    },
    /// `feedback` with no issue and no criterion short of `met`: nothing for the player to do.
    NothingActionable,
    /// `feedback` whose issues are all `should_fix` or `nice_to_have` (a quality rubric's
    /// findings) with every criterion met: such findings never block approval on their own.
    OnlyNonBlocking,
    /// A `met` criterion whose evidence cites only tests the repository does not have.
    CitedMissingTests {
        id: String,
        names: Vec<String>,
    },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::BlankSummary => f.write_str("`summary` is blank"),
            Problem::BlankIssueDescription { index } => {
                write!(f, "`issues[{index}].description` is blank")
            }
            Problem::UnknownCriterion { id, known } if known.is_empty() => write!(
                f,
                "criterion `{id}` is not a criterion of this task, which has no acceptance \
                 criteria (`criteria` must be empty)"
            ),
            Problem::UnknownCriterion { id, known } => write!(
                f,
                "criterion `{id}` is not a criterion of this task (its criteria are {})",
                quoted_list(known)
            ),
            Problem::DuplicateCriterion { id } => {
                write!(f, "criterion `{id}` is judged more than once")
            }
            Problem::ApprovedUnverified { ids } => write!(
                f,
                "`decision` is `approve` but {} not judged `met` (`not_verified` or left out); \
                 criteria without a verify command are yours to judge: check each (read the \
                 code, run it) and answer `met` or `not_met`, or answer `feedback` saying what \
                 the player must do",
                match ids.as_slice() {
                    [one] => format!("criterion `{one}` is"),
                    _ => format!("criteria {} are", quoted_list(ids)),
                }
            ),
            Problem::NothingActionable => f.write_str(
                "`decision` is `feedback` but the verdict gives the player nothing to act on: no \
                 issue, and no criterion `not_met` or `not_verified`; if the work is done answer \
                 `approve`, otherwise list what must change as issues",
            ),
            Problem::CitedMissingTests { id, names } => write!(
                f,
                "criterion `{id}` is `met` by evidence citing {}, which no test file of the \
                 repository has; cite the tests that check it, or judge it another way (`not_met` \
                 or `not_verified` if no test checks it)",
                quoted_list(names)
            ),
            Problem::OnlyNonBlocking => f.write_str(
                "`decision` is `feedback` but every issue is `should_fix` or `nice_to_have`, \
                 which never block approval, and no criterion is short of `met`; answer \
                 `approve` keeping them as notes, or mark as `must_fix` the issue that breaks a \
                 criterion or requirement (and say which)",
            ),
        }
    }
}

fn join_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

pub(super) fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
