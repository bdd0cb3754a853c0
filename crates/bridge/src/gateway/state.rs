//! What every request of a gateway shares: the session's token, the way to
//! the engine, the models it names, and the Responses API's record.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tokio::sync::mpsc;

use crate::engine::agent::calls::Bridged;
use crate::text::secret::Secret;

pub struct GatewayState {
    /// What an agent must send as its API key.
    pub token: Secret,
    pub calls: mpsc::Sender<Bridged>,
    /// Listed by `GET /v1/models`: the agent role's model first.
    pub models: Vec<String>,
    /// The most bytes a request body may take.
    pub max_body: usize,
    /// Responses API: each reply's id → the whole conversation up to and
    /// including its output, for a request that names it as
    /// `previous_response_id`. Stateless upstreams never see the id.
    pub conversations: Mutex<HashMap<String, Vec<Value>>>,
    /// Replies served so far: each reply's id gets its number, so two
    /// replies with the same content still have ids of their own (an
    /// agent framework may key its messages by them).
    pub served: std::sync::atomic::AtomicU64,
}

impl GatewayState {
    /// Whether the request's headers carry the token (OpenAI's SDKs send a
    /// bearer token, Anthropic's an `x-api-key`).
    pub fn admits(&self, headers: &axum::http::HeaderMap) -> bool {
        let bearer = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        let key = headers.get("x-api-key").and_then(|v| v.to_str().ok());
        [bearer, key].into_iter().flatten().any(|k| self.token.matches(k.trim()))
    }
}
