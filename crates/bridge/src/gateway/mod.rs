//! The model gateway: Switchyard serves OpenAI Chat Completions, the
//! Responses API and Anthropic Messages on loopback, so an agent written
//! elsewhere (LangGraph, the OpenAI Agents SDK, a script, a coding agent)
//! calls its model through the session: every call waits at the gate,
//! meets the faults, approvals and breakpoints, and is traced, in the
//! `agent` role (docs/src/agents.md).

mod client_config;
mod errors;
mod routes;
mod state;
pub mod stream;

use std::net::SocketAddr;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, oneshot};

use crate::engine::agent::calls::Bridged;
use crate::mcp_gateway::{HttpOptions, SessionDesk, ToolDesk};
use crate::text::secret::Secret;

/// 32 MB: a long conversation with images, far below what hurts.
pub const DEFAULT_MAX_BODY: usize = 32 << 20;

/// How a gateway is set up.
#[derive(Clone, Debug)]
pub struct GatewaySetup {
    /// Where to listen; port 0 lets the system choose.
    pub listen: SocketAddr,
    /// Named by `GET /v1/models`, the agent role's model first.
    pub models: Vec<String>,
    pub max_body: usize,
}

impl Default for GatewaySetup {
    fn default() -> Self {
        GatewaySetup { listen: SocketAddr::from(([127, 0, 0, 1], 0)), models: Vec::new(), max_body: DEFAULT_MAX_BODY }
    }
}

/// A running gateway; it stops when dropped.
pub struct Gateway {
    addr: SocketAddr,
    token: Secret,
    tools: Arc<SessionDesk>,
    client_config: client_config::ClientConfig,
    _stop: oneshot::Sender<()>,
}

pub use client_config::SERVER_NAME as MCP_SERVER_NAME;

impl Gateway {
    /// Listens on `setup.listen` and hands every model call to `calls`.
    /// The session token is new and random each time.
    pub async fn start(setup: GatewaySetup, calls: mpsc::Sender<Bridged>) -> std::io::Result<Gateway> {
        let token = Secret::random("sy");
        let desk = Arc::new(SessionDesk::new(calls.clone()));
        let tools: Arc<dyn ToolDesk> = desk.clone();
        let state = Arc::new(state::GatewayState {
            token: token.clone(),
            calls,
            models: setup.models,
            max_body: setup.max_body,
            conversations: Mutex::new(Default::default()),
            served: Default::default(),
        });
        let listener = tokio::net::TcpListener::bind(setup.listen).await?;
        let addr = listener.local_addr()?;
        let client_config = client_config::ClientConfig::write(&format!("http://{addr}/mcp"), &token)?;
        let (stop, stopped) = oneshot::channel::<()>();
        let opts = HttpOptions { listen: Some(addr), max_body: Some(setup.max_body) };
        let mcp = axum::Router::new().nest_service("/mcp", crate::mcp_gateway::http_service(tools.clone(), &opts));
        let app = routes::router(state, mcp);
        tokio::spawn(async move {
            let serve = axum::serve(listener, app).with_graceful_shutdown(async {
                let _ = stopped.await;
            });
            if let Err(e) = serve.await {
                tracing::warn!(error = %e, "the model gateway stopped");
            }
        });
        Ok(Gateway { addr, token, tools: desk, client_config, _stop: stop })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Chat Completions' and the Responses API's base URL (`OPENAI_BASE_URL`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Anthropic's base URL (`ANTHROPIC_BASE_URL`): its SDKs add `/v1/messages`.
    pub fn anthropic_base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The MCP endpoint's URL (Streamable HTTP), for the session token as
    /// a bearer token.
    pub fn mcp_url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// A client configuration file naming the MCP endpoint and the token
    /// (`{"mcpServers": {"switchyard": {"type": "http", ...}}}`), mode
    /// 0600, removed when the gateway stops.
    pub fn mcp_config_path(&self) -> &Path {
        self.client_config.path()
    }

    /// What the MCP endpoint offers; the session's library goes here once
    /// the session is set up.
    pub fn tools(&self) -> &Arc<SessionDesk> {
        &self.tools
    }

    /// The session token an agent must send as its API key.
    pub fn token(&self) -> &Secret {
        &self.token
    }

    /// The environment an agent is started with: both vendors' base URLs
    /// and keys, the key being the session token, the MCP endpoint with
    /// the same token as its bearer token, and the client file naming both.
    pub fn agent_env(&self) -> Vec<(String, String)> {
        let key = self.token.expose().to_string();
        vec![
            ("OPENAI_BASE_URL".into(), self.openai_base_url()),
            ("OPENAI_API_KEY".into(), key.clone()),
            ("ANTHROPIC_BASE_URL".into(), self.anthropic_base_url()),
            ("ANTHROPIC_API_KEY".into(), key.clone()),
            ("SWITCHYARD_MCP_URL".into(), self.mcp_url()),
            ("SWITCHYARD_MCP_TOKEN".into(), key),
            ("SWITCHYARD_MCP_CONFIG".into(), self.mcp_config_path().display().to_string()),
        ]
    }
}
