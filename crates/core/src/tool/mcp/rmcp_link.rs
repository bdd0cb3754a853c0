//! [`McpLink`] over the `rmcp` crate: a child process on stdio, or a remote
//! server over Streamable HTTP.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, ProtocolVersion};
use rmcp::service::{Peer, RunningService, ServiceError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;
use tokio::sync::{oneshot, watch};

use super::capped::{LineCap, Tripped};
use super::child;
use super::config::{McpServerConfig, Transport};
use super::link::{CallOutput, LinkError, McpLink, RemoteTool};

/// Lines of a server's stderr kept to explain why it died.
const STDERR_TAIL: usize = 8;
/// What a server started on stdio sees of Switchyard's environment besides
/// the variables its entry names: enough to find programs and a home.
const BASE_ENV: &[&str] = &["PATH", "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ", "SYSTEMROOT"];

type Service = RunningService<RoleClient, ClientConfig>;

fn client_info() -> ClientConfig {
    // The newest revision that still has an `initialize` handshake; servers
    // answer with the one they speak.
    ClientConfig::new(ClientCapabilities::default(), Implementation::new("switchyard", env!("CARGO_PKG_VERSION")))
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
}

/// Connects to the server `config` names (the config has made its paths
/// absolute).
pub async fn connect(config: &McpServerConfig) -> Result<Arc<dyn McpLink>, LinkError> {
    let limit = Duration::from_millis(config.timeout_ms);
    match config.transport() {
        Transport::Stdio { command } => {
            let link = StdioLink::start(config, command, limit).await?;
            Ok(Arc::new(link))
        }
        Transport::Http { url } => {
            let link = HttpLink::start(config, url, limit).await?;
            Ok(Arc::new(link))
        }
    }
}

/// What the server or the transport said, masked: a remote server may
/// quote the request's headers (the key of `headers`) in an error body.
fn broken(e: ServiceError) -> LinkError {
    match e {
        ServiceError::McpError(e) => LinkError::Refused(said(format!("error {}: {}", e.code.0, e.message))),
        ServiceError::TransportClosed => LinkError::Broken("the connection closed".into()),
        ServiceError::TransportSend(e) => match authorization(&e) {
            Some(why) => LinkError::Refused(why),
            None => LinkError::Broken(said(format!("could not send: {e}"))),
        },
        ServiceError::UnexpectedResponse => LinkError::Broken("answered something that is not the reply".into()),
        other => LinkError::Refused(said(other.to_string())),
    }
}

/// A send the server refused for want of authorization (401) or of a
/// scope (403): the connection is fine, the user must log in (again).
fn authorization(e: &rmcp::transport::DynamicTransportError) -> Option<String> {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e.error.as_ref());
    while let Some(c) = cause {
        if let Some(s) = c.downcast_ref::<InsufficientScopeError>() {
            return Some(format!("{SCOPE_WANTED}'{}'", s.get_required_scope().unwrap_or_default()));
        }
        if c.downcast_ref::<AuthRequiredError>().is_some() {
            return Some(TOKEN_REFUSED.to_string());
        }
        cause = c.source();
    }
    None
}

/// How the two refusals begin, for the hint that names the server.
const SCOPE_WANTED: &str = "the kept token lacks a scope this call needs; the server wants ";
const TOKEN_REFUSED: &str = "the server refused the kept token";

/// The refusal of a server that wants an authorization, with what to run.
fn login_hint(server: &str, e: LinkError) -> LinkError {
    match e {
        LinkError::Refused(why) if why.starts_with(SCOPE_WANTED) => {
            let scope = why.trim_start_matches(SCOPE_WANTED).trim_matches('\'');
            LinkError::Refused(format!("{why}: log in again with `switchyard mcp login {server} --scope '{scope}'`"))
        }
        LinkError::Refused(why) if why.starts_with(TOKEN_REFUSED) => {
            LinkError::Refused(format!("{why}: log in again with `switchyard mcp login {server}`"))
        }
        other => other,
    }
}

fn said(text: String) -> String {
    crate::text::secret::redact(&text).into_owned()
}

async fn list(peer: &Peer<RoleClient>) -> Result<Vec<RemoteTool>, LinkError> {
    let tools = peer.list_all_tools().await.map_err(broken)?;
    Ok(tools.into_iter().map(remote_tool).collect())
}

/// A listed tool as the hub reads it. Public (as are `call_output` and the
/// hub's readers of these) so what a server sends can be fuzzed without one.
pub fn remote_tool(t: rmcp::model::Tool) -> RemoteTool {
    RemoteTool {
        name: t.name.to_string(),
        description: t.description.map(|d| d.to_string()).or(t.title).unwrap_or_default(),
        input_schema: Value::Object((*t.input_schema).clone()),
        output_schema: t.output_schema.map(|s| Value::Object((*s).clone())),
    }
}

