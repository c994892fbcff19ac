//! What the preflights of one feature's tasks read once for all of them.

use std::collections::HashMap;
use std::path::Path;

use crate::engine::inputs::RunInputs;
use base::error::Error;
use model::project::{Config, Layout};
use model::workflow::Catalog;

/// What the preflights of one feature's tasks share, read once for all of them: the project
/// config (when valid), the workflow catalog, and the inputs of each workflow and task type.
/// Only one feature preflight's tasks share it; a task's own run preflights afresh.
#[derive(Default)]
pub struct Shared {
    pub(super) config: Option<Config>,
    pub(super) catalog: Option<Catalog>,
    pub(super) inputs: HashMap<(String, String), RunInputs>,
}

impl Shared {
    /// The config in `slot`, read on the first call when it is valid (an invalid one is read
    /// again: its problems are reported with each task's).
    pub(super) fn config<'a>(
        slot: &'a mut Option<Config>,
        layout: &Layout,
    ) -> Result<&'a Config, Error> {
        let config = match slot.take() {
            Some(config) => config,
            None => Config::load(layout)?,
        };
        Ok(slot.insert(config))
    }

    /// The catalog in `slot`, discovered on the first call. (These take a field, not `self`:
    /// the inputs are looked up while the config and the catalog are borrowed.)
    pub(super) fn catalog<'a>(
        slot: &'a mut Option<Catalog>,
        root: &Path,
    ) -> Result<&'a Catalog, Error> {
        let catalog = match slot.take() {
            Some(catalog) => catalog,
            None => Catalog::discover(Some(root))?,
        };
        Ok(slot.insert(catalog))
    }
}
