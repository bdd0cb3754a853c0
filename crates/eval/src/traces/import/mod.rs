//! Other agents' own session files as Switchyard traces, so `replay`,
//! `trace diff`, `scan` and `to-trajectories` read them: Claude Code's
//! session files (`~/.claude/projects/…/SESSION.jsonl`) and Codex's
//! rollout files (`~/.codex/sessions/…/rollout-….jsonl`). Each becomes one
//! run of an outside agent: its model's replies, its tool calls and their
//! results, its last reply the answer.

mod build;
mod claude_code;
mod codex;

use std::path::{Path, PathBuf};

use crate::engine::Event;

pub use build::Conversation;

/// Whose file it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    ClaudeCode,
    Codex,
}

#[derive(thiserror::Error, Debug)]
pub enum ImportError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}:{line}: {why}", path.display())]
    Line { path: PathBuf, line: usize, why: String },
    #[error("{}: {why}", path.display())]
    Empty { path: PathBuf, why: String },
}

/// A file read: its events, and the line a killed writer left unfinished.
pub struct Imported {
    pub events: Vec<Event>,
    /// A last line cut mid-way (the agent was still writing, or killed):
    /// left out, its number said.
    pub torn: Option<usize>,
    /// Lines of kinds the importer does not read (summaries, snapshots,
    /// reasoning), counted.
    pub skipped: usize,
}

pub fn import(path: &Path, format: Format) -> Result<Imported, ImportError> {
    let text = std::fs::read_to_string(path).map_err(|source| ImportError::Io { path: path.into(), source })?;
    let mut lines: Vec<(usize, serde_json::Value)> = Vec::new();
    let mut torn = None;
    let all: Vec<&str> = text.split('\n').collect();
    for (i, raw) in all.iter().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        match serde_json::from_str(raw) {
            Ok(v) => lines.push((i + 1, v)),
            // The last line, without its newline: a file still being written.
            Err(_) if i + 1 == all.len() => torn = Some(i + 1),
            Err(e) => return Err(ImportError::Line { path: path.into(), line: i + 1, why: format!("not JSON: {e}") }),
        }
    }
    let line_error = |line: usize, why: String| ImportError::Line { path: path.into(), line, why };
    let (conversation, skipped) = match format {
        Format::ClaudeCode => claude_code::read(&lines).map_err(|(l, why)| line_error(l, why))?,
        Format::Codex => codex::read(&lines).map_err(|(l, why)| line_error(l, why))?,
    };
    if conversation.is_empty() {
        return Err(ImportError::Empty {
            path: path.into(),
            why: format!(
                "no message of the agent's: is it a {} file?",
                if format == Format::ClaudeCode { "Claude Code session" } else { "Codex rollout" }
            ),
        });
    }
    Ok(Imported { events: conversation.events(), torn, skipped })
}
