//! Agent loops. `react` offers the top-K retrieved tools at every step;
//! `toolnet` walks ToolNet's graph.

pub mod actor;
pub mod rewoo;
