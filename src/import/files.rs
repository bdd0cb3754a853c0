//! What every importer writes with: TOML strings for its config, and files
//! whose errors name them.

use std::path::Path;

use color_eyre::eyre::{Result, WrapErr};

pub(super) fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).wrap_err_with(|| format!("cannot write {}", path.display()))
}
