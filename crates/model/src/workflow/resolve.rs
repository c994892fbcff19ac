//! Resolution: from a workflow name or file to one merged, validated workflow.
//!
//! 1. Find the document: a path names a file; a name picks the highest-precedence document with
//!    that `name` (repo over user over built-in).
//! 2. Follow `extends`: the named workflow is resolved first (when it is the document's own name,
//!    the next lower-precedence document of that name), then this document is merged on top.
//!    `replaces = "<own name>"` stands alone on purpose. A document whose name is also used by a
//!    lower-precedence one and that says neither is an error: shadowing is never silent.
//! 3. Merge the `[roles.<name>]` tables of `.autobuild/config.toml` into the workflow's roles.
//! 4. Apply the command-line overrides.
//! 5. Decode the typed model, then run the one validator.
//!
//! Every entry point (`task`, `--dry-run`, `workflows show|validate`) goes through [`resolve`]
//! or [`Catalog::resolve`], so they cannot disagree about what a workflow means.

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::workflow::annotate;
use crate::workflow::catalog::{Catalog, Document, Opened};
use crate::workflow::close_or_listed;
use crate::workflow::context::PromptContext;
use crate::workflow::decode::decode_parts;
use crate::workflow::merge::merge;
use crate::workflow::model::Workflow;
use crate::workflow::overrides::{self, Overrides};
use crate::workflow::prompts::Prompts;
use crate::workflow::validate::{validate, validate_decoded_part};
use base::diagnostic::Diagnostic;
use base::error::{Class, Error, Problem};
use base::user_file::source::Layer;
use base::user_file::tree::Node;

/// A workflow ready to run: merged from every layer, decoded and validated.
#[derive(Debug, Clone)]
pub struct ResolvedWorkflow {
    pub workflow: Workflow,
    /// The file the workflow was resolved from (the top of its `extends` chain), as shown to
    /// users.
    pub source: PathBuf,
    /// The precedence layer of that file.
    pub layer: Layer,
    /// The prompt templates visible to this workflow.
    pub prompts: Prompts,
    /// The resolved workflow as TOML (`workflow.resolved.toml`).
    pub toml: String,
    /// SHA-256 of [`ResolvedWorkflow::toml`], hex.
    pub hash: String,
    tree: Node,
    /// What validation found that does not stop the workflow (a loop with a huge bound and
    /// no `until`, …).
    pub warnings: Vec<Diagnostic>,
}

impl ResolvedWorkflow {
    /// Renders a prompt template (strict: reading anything the context lacks is an error).
    pub fn render_prompt(&self, name: &str, context: &PromptContext) -> Result<String, Error> {
        self.prompts.render(name, context).map_err(Error::from)
    }

    /// The resolved TOML with a comment on every value that did not come from
    /// [`ResolvedWorkflow::source`]'s base document, saying where it came from.
    pub fn annotated_toml(&self) -> String {
        annotate::annotate(&self.toml, &self.tree)
    }

    /// The keys of role `role` set by `.autobuild/config.toml` or the command line, each with
    /// where it was set (`model from .autobuild/config.toml:2`): the dry run shows them so an
    /// override of a workflow's role is never silent.
    pub fn role_overrides(&self, role: &str) -> Vec<String> {
        let Some(table) = self
            .tree
            .get("roles")
            .and_then(|roles| roles.get(role))
            .and_then(Node::as_table)
        else {
            return Vec::new();
        };
        table
            .iter()
            .filter(|entry| matches!(entry.value.pos.layer(), Layer::Config | Layer::CommandLine))
            .map(|entry| format!("{} from {}", entry.key, entry.value.pos.describe()))
            .collect()
    }

    /// Where role `role`'s `key` was set (`.autobuild/config.toml:12`, a workflow file's line),
    /// for messages about its value; `None` when the key is not set.
    pub fn role_key_declared(&self, role: &str, key: &str) -> Option<String> {
        let node = self.tree.get("roles")?.get(role)?.as_table()?.get(key)?;
        Some(node.pos.describe())
    }
}

/// Resolves a workflow by name or path as seen from `root` (a repository root, or none).
pub fn resolve(
    root: Option<&Path>,
    name_or_path: &str,
    overrides: &Overrides,
) -> Result<ResolvedWorkflow, Error> {
    Catalog::discover(root)?.resolve(name_or_path, overrides)
}

