//! Shared inputs of the commands that read a contract: the file, and a host capability report.

use std::path::Path;

use decision::api::{self, Error};
use decision::check::Capabilities;
use decision::contract::Contract;

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Human,
    Json,
}

/// Read a host capability report: a file that cannot be read is `E_IO`, a report that does
/// not parse `E_USAGE`, each naming the file.
pub fn read_capabilities(path: &Path) -> Result<Capabilities, Error> {
    api::host::capabilities(&path.display().to_string(), &read_text(path)?)
}

/// Read a contract file's bytes, with a clear message on failure.
pub fn read_source(path: &Path) -> Result<Vec<u8>, String> {
    read_file(path).map_err(|e| e.message)
}

/// Read an input file's bytes; failure is `E_IO` naming it.
pub fn read_file(path: &Path) -> Result<Vec<u8>, Error> {
    let shown = path.display().to_string();
    std::fs::read(path).map_err(|e| Error::io(&shown, format!("cannot read {shown}: {e}")))
}

/// Read an input file as UTF-8 text; failure is `E_IO` naming it.
pub fn read_text(path: &Path) -> Result<String, Error> {
    let shown = path.display().to_string();
    std::fs::read_to_string(path).map_err(|e| Error::io(&shown, format!("cannot read {shown}: {e}")))
}

/// Read and parse a contract whole: a file with an error diagnostic is refused with the
/// first one's code.
pub fn load_contract(path: &Path) -> Result<Contract, Error> {
    api::parse_contract(&path.display().to_string(), &read_file(path)?)
}
