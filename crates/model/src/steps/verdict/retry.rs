//! The one corrective retry: the original prompt, the coach's previous answer (bounded), which
//! block was read and why it could not be used, and a filled example with this task's criterion
//! ids — shorter and clearer than the whole schema.

use serde_json::json;

use super::{example, TaskCriterion, VerdictError};

/// How much of the previous answer is shown (its end, where the verdict is).
const PREVIOUS_ANSWER_CHARS: usize = 2000;

/// The prompt for the retry. `previous` is the coach's previous answer (its final message, or
/// its structured output as JSON).
pub fn retry_prompt(
    original_prompt: &str,
    error: &VerdictError,
    previous: &str,
    criteria: &[TaskCriterion],
) -> String {
    let runner: Vec<&str> = criteria
        .iter()
        .filter(|c| c.runner_verified)
        .map(|c| c.id.as_str())
        .collect();
    let runner_note = match runner.as_slice() {
        [] => String::new(),
        ids => format!(
            " ({} {} checked by the runner's own verify command; `not_verified` there does not \
             block)",
            ids.join(", "),
            if ids.len() == 1 { "is" } else { "are" }
        ),
    };
    format!(
        "{original}\n\n---\n\nYour previous answer could not be used: {error}.\n\n\
         Your previous answer{shown}:\n\n~~~text\n{previous}\n~~~\n\n\
         Answer again. End your answer with exactly one ```json block holding your verdict and \
         no other block with a `decision` (not even an example). Fill it in like this:\n\n\
         ```json\n{example}\n```\n\n\
         `decision` is `approve` or `feedback`; an issue's `severity` is `critical` (the work \
         must stop for a person), `must_fix` (blocks approval), `should_fix` or `nice_to_have`; \
         a criterion's `status` is `met`, `not_met` or `not_verified`. Judge every criterion by \
         its id. Answer `approve` only when no issue is `critical` or `must_fix` and every \
         criterion you judge is `met`{runner_note}. With no issues write `\"issues\": []`.\n",
        original = original_prompt.trim_end(),
        shown = shown_note(previous),
        previous = tail(previous.trim(), PREVIOUS_ANSWER_CHARS).replace("~~~", "~ ~ ~"),
        example = example(criteria),
    )
}

fn shown_note(previous: &str) -> String {
    let total = previous.trim().chars().count();
    if total == 0 {
        " was empty".to_string()
    } else if total > PREVIOUS_ANSWER_CHARS {
        format!(" (its last {PREVIOUS_ANSWER_CHARS} of {total} characters)",)
    } else {
        String::new()
    }
}

fn tail(text: &str, chars: usize) -> &str {
    let count = text.chars().count();
    if count <= chars {
        return text;
    }
    let start = text
        .char_indices()
        .nth(count - chars)
        .map_or(0, |(index, _)| index);
    &text[start..]
}

/// A filled verdict with this task's criterion ids.
fn example(criteria: &[TaskCriterion]) -> String {
    let criteria: Vec<_> = criteria
        .iter()
        .map(|c| json!({"id": c.id, "status": "met", "evidence": example::RETRY_EVIDENCE}))
        .collect();
    let example = json!({
        "decision": "feedback",
        "summary": example::RETRY_SUMMARY,
        "issues": [{
            "severity": "must_fix",
            "category": "correctness",
            "description": example::RETRY_DESCRIPTION,
            "location": "path/to/file:12",
            "suggestion": example::RETRY_SUGGESTION
        }],
        "criteria": criteria,
    });
    serde_json::to_string_pretty(&example).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::verdict::{Origin, VERDICT_SCHEMA};

    #[test]
    fn the_retry_shows_the_answer_the_reason_and_a_filled_example() {
        let error = VerdictError::Syntax {
            origin: Origin::FencedBlock { index: 2, count: 2 },
            message: "EOF while parsing".into(),
        };
        let criteria = [
            TaskCriterion::runner("AC-001"),
            TaskCriterion::coach("AC-002"),
        ];
        let prompt = retry_prompt(
            "Review TASK-001.\n",
            &error,
            "Looks good.\n```json\n{",
            &criteria,
        );
        assert!(prompt.starts_with("Review TASK-001.\n\n---"), "{prompt}");
        assert!(
            prompt
                .contains("the last ```json block (2 of 2) of the final message is not valid JSON"),
            "{prompt}"
        );
        assert!(
            prompt.contains("~~~text\nLooks good.\n```json\n{\n~~~"),
            "{prompt}"
        );
        assert!(prompt.contains("\"id\": \"AC-001\""), "{prompt}");
        assert!(prompt.contains("\"id\": \"AC-002\""), "{prompt}");
        assert!(
            prompt.contains("AC-001 is checked by the runner"),
            "{prompt}"
        );
        assert!(
            !prompt.contains(VERDICT_SCHEMA.trim_end()),
            "the schema is not repeated"
        );
    }

    #[test]
    fn a_long_answer_is_shown_by_its_end() {
        let long = format!("{}THE END", "x".repeat(5000));
        let prompt = retry_prompt("P", &VerdictError::Missing, &long, &[]);
        assert!(
            prompt.contains("its last 2000 of 5007 characters"),
            "{prompt}"
        );
        assert!(prompt.contains("THE END"));
        assert!(!prompt.contains(&"x".repeat(2001)));
        let empty = retry_prompt("P", &VerdictError::Missing, "  ", &[]);
        assert!(empty.contains("Your previous answer was empty"), "{empty}");
    }
}