/// A `tools/call` result as the hub reads it.
pub fn call_output(result: rmcp::model::CallToolResult) -> CallOutput {
    let content = result.content.iter().map(|c| serde_json::to_value(c).unwrap_or(Value::Null)).collect();
    CallOutput { is_error: result.is_error.unwrap_or(false), content, structured: result.structured_content }
}

async fn call(peer: &Peer<RoleClient>, name: &str, arguments: Map<String, Value>) -> Result<CallOutput, LinkError> {
    let params = CallToolRequestParams::new(name.to_string()).with_arguments(arguments);
    let mut out = call_output(peer.call_tool(params).await.map_err(broken)?);
    // The observation goes into the trace: a server that echoes a header
    // key in its result must not put it there.
    out.content.iter_mut().chain(out.structured.as_mut()).for_each(crate::text::secret::redact_value);
    Ok(out)
}

async fn within<T>(limit: Duration, what: &str, f: impl Future<Output = Result<T, LinkError>>) -> Result<T, LinkError> {
    tokio::time::timeout(limit, f)
        .await
        .unwrap_or_else(|_| Err(LinkError::Start(format!("{what}: no answer in {} ms", limit.as_millis()))))
}

/// A server process on stdio. Its process group is killed on `close`, on
/// drop, and by the kernel if Switchyard dies first.
struct StdioLink {
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<Service>>,
    pgid: i32,
    /// Why the process ended, once it has.
    exit: watch::Receiver<Option<String>>,
    kill: Mutex<Option<oneshot::Sender<()>>>,
    /// Set when a message passed `max_message_mb`.
    tripped: Tripped,
}

impl StdioLink {
    async fn start(config: &McpServerConfig, program: &str, limit: Duration) -> Result<Self, LinkError> {
        let mut command = Command::new(program);
        command.args(&config.args).env_clear();
        for name in BASE_ENV {
            if let Some(v) = std::env::var_os(name) {
                command.env(name, v);
            }
        }
        for name in &config.env {
            let value = std::env::var_os(name)
                .ok_or_else(|| LinkError::Start(format!("the environment variable '{name}' (in `env`) is not set")))?;
            command.env(name, value);
        }
        if let Some(cwd) = &config.cwd {
            command.current_dir(cwd);
        }
        let (mut process, pgid) =
            child::spawn(command).map_err(|e| LinkError::Start(format!("could not start '{program}': {e}")))?;
        let (stdin, stdout, stderr) = match (process.stdin.take(), process.stdout.take(), process.stderr.take()) {
            (Some(i), Some(o), Some(e)) => (i, o, e),
            _ => return Err(LinkError::Start("no stdio pipes".into())),
        };
        let tripped = Tripped::default();
        let stdout = LineCap::new(stdout, config.max_message_bytes(), Arc::clone(&tripped));
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let kept = Arc::clone(&tail);
        let name = config.name.clone();
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(server = %name, "stderr: {line}");
                let mut t = kept.lock().unwrap_or_else(|p| p.into_inner());
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        let (exit_tx, exit) = watch::channel(None);
        let (kill_tx, kill_rx) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let status = tokio::select! {
                s = process.wait() => s,
                _ = kill_rx => {
                    child::kill_group(pgid);
                    process.wait().await
                }
            };
            // Whatever the leader left behind in its group goes too.
            child::kill_group(pgid);
            child::forget(pgid);
            let why = match status {
                Ok(s) => match s.code() {
                    Some(code) => format!("the server exited with status {code}"),
                    None => "the server was killed by a signal".to_string(),
                },
                Err(e) => format!("the server could not be waited for: {e}"),
            };
            // The last lines explain the death: let the reader take them (it
            // ends at the pipe's end, unless a grandchild holds it open).
            let _ = tokio::time::timeout(Duration::from_millis(200), reader).await;
            let last: Vec<String> = tail.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect();
            let why = match last.last() {
                Some(line) => format!("{why} (stderr: {})", line.trim()),
                None => why,
            };
            let _ = exit_tx.send(Some(why));
        });
        let mut exited = exit.clone();
        let service = tokio::select! {
            s = within(limit, "initialize", async {
                client_info().serve((stdout, stdin)).await.map_err(|e| LinkError::Start(said(format!("initialize failed: {e}"))))
            }) => s,
            _ = exited.wait_for(Option::is_some) => Err(LinkError::Start(exit.borrow().clone().unwrap_or_default())),
        };
        let service = match service {
            Ok(s) => s,
            Err(e) => {
                let _ = kill_tx.send(());
                child::kill_group(pgid);
                return Err(e);
            }
        };
        Ok(StdioLink {
            peer: service.peer().clone(),
            service: tokio::sync::Mutex::new(Some(service)),
            pgid,
            exit,
            kill: Mutex::new(Some(kill_tx)),
            tripped,
        })
    }

    /// Why the link broke when a message passed the cap: the server is
    /// stopped (it would only go on writing) and the cap is named.
    fn over_cap(&self) -> Option<LinkError> {
        let why = self.tripped.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        self.kill_now();
        Some(LinkError::Broken(why))
    }

    fn kill_now(&self) {
        if let Some(k) = self.kill.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = k.send(());
        }
        child::kill_group(self.pgid);
    }

    fn exited(&self) -> Option<String> {
        self.exit.borrow().clone()
    }
}

