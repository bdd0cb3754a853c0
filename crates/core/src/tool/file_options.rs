//! What the config says about one JSON library file (`[[library_options]]`):
//! the executor of an OpenAI function file, the base URL, headers and
//! timeout of an OpenAPI file, and the cost and category of their tools.

use std::path::PathBuf;

use serde::Deserialize;

#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileOptions {
    /// The library entry these options are for.
    pub path: PathBuf,
    /// For a function file: the executor of every tool that names none, in
    /// a manifest's `[tool.executor]` form.
    #[serde(default)]
    pub executor: Option<toml::Table>,
    /// For an OpenAPI file: replaces the spec's `servers[0].url`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// For an OpenAPI file: sent with every call, as in a manifest
    /// (`"literal"` or `{ env = "VAR", prefix = "Bearer " }`).
    #[serde(default)]
    pub headers: Option<toml::Table>,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    /// The cost of each of the file's tools (default 1).
    #[serde(default)]
    pub cost: Option<f64>,
    #[serde(default)]
    pub category: Option<String>,
}
