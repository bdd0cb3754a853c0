//! The panes. Each is `render(frame, area, ctx)`: a pure function of the
//! session state and the view state.

pub mod budget;
pub mod graph;
pub mod models;
pub mod status;
pub mod transcript;
pub mod workers;
