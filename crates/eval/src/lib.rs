//! Switchyard's evaluation: the simulated models (`sim`) and what is
//! measured of runs (`eval`: metrics, results, reports, plots, trace diffs).

pub mod eval;
pub mod sim;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::{budget, dataset, graph, model, program, retrieve, task, text, tool};
use switchyard_engine::{engine, strategy};
