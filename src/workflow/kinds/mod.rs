//! The built-in step kinds (`uses = "…"`), one file each, and their registry ([`Uses::kind`]).
//!
//! A kind's file owns every fact about it that is not its execution: the keys a step of that
//! kind may have, the typed outputs it publishes to expressions (`steps.<id>.outputs.<name>`),
//! whether it needs a worktree, spends wall time or budget, may leave files behind, must sit
//! inside a loop, how the dry run describes it, and its reference text (`docs/workflows.md` and
//! `autobuild workflows kinds` are generated from these). Decoding, validation, the
//! interpreter, the dry run and the feature runner ask the kind instead of listing kinds
//! themselves.
//!
//! Execution lives a floor up, in `engine::exec::<kind>`, because it needs the live run; the
//! workflow language must not depend on the engine. A new kind is therefore a file here (its
//! step struct, whose fields and doc comments are its keys, its [`Kind`] and its outputs), one
//! line in `step_kinds!` below (which derives its [`Action`] variant and its [`Uses`] name), and
//! its executor with its line in the engine's dispatch.

mod agent;
mod approval;
mod gate;
mod keys;
mod loops;
mod merge;
pub mod reference;
mod report;
mod run;
mod verify;
mod worktree;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use strum::IntoEnumIterator;

pub use agent::{AgentOutputs, AgentStep};
pub use approval::{Answer, ApprovalOutputs, ApprovalStep, SignOff};
pub use gate::{GateOutputs, GateStep};
pub use keys::{one_line, Key, COMMON_KEYS, FORM_EXTENSION};
pub use loops::{LoopExit, LoopOutputs, LoopStep};
pub use merge::{MergeOutputs, MergeStep};
pub use report::{ReportOutputs, ReportStep};
pub use run::{RunOutputs, RunStep};
pub use verify::{VerifyOutputs, VerifyStep};
pub use worktree::{WorktreeOutputs, WorktreeStep};

/// What a step kind is, apart from how it runs and its keys (which its step struct declares).
pub struct Kind {
    pub uses: Uses,
    /// One sentence for the reference and `workflows kinds`.
    pub summary: &'static str,
    /// What it publishes as `steps.<id>.outputs.<name>`.
    pub outputs: &'static [Output],
    /// It works in the task's worktree, so a `worktree` step must come first.
    pub needs_worktree: bool,
    /// It spends wall time or money: run limits are checked before it starts.
    pub spends_budget: bool,
    /// It runs commands that may leave files in the worktree, which the runner removes after.
    pub leaves_files: bool,
    /// It judges one turn, so it must be inside a loop.
    pub loop_only: bool,
}

/// One typed output of a step.
pub struct Output {
    pub name: &'static str,
    pub ty: ValueType,
    pub doc: &'static str,
}

impl Output {
    pub const fn new(name: &'static str, ty: ValueType, doc: &'static str) -> Output {
        Output { name, ty, doc }
    }
}

/// The type of an output value as expressions see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
pub enum ValueType {
    #[strum(serialize = "bool")]
    Bool,
    #[strum(serialize = "integer")]
    Integer,
    #[strum(serialize = "string")]
    Text,
    #[strum(serialize = "list of strings")]
    TextList,
}

impl ValueType {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Declares the built-in kinds, each once: its variant of [`Action`] holding the kind's step
/// struct (its keys), from which [`Uses`] (the kind's name) is derived, and the registry lines
/// that tie a name to the kind's facts, struct schema and dry-run description.
macro_rules! step_kinds {
    ($($variant:ident($module:ident::$step:ident)),+ $(,)?) => {
        /// The built-in actions, tagged by `uses`: each holds the keys of its kind, declared
        /// with their docs by the kind's step struct in `workflow/kinds/<kind>.rs`.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, strum::EnumDiscriminants)]
        #[serde(tag = "uses", rename_all = "kebab-case")]
        #[strum_discriminants(
            name(Uses),
            derive(
                Hash,
                PartialOrd,
                Ord,
                Serialize,
                Deserialize,
                strum::Display,
                strum::EnumIter,
                strum::EnumString,
                strum::IntoStaticStr,
            ),
            serde(rename_all = "kebab-case"),
            strum(serialize_all = "kebab-case"),
            doc = "The name of a step kind, as `uses` writes it and events and records carry it; \
                   derived from [`Action`], in the order the reference lists the kinds."
        )]
        pub enum Action {
            $($variant($module::$step),)+
        }

