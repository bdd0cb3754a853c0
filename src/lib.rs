//! Switchyard: a workbench for tool-using LLM agents.
//!
//! This crate is the binary (`src/main.rs`, the command line in `src/cli/`)
//! and, for it, the tests and the benches, one door to the workspace's
//! crates: each module below is one of theirs, named as it always was.
//! The crates are the layers (ARCHITECTURE.md): `switchyard-core` the
//! vocabulary and building blocks, `switchyard-engine` the engine and its
//! strategies beside `switchyard-dense` (the models on candle), then
//! evaluation, the bridge, sessions elsewhere and OpenTelemetry beside each
//! other, sessions set up beside the retrieval laboratory, and the workbench.

pub use switchyard_bridge::{gateway, mcp_gateway};
pub use switchyard_core::{budget, dataset, graph, jsonl, model, program, retrieve, task, text, tool};
pub use switchyard_dense as dense;
pub use switchyard_engine::{engine, strategy};
pub use switchyard_eval::{eval, scan, sim, traces};
pub use switchyard_lab as lab;
pub use switchyard_otel as otel;
pub use switchyard_remote as remote;
pub use switchyard_session::{batch, config, import, session};
pub use switchyard_ui as ui;
