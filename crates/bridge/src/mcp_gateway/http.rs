//! MCP's Streamable HTTP transport for a desk, as a service an axum router
//! nests (at `/mcp`): sessions, SSE for notifications, and the checks
//! against DNS rebinding (the `Host` a loopback server answers to, and a
//! browser's `Origin`).

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};

use super::desk::ToolDesk;
use super::handler::Handler;

/// Who may reach the endpoint.
#[derive(Clone, Debug, Default)]
pub struct HttpOptions {
    /// The address it listens on: a host other than loopback's names is
    /// accepted when it is this address.
    pub listen: Option<SocketAddr>,
    /// The most bytes a request body may take (rmcp's default when unset).
    pub max_body: Option<usize>,
}

/// The hosts a request may name: loopback's, and the listening address
/// when it is a particular one (0.0.0.0 names none).
fn allowed_hosts(listen: Option<SocketAddr>) -> Vec<String> {
    let mut hosts = vec!["localhost".to_string(), "127.0.0.1".to_string(), "::1".to_string()];
    if let Some(addr) = listen.filter(|a| !a.ip().is_unspecified() && !a.ip().is_loopback()) {
        hosts.push(addr.ip().to_string());
    }
    hosts
}

/// A browser page may call only from loopback origins; clients that send
/// no `Origin` (SDKs, agents) are not browsers.
fn allowed_origins(listen: Option<SocketAddr>) -> Vec<String> {
    allowed_hosts(listen)
        .iter()
        .map(|h| if h.contains(':') { format!("[{h}]") } else { h.clone() })
        .flat_map(|h| [format!("http://{h}:*"), format!("https://{h}:*")])
        .collect()
}

pub fn service(desk: Arc<dyn ToolDesk>, opts: &HttpOptions) -> StreamableHttpService<Handler, LocalSessionManager> {
    let mut config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts(opts.listen))
        .with_allowed_origins(allowed_origins(opts.listen));
    if let Some(max) = opts.max_body {
        config = config.with_max_request_body_bytes(max);
    }
    let handler = Handler::new(desk);
    StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(LocalSessionManager::default()), config)
}

/// Serves `desk` at `/mcp` on `listener` alone (`switchyard mcp serve
/// --listen`) until the server fails; the model gateway nests [`service`]
/// in its own router instead.
pub async fn serve(desk: Arc<dyn ToolDesk>, listener: tokio::net::TcpListener) -> Result<(), String> {
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let opts = HttpOptions { listen: Some(addr), max_body: None };
    let app = axum::Router::new().nest_service("/mcp", service(desk, &opts));
    axum::serve(listener, app).await.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_particular_listening_address_is_a_host_too() {
        assert_eq!(allowed_hosts(None), ["localhost", "127.0.0.1", "::1"]);
        assert_eq!(allowed_hosts(Some("0.0.0.0:80".parse().unwrap())).len(), 3);
        assert_eq!(allowed_hosts(Some("10.1.2.3:80".parse().unwrap())).last().unwrap(), "10.1.2.3");
        assert!(allowed_origins(None).contains(&"http://[::1]:*".to_string()));
    }
}
