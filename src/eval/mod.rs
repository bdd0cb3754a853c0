//! The reports of running task sets: metrics, and where the time went.

pub mod apibank;
pub mod report;
pub mod results;
pub mod retrieval;
pub mod timing;