        impl Uses {
            /// Everything about this kind but its execution (the registry of kinds).
            pub fn kind(self) -> &'static Kind {
                match self {
                    $(Uses::$variant => &$module::KIND,)+
                }
            }

            /// The JSON Schema of this kind's keys: its step struct's.
            pub fn step_schema(self, generator: &mut SchemaGenerator) -> Schema {
                match self {
                    $(Uses::$variant => <$module::$step as JsonSchema>::json_schema(generator),)+
                }
            }

            /// The serde names of this kind's keys, in the order its step struct declares them.
            fn key_order(self) -> &'static [&'static str] {
                match self {
                    $(Uses::$variant => keys::field_names::<$module::$step>(),)+
                }
            }
        }

        impl Action {
            /// The dry run's description of this step.
            pub fn describe(&self) -> String {
                match self {
                    $(Action::$variant(step) => step.describe(),)+
                }
            }
        }
    };
}

step_kinds! {
    Worktree(worktree::WorktreeStep),
    Agent(agent::AgentStep),
    Verify(verify::VerifyStep),
    Gate(gate::GateStep),
    Loop(loops::LoopStep),
    Approval(approval::ApprovalStep),
    Merge(merge::MergeStep),
    Run(run::RunStep),
    Report(report::ReportStep),
}

impl Uses {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// The kind named `uses`, if it is built in.
pub fn named(uses: &str) -> Option<&'static Kind> {
    uses.parse::<Uses>().ok().map(Uses::kind)
}

/// The `uses` names of every kind, in reference order.
pub fn names() -> Vec<&'static str> {
    Uses::iter().map(Uses::as_str).collect()
}

impl Action {
    /// The kind of this action (`uses`).
    pub fn uses(&self) -> Uses {
        self.into()
    }

    /// Everything about this action's kind but its execution.
    pub fn kind(&self) -> &'static Kind {
        self.uses().kind()
    }
}

impl Kind {
    /// The keys a step of this kind may have besides [`COMMON_KEYS`], from its step struct.
    pub fn keys(&self) -> &'static [Key] {
        keys::of(self.uses)
    }

    /// Whether a step of this kind may have `key` (besides the common keys).
    pub fn has_key(&self, key: &str) -> bool {
        self.keys().iter().any(|k| k.name == key)
    }

    pub fn output(&self, name: &str) -> Option<&Output> {
        self.outputs.iter().find(|o| o.name == name)
    }
}

#[cfg(test)]
mod tests;

/// Stand-ins for the outputs of every step of `steps` (loop bodies included), keyed by step
/// id as prompts see them (`steps.<id>.outputs.<name>`): what the preflight and the dry run
/// render prompts with before any step has run. A text output says where its value will come
/// from.
pub fn placeholder_outputs(
    steps: &[crate::workflow::model::Step],
) -> serde_json::Map<String, serde_json::Value> {
    use serde_json::{json, Value};
    let mut out = serde_json::Map::new();
    for step in steps {
        let outputs: serde_json::Map<String, Value> = step
            .action
            .kind()
            .outputs
            .iter()
            .map(|output| {
                let value = match output.ty {
                    ValueType::Bool => json!(false),
                    ValueType::Integer => json!(0),
                    ValueType::Text => json!(format!(
                        "(the `{}` output of step `{}`, filled in when it has run)",
                        output.name, step.id
                    )),
                    ValueType::TextList => json!([]),
                };
                (output.name.to_string(), value)
            })
            .collect();
        out.insert(step.id.clone(), json!({ "outputs": outputs }));
        if let Action::Loop(LoopStep { steps: body, .. }) = &step.action {
            out.extend(placeholder_outputs(body));
        }
    }
    out
}
