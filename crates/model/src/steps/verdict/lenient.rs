//! Leniency where it is harmless (issue 21): smaller and local models write verdicts that mean
//! exactly what the schema means but do not follow it to the letter. Each tolerance here changes
//! only the form, never what the verdict decides:
//!
//! - `//` and `/* */` comments and trailing commas in the JSON text;
//! - a `{"verdict": {…}}` wrapper;
//! - keys and enum values in any case, with `-` or a space for `_` (`"Approve"`, `"Must-Fix"`);
//! - unknown keys (dropped), missing or `null` optional fields (empty);
//! - criteria as an id→status map (`{"AC-001": "met"}` or `{"AC-001": {"status": …}}`);
//! - criterion ids that name exactly one of the task's ids (`AC-1` or `ac-001` for `AC-001`),
//!   also when followed by the criterion's title (`AC-001: Slug keeps ß`);
//! - `"none"`, `"n/a"` or a blank string where the issues or criteria list belongs;
//! - severity words models use for the four levels ([`severity_of`]); an unknown one is kept
//!   as `must_fix` with a note in the description, never dropped.
//!
//! A decision spelled otherwise (`"approved"`, `"LGTM"`) is not guessed at: it stays a schema
//! error. The schema handed to structured-output adapters stays strict.

use serde_json::{Map, Value};

use base::json_text::JsonStrings;

/// Parses JSON text, tolerating comments and trailing commas outside strings. The error, if
/// any, is the one for the text without them (positions are kept: they are blanked, not cut).
pub fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    serde_json::from_str(text).or_else(|_| serde_json::from_str(&blank_comments_and_commas(text)))
}

/// The first key that an object of the JSON `text` gives twice (JSON with duplicate keys means
/// whatever its reader decides, so it is ambiguous); `None` when there is none or the text does
/// not parse.
pub fn duplicate_key(text: &str) -> Option<String> {
    let check = |text: &str| serde_json::from_str::<NoDuplicates>(text);
    let error = match check(text) {
        Ok(_) => return None,
        Err(e) if e.is_data() => e,
        Err(_) => match check(&blank_comments_and_commas(text)) {
            Ok(_) => return None,
            Err(e) => e,
        },
    };
    let message = error.to_string();
    let key = message.strip_prefix(DUPLICATE)?;
    Some(key.split('`').next().unwrap_or_default().to_string())
}

const DUPLICATE: &str = "duplicate key `";

/// Any JSON value, refused when one of its objects repeats a key.
struct NoDuplicates;

impl<'de> serde::Deserialize<'de> for NoDuplicates {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NoDuplicatesVisitor)
    }
}

struct NoDuplicatesVisitor;

