//! Switchyard's sessions set up: configuration (`config`), a session wired
//! from it (`session`), batches of sessions (`batch`) and the benchmark
//! importers that write their task files (`import`).

pub mod batch;
pub mod config;
pub mod import;
pub mod session;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_bridge::mcp_gateway;
use switchyard_core::{budget, dataset, graph, model, program, retrieve, task, tool};
use switchyard_engine::{engine, strategy};
use switchyard_eval::{eval, sim};
use switchyard_otel as otel;
