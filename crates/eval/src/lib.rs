//! Switchyard's evaluation: the simulated models (`sim`), what is measured
//! of runs (`eval`: metrics, results, reports, plots) and what is read back
//! from their traces (`traces`: diffs, trajectories, a session's summary).

pub mod eval;
pub mod scan;
pub mod sim;
pub mod traces;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::{budget, dataset, graph, model, program, retrieve, task, text, tool};
use switchyard_engine::{engine, strategy};
