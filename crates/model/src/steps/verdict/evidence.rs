//! Evidence that names tests is checked: a `met` criterion whose evidence cites tests the
//! repository does not have is not evidence. A reviewer that writes "covered by
//! `tests/test_slug.py::test_keeps_eszett`" about a test nobody wrote is asked again, told which
//! names do not exist.
//!
//! What counts as citing a test ([`cited_tests`]): a pytest-style node id (`path::name`), a
//! Rust test path ending in `tests::name`, and a bare identifier that starts with `test_` or
//! `Test` followed by a capital (Go, JUnit). A citation exists when its last name appears in the
//! path or the text of one of the repository's test files ([`missing_citations`]'s `exists`). Evidence that cites no
//! test is not looked at: "read src/slug.py:14" is evidence of another kind.

use super::{CriterionStatus, Problem, Verdict};

base::regexes! {
    CITATION = concat!(
        r"(?:[\w./-]+::)+[A-Za-z_]\w*",
        r"|\btest_\w+",
        r"|\bTest[A-Z]\w*",
    );
}

/// The tests `evidence` cites, each as the name to look for (the last `::` segment).
pub fn cited_tests(evidence: &str) -> Vec<String> {
    let mut names: Vec<String> = CITATION
        .find_iter(evidence)
        .map(|m| {
            let text = m.as_str();
            text.rsplit("::").next().unwrap_or(text).to_string()
        })
        .filter(|name| !name.is_empty())
        .collect();
    names.dedup();
    names
}

/// Whether any `met` criterion of `verdict` cites a test: only then is anything to check.
pub fn cites_tests(verdict: &Verdict) -> bool {
    verdict
        .criteria
        .iter()
        .any(|c| c.status == CriterionStatus::Met && !cited_tests(&c.evidence).is_empty())
}

/// The problems of `verdict`'s `met` criteria whose evidence cites tests none of which
/// `exists`: one [`Problem::CitedMissingTests`] per such criterion.
pub fn missing_citations(verdict: &Verdict, exists: &dyn Fn(&str) -> bool) -> Vec<Problem> {
    verdict
        .criteria
        .iter()
        .filter(|c| c.status == CriterionStatus::Met)
        .filter_map(|c| {
            let cited = cited_tests(&c.evidence);
            (!cited.is_empty() && !cited.iter().any(|name| exists(name))).then(|| {
                Problem::CitedMissingTests {
                    id: c.id.clone(),
                    names: cited,
                }
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::verdict::{CriterionVerdict, Decision};

    #[test]
    fn test_citations_are_found_in_the_forms_runners_name_them() {
        let table: [(&str, &[&str]); 6] = [
            (
                "tests/test_slug.py::test_keeps_eszett passes",
                &["test_keeps_eszett"],
            ),
            ("tests/test_a.py::TestSlug::test_empty", &["test_empty"]),
            ("slug::tests::keeps_eszett in cargo test", &["keeps_eszett"]),
            (
                "TestSlugify and test_empty_title",
                &["TestSlugify", "test_empty_title"],
            ),
            ("read src/slug.py:14, ran it by hand", &[]),
            ("Testing shows it works", &[]),
        ];
        for (evidence, expected) in table {
            assert_eq!(cited_tests(evidence), expected, "{evidence}");
        }
    }

    #[test]
    fn a_met_criterion_citing_only_tests_that_do_not_exist_is_a_problem() {
        let verdict = |evidence: &str, status| Verdict {
            decision: Decision::Approve,
            summary: "s".into(),
            issues: Vec::new(),
            criteria: vec![CriterionVerdict {
                id: "AC-002".into(),
                status,
                evidence: evidence.into(),
            }],
        };
        let exists = |name: &str| name == "test_real";
        let cases = [
            ("covered by test_invented", CriterionStatus::Met, 1),
            (
                "covered by test_invented and test_real",
                CriterionStatus::Met,
                0,
            ),
            ("covered by test_real", CriterionStatus::Met, 0),
            ("read the code", CriterionStatus::Met, 0),
            ("test_invented is missing", CriterionStatus::NotMet, 0),
        ];
        for (evidence, status, problems) in cases {
            let found = missing_citations(&verdict(evidence, status), &exists);
            assert_eq!(found.len(), problems, "{evidence}");
        }
    }
}
