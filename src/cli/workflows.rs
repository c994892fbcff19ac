//! `autobuild workflows list|show|validate`: what workflows are visible here, what one says
//! (as written, or resolved with where every value came from), and whether they are valid.

use std::env;
use std::path::{Path, PathBuf};

use clap::Subcommand;

use crate::cli::json;
use crate::diagnostic::Diagnostic;
use crate::error::Error;
use crate::ui;
use crate::unknown::{self, Unknown};
use crate::workflow::catalog::{Catalog, Opened};
use crate::workflow::kinds;
use crate::workflow::resolve::is_path;
use crate::workflow::{Overrides, ResolvedWorkflow};

#[derive(Debug, Subcommand)]
pub enum WorkflowsCommand {
    /// List the workflows available here (name, source, description).
    List,
    /// Print a workflow: the file as written, or merged and validated with --resolved.
    Show {
        /// Workflow name or file.
        #[arg(value_name = "NAME|PATH")]
        name: String,
        /// Print the merged result of every layer, marking where overridden values came from.
        #[arg(long)]
        resolved: bool,
        /// Override a value before resolving, e.g. --set roles.coach.model=opus (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE", requires = "resolved")]
        set: Vec<String>,
    },
    /// Describe the built-in step kinds: keys, outputs and rules (the reference in docs/workflows.md).
    Kinds {
        /// One kind (`uses` name); default: all of them.
        #[arg(value_name = "USES")]
        kind: Option<String>,
    },
    /// Validate workflows (default: every workflow visible here).
    Validate {
        /// Workflow names (as `workflows list` shows them) or files to validate.
        #[arg(value_name = "NAME|PATH")]
        workflows: Vec<String>,
        /// The result as one JSON document on stdout (shape in README.md).
        #[arg(long)]
        json: bool,
    },
}

pub fn run(cmd: WorkflowsCommand) -> Result<u8, Error> {
    if let WorkflowsCommand::Kinds { kind } = &cmd {
        return kinds(kind.as_deref());
    }
    let catalog = Catalog::discover(Some(&repo_root()?))?;
    match cmd {
        WorkflowsCommand::List => list(&catalog),
        WorkflowsCommand::Show {
            name,
            resolved,
            set,
        } => show(&catalog, &name, resolved, set),
        WorkflowsCommand::Validate { workflows, json } => validate(&catalog, &workflows, json),
        WorkflowsCommand::Kinds { kind } => kinds(kind.as_deref()),
    }
}

/// `workflows kinds [USES]`: the reference generated from the kinds themselves.
fn kinds(name: Option<&str>) -> Result<u8, Error> {
    let text = match name {
        None => kinds::reference::markdown(),
        Some(name) => match kinds::named(name) {
            Some(kind) => kinds::reference::kind_markdown(kind),
            None => {
                let names = kinds::names();
                return Err(
                    Unknown::new(unknown::Catalog::StepKind, name, names.iter().copied()).into(),
                );
            }
        },
    };
    ui::line(text.trim_end());
    Ok(0)
}

/// The repository containing the current directory, or the current directory itself.
pub(crate) fn repo_root() -> Result<PathBuf, Error> {
    let cwd = env::current_dir().map_err(|e| Error::io("cannot read", ".", e))?;
    Ok(crate::project::find_repo_root(&cwd).unwrap_or(cwd))
}

fn list(catalog: &Catalog) -> Result<u8, Error> {
    let mut rows = vec![vec![
        "NAME".to_string(),
        "SOURCE".to_string(),
        "DESCRIPTION".to_string(),
    ]];
    for name in catalog.names() {
        let Some(index) = catalog.find(name, None) else {
            continue;
        };
        let document = &catalog.documents[index];
        let description = match catalog.resolve_index(index, &Overrides::default()) {
            Ok(resolved) => resolved.workflow.description,
            Err(_) => "(invalid: see `autobuild workflows validate`)".to_string(),
        };
        rows.push(vec![name.to_string(), document.source.label(), description]);
    }
    for line in aligned(&rows) {
        ui::line(&line);
    }
    Ok(0)
}