/// Problems grouped by file (files in the order they first appear), each file's from top to
/// bottom, each problem once (one bad value can reach several places of a merged tree).
pub fn in_reading_order(problems: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut files: Vec<PathBuf> = Vec::new();
    for problem in &problems {
        if !files.contains(&problem.path) {
            files.push(problem.path.clone());
        }
    }
    let mut ordered = problems;
    ordered.sort_by_key(|p| (files.iter().position(|f| *f == p.path), p.location));
    let mut unique: Vec<Diagnostic> = Vec::with_capacity(ordered.len());
    for problem in ordered {
        if !unique.contains(&problem) {
            unique.push(problem);
        }
    }
    unique
}

/// Whether a `--workflow` argument names a file rather than a workflow.
pub fn is_path(name_or_path: &str) -> bool {
    name_or_path.contains(['/', '\\'])
        || [".toml", ".yaml", ".yml"]
            .iter()
            .any(|ext| name_or_path.ends_with(ext))
}

impl Catalog {
    pub fn resolve(
        &self,
        name_or_path: &str,
        overrides: &Overrides,
    ) -> Result<ResolvedWorkflow, Error> {
        if is_path(name_or_path) {
            return match self.open_file(Path::new(name_or_path))? {
                Opened::Discovered(index) => self.resolve_index(index, overrides),
                Opened::File(document) => self.resolve_file(&document, overrides),
            };
        }
        self.resolve_index(self.find_named(name_or_path)?, overrides)
    }

    /// Resolves the catalog's document at `index`.
    pub fn resolve_index(
        &self,
        index: usize,
        overrides: &Overrides,
    ) -> Result<ResolvedWorkflow, Error> {
        self.resolve_document(&self.documents[index], Some(index), overrides)
    }

    /// Resolves a workflow file outside the discovery directories (see [`Catalog::open_file`]).
    pub fn resolve_file(
        &self,
        document: &Document,
        overrides: &Overrides,
    ) -> Result<ResolvedWorkflow, Error> {
        self.resolve_document(document, None, overrides)
    }

    /// Resolves `document`; `rank` is its index in the catalog (none: above every document).
    fn resolve_document(
        &self,
        document: &Document,
        rank: Option<usize>,
        overrides: &Overrides,
    ) -> Result<ResolvedWorkflow, Error> {
        let mut tree = self.chain(document, rank, &mut Vec::new())?;
        let mut problems = self.apply_config_roles(&mut tree);
        if let Err(mut found) = overrides::apply(&mut tree, overrides) {
            problems.append(&mut found);
        }
        let prompts = Prompts::new(self.prompts.iter().cloned());
        let decoded = decode_parts(&tree);
        let workflow = match decoded.part {
            Some(part) if decoded.problems.is_empty() => {
                problems.extend(validate(&part.workflow, &tree, &prompts));
                part.workflow
            }
            part => {
                // The mistakes of what decoded come with the decoding ones, in one report.
                problems.extend(decoded.problems);
                if let Some(part) = part {
                    problems.extend(validate_decoded_part(
                        &part.workflow,
                        &part.tree,
                        &prompts,
                        &part.left_out,
                    ));
                }
                return Err(in_reading_order(problems).into());
            }
        };
        if problems.iter().any(|p| !p.is_warning()) {
            return Err(in_reading_order(problems).into());
        }
        let toml = toml::to_string(&workflow).map_err(|source| Unwritable {
            name: workflow.name.clone(),
            source,
        })?;
        let hash = format!("{:x}", Sha256::digest(toml.as_bytes()));
        Ok(ResolvedWorkflow {
            workflow,
            source: document.source.path.clone(),
            layer: document.source.layer,
            prompts,
            toml,
            hash,
            tree,
            warnings: problems,
        })
    }

