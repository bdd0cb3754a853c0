//! The integration tests, one binary: every module below used to be a test
//! file of its own, each linked against the whole crate. The pseudo-terminal
//! test (`e2e_pty.rs`), the real-model suite (`real_model.rs`) and the golden
//! traces (`golden.rs`, the refactoring contract) stay apart.

mod atc_cli;
mod atc_engine;
mod bench_apibank;
mod bench_import;
mod budget_btp;
mod budget_experience;
mod budget_plan;
mod cassette;
mod cli;
mod cli_helpers;
mod common;
mod debugger;
mod durable;
mod engine;
mod eval_jobs;
mod eval_report;
mod executors;
mod experiments;
mod fork;
mod graph;
mod graph_store;
mod layering;
mod library_sources;
mod manifest;
mod matrix;
mod mcp_config;
mod model_faults;
mod openai;
mod openapi;
mod otel;
mod protocol;
mod retrieval;
mod retrieve;
mod rewoo_engine;
mod rewoo_parse;
mod sample_library;
mod sandbox;
mod secrets;
mod sim;
mod tool_tape;
mod tools_cli;
mod trace_diff;
mod ui_app;
mod ui_budget_plan;
mod ui_debugger;
mod ui_dialogs;
mod ui_diff;
mod ui_graph;
mod ui_model_faults;
mod ui_panes;
mod ui_program;
mod ui_rewoo;
mod ui_theme;
