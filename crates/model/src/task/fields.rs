//! The value types of the front-matter keys autobuild reads, as serde types: each says which
//! shapes it accepts (GuardKit writes some values in more than one), and what is wrong with a
//! value in its own words. [`super::front_matter`] decodes each key's value into its type
//! through [`base::user_file::typed::decode`], which reports a value of the wrong kind
//! (a list where a number belongs) in the words every user file shares.
//!
//! GuardKit's documented task template says `complexity: 0` for "not estimated yet", and some
//! of its tools write `complexity: "3/10"`; both are accepted rather than making a user edit
//! every task.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{SeqAccessDeserializer, StrDeserializer};
use serde::de::{self, Deserialize, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};

use super::id::validate_id;

/// `id:` — the task's id, a string (a bare number is refused: YAML would read `001` as 1).
#[derive(Debug)]
pub(crate) struct TaskId(pub String);

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = TaskId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a task id (a string such as TASK-001)")
            }
            fn visit_str<E: de::Error>(self, id: &str) -> Result<TaskId, E> {
                validate_id(id)
                    .map(|()| TaskId(id.to_string()))
                    .map_err(|why| E::custom(format!("invalid task id: {why}")))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<TaskId, E> {
                Err(number_id(n))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<TaskId, E> {
                Err(number_id(n))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<TaskId, E> {
                Err(number_id(n))
            }
        }
        d.deserialize_any(V)
    }
}

fn number_id<E: de::Error>(n: impl fmt::Display) -> E {
    E::custom(format!(
        "`id` must be a string, found the number {n}; quote it: `id: \"{n}\"`"
    ))
}

/// One item of `dependencies:`, a task id.
#[derive(Debug)]
pub(crate) struct Dependency(pub String);

impl<'de> Deserialize<'de> for Dependency {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let id = String::deserialize(d)?;
        match validate_id(&id) {
            Ok(()) => Ok(Dependency(id)),
            Err(why) => Err(D::Error::custom(format!("invalid dependency: {why}"))),
        }
    }
}

/// `task_type:` and `workflow:` — a name: a string with something in it, trimmed.
#[derive(Debug)]
pub(crate) struct Name(pub String);

impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-empty string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Name, E> {
                match s.trim() {
                    "" => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                    name => Ok(Name(name.to_string())),
                }
            }
        }
        d.deserialize_str(V)
    }
}

/// `title:` — a non-empty string, or a number written as one.
#[derive(Debug)]
pub(crate) struct Title(pub String);

