//! The library of a run from its sources: TOML manifests, folders of them,
//! and JSON files read by content (an OpenAPI 3 document or a list of
//! OpenAI function schemas), with the config's options for each JSON file.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::file_options::FileOptions;
use super::manifest::{self, ManifestError, Reading, manifest_dir};
use super::{ToolLibrary, ToolSpec, functions, openapi};

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// An object that names its OpenAPI or Swagger version, or holds `paths`,
/// is an API description; anything else is taken for a function list.
fn is_openapi(doc: &Value) -> bool {
    ["openapi", "swagger", "paths"].iter().any(|k| doc.get(k).is_some())
}

/// Loads one JSON library file.
pub fn load_json(path: &Path, options: &FileOptions) -> Result<Vec<ToolSpec>, ManifestError> {
    // A file with anything wrong is read again, precisely, for the error
    // (see `Reading`).
    read_json(path, options, Reading::Fast).or_else(|_| read_json(path, options, Reading::Precise))
}

fn read_json(path: &Path, options: &FileOptions, reading: Reading) -> Result<Vec<ToolSpec>, ManifestError> {
    let text =
        std::fs::read_to_string(path).map_err(|source| ManifestError::Io { path: path.to_path_buf(), source })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| ManifestError::Json {
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let dir = manifest_dir(path);
    if is_openapi(&doc) {
        openapi::tools(&doc, path, options, &dir, reading)
    } else {
        functions::tools(doc, path, options, &dir, reading)
    }
}

/// Checks that each options entry is for a JSON file of the library, once.
fn check_options(paths: &[PathBuf], options: &[FileOptions]) -> Result<(), ManifestError> {
    for (i, o) in options.iter().enumerate() {
        let refuse = |message: &str| ManifestError::File {
            path: o.path.clone(),
            field: format!("library_options[{i}].path"),
            message: message.to_string(),
        };
        if !paths.contains(&o.path) {
            return Err(refuse("is not listed in `library`"));
        }
        if !is_json(&o.path) {
            return Err(refuse("options are for .json library files (OpenAPI or OpenAI functions)"));
        }
        if options[..i].iter().any(|p| p.path == o.path) {
            return Err(refuse("has options twice"));
        }
    }
    Ok(())
}

/// Loads every source into one library. A folder gives its `*.toml`
/// manifests in name order (not recursively); a `.json` file is read by
/// content. A tool name defined twice, in any sources, is refused.
pub fn load_library(paths: &[PathBuf], options: &[FileOptions]) -> Result<ToolLibrary, ManifestError> {
    check_options(paths, options)?;
    let mut tools = Vec::new();
    for path in paths {
        if path.is_file() && is_json(path) {
            let default = FileOptions::default();
            let opts = options.iter().find(|o| o.path == *path).unwrap_or(&default);
            tools.extend(load_json(path, opts)?);
        } else {
            tools.extend(manifest::load_manifests(std::slice::from_ref(path))?);
        }
    }
    ToolLibrary::new(tools)
}
