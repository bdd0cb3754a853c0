//! Benchmark data in the papers' own formats, read as they are published
//! (see `../shared/data/*/README.md`). Retrieval evaluation, head training
//! and the benchmark runs all read through these loaders.

pub mod apibank;
pub mod cotools;
pub mod cotools_splits;
pub mod pylit;
pub mod restbench;
pub mod toolbench;

pub use cotools::{CallDetail, CallText, DataError, Question, ToolDoc, ToolPool};
pub use cotools_splits::{CoToolsBench, Split, Splits};
