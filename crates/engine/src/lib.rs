//! Switchyard's engine (`engine`) and the strategies that run on it
//! (`strategy`): a session emits versioned events that a trace records and
//! any view folds into state. It knows nothing of a terminal.

pub mod engine;
pub mod strategy;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::{budget, graph, model, program, retrieve, task, text, tool};
