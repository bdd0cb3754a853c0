//! The papers' benchmarks as a config and task files Switchyard runs as they
//! are (`--config OUT/switchyard.toml eval --tasks OUT/tasks/SPLIT.jsonl`),
//! reading the data in place. Each importer reads everything before it
//! writes, then loads what it wrote as a run would, so a bad line stops it
//! with nothing half done and a written config is known to load.

mod apibank;
mod cotools;
mod error;
mod files;
mod restbench;
mod summary;
#[cfg(test)]
mod tests;
mod toolbench;

use std::path::{Path, PathBuf};

use crate::dataset::CoToolsBench;
use error::invalid;

pub use error::ImportError;
pub use summary::Summary;

/// The benchmarks `import` knows, by the name it takes.
pub const KNOWN: [&str; 8] =
    ["atc-tmdb", "restbench", "funcqa", "gsm8k-xl", "kamel", "simpletoolquestions", "api-bank", "toolbench"];

/// Import benchmark `name` from its folder `dir` into `out`; `spec` is the
/// TMDB OpenAPI spec for atc-tmdb and restbench (default: beside the data).
pub fn import(name: &str, dir: &Path, out: &Path, spec: Option<PathBuf>) -> Result<Summary, ImportError> {
    if let Some(bench) = CoToolsBench::from_name(name) {
        if spec.is_some() {
            return Err(invalid!("--spec is for the TMDB benchmarks (atc-tmdb, restbench), not {name}"));
        }
        return cotools::import(bench, dir, out);
    }
    if matches!(name, "api-bank" | "toolbench") && spec.is_some() {
        return Err(invalid!("--spec is for atc-tmdb and restbench; {name} brings its own tools"));
    }
    match name {
        "api-bank" => apibank::import(dir, out),
        "toolbench" => toolbench::import(dir, out),
        "atc-tmdb" | "restbench" => restbench::import(name, dir, out, spec),
        other => Err(invalid!("unknown benchmark '{other}' (known: {})", KNOWN.join(", "))),
    }
}
