//! `autobuild prompts list|show`: the prompt templates shipped in the binary, printed as they
//! are so a user can start a template of their own from one
//! (`autobuild prompts show coach.md > .autobuild/prompts/coach.md`).

use clap::Subcommand;

use crate::error::Error;
use crate::ui;
use crate::unknown::{Catalog, Unknown};
use crate::workflow::builtin::PROMPTS;

#[derive(Debug, Subcommand)]
pub enum PromptsCommand {
    /// List the built-in prompt templates.
    List,
    /// Print a built-in prompt template exactly as shipped.
    Show {
        /// Template file name, e.g. coach.md.
        name: String,
    },
}

pub fn run(cmd: PromptsCommand) -> Result<u8, Error> {
    match cmd {
        PromptsCommand::List => {
            for (name, _) in PROMPTS {
                ui::line(name);
            }
            Ok(0)
        }
        PromptsCommand::Show { name } => {
            let wanted = if name.ends_with(".md") {
                name.clone()
            } else {
                format!("{name}.md")
            };
            let Some((_, text)) = PROMPTS.iter().find(|(file, _)| *file == wanted) else {
                let names = PROMPTS.iter().map(|(file, _)| *file);
                return Err(Unknown::new(Catalog::Prompt, &name, names).into());
            };
            ui::line(text.trim_end());
            Ok(0)
        }
    }
}
