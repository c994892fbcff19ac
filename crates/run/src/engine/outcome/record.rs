//! `state.json`'s `outcome`: the typed [`Outcome`] under `detail`, with its name, exit code and
//! sentence beside it for people and scripts that read the file. Only `detail` is read back;
//! the three others are derived from it on every write. A record written before `detail` was
//! kept (the name, exit code and sentence only) still loads: [`super::legacy`] reads its
//! sentence once, at load.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::engine::Outcome;

#[derive(Serialize, Deserialize)]
struct Record {
    outcome: String,
    exit_code: u8,
    message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    detail: Option<Outcome>,
}

impl From<&Outcome> for Record {
    fn from(outcome: &Outcome) -> Record {
        Record {
            outcome: outcome.name().to_string(),
            exit_code: outcome.exit_code(),
            message: outcome.to_string(),
            detail: Some(outcome.clone()),
        }
    }
}

impl From<Record> for Outcome {
    fn from(record: Record) -> Outcome {
        match record.detail {
            Some(outcome) => outcome,
            None => super::legacy::parse(&record.outcome, &record.message),
        }
    }
}

/// For `#[serde(with = "…")]` on an `Option<Outcome>` field.
pub fn serialize<S: Serializer>(outcome: &Option<Outcome>, to: S) -> Result<S::Ok, S::Error> {
    outcome.as_ref().map(Record::from).serialize(to)
}

/// For `#[serde(with = "…")]` on an `Option<Outcome>` field.
pub fn deserialize<'de, D: Deserializer<'de>>(from: D) -> Result<Option<Outcome>, D::Error> {
    Ok(Option::<Record>::deserialize(from)?.map(Outcome::from))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::outcome::tests::every_outcome;

    #[derive(Serialize, Deserialize)]
    struct Holder {
        #[serde(with = "super")]
        outcome: Option<Outcome>,
    }

    #[test]
    fn every_outcome_is_kept_typed_with_its_name_code_and_sentence_beside_it() {
        for outcome in every_outcome() {
            let written = serde_json::to_value(Holder {
                outcome: Some(outcome.clone()),
            })
            .unwrap();
            let record = &written["outcome"];
            assert_eq!(record["outcome"], outcome.name());
            assert_eq!(record["exit_code"], outcome.exit_code());
            assert_eq!(record["message"], outcome.to_string());
            let back: Holder = serde_json::from_value(written.clone()).unwrap();
            assert_eq!(back.outcome, Some(outcome), "{written}");
        }
        let none = serde_json::to_value(Holder { outcome: None }).unwrap();
        assert_eq!(none, json!({"outcome": null}));
        let back: Holder = serde_json::from_value(none).unwrap();
        assert_eq!(back.outcome, None);
    }

    #[test]
    fn the_typed_outcome_is_what_is_read_back_not_the_sentence() {
        let record = json!({"outcome": {
            "outcome": "stalled", "exit_code": 4, "message": "edited by hand",
            "detail": {"stalled": {"reason": "same diff twice"}}
        }});
        let back: Holder = serde_json::from_value(record).unwrap();
        assert_eq!(
            back.outcome,
            Some(Outcome::Stalled {
                reason: "same diff twice".into()
            })
        );
    }

    #[test]
    fn a_record_from_before_the_typed_outcome_loads_from_its_sentence() {
        let record = json!({"outcome": {
            "outcome": "rejected", "exit_code": 3,
            "message": "blocked: rejected at sign-off (the greeting must be localised)"
        }});
        let back: Holder = serde_json::from_value(record).unwrap();
        assert_eq!(
            back.outcome,
            Some(Outcome::Rejected {
                reason: "the greeting must be localised".into()
            })
        );
    }
}
