//! How a higher-precedence layer patches a lower one.
//!
//! - Tables deep-merge: a key of the patch replaces or extends the same key of the base.
//! - Scalars replace.
//! - Arrays replace, **except arrays of tables that all have an `id`** (workflow steps, the steps
//!   of a loop): those merge element-wise by `id`. An element whose `id` the base already has is
//!   deep-merged into that element in place. This is what lets a workflow that says
//!   `extends = "player-coach"` change one loop's `max_iterations` with three lines instead of
//!   restating every step:
//!
//!   ```toml
//!   [[steps]]
//!   id = "cycle"
//!   max_iterations = 8
//!   ```
//!
//! - **Steps run where the patch writes them.** An element with a new `id` goes right after the
//!   element the patch lists just before it; the patch's first elements, when new, go right
//!   before the first element it lists that the base has; a patch that names no element of the
//!   base appends its new ones. So `review`, `security_review`, `gate` puts `security_review`
//!   between the two, and `signoff`, `merge` puts `signoff` before the merge.
//! - **A patch cannot move a step.** When it lists elements the base has in another order than
//!   the base runs them, it is refused ([`merge`] returns the problem, at the patch's `id`):
//!   whether the patch meant to reorder them or only wrote them carelessly cannot be told, and
//!   guessing wrong moves a reviewer behind its gate or a sign-off behind the merge without a
//!   word. A workflow that wants another order writes its steps in full (without `extends`).
//!
//! Positions travel with values, so after merging every leaf still says which layer set it.

use base::diagnostic::Diagnostic;
use base::user_file::tree::{Node, Value};

/// Applies `patch` on top of `base`; the problems are the patch's elements listed against the
/// base's order (the merge still happens, in the base's order, so later checks can run).
#[must_use]
pub fn merge(base: &mut Node, patch: Node) -> Vec<Diagnostic> {
    match (&mut base.value, patch.value) {
        (Value::Table(base_table), Value::Table(patch_table)) => {
            let mut problems = Vec::new();
            for entry in patch_table {
                match base_table.get_mut(&entry.key) {
                    Some(existing) => problems.extend(merge(existing, entry.value)),
                    None => base_table.insert(entry),
                }
            }
            problems
        }
        (Value::Array(base_items), Value::Array(patch_items))
            if merges_by_id(base_items, &patch_items) =>
        {
            merge_by_id(base_items, patch_items)
        }
        (_, value) => {
            base.value = value;
            base.pos = patch.pos;
            Vec::new()
        }
    }
}

/// The elements of `patch` merged into `base` by `id`, new ones placed among their neighbours
/// in the patch (the module's rules).
fn merge_by_id(base: &mut Vec<Node>, patch: Vec<Node>) -> Vec<Diagnostic> {
    let base_ids: Vec<String> = base.iter().filter_map(id_of).map(str::to_string).collect();
    let mut problems = Vec::new();
    // New elements listed before any element of the base: placed once one is found.
    let mut leading: Vec<Node> = Vec::new();
    // Where the next new element goes: right after the last element placed.
    let mut cursor: Option<usize> = None;
    // Of the base's elements listed so far, the one the base runs last (its place there).
    let mut latest: Option<(usize, &str)> = None;
    for item in patch {
        let rank = id_of(&item).and_then(|id| base_ids.iter().position(|b| b == id));
        let Some(rank) = rank else {
            match cursor {
                Some(at) => {
                    base.insert(at, item);
                    cursor = Some(at + 1);
                }
                None => leading.push(item),
            }
            continue;
        };
        let id = base_ids[rank].as_str();
        let Some(mut at) = base.iter().position(|e| id_of(e) == Some(id)) else {
            continue;
        };
        if !leading.is_empty() {
            let count = leading.len();
            base.splice(at..at, leading.drain(..));
            at += count;
        }
        match latest {
            Some((later_rank, later)) if later_rank > rank => {
                problems.push(listed_out_of_order(&item, id, later, &base_ids));
            }
            _ => latest = Some((rank, id)),
        }
        problems.extend(merge(&mut base[at], item));
        cursor = Some(at + 1);
    }
    base.extend(leading);
    problems
}

