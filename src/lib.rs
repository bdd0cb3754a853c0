//! Switchyard: a workbench for tool-using LLM agents.
//!
//! The engine (`engine`) runs a strategy (`strategy`) over a tool library
//! (`tool`) with models (`model`), navigating ToolNet's graph (`graph`) from a
//! retrieved start (`retrieve`), and emits versioned events that a trace
//! records and any view folds into state. It knows nothing of a terminal.

pub mod batch;
pub mod budget;
pub mod config;
pub mod dataset;
pub mod engine;
pub mod eval;
pub mod gateway;
pub mod graph;
pub mod import;
pub mod jsonl;
pub mod mcp_gateway;
pub mod model;
pub mod otel;
pub mod program;
pub mod remote;
pub mod retrieve;
pub mod session;
pub mod sim;
pub mod strategy;
pub mod task;
pub mod text;
pub mod tool;
pub mod ui;
