//! ToolNet's tool graph (ToolNet §3, docs/src/papers/toolnet.md): a weighted
//! directed graph over the library with `start` and `end` nodes, built
//! statically from trajectories (2-gram counts) or fully connected, and updated
//! online from evaluator scores.
//!
//! - `tool_graph`: the data structure and its queries;
//! - `elements`: its nodes and edges;
//! - `toolnet`: the paper's construction and update rules;
//! - `series`: the capped history of a score or a weight;
//! - `row_history`: weight histories a row's edges share while they agree;
//! - `row_sums`: a long row's edges (`start`'s, the shared row's) and the
//!   running sums of their f(s);
//! - `row_law`: a long row's weights held as the rule of its last update;
//! - `row_classes`: a long row's edges grouped by what that rule reads;
//! - `update`: what one update changed, as the events carry it;
//! - `ops`: every edit recorded as data, and the ids of the states;
//! - `store`: durable state, [`GraphStore`]: a snapshot plus a journal;
//! - `snapshot`: the whole graph as a JSON file;
//! - `journal`: the ops since the snapshot, a line each;
//! - `trajectory`: the trajectories file the static graph is built from;
//! - `format`: how weights are shown to the model;
//! - `error`: what can go wrong.

mod elements;
mod error;
mod format;
mod journal;
mod ops;
mod row_classes;
mod row_history;
mod row_law;
mod row_sums;
mod series;
mod snapshot;
mod store;
mod tool_graph;
mod toolnet;
mod trajectory;
mod update;

pub use error::GraphError;
pub use format::WeightFormat;
pub use store::GraphStore;
pub use tool_graph::{ANY_TOOL, END, START, ToolGraph};
pub use toolnet::score_factor;
pub use trajectory::{Trajectory, read_numbered, read_trajectories};
pub use update::{GraphUpdate, RowChange, WeightChange};
