//! The trajectories file (JSON Lines) that the static graph is built from.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::GraphError;

/// One successful run: the task and the tools it used, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trajectory {
    pub query: String,
    pub tools: Vec<String>,
}

/// Reads a JSON Lines file of trajectories, one
/// `{"query": "...", "tools": ["a", "b"]}` per line; blank lines and lines
/// starting with `#` are skipped.
pub fn read_trajectories(path: &Path) -> Result<Vec<Trajectory>, GraphError> {
    Ok(read_numbered(path)?.into_iter().map(|(_, t)| t).collect())
}

/// As [`read_trajectories`], each with its line number (from 1), so a
/// trajectory the library cannot follow is named by its line.
pub fn read_numbered(path: &Path) -> Result<Vec<(usize, Trajectory)>, GraphError> {
    let text = std::fs::read_to_string(path).map_err(|source| GraphError::Io { path: path.to_owned(), source })?;
    let mut trajectories = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let trajectory = serde_json::from_str(line).map_err(|source| GraphError::TrajectoryLine {
            path: path.to_owned(),
            line: i + 1,
            source,
        })?;
        trajectories.push((i + 1, trajectory));
    }
    Ok(trajectories)
}
