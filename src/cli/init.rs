//! `autobuild init`.

use crate::error::Error;

pub fn run() -> Result<u8, Error> {
    Err(Error::runtime("init is not built yet"))
}