fn show(catalog: &Catalog, name: &str, resolved: bool, set: Vec<String>) -> Result<u8, Error> {
    if resolved {
        let overrides = Overrides {
            set,
            ..Overrides::default()
        };
        let resolved = catalog.resolve(name, &overrides)?;
        ui::line(resolved.annotated_toml().trim_end());
        return Ok(0);
    }
    let text = if is_path(name) {
        match catalog.open_file(Path::new(name))? {
            Opened::Discovered(index) => catalog.documents[index].text()?.to_string(),
            Opened::File(document) => document.text()?.to_string(),
        }
    } else {
        catalog.documents[catalog.find_named(name)?]
            .text()?
            .to_string()
    };
    ui::line(text.trim_end());
    Ok(0)
}

fn validate(catalog: &Catalog, workflows: &[String], json: bool) -> Result<u8, Error> {
    let mut valid: Vec<ResolvedWorkflow> = Vec::new();
    let mut problems: Vec<Diagnostic> = Vec::new();
    let mut check = |result: Result<ResolvedWorkflow, Error>| match result {
        Ok(resolved) => {
            valid.push(resolved);
            Ok(())
        }
        Err(Error::Invalid(found)) => {
            for diagnostic in found.0 {
                if !problems.contains(&diagnostic) {
                    problems.push(diagnostic);
                }
            }
            Ok(())
        }
        Err(other) => Err(other),
    };
    let overrides = Overrides::default();
    if workflows.is_empty() {
        for index in 0..catalog.documents.len() {
            check(catalog.resolve_index(index, &overrides))?;
        }
    }
    for name in workflows {
        let names_a_file =
            is_path(name) || (catalog.find(name, None).is_none() && Path::new(name).is_file());
        let result = if names_a_file {
            match catalog.open_file(Path::new(name))? {
                Opened::Discovered(index) => catalog.resolve_index(index, &overrides),
                Opened::File(document) => catalog.resolve_file(&document, &overrides),
            }
        } else {
            catalog.resolve_index(catalog.find_named(name)?, &overrides)
        };
        check(result)?;
    }
    let ci = ui::annotations::enabled();
    if json {
        json::print(&json::validate::Validation::new(&valid, &problems));
    } else {
        if ci {
            ui::line(&ui::annotations::group("autobuild workflows validate"));
        }
        for resolved in &valid {
            ui::line(&format!(
                "ok {} ({})",
                resolved.workflow.name,
                resolved.source.display()
            ));
            resolved.warnings.iter().for_each(ui::diagnostic);
        }
        if ci {
            ui::line(ui::annotations::END_GROUP);
        }
    }
    if ci {
        let warnings = valid.iter().flat_map(|r| r.warnings.iter());
        for diagnostic in warnings.chain(&problems) {
            ui::note(&ui::annotations::diagnostic(diagnostic));
        }
    }
    if problems.is_empty() {
        Ok(0)
    } else if json {
        Ok(crate::error::exit::USAGE)
    } else {
        Err(problems.into())
    }
}

/// Rows as lines with every column but the last padded to its widest cell.
pub(crate) fn aligned(rows: &[Vec<String>]) -> Vec<String> {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    rows.iter()
        .map(|row| {
            let mut line = String::new();
            for (c, cell) in row.iter().enumerate() {
                if c + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    line.push_str(cell);
                    line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
                }
            }
            line.trim_end().to_string()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_align_to_the_widest_cell() {
        let rows = vec![
            vec!["NAME".into(), "SOURCE".into()],
            vec!["player-coach".into(), "built-in".into()],
        ];
        assert_eq!(
            aligned(&rows),
            ["NAME          SOURCE", "player-coach  built-in"]
        );
    }
}
