//! Switchyard's vocabulary and building blocks: tasks and plain text
//! (`task`, `text`, `jsonl`, `dataset`), the tool library (`tool`), models
//! (`model`), ToolNet's graph (`graph`), retrieval over the library
//! (`retrieve`), BTP's budgets (`budget`) and ATC's programs (`program`).
//! The engine drives them; none of them knows of a session.

pub mod budget;
pub mod dataset;
pub mod graph;
pub mod jsonl;
pub mod model;
pub mod program;
pub mod retrieve;
pub mod task;
pub mod text;
pub mod tool;
