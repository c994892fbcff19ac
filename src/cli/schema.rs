//! `autobuild schema <kind>`: prints the JSON Schema of a file users write, for editors
//! (`autobuild schema workflow > schemas/workflow.json`; see docs/workflows.md).

use crate::diagnostic::did_you_mean;
use strum::VariantNames;

use crate::error::Error;
use crate::schema::SchemaKind;
use crate::ui;

pub fn run(kind: &str) -> Result<u8, Error> {
    let Some(found) = SchemaKind::named(kind) else {
        let names = SchemaKind::VARIANTS;
        let help = match did_you_mean(kind, names.iter().copied()) {
            Some(close) => format!("did you mean `{close}`?"),
            None => format!("the schemas are: {}", names.join(", ")),
        };
        return Err(Error::usage(format!("no schema `{kind}`")).with_help(help));
    };
    ui::line(found.text().trim_end());
    Ok(0)
}
