//! JUnit XML reports: `<testsuites>` (or a lone `<testsuite>`) holding `<testsuite>`s, nested
//! or not, holding `<testcase classname=".." name="..">`s. A test case with a `<failure>` child
//! failed, one with `<error>` errored, one with `<skipped>` was skipped (an xfail when pytest
//! marks it `type="pytest.xfail"`), and one with none of them passed; everything else inside
//! a test case (output, nextest's `<flakyFailure>` of a retried test) is not read.
//!
//! The counts are the test cases themselves, not the suites' `tests=`/`failures=` attributes,
//! which the dialects fill differently (jest-junit leaves todos out of `tests=`, pytest counts
//! xfails as skipped). Cases are named `classname::name`, or `name` alone when the class name
//! is empty or the same (jest-junit repeats the name). Read from pytest's `--junitxml`,
//! jest-junit, vitest's `junit` reporter, cargo-nextest's `[profile.*.junit]` and
//! go-junit-report's reports. pytest's non-strict xpasses and jest-junit's todos look like
//! passes there, and nextest leaves skipped tests out.

use quick_xml::events::{BytesStart, Event};
use quick_xml::XmlVersion;

use super::{Cases, Outcome, Reader, TestResults};

/// Why a JUnit XML report cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JunitError {
    #[error("the report is empty")]
    Empty,
    #[error("invalid XML at byte {at}: {why}")]
    Xml { at: u64, why: String },
    #[error("the XML's root element is `<{0}>`, not JUnit's `<testsuites>` or `<testsuite>`")]
    NotJunit(String),
    #[error("the report has no `<testsuites>` or `<testsuite>` element")]
    NoSuites,
    #[error("the report ends inside `<{0}>`: it is cut off")]
    Truncated(String),
    #[error("invalid XML attribute: {0}")]
    Attribute(String),
}

/// The test cases of the JUnit XML report `xml`.
pub fn read_junit(xml: &str) -> Result<TestResults, JunitError> {
    let body = xml.trim_start_matches('\u{feff}').trim_start();
    if body.is_empty() {
        return Err(JunitError::Empty);
    }
    let mut reader = quick_xml::Reader::from_str(body);
    let mut cases = Cases::default();
    // Open elements, by local name.
    let mut open: Vec<String> = Vec::new();
    // The open `<testcase>`'s id and outcome so far.
    let mut case: Option<(String, Outcome)> = None;
    let mut root_seen = false;
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event().map_err(|e| JunitError::Xml {
            at,
            why: e.to_string(),
        })?;
        match event {
            Event::Start(e) => {
                let name = element(&e, !root_seen)?;
                root_seen = true;
                on_element(&e, &name, &mut case, &mut cases)?;
                open.push(name);
            }
            Event::Empty(e) => {
                let name = element(&e, !root_seen)?;
                root_seen = true;
                on_element(&e, &name, &mut case, &mut cases)?;
                if name == "testcase" {
                    finish(&mut case, &mut cases);
                }
            }
            Event::End(_) => {
                let closed = open.pop();
                if closed.as_deref() == Some("testcase") {
                    finish(&mut case, &mut cases);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if let Some(name) = open.pop() {
        return Err(JunitError::Truncated(name));
    }
    if !root_seen {
        return Err(JunitError::NoSuites);
    }
    let counts = cases.counts;
    Ok(cases.results(Reader::Junit, counts, true))
}

/// The local name of `e`, checked to be a JUnit root when it is the root.
fn element(e: &BytesStart<'_>, is_root: bool) -> Result<String, JunitError> {
    let name = e.local_name().as_ref().to_string();
    if is_root && name != "testsuites" && name != "testsuite" {
        return Err(JunitError::NotJunit(name));
    }
    Ok(name)
}

fn on_element(
    e: &BytesStart<'_>,
    name: &str,
    case: &mut Option<(String, Outcome)>,
    cases: &mut Cases,
) -> Result<(), JunitError> {
    match name {
        "testcase" => {
            // A test case inside an unclosed one: the outer one ends here.
            finish(case, cases);
            let class = attribute(e, "classname")?.unwrap_or_default();
            let test = attribute(e, "name")?.unwrap_or_default();
            let (class, test) = (class.trim(), test.trim());
            let id = if class.is_empty() || class == test {
                test.to_string()
            } else {
                format!("{class}::{test}")
            };
            *case = Some((id, Outcome::Passed));
        }
        "failure" | "error" | "skipped" => {
            if let Some((_, outcome)) = case.as_mut() {
                let this = match name {
                    "failure" => Outcome::Failed,
                    "error" => Outcome::Error,
                    _ if attribute(e, "type")?.as_deref() == Some("pytest.xfail") => {
                        Outcome::XFailed
                    }
                    _ => Outcome::Skipped,
                };
                // An error outweighs a failure, which outweighs a skip.
                if rank(this) > rank(*outcome) {
                    *outcome = this;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn rank(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Error => 4,
        Outcome::Failed => 3,
        Outcome::Skipped | Outcome::XFailed => 2,
        _ => 1,
    }
}

fn finish(case: &mut Option<(String, Outcome)>, cases: &mut Cases) {
    if let Some((id, outcome)) = case.take() {
        cases.push(&id, outcome);
    }
}

fn attribute(e: &BytesStart<'_>, name: &str) -> Result<Option<String>, JunitError> {
    for attr in e.attributes() {
        let attr = attr.map_err(|e| JunitError::Attribute(e.to_string()))?;
        if attr.key.local_name().as_ref() == name {
            let value = attr
                .normalized_value(XmlVersion::Implicit1_0)
                .map_err(|e| JunitError::Attribute(e.to_string()))?;
            return Ok(Some(value.into_owned()));
        }
    }
    Ok(None)
}
