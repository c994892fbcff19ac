//! Deserializing a typed value from a [`Node`] tree, reporting every problem with its position,
//! in one pass.
//!
//! [`decode`] runs the type's serde `Deserialize` against a deserializer of our own over the
//! tree ([`de`]), whose error type ([`problem`]) receives serde's problems as data: the value
//! found and the kind expected, the keys or values allowed. So each problem is located at the
//! node the deserializer was on (or, inside a buffered internally tagged enum, at the node
//! that holds the value it names), worded once in [`problem::Problem::words`], and given a
//! did-you-mean from the list serde passed, with no message text parsed back. A value of the
//! wrong kind, an unknown key and an unknown name are reported and decoding goes on with the
//! rest (a neutral stand-in takes the value's place); a problem only a type's own code finds (a
//! missing key, a failed check) ends the value that contains it, so callers that want such
//! parts reported independently decode them separately (see `workflow::decode`).
//!
//! Why this design (ARCHITECTURE.md, "foundations"): `eserde` collects every error but
//! needs its derive on every nested type, reads JSON text only and hands back serde's English
//! messages; validating against the JSON Schema first would say each rule twice and in a
//! validator's words. The deserializer receives the struct's keys and the enum's values
//! itself, which is all that "unknown key, did you mean" needs.

/// `Deserializer` methods that decode as another method of the same deserializer does, their
/// other arguments unused (for [`de`] and [`substitute`]).
macro_rules! forward {
    ($($method:ident($($arg:ty),*) => $to:ident),* $(,)?) => {$(
        fn $method<V: Visitor<'de>>(self, $(_: $arg,)* visitor: V) -> Result<V::Value, DeError> {
            self.$to(visitor)
        }
    )*};
}

mod de;
pub mod deferred;
pub mod problem;
mod substitute;

use std::path::PathBuf;

use serde::de::DeserializeOwned;

use crate::diagnostic::Diagnostic;
use crate::user_file::tree::Node;

/// Deserializes `T` from `node`; on failure, every problem found, each located.
pub fn decode<T: DeserializeOwned>(node: &Node) -> Result<T, Vec<Diagnostic>> {
    let non_finite: Vec<Diagnostic> = node
        .non_finite_floats()
        .into_iter()
        .map(|n| n.pos.error("not a finite number"))
        .collect();
    if !non_finite.is_empty() {
        return Err(non_finite);
    }
    let _refusals = deferred::activate();
    let cx = de::Cx::default();
    let root = de::De::root(node, &cx);
    // A type's own complaint (not made inside the deserializer) is located here.
    let result = T::deserialize(root).or_else(|error| root.finish(Err(error), true));
    let mut problems = cx.into_problems();
    if let (Ok(value), true) = (result, problems.is_empty()) {
        return Ok(value);
    }
    if problems.is_empty() {
        problems.push(node.pos.error("invalid value"));
    }
    Err(in_file_order(problems))
}

/// Decodes `T`, a table whose every top-level key is optional (config.toml), like [`decode`];
/// when that fails, also decodes each top-level entry alone (the others left out), so that a
/// problem nothing can stand in for (a missing key, which ends the tables around it) in one
/// table hides none of the problems in the others. Problems found twice are reported once.
pub fn decode_tables<T: DeserializeOwned>(node: &Node) -> Result<T, Vec<Diagnostic>> {
    let mut problems = match decode::<T>(node) {
        Ok(value) => return Ok(value),
        Err(problems) => problems,
    };
    let Some(table) = node.as_table() else {
        return Err(problems);
    };
    for key in table.keys() {
        let mut alone = node.clone();
        if let Some(entries) = alone.as_table_mut() {
            for other in table.keys().filter(|other| *other != key) {
                entries.remove(other);
            }
        }
        if let Err(found) = decode::<T>(&alone) {
            for problem in found {
                if !problems.contains(&problem) {
                    problems.push(problem);
                }
            }
        }
    }
    Err(in_file_order(problems))
}