fn id_of(node: &Node) -> Option<&str> {
    node.get_str("id")
}

/// The patch lists `id` after `later`, which the base runs after it.
fn listed_out_of_order(item: &Node, id: &str, later: &str, base_order: &[String]) -> Diagnostic {
    let at = item.get("id").map_or(&item.pos, |node| &node.pos);
    at.error(format!(
        "step `{id}` is listed after `{later}`, but the workflow this patches runs `{id}` before `{later}`"
    ))
    .with_help(format!(
        "its order is {}; a patch places new steps where it lists them but cannot move the ones it \
         inherits: list `{id}` before `{later}` (or leave out the one you do not change), or write \
         every step of a workflow without `extends` to run them in another order",
        base_order.join(" → ")
    ))
}

/// Whether two arrays are lists of tables identified by `id`.
fn merges_by_id(base: &[Node], patch: &[Node]) -> bool {
    let has_id = |node: &Node| node.get_str("id").is_some();
    !patch.is_empty() && patch.iter().all(has_id) && base.iter().all(has_id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::user_file::parse_toml;
    use base::user_file::source::{Layer, Source};

    fn tree(text: &str, layer: Layer) -> Node {
        parse_toml::parse(&Source::new(layer.label(), text, layer)).unwrap()
    }

    /// A workflow's steps written shortly: `a loop(b c) d` is step `a`, the loop `loop` with
    /// the body `b`, `c`, then `d`.
    fn steps(short: &str) -> String {
        let mut text = String::new();
        let mut nested = false;
        for word in short.split_whitespace() {
            let (word, opens) = match word.split_once('(') {
                Some((id, first)) => {
                    text.push_str(&format!("[[steps]]\nid = \"{id}\"\nuses = \"loop\"\n"));
                    (first, true)
                }
                None => (word, false),
            };
            nested |= opens;
            let closes = word.ends_with(')');
            let id = word.trim_end_matches(')');
            let table = if nested { "steps.steps" } else { "steps" };
            text.push_str(&format!("[[{table}]]\nid = \"{id}\"\n"));
            nested &= !closes;
        }
        text
    }

    /// The steps of a tree written as [`steps`] writes them.
    fn order(node: &Node) -> String {
        let items = node
            .get("steps")
            .and_then(Node::as_array)
            .unwrap_or_default();
        let words: Vec<String> = items
            .iter()
            .map(|step| {
                let id = step.get_str("id").unwrap_or("?");
                match step.get("steps") {
                    Some(_) => format!("{id}({})", order(step)),
                    None => id.to_string(),
                }
            })
            .collect();
        words.join(" ")
    }

    #[test]
    fn steps_run_in_the_order_the_patch_lists_them() {
        // (what, base, patch, result)
        let cases = [
            ("a known id merges in place", "a b c", "b", "a b c"),
            ("a new id between two", "a b c", "a x b", "a x b c"),
            ("after the one listed before it", "a b c", "b x", "a b x c"),
            ("at the front", "a b c", "x a", "x a b c"),
            (
                "new ones before the first known",
                "a b c",
                "x y b",
                "a x y b c",
            ),
            ("no known neighbour appends", "a b", "x y", "a b x y"),
            (
                "a sign-off before the merge",
                "worktree cycle merge report",
                "signoff merge",
                "worktree cycle signoff merge report",
            ),
            (
                "a nested loop's steps too",
                "w cycle(implement review gate) merge",
                "cycle(review security gate)",
                "w cycle(implement review security gate) merge",
            ),
            (
                "a nested loop appends when it names no neighbour",
                "w cycle(implement gate) merge",
                "cycle(lint) extra",
                "w cycle(implement gate lint) extra merge",
            ),
        ];
        for (what, base, patch, result) in cases {
            let mut merged = tree(&steps(base), Layer::BuiltIn);
            let problems = merge(&mut merged, tree(&steps(patch), Layer::Repo));
            assert!(problems.is_empty(), "{what}: {problems:#?}");
            assert_eq!(order(&merged), result, "{what}");
        }
    }

    #[test]
    fn a_patch_listing_inherited_steps_in_another_order_is_refused() {
        // (what, base, patch, the patch's line of the refused id, its step, the one before it)
        let cases = [
            ("two swapped", "a b c", "c a", 4, "a", "c"),
            ("one ahead of two", "a b c", "c a b", 4, "a", "c"),
            (
                "in a loop",
                "w cycle(review gate) merge",
                "cycle(gate review)",
                7,
                "review",
                "gate",
            ),
        ];
        for (what, base, patch, line, id, later) in cases {
            let mut merged = tree(&steps(base), Layer::BuiltIn);
            let problems = merge(&mut merged, tree(&steps(patch), Layer::Repo));
            let first = problems
                .first()
                .unwrap_or_else(|| panic!("{what}: not refused"));
            assert_eq!(first.location.map(|l| l.line), Some(line), "{what}");
            assert_eq!(
                first.message,
                format!("step `{id}` is listed after `{later}`, but the workflow this patches runs `{id}` before `{later}`"),
                "{what}"
            );
            assert!(
                first.help.as_deref().is_some_and(|h| h.contains(" → ")),
                "{what}"
            );
        }
        let mut merged = tree(&steps("a b c"), Layer::BuiltIn);
        let problems = merge(&mut merged, tree(&steps("c a b"), Layer::Repo));
        assert_eq!(
            problems.len(),
            2,
            "each step listed after a later one: {problems:#?}"
        );
        assert_eq!(
            problems[0].help.as_deref(),
            Some("its order is a → b → c; a patch places new steps where it lists them but cannot move the ones it inherits: list `a` before `c` (or leave out the one you do not change), or write every step of a workflow without `extends` to run them in another order")
        );
    }

    #[test]
    fn tables_deep_merge_and_scalars_replace() {
        let mut base = tree(
            "[roles.coach]\nmodel = \"sonnet\"\ntools = [\"read\", \"bash\"]\n",
            Layer::BuiltIn,
        );
        let patch = tree(
            "[roles.coach]\nmodel = \"opus\"\ntools = [\"read\"]\n",
            Layer::Repo,
        );
        assert!(merge(&mut base, patch).is_empty());
        let coach = base.get("roles").unwrap().get("coach").unwrap();
        assert_eq!(coach.get_str("model"), Some("opus"));
        assert_eq!(coach.get("model").unwrap().pos.layer(), Layer::Repo);
        assert_eq!(coach.get("tools").unwrap().as_array().unwrap().len(), 1);
    }

    #[test]
    fn steps_merge_by_id_in_place_keeping_what_the_patch_does_not_say() {
        let mut base = tree(
            "[[steps]]\nid = \"cycle\"\nuses = \"loop\"\nmax_iterations = 5\n",
            Layer::BuiltIn,
        );
        let patch = tree(
            "[[steps]]\nid = \"cycle\"\nmax_iterations = 8\n",
            Layer::Repo,
        );
        assert!(merge(&mut base, patch).is_empty());
        let cycle = &base.get("steps").unwrap().as_array().unwrap()[0];
        assert_eq!(cycle.get_str("uses"), Some("loop"));
        let bound = cycle.get("max_iterations").unwrap();
        assert!(matches!(bound.value, Value::Integer(8)));
        assert_eq!(bound.pos.layer(), Layer::Repo);
    }

    #[test]
    fn arrays_without_ids_replace() {
        let mut base = tree("tools = [\"read\", \"write\"]\n", Layer::BuiltIn);
        assert!(merge(&mut base, tree("tools = []\n", Layer::Repo)).is_empty());
        assert!(base.get("tools").unwrap().as_array().unwrap().is_empty());
    }
}
