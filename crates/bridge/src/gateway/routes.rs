//! The gateway's endpoints: each dialect's model call, `GET /v1/models`,
//! and each refusal in the dialect's own error shape.

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::errors::GatewayError;
use super::state::GatewayState;
use super::stream;
use crate::engine::agent::calls::{Bridged, BridgedCall, GatewayRefusal, Refusal};
use crate::model::Role;
use crate::model::wire::{Dialect, WireRequest};

type Shared = State<Arc<GatewayState>>;

pub fn router(state: Arc<GatewayState>, mcp: Router) -> Router {
    // MCP's endpoint asks for the session token like the model endpoints.
    let mcp = mcp.layer(axum::middleware::from_fn_with_state(Arc::clone(&state), mcp_admits));
    let api = Router::new()
        .route("/v1/chat/completions", post(|s: Shared, h: HeaderMap, b: Body| serve(s, h, b, Dialect::Chat)))
        .route("/v1/responses", post(|s: Shared, h: HeaderMap, b: Body| serve(s, h, b, Dialect::Responses)))
        .route("/v1/messages", post(|s: Shared, h: HeaderMap, b: Body| serve(s, h, b, Dialect::Anthropic)))
        .route("/v1/models", get(models))
        .fallback(not_found)
        .with_state(state);
    mcp.merge(api)
}

/// Anthropic's SDKs send `anthropic-version`; OpenAI's never do.
fn dialect_of(headers: &HeaderMap) -> Dialect {
    if headers.contains_key("anthropic-version") { Dialect::Anthropic } else { Dialect::Chat }
}

async fn not_found(headers: HeaderMap, uri: axum::http::Uri) -> Response {
    let message = format!(
        "Switchyard's gateway serves POST /v1/chat/completions, /v1/responses and /v1/messages, GET /v1/models and MCP at /mcp, not {}",
        uri.path()
    );
    GatewayError::new(dialect_of(&headers), StatusCode::NOT_FOUND, message).into_response()
}

/// The MCP endpoint's door: without the token, a JSON-RPC error in a 401.
async fn mcp_admits(State(st): Shared, request: axum::extract::Request, next: axum::middleware::Next) -> Response {
    if st.admits(request.headers()) {
        return next.run(request).await;
    }
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32001,
        "message": "invalid or missing bearer token: send the session token Switchyard gave the agent (its SWITCHYARD_MCP_TOKEN)"}});
    (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Bearer")], axum::Json(body)).into_response()
}

async fn models(State(st): Shared, headers: HeaderMap) -> Response {
    let dialect = dialect_of(&headers);
    if !st.admits(&headers) {
        return unauthorized(dialect).into_response();
    }
    let body = match dialect {
        Dialect::Anthropic => json!({
            "data": st.models.iter().map(|m| json!({"type": "model", "id": m, "display_name": m,
                "created_at": "1970-01-01T00:00:00Z"})).collect::<Vec<_>>(),
            "has_more": false,
            "first_id": st.models.first(),
            "last_id": st.models.last(),
        }),
        _ => json!({
            "object": "list",
            "data": st.models.iter().map(|m| json!({"id": m, "object": "model", "created": 0,
                "owned_by": "switchyard"})).collect::<Vec<_>>(),
        }),
    };
    axum::Json(body).into_response()
}

fn unauthorized(dialect: Dialect) -> GatewayError {
    GatewayError::new(
        dialect,
        StatusCode::UNAUTHORIZED,
        "invalid or missing API key: send the session token Switchyard gave the agent (its OPENAI_API_KEY and ANTHROPIC_API_KEY)",
    )
}

/// The header an agent names its conversation by (a sub-agent, a worker).
const AGENT_HEADER: &str = "x-switchyard-agent";

/// The name in `X-Switchyard-Agent`, if sent: printable, at most 64 characters.
fn agent_name(headers: &HeaderMap) -> Result<Option<String>, String> {
    let Some(v) = headers.get(AGENT_HEADER) else { return Ok(None) };
    let bad = |why: &str| format!("header X-Switchyard-Agent: {why}");
    let name = v.to_str().map_err(|_| bad("not text"))?.trim();
    if name.is_empty() || name.chars().count() > 64 || name.chars().any(char::is_control) {
        return Err(bad("a name of 1 to 64 printable characters"));
    }
    Ok(Some(name.to_string()))
}

async fn serve(State(st): Shared, headers: HeaderMap, body: Body, dialect: Dialect) -> Response {
    match call(&st, &headers, body, dialect).await {
        Ok(r) => r,
        Err(e) => {
            tracing::info!(dialect = %dialect, status = e.status.as_u16(), error = %e.message, "gateway refused a request");
            if !e.known {
                // The workbench shows it; a full queue only loses the notice.
                let _ = st.calls.try_send(Bridged::Refused(GatewayRefusal {
                    dialect,
                    status: e.status.as_u16(),
                    error: e.message.clone(),
                }));
            }
            e.into_response()
        }
    }
}

