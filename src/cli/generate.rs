//! Files generated from the argument definitions themselves: shell completion scripts
//! (`autobuild completions <SHELL>`) and man pages (`autobuild man [--output DIR]`). Both come
//! from the same clap definitions as `--help`, so they cannot drift from the real flags.

use std::fs;
use std::path::{Path, PathBuf};

use clap::CommandFactory;
use clap_complete::Shell;

use crate::cli::command_error::CommandError;
use crate::cli::Cli;
use crate::error::Error;
use crate::ui;

/// `autobuild completions <SHELL>`: the completion script on stdout. It is clap_complete's
/// dynamic registration: the shell calls `autobuild` back with `COMPLETE=<shell>` for every
/// completion, so flags, subcommands and the values that depend on the project (task ids,
/// workflow names, schema kinds: `cli::complete`) are all answered by the binary itself.
pub fn completions(shell: Shell) -> Result<u8, Error> {
    use clap_complete::env::{Bash, Elvish, EnvCompleter, Fish, Powershell, Zsh};
    let completer: &dyn EnvCompleter = match shell {
        Shell::Bash => &Bash,
        Shell::Elvish => &Elvish,
        Shell::Fish => &Fish,
        Shell::PowerShell => &Powershell,
        Shell::Zsh => &Zsh,
        other => return Err(CommandError::NoCompletion(other.to_string()).into()),
    };
    let name = Cli::command().get_name().to_string();
    let mut script = Vec::new();
    completer
        .write_registration("COMPLETE", &name, &name, &name, &mut script)
        .map_err(CommandError::CompletionScript)?;
    ui::line(String::from_utf8_lossy(&script).trim_end());
    Ok(0)
}

/// `autobuild man [--output DIR]`: `autobuild.1` and one page per subcommand
/// (`autobuild-task.1`, `autobuild-workflows-list.1`, …) in `dir`, each named as it is written.
pub fn man(dir: Option<PathBuf>) -> Result<u8, Error> {
    let dir = dir.unwrap_or_else(|| PathBuf::from("."));
    fs::create_dir_all(&dir).map_err(|e| Error::io("cannot create", &dir, e))?;
    let mut command = Cli::command().disable_help_subcommand(true);
    command.build();
    for page in write_pages(command, &dir)? {
        ui::line(&format!("wrote {}", page.display()));
    }
    Ok(0)
}

/// Writes the page of `command` and of each of its visible subcommands, parents first.
fn write_pages(command: clap::Command, dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let man = clap_mangen::Man::new(command.clone());
    let path = dir.join(man.get_filename());
    let mut text = Vec::new();
    man.render(&mut text)
        .and_then(|()| fs::write(&path, &text))
        .map_err(|e| Error::io("cannot write", &path, e))?;
    let mut written = vec![path];
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        written.extend(write_pages(sub.clone(), dir)?);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_gets_a_page_with_its_flags() {
        let dir = tempfile::tempdir().unwrap();
        let mut command = Cli::command().disable_help_subcommand(true);
        command.build();
        let pages = write_pages(command, dir.path()).unwrap();
        assert_eq!(pages[0], dir.path().join("autobuild.1"));
        assert!(pages.contains(&dir.path().join("autobuild-workflows-validate.1")));
        let task = fs::read_to_string(dir.path().join("autobuild-task.1")).unwrap();
        assert!(task.starts_with(".ie"), "{task}");
        assert!(task.contains("max\\-turns"), "{task}");
    }
}
