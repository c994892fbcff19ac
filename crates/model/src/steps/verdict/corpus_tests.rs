//! The behaviour corpus (tests/fixtures/coach_corpus/corpus.toml, docs/verdicts.md): realistic
//! coach answers through the production parse and rules path, each with the reading it must
//! get, and the two figures issue 21 asks for: false approvals and correct work blocked.

use base::Keyword;
use serde::Deserialize;

use super::{parse_verdict, Reading, TaskCriterion};

const CORPUS: &str = include_str!("../../../../../tests/fixtures/coach_corpus/corpus.toml");
const DOC: &str = include_str!("../../../../../docs/verdicts.md");

#[derive(Deserialize)]
struct Corpus {
    case: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    expected: Reading,
    work: Work,
    answer: String,
}

#[derive(Deserialize, PartialEq, Clone, Copy)]
#[serde(rename_all = "snake_case")]
enum Work {
    Complete,
    Incomplete,
    Unknown,
}

fn task() -> Vec<TaskCriterion> {
    vec![
        TaskCriterion::runner("AC-001"),
        TaskCriterion::coach("AC-002"),
        TaskCriterion::coach("AC-003"),
        TaskCriterion::coach("AC-004"),
    ]
}

fn corpus() -> Vec<Case> {
    toml::from_str::<Corpus>(CORPUS)
        .expect("the corpus parses")
        .case
}

#[test]
fn every_answer_of_the_corpus_is_read_as_expected() {
    let cases = corpus();
    assert!(cases.len() >= 30, "the corpus has {} cases", cases.len());
    let mut wrong = Vec::new();
    let mut false_approvals = 0;
    let mut correct_work_blocked = 0;
    for case in &cases {
        let result = parse_verdict(None, &case.answer, &task());
        let reading = Reading::of(&result);
        if reading != case.expected {
            wrong.push(format!(
                "{}: expected {}, got {} ({result:?})",
                case.name,
                case.expected.as_str(),
                reading.as_str()
            ));
        }
        if reading == Reading::Approved && case.work != Work::Complete {
            false_approvals += 1;
        }
        if case.work == Work::Complete
            && matches!(reading, Reading::Feedback | Reading::BlockedCritical)
        {
            correct_work_blocked += 1;
        }
    }
    println!(
        "coach corpus: {} answers, {false_approvals} false approvals, {correct_work_blocked} \
         correct work blocked",
        cases.len()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert_eq!(false_approvals, 0);
    assert_eq!(correct_work_blocked, 0);
}

#[test]
fn feedback_readings_keep_the_coachs_issues() {
    for case in corpus()
        .iter()
        .filter(|c| matches!(c.expected, Reading::Feedback | Reading::BlockedCritical))
    {
        let verdict = parse_verdict(None, &case.answer, &task()).expect(&case.name);
        let given = case.answer.matches("\"severity\"").count();
        assert_eq!(verdict.issues.len(), given, "{}", case.name);
        assert_eq!(
            verdict.criteria.len(),
            4,
            "{}: every criterion judged",
            case.name
        );
    }
}

#[test]
fn the_docs_table_lists_every_case() {
    for case in corpus() {
        let row = format!("| {} | {} |", case.name, case.expected.as_str());
        assert!(DOC.contains(&row), "docs/verdicts.md lacks the row `{row}`");
    }
}
