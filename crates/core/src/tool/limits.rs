//! How much a tool may answer: beyond it the call fails instead of the
//! process filling its memory.

/// 16 MB by default: a command's stdout, an HTTP body, an MCP message.
pub const DEFAULT_OUTPUT_CAP: u64 = 16 << 20;

/// `16 MB`, or the bytes where a limit is not a whole number of MB.
pub fn megabytes(bytes: u64) -> String {
    if bytes % (1 << 20) == 0 { format!("{} MB", bytes >> 20) } else { format!("{bytes} bytes") }
}

/// A size limit in MB as bytes, or why it is not one.
pub fn limit_bytes(mb: f64) -> Result<u64, String> {
    if mb.is_finite() && mb > 0.0 && mb <= 1024.0 * 1024.0 {
        Ok(((mb * 1_048_576.0) as u64).max(1))
    } else {
        Err(format!("must be a size in MB above 0, got {mb}"))
    }
}