impl Drop for StdioLink {
    fn drop(&mut self) {
        if self.exited().is_none() {
            self.kill_now();
        }
    }
}

#[async_trait::async_trait]
impl McpLink for StdioLink {
    async fn list_tools(&self) -> Result<Vec<RemoteTool>, LinkError> {
        list(&self.peer).await.map_err(|e| self.over_cap().unwrap_or(e))
    }

    async fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> Result<CallOutput, LinkError> {
        let mut exit = self.exit.clone();
        let r = tokio::select! {
            r = call(&self.peer, name, arguments) => match r {
                // A closed transport is most often the process gone: say why.
                Err(LinkError::Broken(e)) => Err(LinkError::Broken(self.exited().unwrap_or(e))),
                r => r,
            },
            _ = exit.wait_for(Option::is_some) => Err(LinkError::Broken(self.exited().unwrap_or_default())),
        };
        r.map_err(|e| self.over_cap().unwrap_or(e))
    }

    async fn closed(&self) -> String {
        let mut exit = self.exit.clone();
        let _ = exit.wait_for(Option::is_some).await;
        self.exited().unwrap_or_default()
    }

    async fn close(&self) {
        if let Some(s) = self.service.lock().await.take() {
            // Closing stdin is the polite stop (MCP's stdio shutdown).
            let _ = tokio::time::timeout(Duration::from_millis(300), s.cancel()).await;
        }
        self.kill_now();
    }

    fn kill(&self) {
        self.kill_now();
    }

    fn pid(&self) -> Option<u32> {
        u32::try_from(self.pgid).ok()
    }
}

/// A remote server over Streamable HTTP.
struct HttpLink {
    /// The entry's name, for what to run when the server wants a login.
    server: String,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<Service>>,
}

/// The entry's headers, resolved as an http tool's are (a value from the
/// environment is sensitive and never quoted).
fn header_map(
    config: &McpServerConfig,
) -> Result<HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue>, LinkError> {
    let map = crate::tool::http::build_headers(&config.headers).map_err(|e| LinkError::Start(e.message))?;
    Ok(map.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
}

impl HttpLink {
    async fn start(config: &McpServerConfig, url: &str, limit: Duration) -> Result<Self, LinkError> {
        let transport_config =
            StreamableHttpClientTransportConfig::with_uri(url.to_string()).custom_headers(header_map(config)?);
        let failed = |e: &dyn std::fmt::Display| {
            let mut why = said(format!("initialize failed: {e}"));
            if config.oauth.is_none() && why.contains("Auth required") {
                why.push_str(&format!(
                    " (the server wants an authorized user: add `[mcp.oauth]` to its entry and run `switchyard mcp login {}`)",
                    config.name
                ));
            }
            LinkError::Start(why)
        };
        let service = match &config.oauth {
            Some(oauth) => {
                let client = within(limit, "authorize", async {
                    super::oauth::authorized_client(&config.name, url, oauth)
                        .await
                        .map_err(|e| LinkError::Start(said(e.to_string())))
                })
                .await?;
                let transport = StreamableHttpClientTransport::with_client(client, transport_config);
                within(limit, "initialize", async { client_info().serve(transport).await.map_err(|e| failed(&e)) })
                    .await?
            }
            None => {
                let transport = StreamableHttpClientTransport::from_config(transport_config);
                within(limit, "initialize", async { client_info().serve(transport).await.map_err(|e| failed(&e)) })
                    .await?
            }
        };
        Ok(HttpLink {
            server: config.name.clone(),
            peer: service.peer().clone(),
            service: tokio::sync::Mutex::new(Some(service)),
        })
    }
}

#[async_trait::async_trait]
impl McpLink for HttpLink {
    async fn list_tools(&self) -> Result<Vec<RemoteTool>, LinkError> {
        list(&self.peer).await
    }

    async fn call_tool(&self, name: &str, arguments: Map<String, Value>) -> Result<CallOutput, LinkError> {
        call(&self.peer, name, arguments).await.map_err(|e| login_hint(&self.server, e))
    }

    async fn closed(&self) -> String {
        std::future::pending().await
    }

    async fn close(&self) {
        if let Some(s) = self.service.lock().await.take() {
            let _ = tokio::time::timeout(Duration::from_millis(300), s.cancel()).await;
        }
    }

    /// Nothing runs here; the session ends with the hub's runtime.
    fn kill(&self) {}

    fn pid(&self) -> Option<u32> {
        None
    }
}
