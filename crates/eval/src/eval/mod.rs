//! The reports of running task sets: metrics, and where the time went.

pub mod apibank;
pub mod cases;
pub mod compare;
pub mod fault_figure;
pub mod figures;
pub mod markdown;
pub mod merge;
pub mod metrics;
mod numeric;
pub mod plot;
pub mod probe_recall;
pub mod report;
pub mod results;
pub mod retrieval;
pub mod shard;
pub mod summary;
pub mod timing;

/// Writes a file whole or not at all: a kill mid-write keeps the old one.
pub(crate) fn write_atomic(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = atomic_write_file::AtomicWriteFile::open(path)?;
    file.write_all(bytes)?;
    file.commit()
}
