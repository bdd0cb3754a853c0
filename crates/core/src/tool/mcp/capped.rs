//! A stdio server's output with a cap on each message: MCP's stdio framing
//! is one JSON-RPC message a line, so a server that writes a line without
//! end would otherwise grow the client's buffer until memory runs out.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};

/// Why the cap tripped, once it has: shared with the link, which reports it
/// in place of the bare "connection closed" the client library sees.
pub(super) type Tripped = Arc<Mutex<Option<String>>>;

pub(super) struct LineCap<R> {
    inner: R,
    cap: u64,
    /// Bytes of the line being read so far.
    line: u64,
    tripped: Tripped,
}

impl<R> LineCap<R> {
    pub(super) fn new(inner: R, cap: u64, tripped: Tripped) -> Self {
        LineCap { inner, cap, line: 0, tripped }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for LineCap<R> {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let over = || std::io::Error::new(std::io::ErrorKind::InvalidData, "an MCP message passed its size limit");
        if this.tripped.lock().unwrap_or_else(|p| p.into_inner()).is_some() {
            return Poll::Ready(Err(over()));
        }
        let before = buf.filled().len();
        ready!(Pin::new(&mut this.inner).poll_read(cx, buf))?;
        let mut run = this.line;
        let mut over_cap = false;
        for &b in &buf.filled()[before..] {
            run = if b == b'\n' { 0 } else { run + 1 };
            over_cap |= run > this.cap;
        }
        this.line = run;
        if over_cap {
            *this.tripped.lock().unwrap_or_else(|p| p.into_inner()) = Some(format!(
                "a message from the server passed {} (max_message_mb); the server was stopped",
                crate::tool::limits::megabytes(this.cap)
            ));
            buf.set_filled(before);
            return Poll::Ready(Err(over()));
        }
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn read_all(input: &[u8], cap: u64) -> (std::io::Result<Vec<u8>>, Option<String>) {
        let tripped = Tripped::default();
        let mut r = LineCap::new(input, cap, Arc::clone(&tripped));
        let mut out = Vec::new();
        let res = r.read_to_end(&mut out).await.map(|_| out);
        let why = tripped.lock().unwrap().clone();
        (res, why)
    }

    #[tokio::test]
    async fn lines_within_the_cap_pass_through() {
        let (out, why) = read_all(b"{\"a\":1}\n{\"b\":2}\n", 8).await;
        assert_eq!(out.unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
        assert_eq!(why, None);
    }

    #[tokio::test]
    async fn a_line_over_the_cap_trips_it() {
        let (out, why) = read_all(b"{\"a\":1}\n0123456789abcdef\n", 8).await;
        assert!(out.is_err());
        assert_eq!(why.unwrap(), "a message from the server passed 8 bytes (max_message_mb); the server was stopped");
    }
}
