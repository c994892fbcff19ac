//! The feature's task records, which note which of them were touched since the last save, so
//! that a save compares only those against what it saved ([`super::journal`]) and a landing
//! does not cost the size of the feature.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Deref;

use serde::{Deserialize, Serialize};

use super::TaskRecord;

/// A feature's task records by id. Reads go through [`Deref`] to the map; every change goes
/// through [`TaskRecords::get_mut`] or [`TaskRecords::insert`], which note the id while a
/// save handle tracks them. A loaded, cloned or new value tracks nothing: its first save
/// compares every record.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TaskRecords {
    records: BTreeMap<String, TaskRecord>,
    #[serde(skip)]
    touched: Option<Touched>,
}

/// What was touched since one save handle last saved these records.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Touched {
    /// The save ([`super::FeatureFile`]'s) the tracking is relative to.
    pub(super) saver: u64,
    /// Records reached through [`TaskRecords::get_mut`] or replaced by an insert.
    pub(super) ids: BTreeSet<String>,
    /// A record was added under a new id.
    pub(super) added: bool,
}

impl TaskRecords {
    /// The record of `id`, to change; noted as touched.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut TaskRecord> {
        let record = self.records.get_mut(id)?;
        if let Some(touched) = &mut self.touched {
            if !touched.ids.contains(id) {
                touched.ids.insert(id.to_string());
            }
        }
        Some(record)
    }

    /// Sets the record of `id`; noted as touched (or as an added id).
    pub fn insert(&mut self, id: String, record: TaskRecord) -> Option<TaskRecord> {
        if let Some(touched) = &mut self.touched {
            if self.records.contains_key(&id) {
                touched.ids.insert(id.clone());
            } else {
                touched.added = true;
            }
        }
        self.records.insert(id, record)
    }

    /// The records, as a map of their own.
    pub fn into_map(self) -> BTreeMap<String, TaskRecord> {
        self.records
    }

    /// What was touched since the save numbered `saver`, if it was these records' last.
    pub(super) fn touched_since(&self, saver: u64) -> Option<&Touched> {
        self.touched.as_ref().filter(|t| t.saver == saver)
    }

    /// Starts noting changes anew: the save numbered `saver` has just saved these records as
    /// they are.
    pub(super) fn saved_by(&mut self, saver: u64) {
        self.touched = Some(Touched {
            saver,
            ids: BTreeSet::new(),
            added: false,
        });
    }
}

impl Deref for TaskRecords {
    type Target = BTreeMap<String, TaskRecord>;

    fn deref(&self) -> &Self::Target {
        &self.records
    }
}

/// A copy tracks nothing: what it is saved against is not what the original was.
impl Clone for TaskRecords {
    fn clone(&self) -> Self {
        TaskRecords {
            records: self.records.clone(),
            touched: None,
        }
    }
}

/// Equal when the records are; what was touched is not part of the value.
impl PartialEq for TaskRecords {
    fn eq(&self, other: &Self) -> bool {
        self.records == other.records
    }
}

impl From<BTreeMap<String, TaskRecord>> for TaskRecords {
    fn from(records: BTreeMap<String, TaskRecord>) -> Self {
        TaskRecords {
            records,
            touched: None,
        }
    }
}

impl FromIterator<(String, TaskRecord)> for TaskRecords {
    fn from_iter<I: IntoIterator<Item = (String, TaskRecord)>>(iter: I) -> Self {
        BTreeMap::from_iter(iter).into()
    }
}

impl<'a> IntoIterator for &'a TaskRecords {
    type Item = (&'a String, &'a TaskRecord);
    type IntoIter = std::collections::btree_map::Iter<'a, String, TaskRecord>;

    fn into_iter(self) -> Self::IntoIter {
        self.records.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(ids: &[&str]) -> TaskRecords {
        ids.iter()
            .map(|id| (id.to_string(), TaskRecord::default()))
            .collect()
    }

    #[test]
    fn changes_are_noted_only_while_a_saver_tracks_them_and_only_for_that_saver() {
        let mut tasks = records(&["A", "B", "C"]);
        tasks.get_mut("A").unwrap().wave = 2;
        assert_eq!(tasks.touched_since(1), None, "nothing tracks a new value");

        tasks.saved_by(1);
        tasks.get_mut("B").unwrap().wave = 3;
        tasks.insert("C".into(), TaskRecord::default());
        assert!(tasks.get_mut("missing").is_none());
        let touched = tasks.touched_since(1).unwrap();
        assert_eq!(touched.ids.iter().collect::<Vec<_>>(), ["B", "C"]);
        assert!(!touched.added);
        assert_eq!(tasks.touched_since(2), None, "another saver compares all");

        tasks.insert("D".into(), TaskRecord::default());
        assert!(tasks.touched_since(1).unwrap().added);

        tasks.saved_by(1);
        assert!(tasks.touched_since(1).unwrap().ids.is_empty());
        let copy = tasks.clone();
        assert_eq!(copy, tasks);
        assert_eq!(copy.touched_since(1), None, "a copy tracks nothing");
        let loaded: TaskRecords =
            serde_json::from_str(&serde_json::to_string(&tasks).unwrap()).unwrap();
        assert_eq!(loaded, tasks);
        assert_eq!(
            loaded.touched_since(1),
            None,
            "a loaded value tracks nothing"
        );
    }
}
