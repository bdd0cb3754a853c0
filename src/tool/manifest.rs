//! Loading and validating TOML tool manifests.
use std::path::PathBuf;

#[derive(thiserror::Error, Debug)]
pub enum ManifestError {
    #[error("duplicate tool '{name}': defined in {} and again in {}", first.display(), second.display())]
    Duplicate { name: String, first: PathBuf, second: PathBuf },
}