async fn call(st: &GatewayState, headers: &HeaderMap, body: Body, dialect: Dialect) -> Result<Response, GatewayError> {
    let fail = |status, message: String| GatewayError::new(dialect, status, message);
    if !st.admits(headers) {
        return Err(unauthorized(dialect));
    }
    let bytes = axum::body::to_bytes(body, st.max_body).await.map_err(|_| {
        fail(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "the request body passed the gateway's limit of {}",
                crate::tool::limits::megabytes(st.max_body as u64)
            ),
        )
    })?;
    let mut body: Value = serde_json::from_slice(&bytes)
        .map_err(|e| fail(StatusCode::BAD_REQUEST, format!("the request body is not JSON: {e}")))?;
    if !body.is_object() {
        return Err(fail(StatusCode::BAD_REQUEST, "the request body is not a JSON object".into()));
    }
    let streamed = body.get("stream").and_then(Value::as_bool) == Some(true);
    let usage = body.pointer("/stream_options/include_usage").and_then(Value::as_bool) == Some(true);
    let model = body.get("model").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut conversation = None;
    if dialect == Dialect::Responses {
        conversation = Some(expand_previous(st, &mut body)?);
    }
    let wire = WireRequest { dialect, body };
    let request = wire
        .chat_request(Role::Agent)
        .map_err(|u| fail(StatusCode::BAD_REQUEST, format!("{}: {}", u.field, u.why)).at(u.field))?;
    let agent = agent_name(headers).map_err(|why| fail(StatusCode::BAD_REQUEST, why))?;
    let (tx, rx) = oneshot::channel();
    st.calls
        .send(Bridged::Call(Box::new(BridgedCall { request, agent, reply: tx })))
        .await
        .map_err(|_| fail(StatusCode::SERVICE_UNAVAILABLE, "the Switchyard session has ended".into()).known())?;
    let resp = match rx.await {
        Ok(Ok(resp)) => resp,
        Ok(Err(Refusal::Upstream { status, error })) => {
            return Err(fail(upstream_refusal(status), format!("the model failed: {error}")).known());
        }
        Ok(Err(Refusal::Stopped)) | Err(_) => {
            return Err(fail(
                StatusCode::SERVICE_UNAVAILABLE,
                "the Switchyard session stopped before this call was answered".into(),
            )
            .known());
        }
    };
    let mut reply = resp.to_dialect(dialect, &model).map_err(|u| {
        fail(StatusCode::BAD_GATEWAY, format!("the model's reply cannot be given in this API: {}: {}", u.field, u.why))
    })?;
    if let Some(obj) = reply.as_object_mut() {
        if !model.is_empty() {
            obj.insert("model".into(), json!(model));
        }
        let n = st.served.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        if let Some(Value::String(id)) = obj.get_mut("id") {
            id.push_str(&format!("_{n}"));
        }
    }
    if let Some(mut items) = conversation {
        items.extend(reply.get("output").and_then(Value::as_array).cloned().unwrap_or_default());
        if let Some(id) = reply.get("id").and_then(Value::as_str) {
            st.conversations.lock().unwrap_or_else(|p| p.into_inner()).insert(id.to_string(), items);
        }
    }
    if streamed {
        let events = stream::events(dialect, &reply, usage);
        let mut r = events.into_response();
        r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
        r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        return Ok(r);
    }
    Ok(axum::Json(reply).into_response())
}

/// The status an agent is given for a failed model call. The upstream's
/// refusal of the request itself (too long a context, a bad field) is the
/// agent's to see as such, and not to retry; a rate limit may be retried;
/// anything else (the upstream down, failing after its retries, refusing
/// Switchyard's own key, an injected fault) is a bad gateway.
fn upstream_refusal(status: Option<u16>) -> StatusCode {
    match status {
        Some(s @ (400 | 404 | 413 | 422 | 429)) => StatusCode::from_u16(s).unwrap_or(StatusCode::BAD_GATEWAY),
        _ => StatusCode::BAD_GATEWAY,
    }
}

/// Responses API: `previous_response_id` answered from the session's own
/// record (the conversation it ended), so no upstream needs to keep state.
/// Returns the whole conversation the request now holds as input items.
fn expand_previous(st: &GatewayState, body: &mut Value) -> Result<Vec<Value>, GatewayError> {
    let obj = body.as_object_mut().expect("checked to be an object");
    let mut items = match obj.remove("previous_response_id") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(id)) => {
            let known = st.conversations.lock().unwrap_or_else(|p| p.into_inner()).get(&id).cloned();
            known.ok_or_else(|| {
                GatewayError::new(
                    Dialect::Responses,
                    StatusCode::NOT_FOUND,
                    format!("previous_response_id '{id}' is not a response of this Switchyard session"),
                )
                .at("previous_response_id")
            })?
        }
        Some(_) => {
            return Err(GatewayError::new(
                Dialect::Responses,
                StatusCode::BAD_REQUEST,
                "previous_response_id is not a string",
            )
            .at("previous_response_id"));
        }
    };
    match obj.get("input") {
        Some(Value::String(s)) => items.push(json!({"type": "message", "role": "user", "content": s})),
        Some(Value::Array(more)) => items.extend(more.iter().cloned()),
        _ => {}
    }
    if !items.is_empty() {
        obj.insert("input".into(), Value::Array(items.clone()));
    }
    Ok(items)
}
