//! The built-in step kinds (`uses = "…"`), one file each, and their registry ([`Uses::kind`]).
//!
//! A kind's file owns every fact about it that is not its execution: the keys a step of that
//! kind may have (its step struct), the typed outputs it publishes to expressions
//! (`steps.<id>.outputs.<name>`; its outputs struct), whether it needs a worktree, spends wall time or budget, may leave files behind, must sit
//! inside a loop, how the dry run describes it, and its reference text (`docs/workflows.md` and
//! `autobuild workflows kinds` are generated from these). Decoding, validation, the
//! interpreter, the dry run and the feature runner ask the kind instead of listing kinds
//! themselves.
//!
//! Execution lives a floor up, in `engine::exec::<kind>`, because it needs the live run; the
//! workflow language must not depend on the engine. A new kind is therefore a file here (its
//! step struct and its outputs struct, whose fields and doc comments are its keys and outputs,
//! and its [`Kind`]), one
//! line in `step_kinds!` below (which derives its [`Action`] variant and its [`Uses`] name), and
//! its executor with its line in the engine's dispatch.

mod agent;
mod approval;
mod gate;
mod keys;
mod loops;
mod merge;
mod outputs;
pub mod reference;
mod report;
mod run;
mod verify;
mod worktree;

use base::Keyword;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize};
use strum::IntoEnumIterator;

pub use agent::{stated_complexity, AgentOutputs, AgentStep, NoCriteria, ReviewedCriteria};
pub use approval::{Answer, ApprovalOutputs, ApprovalStep, SignOff};
pub use gate::{GateOutputs, GateStep};
pub use keys::{one_line, Key, COMMON_KEYS, FORM_EXTENSION};
pub use loops::{LoopExit, LoopOutputs, LoopStep};
pub use merge::{MergeOutputs, MergeStep};
pub use outputs::{Output, ValueType};
pub use report::{ReportOutputs, ReportStep};
pub use run::{RunOutputs, RunStep};
pub use verify::{VerifyOutputs, VerifyStep};
pub use worktree::{WorktreeOutputs, WorktreeStep};

/// What a step kind is, apart from how it runs, its keys (which its step struct declares) and
/// its outputs (which its outputs struct declares).
pub struct Kind {
    pub uses: Uses,
    /// One sentence for the reference and `workflows kinds`.
    pub summary: &'static str,
    /// It works in the task's worktree, so a `worktree` step must come first.
    pub needs_worktree: bool,
    /// It spends wall time or money: run limits are checked before it starts.
    pub spends_budget: bool,
    /// It runs commands that may leave files in the worktree, which the runner removes after.
    pub leaves_files: bool,
    /// It judges one turn, so it must be inside a loop.
    pub loop_only: bool,
}

/// Declares the built-in kinds, each once: its variant of [`Action`] holding the kind's step
/// struct (its keys), from which [`Uses`] (the kind's name) is derived, and the registry lines
/// that tie a name to the kind's facts, struct schema and dry-run description.
macro_rules! step_kinds {
    ($($variant:ident($module:ident::$step:ident, $outputs:ident)),+ $(,)?) => {
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

            /// The JSON Schema of what this kind publishes: its outputs struct's.
            fn outputs_schema(self, generator: &mut SchemaGenerator) -> Schema {
                match self {
                    $(Uses::$variant => <$module::$outputs as JsonSchema>::json_schema(generator),)+
                }
            }

            /// The serde names of this kind's outputs, in the order its struct declares them.
            fn output_order(self) -> &'static [&'static str] {
                match self {
                    $(Uses::$variant => keys::field_names::<$module::$outputs>(),)+
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
    Worktree(worktree::WorktreeStep, WorktreeOutputs),
    Agent(agent::AgentStep, AgentOutputs),
    Verify(verify::VerifyStep, VerifyOutputs),
    Gate(gate::GateStep, GateOutputs),
    Loop(loops::LoopStep, LoopOutputs),
    Approval(approval::ApprovalStep, ApprovalOutputs),
    Merge(merge::MergeStep, MergeOutputs),
    Run(run::RunStep, RunOutputs),
    Report(report::ReportStep, ReportOutputs),
}

/// The kind named `uses`, if it is built in.
pub fn named(uses: &str) -> Option<&'static Kind> {
    uses.parse::<Uses>().ok().map(Uses::kind)
}

/// The `uses` names of every kind, in reference order.
pub fn names() -> Vec<&'static str> {
    Uses::iter().map(Keyword::as_str).collect()
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

    /// What a step of this kind publishes as `steps.<id>.outputs.<name>`, from its outputs
    /// struct.
    pub fn outputs(&self) -> &'static [Output] {
        outputs::of(self.uses)
    }

    pub fn output(&self, name: &str) -> Option<&'static Output> {
        self.outputs().iter().find(|o| o.name == name)
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
            .outputs()
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