impl<'de> serde::de::Visitor<'de> for NoDuplicatesVisitor {
    type Value = NoDuplicates;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_i64<E>(self, _: i64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_u64<E>(self, _: u64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_f64<E>(self, _: f64) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_str<E>(self, _: &str) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_unit<E>(self) -> Result<NoDuplicates, E> {
        Ok(NoDuplicates)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<NoDuplicates, A::Error> {
        while seq.next_element::<NoDuplicates>()?.is_some() {}
        Ok(NoDuplicates)
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<NoDuplicates, A::Error> {
        let mut seen = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            // Keys are compared as the reader compares them: case and spaces aside.
            if !seen.insert(key.trim().to_ascii_lowercase()) {
                return Err(serde::de::Error::custom(format!("{DUPLICATE}{key}`")));
            }
            map.next_value::<NoDuplicates>()?;
        }
        Ok(NoDuplicates)
    }
}

/// `text` with comments and trailing commas outside JSON strings replaced by spaces (newlines
/// kept), so that error positions still point into the original.
fn blank_comments_and_commas(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let mut i = 0;
    let mut strings = JsonStrings::default();
    while i < chars.len() {
        let c = chars[i];
        if strings.feed(c) {
            out.push(c);
            i += 1;
            continue;
        }
        match (c, chars.get(i + 1)) {
            ('/', Some('/')) => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            ('/', Some('*')) => {
                out.extend([' ', ' ']);
                i += 2;
                while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                    out.push(if chars[i] == '\n' { '\n' } else { ' ' });
                    i += 1;
                }
                if i < chars.len() {
                    out.extend([' ', ' ']);
                    i += 2;
                }
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    // Trailing commas, now that comments are blank.
    let mut strings = JsonStrings::default();
    for index in 0..out.len() {
        let c = out[index];
        if strings.feed(c) || c != ',' {
            continue;
        }
        let next = out[index + 1..].iter().find(|c| !c.is_whitespace());
        if matches!(next, Some('}' | ']')) {
            out[index] = ' ';
        }
    }
    out.into_iter().collect()
}

/// The verdict object inside `value`: `value` itself, or what a `{"verdict": {…}}` wrapper
/// (without a decision of its own) holds.
pub fn unwrap(value: Value) -> Value {
    let Value::Object(map) = &value else {
        return value;
    };
    if key(map, "decision").is_some() {
        return value;
    }
    match key(map, "verdict") {
        Some(inner @ Value::Object(_)) => inner.clone(),
        _ => value,
    }
}

/// Whether `value` (after [`unwrap`]) is an object with a `decision`: a verdict, as opposed to
/// an example issue or some other JSON the coach quoted.
pub fn has_decision(value: &Value) -> bool {
    matches!(value, Value::Object(map) if key(map, "decision").is_some())
}

/// The decision of a verdict object, normalized, for comparing several blocks.
pub fn decision_of(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => key(map, "decision").and_then(Value::as_str).map(enum_value),
        _ => None,
    }
}

/// `value` (an unwrapped verdict object) in the schema's exact form, as far as harmless
/// tolerances reach; what remains wrong is left for the strict deserializer to name.
pub fn normalize(value: Value, task_ids: &[String]) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let map = lower_keys(map);
    let mut out = Map::new();
    if let Some(decision) = map.get("decision") {
        out.insert("decision".into(), enum_field(decision));
    }
    if let Some(summary) = map.get("summary") {
        out.insert("summary".into(), text_field(summary));
    }
    let issues = match map.get("issues") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(word)) if means_none(word) => Vec::new(),
        Some(Value::Array(items)) => items.iter().cloned().map(issue).collect(),
        Some(other) => {
            out.insert("issues".into(), other.clone());
            return Value::Object(out);
        }
    };
    out.insert("issues".into(), Value::Array(issues));
    let criteria = match map.get("criteria") {
        None | Some(Value::Null) => Value::Array(Vec::new()),
        Some(Value::String(word)) if means_none(word) => Value::Array(Vec::new()),
        Some(Value::Array(items)) => Value::Array(
            items
                .iter()
                .cloned()
                .map(|item| criterion(item, task_ids))
                .collect(),
        ),
        Some(Value::Object(by_id)) => Value::Array(
            by_id
                .iter()
                .map(|(id, entry)| {
                    let entry = match entry {
                        Value::Object(fields) => {
                            let mut fields = lower_keys(fields.clone());
                            fields.insert("id".into(), Value::String(id.clone()));
                            Value::Object(fields)
                        }
                        status => {
                            let mut fields = Map::new();
                            fields.insert("id".into(), Value::String(id.clone()));
                            fields.insert("status".into(), status.clone());
                            Value::Object(fields)
                        }
                    };
                    criterion(entry, task_ids)
                })
                .collect(),
        ),
        Some(other) => other.clone(),
    };
    out.insert("criteria".into(), criteria);
    // Anything else the coach added is dropped; the summary stays required.
    Value::Object(out)
}

fn issue(value: Value) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let map = lower_keys(map);
    let mut out = Map::new();
    let mut unknown_severity = None;
    if let Some(severity) = map.get("severity") {
        let value = match severity {
            Value::String(word) => match severity_of(word) {
                Some(known) => Value::String(known.to_string()),
                None => {
                    unknown_severity = Some(word.clone());
                    Value::String("must_fix".to_string())
                }
            },
            other => other.clone(),
        };
        out.insert("severity".into(), value);
    }
    for field in ["category", "description", "location", "suggestion"] {
        let value = map
            .get(field)
            .map_or(Value::String(String::new()), text_field);
        out.insert(field.into(), value);
    }
    // An issue is never dropped for its severity's name: kept as blocking, and said so.
    if let (Some(word), Some(Value::String(description))) =
        (unknown_severity, out.get_mut("description"))
    {
        description.push_str(&format!(
            " (severity `{word}` is not one autobuild knows; read as must_fix)"
        ));
    }
    Value::Object(out)
}

