//! The reports of running task sets: metrics, and where the time went.

pub mod report;
pub mod retrieval;
pub mod timing;
