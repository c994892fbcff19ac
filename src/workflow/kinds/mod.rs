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
//! workflow language must not depend on the engine. A new kind is therefore a file here, a [`Uses`] variant (the compiler then
//! asks for its registry line), a variant of [`Action`] holding its typed keys, and its executor.

mod agent;
mod approval;
mod gate;
mod loops;
mod merge;
pub mod reference;
mod report;
mod run;
mod verify;
mod worktree;

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::workflow::model::Action;

pub use agent::AgentOutputs;
pub use approval::{Answer, ApprovalOutputs, SignOff};
pub use gate::GateOutputs;
pub use loops::{LoopExit, LoopOutputs};
pub use merge::MergeOutputs;
pub use report::ReportOutputs;
pub use run::RunOutputs;
pub use verify::VerifyOutputs;
pub use worktree::WorktreeOutputs;

/// What a step kind is, apart from how it runs.
pub struct Kind {
    pub uses: Uses,
    /// One sentence for the reference and `workflows kinds`.
    pub summary: &'static str,
    /// Keys a step of this kind may have besides [`COMMON_KEYS`].
    pub keys: &'static [Key],
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
    /// The dry run's description of a step of this kind.
    pub describe: fn(&Action) -> String,
}

/// Keys every step may have, whatever it `uses`.
pub const COMMON_KEYS: [Key; 5] = [
    Key::new(
        "id",
        "string",
        "unique name of the step; `steps.<id>` in expressions",
    ),
    Key::new("uses", "string", "the step kind"),
    Key::new("if", "expression", "the step is skipped when this is false"),
    Key::new(
        "always",
        "bool",
        "run even after a failure, a stop or Ctrl-C (reports, clean-up)",
    ),
    Key::new(
        "timeout",
        "duration",
        "stop the step after this long (\"20m\")",
    ),
];

/// A key of a step.
pub struct Key {
    pub name: &'static str,
    /// The value's form as the reference writes it.
    pub form: &'static str,
    pub doc: &'static str,
}

impl Key {
    pub const fn new(name: &'static str, form: &'static str, doc: &'static str) -> Key {
        Key { name, form, doc }
    }
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
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    Bool,
    Integer,
    Text,
    TextList,
}

impl ValueType {
    pub fn as_str(self) -> &'static str {
        match self {
            ValueType::Bool => "bool",
            ValueType::Integer => "integer",
            ValueType::Text => "string",
            ValueType::TextList => "list of strings",
        }
    }
}

/// The name of a step kind, as `uses` writes it and events and records carry it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Uses {
    Worktree,
    Agent,
    Verify,
    Gate,
    Loop,
    Approval,
    Merge,
    Run,
    Report,
}

impl Uses {
    /// Every built-in kind, in the order the reference lists them.
    pub const ALL: [Uses; 9] = [
        Uses::Worktree,
        Uses::Agent,
        Uses::Verify,
        Uses::Gate,
        Uses::Loop,
        Uses::Approval,
        Uses::Merge,
        Uses::Run,
        Uses::Report,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Uses::Worktree => "worktree",
            Uses::Agent => "agent",
            Uses::Verify => "verify",
            Uses::Gate => "gate",
            Uses::Loop => "loop",
            Uses::Approval => "approval",
            Uses::Merge => "merge",
            Uses::Run => "run",
            Uses::Report => "report",
        }
    }

    /// Everything about this kind but its execution (the registry of kinds).
    pub fn kind(self) -> &'static Kind {
        match self {
            Uses::Worktree => &worktree::KIND,
            Uses::Agent => &agent::KIND,
            Uses::Verify => &verify::KIND,
            Uses::Gate => &gate::KIND,
            Uses::Loop => &loops::KIND,
            Uses::Approval => &approval::KIND,
            Uses::Merge => &merge::KIND,
            Uses::Run => &run::KIND,
            Uses::Report => &report::KIND,
        }
    }
}

impl fmt::Display for Uses {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kind named `uses`, if it is built in.
pub fn named(uses: &str) -> Option<&'static Kind> {
    Uses::ALL
        .into_iter()
        .find(|u| u.as_str() == uses)
        .map(Uses::kind)
}

/// The `uses` names of every kind, in reference order.
pub fn names() -> Vec<&'static str> {
    Uses::ALL.into_iter().map(Uses::as_str).collect()
}

/// Each action's kind: the one place an [`Action`] variant is tied to its [`Uses`].
impl Action {
    /// The kind of this action (`uses`).
    pub fn uses(&self) -> Uses {
        match self {
            Action::Worktree => Uses::Worktree,
            Action::Agent { .. } => Uses::Agent,
            Action::Verify { .. } => Uses::Verify,
            Action::Gate { .. } => Uses::Gate,
            Action::Loop { .. } => Uses::Loop,
            Action::Approval { .. } => Uses::Approval,
            Action::Merge { .. } => Uses::Merge,
            Action::Run { .. } => Uses::Run,
            Action::Report => Uses::Report,
        }
    }

    /// Everything about this action's kind but its execution.
    pub fn kind(&self) -> &'static Kind {
        self.uses().kind()
    }
}

impl Kind {
    /// Whether a step of this kind may have `key` (besides the common keys).
    pub fn has_key(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k.name == key)
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
        if let Action::Loop { steps: body, .. } = &step.action {
            out.extend(placeholder_outputs(body));
        }
    }
    out
}