/// The severity a word names: the four levels in any case and spelling, and the words review
/// tools and models commonly use for them (docs/verdicts.md has the table). `None` for any
/// other word.
pub fn severity_of(word: &str) -> Option<&'static str> {
    Some(match enum_value(word).as_str() {
        "critical" | "blocker" | "blocking" | "fatal" => "critical",
        "must_fix" | "mustfix" | "must" | "high" | "major" | "error" | "required" | "severe" => {
            "must_fix"
        }
        "should_fix" | "shouldfix" | "should" | "medium" | "moderate" | "warning" | "normal" => {
            "should_fix"
        }
        "nice_to_have" | "nicetohave" | "nice" | "low" | "minor" | "trivial" | "info" | "nit"
        | "nitpick" | "optional" | "suggestion" => "nice_to_have",
        _ => return None,
    })
}

/// `"none"`, `"n/a"`, `"-"` or blank, written where a list belongs: the empty list.
fn means_none(word: &str) -> bool {
    let word = word.trim().trim_end_matches('.').to_ascii_lowercase();
    matches!(
        word.as_str(),
        "" | "none" | "n/a" | "na" | "-" | "nothing" | "no issues"
    )
}

fn criterion(value: Value, task_ids: &[String]) -> Value {
    let Value::Object(map) = value else {
        return value;
    };
    let map = lower_keys(map);
    let mut out = Map::new();
    if let Some(id) = map.get("id") {
        let id = match id {
            Value::String(id) => Value::String(canonical_id(id, task_ids)),
            other => other.clone(),
        };
        out.insert("id".into(), id);
    }
    if let Some(status) = map.get("status") {
        out.insert("status".into(), enum_field(status));
    }
    let evidence = map
        .get("evidence")
        .map_or(Value::String(String::new()), text_field);
    out.insert("evidence".into(), evidence);
    Value::Object(out)
}

/// The task's id that `id` names: itself when it is one, else the only task id with the same
/// letters (any case) and number (`AC-1`, `ac-001` → `AC-001`); unchanged when none or several
/// match, so the rules report it.
pub fn canonical_id(id: &str, task_ids: &[String]) -> String {
    let id = id.trim();
    if task_ids.iter().any(|known| known == id) {
        return id.to_string();
    }
    // An id followed by its title (`AC-001: Slug keeps ß`, `AC-001 - …`, `AC-001 (…)`).
    if let Some(head) = id
        .split([':', ' ', '(', '\u{2014}'])
        .next()
        .filter(|head| head.len() < id.len())
    {
        let head = canonical_id(head, task_ids);
        if task_ids.contains(&head) {
            return head;
        }
    }
    let Some(wanted) = id_key(id) else {
        return id.to_string();
    };
    let mut matching = task_ids
        .iter()
        .filter(|known| id_key(known).as_ref() == Some(&wanted));
    match (matching.next(), matching.next()) {
        (Some(only), None) => only.clone(),
        _ => id.to_string(),
    }
}

/// `AC-001` → `("AC", 1)`: the letters before the number (upper case, separators dropped) and
/// the number's value.
fn id_key(id: &str) -> Option<(String, u64)> {
    let digits_at = id.find(|c: char| c.is_ascii_digit())?;
    let (prefix, number) = id.split_at(digits_at);
    if !number.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let prefix: String = prefix
        .chars()
        .filter(|c| c.is_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect();
    Some((prefix, number.parse().ok()?))
}

/// `null` is empty; anything else is left for the deserializer to judge.
fn text_field(value: &Value) -> Value {
    match value {
        Value::Null => Value::String(String::new()),
        other => other.clone(),
    }
}

fn enum_field(value: &Value) -> Value {
    match value {
        Value::String(text) => Value::String(enum_value(text)),
        other => other.clone(),
    }
}

/// `"Must-Fix"` → `"must_fix"`, `"Not Met"` → `"not_met"`.
fn enum_value(text: &str) -> String {
    text.trim()
        .chars()
        .map(|c| match c {
            '-' | ' ' => '_',
            c => c.to_ascii_lowercase(),
        })
        .collect()
}

fn lower_keys(map: Map<String, Value>) -> Map<String, Value> {
    map.into_iter()
        .map(|(key, value)| (key.trim().to_ascii_lowercase(), value))
        .collect()
}

fn key<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(key, _)| key.trim().eq_ignore_ascii_case(name))
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests;
