//! The workbench: a ratatui terminal UI over the live engine (or a replayed
//! trace). Its state is the engine's events folded into `SessionState` plus
//! a `Navigation`; the panes are pure functions of both.

pub mod app;
pub mod cases;
pub mod dialog;
pub mod diff_screen;
pub mod draw;
mod format;
pub mod navigation;
pub mod panes;
mod review;
pub mod scan_screen;
pub mod svg;
pub mod symbols;
pub mod term;
mod text;
pub mod theme;

pub use navigation::{GraphMode, Navigation, Pane, PaneCtx, ProgramShow, ReplayInfo};
pub use theme::Theme;

// The lower crates' modules, named at this crate's root: a path reads the
// same in every crate (`crate::tool::Tool`), and Cargo alone decides which
// of them this crate may name.
use switchyard_core::{graph, model, tool};
use switchyard_engine::engine;
use switchyard_eval::{eval, scan, traces};
use switchyard_remote as remote;
use switchyard_session::{config, session};
