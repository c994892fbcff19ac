//! How a higher-precedence layer patches a lower one.
//!
//! - Tables deep-merge: a key of the patch replaces or extends the same key of the base.
//! - Scalars replace.
//! - Arrays replace, **except arrays of tables that all have an `id`** (workflow steps, the steps
//!   of a loop): those merge element-wise by `id`. An element whose `id` the base already has is
//!   deep-merged into that element in place; an element with a new `id` is appended. This is what
//!   lets a workflow that says `extends = "player-coach"` change one loop's `max_iterations`
//!   with three lines instead of restating every step:
//!
//!   ```toml
//!   [[steps]]
//!   id = "cycle"
//!   max_iterations = 8
//!   ```
//!
//! Positions travel with values, so after merging every leaf still says which layer set it.

use base::user_file::tree::{Node, Value};

/// Applies `patch` on top of `base`.
pub fn merge(base: &mut Node, patch: Node) {
    match (&mut base.value, patch.value) {
        (Value::Table(base_table), Value::Table(patch_table)) => {
            for entry in patch_table {
                match base_table.get_mut(&entry.key) {
                    Some(existing) => merge(existing, entry.value),
                    None => base_table.insert(entry),
                }
            }
        }
        (Value::Array(base_items), Value::Array(patch_items))
            if merges_by_id(base_items, &patch_items) =>
        {
            for item in patch_items {
                let id = item.get_str("id").map(str::to_string);
                match base_items
                    .iter_mut()
                    .find(|existing| existing.get_str("id") == id.as_deref())
                {
                    Some(existing) => merge(existing, item),
                    None => base_items.push(item),
                }
            }
        }
        (_, value) => {
            base.value = value;
            base.pos = patch.pos;
        }
    }
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
        merge(&mut base, patch);
        let coach = base.get("roles").unwrap().get("coach").unwrap();
        assert_eq!(coach.get_str("model"), Some("opus"));
        assert_eq!(coach.get("model").unwrap().pos.layer(), Layer::Repo);
        assert_eq!(coach.get("tools").unwrap().as_array().unwrap().len(), 1);
    }

    #[test]
    fn steps_merge_by_id_in_place_and_new_ids_append() {
        let mut base = tree(
            "[[steps]]\nid = \"a\"\nuses = \"worktree\"\n\
             [[steps]]\nid = \"cycle\"\nuses = \"loop\"\nmax_iterations = 5\n\
             [[steps.steps]]\nid = \"gate\"\nuses = \"gate\"\n\
             [[steps]]\nid = \"z\"\nuses = \"report\"\n",
            Layer::BuiltIn,
        );
        let patch = tree(
            "[[steps]]\nid = \"cycle\"\nmax_iterations = 8\n\
             [[steps.steps]]\nid = \"lint\"\nuses = \"run\"\n\
             [[steps]]\nid = \"extra\"\nuses = \"report\"\n",
            Layer::Repo,
        );
        merge(&mut base, patch);
        let steps = base.get("steps").unwrap().as_array().unwrap();
        let ids: Vec<_> = steps.iter().filter_map(|s| s.get_str("id")).collect();
        assert_eq!(ids, ["a", "cycle", "z", "extra"]);
        let cycle = &steps[1];
        assert_eq!(cycle.get_str("uses"), Some("loop"));
        assert!(matches!(
            cycle.get("max_iterations").unwrap().value,
            Value::Integer(8)
        ));
        let body: Vec<_> = cycle
            .get("steps")
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s.get_str("id"))
            .collect();
        assert_eq!(body, ["gate", "lint"]);
    }

    #[test]
    fn arrays_without_ids_replace() {
        let mut base = tree("tools = [\"read\", \"write\"]\n", Layer::BuiltIn);
        merge(&mut base, tree("tools = []\n", Layer::Repo));
        assert!(base.get("tools").unwrap().as_array().unwrap().is_empty());
    }
}
