//! `autobuild profiles list|show`: the quality-gate profiles visible here and what each one
//! requires.

use clap::Subcommand;

use crate::cli::workflows::{aligned, repo_root};
use crate::diagnostic::did_you_mean;
use crate::error::Error;
use crate::profile::ProfileSet;
use crate::ui;

#[derive(Debug, Subcommand)]
pub enum ProfilesCommand {
    /// List the quality-gate profiles.
    List,
    /// Print a profile (by name or alias) and where its values came from.
    Show {
        /// Profile name or alias (a task's `task_type`).
        name: String,
    },
}

pub fn run(cmd: ProfilesCommand) -> Result<u8, Error> {
    let profiles = ProfileSet::load(Some(&repo_root()?))?;
    match cmd {
        ProfilesCommand::List => {
            let mut rows = vec![vec![
                "NAME".to_string(),
                "REQUIRE".to_string(),
                "ALIASES".to_string(),
            ]];
            for loaded in profiles.iter() {
                let p = &loaded.profile;
                rows.push(vec![
                    p.name.clone(),
                    p.require
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(", "),
                    p.aliases.join(", "),
                ]);
            }
            for line in aligned(&rows) {
                ui::line(&line);
            }
            Ok(0)
        }
        ProfilesCommand::Show { name } => {
            let Some(loaded) = profiles.get(&name) else {
                let names = profiles.names();
                let help = match did_you_mean(&name, names.iter().copied()) {
                    Some(close) => format!("did you mean `{close}`?"),
                    None => format!("the profiles are: {}", names.join(", ")),
                };
                return Err(Error::usage(format!("unknown profile `{name}`")).with_help(help));
            };
            ui::line(&format!("# profile `{}`", loaded.profile.name));
            ui::line(loaded.annotated_toml().trim_end());
            Ok(0)
        }
    }
}
