//! The MCP client configuration an agent can be pointed at: the gateway's
//! MCP endpoint with the session token as its bearer token, in the
//! `mcpServers` form that Claude Code's `--mcp-config` reads (Cursor's and
//! Claude Desktop's files have the same shape). It holds the token, so it
//! lives in a directory of its own that only its owner can open, the file
//! mode 0600, and both go when the gateway does.

use std::path::{Path, PathBuf};

use crate::text::secret::Secret;

/// The server's name in the file: its tools reach a client's model as
/// `mcp__switchyard__NAME` in Claude Code, for one.
pub const SERVER_NAME: &str = "switchyard";

pub(super) struct ClientConfig {
    // Removed with its file on drop.
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl ClientConfig {
    pub(super) fn write(url: &str, token: &Secret) -> std::io::Result<ClientConfig> {
        let dir = tempfile::Builder::new().prefix("switchyard-mcp-").tempdir()?;
        let path = dir.path().join("mcp.json");
        let body = serde_json::json!({"mcpServers": {SERVER_NAME: {
            "type": "http",
            "url": url,
            "headers": {"Authorization": format!("Bearer {}", token.expose())},
        }}});
        // tempfile makes its folder with the umask's mode: only the user's.
        #[cfg(unix)]
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        let bytes = serde_json::to_vec_pretty(&body).map_err(std::io::Error::other)?;
        crate::text::secret::write_private(&path, &bytes)?;
        Ok(ClientConfig { _dir: dir, path })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}
