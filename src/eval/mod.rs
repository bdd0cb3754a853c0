//! Task sets, and the reports of running them.

pub mod report;
pub mod tasks;
pub mod timing;
