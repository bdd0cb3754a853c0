//! The reports of running task sets: metrics, and where the time went.

pub mod apibank;
pub mod cases;
pub mod compare;
pub mod fault_figure;
pub mod figures;
pub mod markdown;
pub mod metrics;
mod numeric;
pub mod plot;
pub mod results;
pub mod retrieval;
pub mod summary;
pub mod timing;
pub mod trace_diff;
