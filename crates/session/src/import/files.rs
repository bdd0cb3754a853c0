//! What every importer writes with: TOML strings for its config, and files
//! whose errors name them.

use std::path::Path;

use super::error::{ImportError, Step};

pub(super) fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

pub(super) fn write_file(path: &Path, text: &str) -> Result<(), ImportError> {
    std::fs::write(path, text).step(|| format!("cannot write {}", path.display()))
}
