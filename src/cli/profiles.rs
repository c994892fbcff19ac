//! `autobuild profiles list|show`.

use clap::Subcommand;

use crate::error::Error;

#[derive(Debug, Subcommand)]
pub enum ProfilesCommand {
    /// List the quality-gate profiles.
    List,
}

pub fn run(_cmd: ProfilesCommand) -> Result<u8, Error> {
    Err(Error::runtime("profiles is not built yet"))
}