    /// The document merged on top of what it extends.
    fn chain(
        &self,
        document: &Document,
        rank: Option<usize>,
        seen: &mut Vec<PathBuf>,
    ) -> Result<Node, Vec<Diagnostic>> {
        let tree = document.tree.clone()?;
        let Some(name_node) = tree.get("name") else {
            return Err(vec![tree
                .pos
                .error("missing key `name`")
                .with_help("every workflow file names the workflow it defines")]);
        };
        if seen.contains(&document.source.path) {
            let cycle: Vec<String> = seen
                .iter()
                .chain([&document.source.path])
                .map(|p| p.display().to_string())
                .collect();
            return Err(vec![name_node
                .pos
                .error("`extends` goes in a circle")
                .with_help(cycle.join(" → "))]);
        }
        seen.push(document.source.path.clone());
        let name = document.name.as_str();
        match (tree.get("extends"), tree.get("replaces")) {
            (Some(_), Some(replaces)) => Err(vec![replaces
                .pos
                .error("a workflow either extends or replaces another, not both")]),
            (Some(extends), None) => {
                let Some(base_name) = extends.as_str() else {
                    return Err(vec![extends.pos.error("`extends` must name a workflow")]);
                };
                let base = if base_name == name {
                    self.find(base_name, rank)
                } else {
                    self.find(base_name, None)
                };
                let Some(base) = base else {
                    return Err(vec![self.unknown_base(extends, base_name, name)]);
                };
                let mut merged = self.chain(&self.documents[base], Some(base), seen)?;
                let problems = merge(&mut merged, tree);
                if problems.is_empty() {
                    Ok(merged)
                } else {
                    Err(problems)
                }
            }
            (None, Some(replaces)) => {
                if replaces.as_str() != Some(name) {
                    return Err(vec![replaces
                        .pos
                        .error(format!("`replaces` must be this workflow's own name, `{name}`"))
                        .with_help("a workflow replaces the lower-precedence workflow of the same name; to build on another one, use `extends`")]);
                }
                if self.find(name, rank).is_none() {
                    return Err(vec![replaces
                        .pos
                        .error(format!(
                            "there is no lower-precedence workflow `{name}` to replace"
                        ))
                        .with_help("remove `replaces`")]);
                }
                Ok(tree)
            }
            (None, None) => match self.find(name, rank) {
                Some(lower) => Err(vec![self.shadowing(name_node, name, lower)]),
                None => Ok(tree),
            },
        }
    }

    fn unknown_base(&self, extends: &Node, base_name: &str, name: &str) -> Diagnostic {
        if base_name == name {
            return extends
                .pos
                .error(format!("there is no lower-precedence workflow `{name}` to extend"))
                .with_help("`extends` with a workflow's own name patches the built-in or user workflow of that name");
        }
        let names = self.names();
        let help = close_or_listed(base_name, &names, "the workflows here are");
        extends
            .pos
            .error(format!("unknown workflow `{base_name}`"))
            .with_help(help)
    }

    fn shadowing(&self, name_node: &Node, name: &str, lower: usize) -> Diagnostic {
        let other = &self.documents[lower].source;
        let what = match other.layer {
            Layer::BuiltIn => "the built-in workflow".to_string(),
            layer => format!("the {} workflow in {}", layer.label(), other.path.display()),
        };
        name_node
            .pos
            .error(format!("workflow `{name}` has the same name as {what}"))
            .with_help(format!(
                "say `extends = \"{name}\"` to patch it, `replaces = \"{name}\"` to replace it, or choose another name"
            ))
    }

    /// Merges `[roles.<name>]` of `.autobuild/config.toml` into the workflow's roles of that
    /// name. A role no workflow defines is an error, so a typo does not go unnoticed.
    fn apply_config_roles(&self, tree: &mut Node) -> Vec<Diagnostic> {
        let Some(roles) = &self.config.roles else {
            return Vec::new();
        };
        let Some(table) = roles.as_table() else {
            return vec![roles.pos.error(format!(
                "`roles` must be a table of role tables, found {}",
                roles.kind()
            ))];
        };
        let mut problems = Vec::new();
        for entry in table.iter() {
            if entry.value.as_table().is_none() {
                problems.push(entry.value.pos.error(format!(
                    "`roles.{}` must be a table, found {}",
                    entry.key,
                    entry.value.kind()
                )));
                continue;
            }
            let target = tree
                .as_table_mut()
                .and_then(|t| t.get_mut("roles"))
                .and_then(|roles| roles.as_table_mut())
                .and_then(|roles| roles.get_mut(&entry.key));
            match target {
                Some(role) => problems.extend(merge(role, entry.value.clone())),
                None => {
                    let known = self.role_names();
                    if !known.contains(&entry.key) {
                        let help = close_or_listed(&entry.key, &known, "the workflows' roles are");
                        problems.push(
                            entry
                                .key_pos
                                .error(format!("no workflow has a role `{}`", entry.key))
                                .with_help(help),
                        );
                    }
                }
            }
        }
        problems
    }

    /// Every role name any workflow document defines.
    fn role_names(&self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        for document in &self.documents {
            let roles = document
                .tree
                .as_ref()
                .ok()
                .and_then(|t| t.get("roles"))
                .and_then(Node::as_table);
            for name in roles.into_iter().flat_map(|r| r.keys()) {
                if !names.iter().any(|n| n == name) {
                    names.push(name.to_string());
                }
            }
        }
        names
    }
}

/// A resolved workflow that cannot be written as TOML (its record in the run directory).
#[derive(Debug, thiserror::Error)]
#[error("cannot write workflow `{name}` as TOML: {source}")]
pub struct Unwritable {
    pub name: String,
    pub source: toml::ser::Error,
}

impl Problem for Unwritable {
    fn class(&self) -> Class {
        Class::Runtime
    }
}
