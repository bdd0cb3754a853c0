//! Why training did not run or finish.

use std::path::PathBuf;

use crate::dataset::cotools::DataError;
use crate::retrieve::cotools::HeadsError;
use crate::retrieve::embed::EmbedError;

/// Why training did not run or finish. Each names its file or option.
#[derive(thiserror::Error, Debug)]
pub enum TrainingError {
    #[error("could not read {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {why}", path.display())]
    Data { path: PathBuf, why: String },
    #[error(transparent)]
    Dataset(#[from] DataError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Heads(#[from] HeadsError),
    #[error("{0}")]
    Options(String),
}

pub(super) type Result<T> = std::result::Result<T, TrainingError>;
