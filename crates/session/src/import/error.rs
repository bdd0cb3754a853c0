//! Why an import stopped, with what it was doing.

use thiserror::Error;

use crate::config::ConfigError;
use crate::dataset::DataError;
use crate::session::SetupError;
use crate::task::TaskError;

#[derive(Debug, Error)]
pub enum ImportError {
    /// The data, the arguments or the written files are not as the import
    /// needs them; the message names the file and the place.
    #[error("{0}")]
    Invalid(String),
    /// A step failed: `what` says which (and the file), `source` why.
    #[error("{what}")]
    Step {
        what: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    #[error(transparent)]
    Data(#[from] DataError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Setup(#[from] SetupError),
    #[error(transparent)]
    Task(#[from] TaskError),
}

/// A step's error with what the step was.
pub(super) trait Step<T> {
    fn step(self, what: impl FnOnce() -> String) -> Result<T, ImportError>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Step<T> for Result<T, E> {
    fn step(self, what: impl FnOnce() -> String) -> Result<T, ImportError> {
        self.map_err(|e| ImportError::Step { what: what(), source: Box::new(e) })
    }
}

macro_rules! invalid {
    ($($t:tt)*) => { $crate::import::ImportError::Invalid(format!($($t)*)) };
}
pub(super) use invalid;
