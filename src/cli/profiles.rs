//! `autobuild profiles list|show`: the quality-gate profiles visible here and what each one
//! requires.

use clap::Subcommand;

use crate::cli::workflows::{aligned, repo_root};
use crate::error::Error;
use crate::profile::ProfileSet;
use crate::ui;
use crate::unknown::{Catalog, Unknown};

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
                return Err(Unknown::new(Catalog::Profile, &name, names.iter().copied()).into());
            };
            ui::line(&format!("# profile `{}`", loaded.profile.name));
            ui::line(loaded.annotated_toml().trim_end());
            Ok(0)
        }
    }
}
