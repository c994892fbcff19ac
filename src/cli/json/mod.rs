//! The `--json` documents of the inspection commands (`task --dry-run`, `feature --dry-run`,
//! `workflows validate`, `doctor`) and of `complete`, `discard` and `init`: serde types that are the single source of each shape, every
//! document with `"version": 1` (docs/runs.md, "Machine-readable output"). A field may be added
//! within a version; a field removed or changed in meaning raises it.

pub mod doctor;
pub mod plan;
pub mod results;
pub mod validate;

use serde::Serialize;

/// The shape version every document carries.
pub const VERSION: u32 = 1;

/// `value` as pretty JSON on stdout.
pub fn print<T: Serialize>(value: &T) {
    match serde_json::to_string_pretty(value) {
        Ok(text) => crate::ui::line(&text),
        // The types hold only strings, numbers and lists: this cannot fail.
        Err(e) => crate::ui::warn(&format!("cannot write the JSON document: {e}")),
    }
}