impl<'de> Deserialize<'de> for Title {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Title;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a non-empty string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Title, E> {
                match s.trim() {
                    "" => Err(E::invalid_value(de::Unexpected::Str(s), &self)),
                    title => Ok(Title(title.to_string())),
                }
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Title, E> {
                Ok(Title(n.to_string()))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Title, E> {
                Ok(Title(n.to_string()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Title, E> {
                Ok(Title(n.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// `complexity:` — a score from 1 to 10; `None` for 0 (unset). A whole number, or a string
/// holding one, optionally written as a fraction of 10 (`"3/10"`).
#[derive(Debug, PartialEq)]
pub(crate) struct Complexity(pub Option<u8>);

impl<'de> Deserialize<'de> for Complexity {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Complexity;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a whole number from 1 to 10")
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Complexity, E> {
                score(n)
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Complexity, E> {
                u64::try_from(n).map_or_else(|_| Err(invalid_complexity(n)), score)
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<Complexity, E> {
                Err(invalid_complexity(format!("the number {n}")))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Complexity, E> {
                Ok(Complexity(None))
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Complexity, E> {
                let text = s.trim();
                let score_text = match text.split_once('/') {
                    Some((score, scale)) if scale.trim() == "10" => score.trim(),
                    Some(_) => {
                        return Err(invalid_complexity(format!(
                            "\"{text}\" (a score out of 10 is written \"N/10\")"
                        )))
                    }
                    None => text,
                };
                score_text.parse::<u64>().map_or_else(
                    |_| Err(invalid_complexity(format!("the string \"{text}\""))),
                    score,
                )
            }
        }
        d.deserialize_any(V)
    }
}

fn score<E: de::Error>(n: u64) -> Result<Complexity, E> {
    match n {
        0 => Ok(Complexity(None)),
        1..=10 => Ok(Complexity(u8::try_from(n).ok())),
        _ => Err(invalid_complexity(n)),
    }
}

fn invalid_complexity<E: de::Error>(found: impl fmt::Display) -> E {
    E::custom(format!(
        "`complexity` must be a whole number from 1 to 10, found {found}"
    ))
}

/// One item of an `acceptance_criteria:` list, as a criterion text: a string or a number, or
/// a mapping (GuardKit's structured form) giving its `text` or `description`, with its `id` in
/// front.
#[derive(Debug, PartialEq)]
pub(crate) struct CriterionItem(pub String);

impl<'de> Deserialize<'de> for CriterionItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = CriterionItem;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a criterion: text, or a mapping with `text` or `description`")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<CriterionItem, E> {
                Ok(CriterionItem(s.to_string()))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<CriterionItem, E> {
                Ok(CriterionItem(n.to_string()))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<CriterionItem, E> {
                Ok(CriterionItem(n.to_string()))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<CriterionItem, E> {
                Ok(CriterionItem(n.to_string()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CriterionItem, A::Error> {
                let (mut id, mut text, mut description) = (None, None, None);
                while let Some(key) = map.next_key::<String>()? {
                    let slot = match key.as_str() {
                        "id" => &mut id,
                        "text" => &mut text,
                        "description" => &mut description,
                        _ => {
                            map.next_value::<de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = map.next_value::<Option<Loose>>()?.and_then(|l| l.0);
                }
                let text = text.or(description).ok_or_else(|| {
                    A::Error::custom(
                        "an `acceptance_criteria` item that is a mapping needs a `text` or `description`",
                    )
                })?;
                Ok(CriterionItem(match id {
                    Some(id) => format!("{id}: {text}"),
                    None => text,
                }))
            }
        }
        d.deserialize_any(V)
    }
}

/// A value of a structured criterion's key: its text when it is a non-empty string; any
/// other value is left alone (GuardKit may add keys of its own kinds).
struct Loose(Option<String>);

impl<'de> Deserialize<'de> for Loose {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Loose;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Loose, E> {
                Ok(Loose(Some(s.trim().to_string()).filter(|s| !s.is_empty())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Loose, E> {
                Ok(Loose(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Loose, E> {
                Ok(Loose(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Loose, E> {
                Ok(Loose(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Loose, E> {
                Ok(Loose(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Loose, E> {
                Ok(Loose(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Loose, A::Error> {
                de::IgnoredAny::deserialize(SeqAccessDeserializer::new(seq)).map(|_| Loose(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Loose, A::Error> {
                de::IgnoredAny::deserialize(de::value::MapAccessDeserializer::new(map))
                    .map(|_| Loose(None))
            }
        }
        d.deserialize_any(V)
    }
}

/// A list of `T`, or one `T` written alone (`protect: "docs/**"`).
#[derive(Debug)]
pub(crate) struct OneOrMany<T>(pub Vec<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for OneOrMany<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = OneOrMany<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list, or one string")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<OneOrMany<T>, E> {
                T::deserialize(StrDeserializer::<E>::new(s)).map(|one| OneOrMany(vec![one]))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<OneOrMany<T>, A::Error> {
                Vec::deserialize(SeqAccessDeserializer::new(seq)).map(OneOrMany)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// A glob of `protect:` or `hidden:`.
#[derive(Debug)]
pub(crate) struct Glob(pub String);

impl<'de> Deserialize<'de> for Glob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let pattern = String::deserialize(d)?;
        base::pattern::glob(&pattern).map_err(D::Error::custom)?;
        Ok(Glob(pattern))
    }
}

/// A path of `context_files:`, relative to the repository root.
#[derive(Debug)]
pub(crate) struct ContextPath(pub String);

impl<'de> Deserialize<'de> for ContextPath {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let path = String::deserialize(d)?;
        match crate::project::context_files::path_problem(&path) {
            None => Ok(ContextPath(path)),
            Some(problem) => Err(D::Error::custom(problem)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::diagnostic::Diagnostic;
    use base::user_file::source::{Layer, Source};

    fn decode<T: serde::de::DeserializeOwned>(yaml: &str) -> Result<T, Vec<Diagnostic>> {
        let tree = base::user_file::parse_yaml::parse(&Source::new("t.yaml", yaml, Layer::Repo))?;
        base::user_file::typed::decode(&tree)
    }

    fn problems<T: serde::de::DeserializeOwned + fmt::Debug>(yaml: &str) -> Vec<String> {
        decode::<T>(yaml)
            .unwrap_err()
            .into_iter()
            .map(|d| d.message)
            .collect()
    }

    #[test]
    fn protect_takes_a_list_or_one_glob_and_names_each_bad_value() {
        let globs = |yaml| decode::<OneOrMany<Glob>>(yaml).map(|g| g.0.into_iter().map(|g| g.0));
        assert_eq!(
            globs("[\"tests/**\", docs]").unwrap().collect::<Vec<_>>(),
            ["tests/**", "docs"]
        );
        assert_eq!(
            globs("\"docs/**\"").unwrap().collect::<Vec<_>>(),
            ["docs/**"]
        );
        let wrong = problems::<OneOrMany<Glob>>("[\"tests/**\", 3]");
        assert_eq!(wrong, ["invalid type: integer `3`, expected a string"]);
        let wrong = problems::<OneOrMany<Glob>>("[\"tests/**\", \"src/[\"]");
        assert!(wrong[0].contains("not a valid glob"), "{wrong:?}");
        assert!(problems::<OneOrMany<Glob>>("{a: 1}")[0].contains("expected a list, or one string"));
    }

    #[test]
    fn complexity_accepts_guardkit_spellings() {
        for (text, want) in [
            ("0", None),
            ("7", Some(7)),
            ("\"3/10\"", Some(3)),
            ("\" 4 \"", Some(4)),
            ("\"0/10\"", None),
            ("~", None),
        ] {
            assert_eq!(
                decode::<Complexity>(text).unwrap(),
                Complexity(want),
                "{text}"
            );
        }
        for (text, says) in [
            ("11", "found 11"),
            ("-1", "found -1"),
            ("2.5", "the number 2.5"),
            ("\"3/5\"", "\"N/10\""),
            ("high", "the string \"high\""),
            ("[1]", "expected a whole number from 1 to 10"),
        ] {
            let err = problems::<Complexity>(text);
            assert!(err[0].contains(says), "{text}: {err:?}");
        }
    }

    #[test]
    fn criteria_lists_take_text_and_structured_items() {
        let got = decode::<Vec<CriterionItem>>(
            "- plain\n- 42\n- {id: AC-009, description: structured, extra: [1]}\n- {text: no id}\n",
        )
        .unwrap();
        let texts: Vec<&str> = got.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(texts, ["plain", "42", "AC-009: structured", "no id"]);
        assert!(problems::<Vec<CriterionItem>>("text")[0].contains("expected an array"));
        assert!(problems::<Vec<CriterionItem>>("- {id: A}")[0].contains("`text`"));
    }

    #[test]
    fn ids_are_strings_that_name_a_branch() {
        assert_eq!(decode::<TaskId>("TASK-1").unwrap().0, "TASK-1");
        assert!(problems::<TaskId>("42")[0].contains("id: \"42\""));
        assert!(problems::<TaskId>("a/b")[0].starts_with("invalid task id"));
        assert!(problems::<Dependency>("a b")[0].starts_with("invalid dependency"));
        assert_eq!(decode::<Title>("2024").unwrap().0, "2024");
        assert!(problems::<Name>("\" \"")[0].contains("expected a non-empty string"));
    }
}
