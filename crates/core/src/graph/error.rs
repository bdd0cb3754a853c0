//! What can go wrong building, editing, reading or writing the graph; the
//! file errors name the file (and line) so a message stands on its own.

use std::path::PathBuf;

#[derive(thiserror::Error, Debug)]
pub enum GraphError {
    #[error("trajectory {trajectory} names unknown tool `{tool}`")]
    UnknownTool { tool: String, trajectory: usize },
    #[error("`{name}` is reserved for the graph's own node and cannot be a tool name")]
    ReservedName { name: String },
    #[error("`{name}` is not a tool of the graph")]
    NotATool { name: String },
    #[error("score {score} for `{name}` is not a finite number")]
    InvalidScore { name: String, score: f64 },
    #[error("unknown weight format `{value}` (expected none, decimal, integer or x10)")]
    WeightFormat { value: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}: not a valid graph file: {source}", path.display())]
    Json {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}: invalid graph: {reason}", path.display())]
    Invalid { path: PathBuf, reason: String },
    #[error("{}:{line}: invalid trajectory: {source}", path.display())]
    TrajectoryLine {
        path: PathBuf,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
    #[error("{}:{line}: the trajectory names `{tool}`, which is not in the library", path.display())]
    TrajectoryTool { path: PathBuf, line: usize, tool: String },
    #[error("{}:{line}: invalid journal entry: {reason}", path.display())]
    Journal { path: PathBuf, line: usize, reason: String },
}