/// The problems in the order of the files they are in (the first reported first) and of
/// their positions there: unknown keys are found after the keys a table knows.
fn in_file_order(mut problems: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut files: Vec<PathBuf> = Vec::new();
    for problem in &problems {
        if !files.contains(&problem.path) {
            files.push(problem.path.clone());
        }
    }
    problems.sort_by_key(|p| (files.iter().position(|f| *f == p.path), p.location));
    problems
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    use super::*;
    use crate::user_file::parse_toml;
    use crate::user_file::source::{Layer, Source};

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Role {
        agent: String,
        #[serde(default)]
        tools: Vec<Tool>,
        #[serde(default)]
        turns: Option<u32>,
    }

    /// A closed set of names, as a workflow's tools are.
    #[derive(Debug, Deserialize)]
    #[serde(rename_all = "lowercase")]
    #[allow(dead_code)]
    enum Tool {
        Read,
        Write,
        Edit,
        Bash,
    }

    #[derive(Debug, Deserialize)]
    #[serde(tag = "uses", rename_all = "kebab-case", deny_unknown_fields)]
    #[allow(dead_code)]
    enum Tagged {
        Counter { count: u32, label: String },
    }

    /// A string a type's own code checks (not empty), as globs and ids are checked.
    #[derive(Debug)]
    struct Checked(#[allow(dead_code)] String);

    impl<'de> Deserialize<'de> for Checked {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            let text = String::deserialize(d)?;
            match text.is_empty() {
                true => Err(serde::de::Error::custom("an empty name")),
                false => Ok(Checked(text)),
            }
        }
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Lists {
        names: Vec<Checked>,
        after: u32,
    }

    fn tree(text: &str) -> Node {
        parse_toml::parse(&Source::new("t.toml", text, Layer::Repo)).unwrap()
    }

    fn lines(problems: &[Diagnostic]) -> Vec<usize> {
        problems.iter().map(|d| d.location.unwrap().line).collect()
    }

    #[test]
    fn reports_every_problem_of_a_table() {
        let problems = decode::<BTreeMap<String, Role>>(&tree(
            "[a]\nagent = \"x\"\nmodle = 1\ntools = [\"read\", \"wirte\"]\nturns = \"many\"\n",
        ))
        .unwrap_err();
        assert_eq!(lines(&problems), [3, 4, 5], "{problems:#?}");
        assert_eq!(problems[0].message, "unknown key `modle`");
        assert_eq!(problems[1].message, "unknown value `wirte` for `tools`");
        assert_eq!(problems[1].help.as_deref(), Some("did you mean `write`?"));
        assert!(problems[2]
            .message
            .contains("expected a non-negative integer"));
    }

    #[test]
    fn missing_keys_point_at_the_table() {
        let problems =
            decode::<BTreeMap<String, Role>>(&tree("x = 1\n[a]\ntools = []\n")).unwrap_err();
        assert_eq!(problems.len(), 2, "{problems:#?}");
        assert_eq!(
            problems[0].message,
            "invalid type: integer `1`, expected a table"
        );
        assert_eq!(problems[1].message, "missing key `agent`");
        assert_eq!(problems[1].location.unwrap().line, 2);
    }

    #[test]
    fn problems_inside_tagged_enums_are_traced_to_their_key() {
        let problems = decode::<Tagged>(&tree(
            "uses = \"counter\"\nlabel = \"x\"\ncount = \"three\"\n",
        ))
        .unwrap_err();
        assert_eq!(lines(&problems), [3], "{problems:#?}");
        assert!(problems[0]
            .message
            .contains("invalid type: string \"three\""));
    }

    #[test]
    fn an_integer_out_of_range_names_the_range_of_its_type() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Sizes {
            small: u8,
            signed: i8,
        }
        let problems = decode::<Sizes>(&tree("small = 300\nsigned = -200\n")).unwrap_err();
        let got: Vec<&str> = problems.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            got,
            [
                "invalid value: integer `300`, expected an integer from 0 to 255",
                "invalid value: integer `-200`, expected an integer from -128 to 127",
            ]
        );
    }

    #[test]
    fn valid_input_decodes() {
        let role: Role = decode(&tree("agent = \"x\"\ntools = [\"read\"]\n")).unwrap();
        assert_eq!(role.agent, "x");
    }

    #[test]
    fn every_unknown_key_is_reported_in_file_order_with_the_keys_serde_listed() {
        let problems =
            decode::<Role>(&tree("modle = 1\nagent = \"x\"\ntols = []\nturns = -1\n")).unwrap_err();
        let got: Vec<(usize, &str)> = problems
            .iter()
            .map(|d| (d.location.unwrap().line, d.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "unknown key `modle`"),
                (3, "unknown key `tols`"),
                (
                    4,
                    "invalid value: integer `-1`, expected a non-negative integer"
                ),
            ]
        );
        assert_eq!(problems[1].help.as_deref(), Some("did you mean `tools`?"));
        assert_eq!(
            problems[0].help.as_deref(),
            Some("expected one of: agent, tools, turns")
        );
    }

    #[test]
    fn the_type_is_deserialized_once_however_many_problems_there_are() {
        static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        #[derive(Debug)]
        struct Counted;
        impl<'de> Deserialize<'de> for Counted {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                Role::deserialize(d).map(|_| Counted)
            }
        }
        let problems = decode::<Counted>(&tree(
            "agent = 3
modle = 1
tools = [\"wirte\", 4]
turns = \"many\"
",
        ))
        .unwrap_err();
        assert_eq!(lines(&problems), [1, 2, 3, 3, 4], "{problems:#?}");
        assert_eq!(CALLS.load(std::sync::atomic::Ordering::SeqCst), 1);
    }

    #[test]
    fn an_array_ends_at_an_element_its_type_refuses_and_the_table_goes_on() {
        let problems = decode::<Lists>(&tree(
            "names = [\"a\", \"\", \"\"]
after = \"x\"
",
        ))
        .unwrap_err();
        let got: Vec<(usize, usize, &str)> = problems
            .iter()
            .map(|d| {
                (
                    d.location.unwrap().line,
                    d.location.unwrap().column,
                    d.message.as_str(),
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                (1, 15, "an empty name"),
                (
                    2,
                    9,
                    "invalid type: string \"x\", expected a non-negative integer"
                ),
            ]
        );
    }

    #[test]
    fn what_a_type_says_about_a_stand_in_is_not_reported() {
        let problems = decode::<Lists>(&tree(
            "names = [3]
after = 1
",
        ))
        .unwrap_err();
        let messages: Vec<&str> = problems.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(messages, ["invalid type: integer `3`, expected a string"]);
    }

    #[test]
    fn an_unknown_key_of_a_tagged_enum_is_traced_to_its_line() {
        let problems = decode::<Tagged>(&tree(
            "uses = \"counter\"\ncount = 1\nlabel = \"x\"\nlimit = 2\n",
        ))
        .unwrap_err();
        assert_eq!(lines(&problems), [4], "{problems:#?}");
        assert_eq!(problems[0].message, "unknown key `limit`");
        let problems = decode::<Tagged>(&tree("uses = \"countr\"\n")).unwrap_err();
        assert_eq!(problems[0].message, "unknown value `countr` for `uses`");
        assert_eq!(problems[0].help.as_deref(), Some("did you mean `counter`?"));
    }

    #[test]
    fn a_type_that_holds_itself_stands_in_a_bounded_number_of_times() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        enum Nest {
            Inner(Box<Nest>),
            Leaf,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct HasNest {
            nest: Nest,
        }
        let problems = decode::<HasNest>(&tree("nest = 3\n")).unwrap_err();
        let messages: Vec<&str> = problems.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            ["invalid type: integer `3`, expected one of: Inner, Leaf"]
        );
    }
}
