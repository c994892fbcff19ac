//! `autobuild workflows list|show|validate`.

use clap::Subcommand;

use crate::error::Error;

#[derive(Debug, Subcommand)]
pub enum WorkflowsCommand {
    /// List the workflows available here (name, source, description).
    List,
}

pub fn run(_cmd: WorkflowsCommand) -> Result<u8, Error> {
    Err(Error::runtime("workflows is not built yet"))
}
