//! `autobuild schema <kind>`: prints the JSON Schema of a file users write, for editors
//! (`autobuild schema workflow > schemas/workflow.json`; see docs/workflows.md).

use strum::VariantNames;

use crate::error::Error;
use crate::schema::SchemaKind;
use crate::ui;
use crate::unknown::{Catalog, Unknown};

pub fn run(kind: &str) -> Result<u8, Error> {
    let Some(found) = SchemaKind::named(kind) else {
        let names = SchemaKind::VARIANTS.iter().copied();
        return Err(Unknown::new(Catalog::Schema, kind, names).into());
    };
    ui::line(found.text().trim_end());
    Ok(0)
}
