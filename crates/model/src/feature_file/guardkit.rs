//! The other shapes GuardKit writes feature files in, turned into the one autobuild reads:
//! keys under a `feature:` wrapper, and per-task `wave:` numbers instead of
//! `orchestration.parallel_groups`.

use super::{FeatureFile, Located};
use base::diagnostic::Diagnostic;
use base::user_file::tree::{Node, Value};

/// The feature's keys from under a `feature:` wrapper, when the file has one and no top-level
/// `id`; keys beside the wrapper (`tasks:`, `orchestration:`) are kept unless the wrapper has
/// them too.
pub(super) fn unwrap_feature(tree: Node) -> Node {
    let wrapped = match tree.as_table() {
        Some(table) if table.get("id").is_none() => match table.get("feature") {
            Some(inner) if inner.as_table().is_some() => inner.clone(),
            _ => return tree,
        },
        _ => return tree,
    };
    match (tree.value, wrapped.value) {
        (Value::Table(outer), Value::Table(mut inner)) => {
            for entry in outer {
                if entry.key != "feature" && inner.get(&entry.key).is_none() {
                    inner.insert(entry);
                }
            }
            Node::new(Value::Table(inner), tree.pos)
        }
        (value, _) => Node::new(value, tree.pos),
    }
}

/// Per-task `wave:` numbers as parallel groups, in wave order; `None` when no task has one.
/// Either every task has a wave or none does: a task left out would silently run first.
pub(super) fn waves_as_groups(
    feature: &FeatureFile,
) -> Result<Option<Vec<Vec<Located>>>, Vec<Diagnostic>> {
    if feature.parallel_groups.is_some() || feature.tasks.iter().all(|t| t.wave.is_none()) {
        return Ok(None);
    }
    let missing: Vec<Diagnostic> = feature
        .tasks
        .iter()
        .filter(|t| t.wave.is_none())
        .map(|t| {
            t.pos
                .error(format!("task `{}` has no `wave`, but other tasks of the feature do", t.id.value))
                .with_help("give every task a `wave:` (1 runs first), or remove them all to have the waves computed from the dependencies")
        })
        .collect();
    if !missing.is_empty() {
        return Err(missing);
    }
    let mut numbers: Vec<u32> = feature
        .tasks
        .iter()
        .filter_map(|t| t.wave.as_ref().map(|w| w.0))
        .collect();
    numbers.sort_unstable();
    numbers.dedup();
    let groups = numbers
        .iter()
        .map(|number| {
            feature
                .tasks
                .iter()
                .filter_map(|t| match &t.wave {
                    Some((wave, pos)) if wave == number => Some(Located {
                        value: t.id.value.clone(),
                        pos: pos.clone(),
                    }),
                    _ => None,
                })
                .collect()
        })
        .collect();
    Ok(Some(groups))
}
