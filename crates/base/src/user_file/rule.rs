//! Value rules on types: a key whose value must follow a rule (a check name, a duration, a path
//! inside the repository) is decoded through a small type that owns that rule once — its
//! `TryFrom` says what is accepted and why not, its `JsonSchema` says the same to editors — and
//! yields the plain value the rest of the code uses.
//!
//! A field keeps its plain type and names the rule's type twice, side by side, for the two
//! derives: `#[serde(deserialize_with = "Timeout::some")]` and
//! `#[schemars(with = "Option<Timeout>")]`.

use std::fmt;
use std::marker::PhantomData;

use schemars::{json_schema, Schema};
use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::user_file::typed::deferred;

/// A type that decodes one value by its rule and yields the plain value.
pub trait Rule: for<'de> Deserialize<'de> {
    /// What the rest of the code works with.
    type Value;

    fn into_value(self) -> Self::Value;

    /// One value (`deserialize_with` of a required or defaulted field).
    fn one<'de, D: Deserializer<'de>>(d: D) -> Result<Self::Value, D::Error> {
        Self::deserialize(d).map(Self::into_value)
    }

    /// An optional value (`deserialize_with` of an `Option` field with `#[serde(default)]`).
    fn some<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Self::Value>, D::Error> {
        Self::one(d).map(Some)
    }

    /// A list of values, each by the rule.
    fn each<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Self::Value>, D::Error> {
        Vec::<Self>::deserialize(d).map(|all| all.into_iter().map(Self::into_value).collect())
    }
}

/// `result`, or when the rule refused the value: inside the decoder, a stand-in and the
/// refusal handed to it ([`deferred`], so decoding goes on); elsewhere the refusal as an error.
pub fn refused<T: Default, W: fmt::Display, E: de::Error>(result: Result<T, W>) -> Result<T, E> {
    result.or_else(|why| match deferred::refuse(why.to_string()) {
        Ok(()) => Ok(T::default()),
        Err(message) => Err(E::custom(message)),
    })
}

/// Deserializes a string into `T` through `T::try_from`; a value of another type is refused
/// as "invalid type: …, expected {expecting}", so the type error names the form too.
pub fn from_text<'de, D, T>(d: D, expecting: &'static str) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: TryFrom<String> + Default,
    T::Error: fmt::Display,
{
    struct Text<T> {
        expecting: &'static str,
        target: PhantomData<T>,
    }
    impl<T> Visitor<'_> for Text<T>
    where
        T: TryFrom<String> + Default,
        T::Error: fmt::Display,
    {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(self.expecting)
        }

        fn visit_str<E: de::Error>(self, text: &str) -> Result<T, E> {
            refused(T::try_from(text.to_string()))
        }

        fn visit_string<E: de::Error>(self, text: String) -> Result<T, E> {
            refused(T::try_from(text))
        }
    }
    d.deserialize_string(Text {
        expecting,
        target: PhantomData,
    })
}

/// The schema of a string described by `description`, matching `pattern` when there is one.
pub fn text_schema(description: &str, pattern: Option<&str>) -> Schema {
    let mut schema = json_schema!({
        "type": "string",
        "description": description,
    });
    if let Some(pattern) = pattern {
        schema.insert("pattern".into(), pattern.into());
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, PartialEq)]
    struct Even(u32);

    impl TryFrom<String> for Even {
        type Error = String;
        fn try_from(text: String) -> Result<Even, String> {
            match text.parse::<u32>() {
                Ok(n) if n % 2 == 0 => Ok(Even(n)),
                _ => Err(format!("`{text}` is not an even number")),
            }
        }
    }

    impl<'de> Deserialize<'de> for Even {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Even, D::Error> {
            from_text(d, "an even number in quotes")
        }
    }

    impl Rule for Even {
        type Value = u32;
        fn into_value(self) -> u32 {
            self.0
        }
    }

    #[test]
    fn a_rule_decodes_one_some_and_each_and_names_its_form_in_type_errors() {
        let json = serde_json::json!("4");
        assert_eq!(Even::one(&json).unwrap(), 4);
        assert_eq!(Even::some(&json).unwrap(), Some(4));
        assert_eq!(Even::each(&serde_json::json!(["2", "8"])).unwrap(), [2, 8]);
        let odd = Even::one(&serde_json::json!("3")).unwrap_err().to_string();
        assert_eq!(odd, "`3` is not an even number");
        let wrong = Even::one(&serde_json::json!(3)).unwrap_err().to_string();
        assert_eq!(
            wrong,
            "invalid type: integer `3`, expected an even number in quotes"
        );
    }

    #[test]
    fn text_schemas_carry_the_description_and_pattern() {
        let schema = text_schema("a name", Some("^[a-z]+$")).to_value();
        assert_eq!(schema["pattern"], "^[a-z]+$");
        assert_eq!(schema["description"], "a name");
        assert!(text_schema("any", None).get("pattern").is_none());
    }
}
