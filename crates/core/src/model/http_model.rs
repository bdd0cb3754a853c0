//! A chat model behind an HTTP endpoint, in the dialect its config names:
//! Chat Completions (OpenAI, vLLM, Ollama, llama.cpp server, LM Studio, ...),
//! OpenAI's Responses or Anthropic's Messages. The request is built in Chat
//! Completions, the pivot, and translated (`dialect`) for the other two.
//!
//! The reply is parsed with our own lenient wire types rather than a client
//! crate's: local servers leave fields null or missing, send arguments as
//! objects instead of strings, and often write a tool call as JSON in the
//! content instead of `tool_calls` (see docs/src/models.md). The API key is
//! read from an environment variable once, kept as a `Secret` only for the
//! Authorization header, and masked in whatever the endpoint sends back
//! (`redacted`): a server may quote the header in an error body or a reply.
//! The file is long (over 600 lines) because
//! the lenient reader, the retry loop with its injected faults and their
//! unit tests belong together.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::dialect;
use super::fault::ModelFaultMode;
use super::stream::{Delta, Frames, Reassembly, Tokens};
use super::wire::{self, Dialect, WireRequest};
use super::{
    ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Speaker, ToolCallRequest, ToolDef,
    Usage, tokens, wire_fault,
};
use crate::text::error_chain;
use crate::text::secret::{Secret, redact, redact_bytes};

/// How an `openai` model is reached. Holds the *name* of the variable with
/// the key, never the key.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct HttpModelConfig {
    /// The config's name for this model (what accounting and the UI show).
    #[serde(default)]
    pub name: String,
    /// E.g. `http://127.0.0.1:8080/v1`; `/chat/completions` is appended.
    pub base_url: String,
    /// The model name sent to the endpoint.
    pub model: String,
    /// Environment variable holding the API key; `None` for local servers.
    #[serde(default)]
    pub api_key_env: Option<String>,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    #[serde(default = "default_max_retries")]
    pub max_retries: u32,
    /// Send offered tools as the native `tools` parameter.
    #[serde(default = "default_true")]
    pub native_tools: bool,
    /// Send a response schema as `response_format: json_schema`.
    #[serde(default = "default_true")]
    pub json_schema: bool,
    /// The most tokens a reply may take when a request sets no limit of its
    /// own: llama.cpp's server otherwise lets a small model ramble until its
    /// context is full (minutes a call on a CPU).
    #[serde(default = "default_max_tokens")]
    pub max_tokens: u32,
    /// The most bytes a reply's body may take: a server that streams
    /// without end must not take the process's memory with it.
    #[serde(default = "default_max_reply_bytes")]
    pub max_reply_bytes: u64,
    /// The API the endpoint speaks: Chat Completions (`kind = "openai"`),
    /// the Responses API (`kind = "openai-responses"`) or Anthropic
    /// Messages (`kind = "anthropic"`).
    #[serde(default)]
    pub api: Dialect,
    /// Ask for the reply as a stream of events, so its tokens show as they
    /// arrive and its time to first token is measured. A server that
    /// answers in one piece anyway is read as before.
    #[serde(default = "default_true")]
    pub stream: bool,
    /// Send `cache_prompt: true` (llama.cpp's server): the server keeps
    /// each slot's prompt and evaluates only what follows the part a new
    /// request shares with it. Off by default: OpenAI refuses parameters it
    /// does not know, and caches on its own.
    #[serde(default)]
    pub cache_prompt: bool,
    /// The llama.cpp server slot each role's requests go to (`id_slot`).
    /// A slot caches the last prompt it ran; roles with prompts of their
    /// own (the actor's, the evaluator's) on one slot take turns evicting
    /// each other's, while a slot per role keeps each prompt extending its
    /// own last one. A role not listed goes to whichever slot is free.
    #[serde(default)]
    pub slots: std::collections::BTreeMap<Role, u32>,
    /// The most requests in flight to the endpoint at once (None: no
    /// bound). Concurrent calls beyond it wait their turn before they go
    /// out, not against their timeout: a server with N slots queues the
    /// rest itself, but a paid API may answer them with 429s.
    #[serde(default)]
    pub max_in_flight: Option<usize>,
}

/// 16 MB: far beyond any chat reply, far below what hurts.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 16 << 20;

fn default_max_reply_bytes() -> u64 {
    DEFAULT_MAX_REPLY_BYTES
}

fn default_max_tokens() -> u32 {
    1024
}

fn default_timeout_ms() -> u64 {
    60_000
}
fn default_max_retries() -> u32 {
    3
}
fn default_true() -> bool {
    true
}

impl HttpModelConfig {
    /// A config with the default timeout, retries and native features.
    pub fn new(name: impl Into<String>, base_url: impl Into<String>, model: impl Into<String>) -> Self {
        HttpModelConfig {
            name: name.into(),
            base_url: base_url.into(),
            model: model.into(),
            api_key_env: None,
            timeout_ms: default_timeout_ms(),
            max_retries: default_max_retries(),
            native_tools: true,
            json_schema: true,
            max_tokens: default_max_tokens(),
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            api: Dialect::Chat,
            stream: true,
            cache_prompt: false,
            slots: Default::default(),
            max_in_flight: None,
        }
    }
}

/// The version of Anthropic's API the requests are written for.
const ANTHROPIC_VERSION: &str = "2023-06-01";

const BACKOFF_BASE_MS: u64 = 500;
const BACKOFF_CAP_MS: u64 = 8_000;
const RETRY_AFTER_CAP_MS: u64 = 30_000;
const ERROR_BODY_CHARS: usize = 500;
/// Bounds the search for a JSON tool call in long free text.
const MAX_JSON_CANDIDATES: usize = 64;

pub struct HttpModel {
    cfg: HttpModelConfig,
    api_key: Option<Secret>,
    client: reqwest::Client,
    url: String,
    /// How response schemas go over the wire (a [`SchemaStyle`]): servers
    /// differ, and one that refuses a form is sent the next from then on.
    schema_style: std::sync::atomic::AtomicU8,
    /// `max_in_flight`'s permits.
    in_flight: Option<Arc<tokio::sync::Semaphore>>,
}

/// The forms of constrained decoding, in the order they are tried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum SchemaStyle {
    /// OpenAI's `{"type": "json_schema", "json_schema": {...}}` (OpenAI, vLLM, llama.cpp's own server).
    JsonSchema = 0,
    /// `{"type": "json_object", "schema": {...}}` (llama-cpp-python's server, Ollama-style).
    JsonObject = 1,
    /// No response format: the text protocol alone.
    Off = 2,
}

impl SchemaStyle {
    fn from_u8(v: u8) -> Self {
        match v {
            0 => SchemaStyle::JsonSchema,
            1 => SchemaStyle::JsonObject,
            _ => SchemaStyle::Off,
        }
    }

    fn next(self) -> Self {
        match self {
            SchemaStyle::JsonSchema => SchemaStyle::JsonObject,
            SchemaStyle::JsonObject | SchemaStyle::Off => SchemaStyle::Off,
        }
    }
}

impl std::fmt::Debug for HttpModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpModel")
            .field("name", &self.cfg.name)
            .field("url", &self.url)
            .field("model", &self.cfg.model)
            .field("api_key_env", &self.cfg.api_key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("timeout_ms", &self.cfg.timeout_ms)
            .field("max_retries", &self.cfg.max_retries)
            .field("native_tools", &self.cfg.native_tools)
            .field("json_schema", &self.cfg.json_schema)
            .finish()
    }
}

impl HttpModel {
    pub fn new(cfg: HttpModelConfig) -> Result<Self, ModelError> {
        let api_key = match &cfg.api_key_env {
            None => None,
            Some(var) => match Secret::from_env(var) {
                Some(key) => Some(key),
                None => return Err(ModelError::MissingKey { model: cfg.name.clone(), var: var.clone() }),
            },
        };
        let client = reqwest::Client::builder()
            .build()
            .map_err(|e| ModelError::Transport(format!("could not build the HTTP client: {}", error_chain(&e))))?;
        let path = match cfg.api {
            Dialect::Chat => "chat/completions",
            Dialect::Responses => "responses",
            Dialect::Anthropic => "messages",
        };
        let url = format!("{}/{path}", cfg.base_url.trim_end_matches('/'));
        // Anthropic's Messages have no response format to constrain a reply with.
        let style =
            if cfg.json_schema && cfg.api != Dialect::Anthropic { SchemaStyle::JsonSchema } else { SchemaStyle::Off };
        let in_flight = cfg.max_in_flight.map(|n| Arc::new(tokio::sync::Semaphore::new(n.max(1))));
        Ok(HttpModel {
            cfg,
            api_key,
            client,
            url,
            schema_style: std::sync::atomic::AtomicU8::new(style as u8),
            in_flight,
        })
    }

    fn style(&self) -> SchemaStyle {
        SchemaStyle::from_u8(self.schema_style.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The request in the endpoint's API.
    fn request_body(&self, req: &ChatRequest) -> Result<Value, ModelError> {
        if let Some(wire) = &req.wire {
            let mut body = self.bridged_body(wire)?;
            self.pin_slot(&mut body, req.role);
            return Ok(body);
        }
        let chat = self.chat_body(req);
        let mut body = match self.cfg.api {
            Dialect::Chat => chat,
            Dialect::Responses => dialect::responses::request_from_chat(&chat).map_err(ModelError::Untranslatable)?,
            Dialect::Anthropic => dialect::anthropic::request_from_chat(&chat, Some(self.cfg.max_tokens))
                .map_err(ModelError::Untranslatable)?,
        };
        if self.cfg.stream {
            self.ask_stream(&mut body);
        }
        self.ask_cache(&mut body);
        self.pin_slot(&mut body, req.role);
        Ok(body)
    }

    fn pin_slot(&self, body: &mut Value, role: Role) {
        if let Some(slot) = self.cfg.slots.get(&role)
            && self.cfg.api == Dialect::Chat
            && let Some(obj) = body.as_object_mut()
        {
            obj.insert("id_slot".into(), json!(slot));
        }
    }

    fn ask_cache(&self, body: &mut Value) {
        if self.cfg.cache_prompt
            && self.cfg.api == Dialect::Chat
            && let Some(obj) = body.as_object_mut()
        {
            obj.insert("cache_prompt".into(), json!(true));
        }
    }

    /// A request asking for its reply as a stream, with its usage (which
    /// Chat Completions leaves out of a stream unless asked).
    fn ask_stream(&self, body: &mut Value) {
        if let Some(obj) = body.as_object_mut() {
            obj.insert("stream".into(), json!(true));
            if self.cfg.api == Dialect::Chat {
                obj.insert("stream_options".into(), json!({"include_usage": true}));
            }
        }
    }

    fn chat_body(&self, req: &ChatRequest) -> Value {
        let messages: Vec<Value> =
            req.messages.iter().map(|m| json!({ "role": wire_role(m.role), "content": m.content })).collect();
        let mut body = Map::new();
        body.insert("model".into(), json!(self.cfg.model));
        body.insert("messages".into(), Value::Array(messages));
        if let Some(t) = req.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if let Some(n) = req.max_tokens.or(Some(self.cfg.max_tokens)) {
            body.insert("max_tokens".into(), json!(n));
        }
        if self.cfg.native_tools && !req.tools.is_empty() {
            let tools: Vec<Value> = req.tools.iter().map(wire_tool).collect();
            body.insert("tools".into(), Value::Array(tools));
        }
        if let Some(schema) = &req.response_schema {
            match self.style() {
                SchemaStyle::JsonSchema => {
                    body.insert(
                        "response_format".into(),
                        json!({
                            "type": "json_schema",
                            "json_schema": {
                                "name": schema_name(&schema.name),
                                "schema": schema.schema,
                                "strict": true,
                            }
                        }),
                    );
                }
                SchemaStyle::JsonObject => {
                    body.insert("response_format".into(), json!({"type": "json_object", "schema": schema.schema}));
                }
                SchemaStyle::Off => {}
            }
        }
        let bound_by_schema = req.response_schema.is_some() && self.style() != SchemaStyle::Off;
        // The Responses API takes no stop sequences; a schema's grammar ends
        // a reply on its own (and OpenAI's reasoning models refuse `stop`).
        if !req.stop.is_empty() && !bound_by_schema && self.cfg.api != Dialect::Responses {
            body.insert("stop".into(), json!(req.stop));
        }
        Value::Object(body)
    }

    /// A bridged agent's request: as it sent it when it speaks the
    /// endpoint's API, else translated; the upstream's model name in place
    /// of the agent's. It streams from the upstream when the agent asked
    /// for a stream (and this model streams): the gateway writes the
    /// agent's own stream once the engine has the whole reply.
    fn bridged_body(&self, wire: &WireRequest) -> Result<Value, ModelError> {
        // Anthropic requires a limit: one the agent did not set is the config's.
        let mut body = if self.cfg.api == Dialect::Anthropic && wire.dialect != Dialect::Anthropic {
            wire.to_chat().and_then(|chat| dialect::anthropic::request_from_chat(&chat, Some(self.cfg.max_tokens)))
        } else {
            wire.to_dialect(self.cfg.api)
        }
        .map_err(ModelError::Untranslatable)?;
        let streams = self.cfg.stream && wire.body.get("stream") == Some(&Value::Bool(true));
        if let Some(obj) = body.as_object_mut() {
            obj.insert("model".into(), json!(self.cfg.model));
            if wire.dialect != self.cfg.api || !streams {
                obj.remove("stream");
                obj.remove("stream_options");
            }
        }
        if streams && wire.dialect != self.cfg.api {
            self.ask_stream(&mut body);
        }
        if self.cfg.api == Dialect::Chat {
            tool_texts_as_strings(&mut body);
            if !self.cfg.native_tools {
                tools_as_text(&mut body);
            }
        }
        self.bound_reply(&mut body);
        self.ask_cache(&mut body);
        Ok(body)
    }

    /// An outside agent that sets no reply limit (the Agents SDK sets none)
    /// gets the config's: a small model otherwise rambles on until its
    /// context is full, and the agent's next request no longer fits.
    fn bound_reply(&self, body: &mut Value) {
        let keys: &[&str] = match self.cfg.api {
            Dialect::Chat => &["max_tokens", "max_completion_tokens"],
            Dialect::Responses => &["max_output_tokens"],
            Dialect::Anthropic => &["max_tokens"],
        };
        if let Some(obj) = body.as_object_mut()
            && keys.iter().all(|k| obj.get(*k).is_none_or(Value::is_null))
        {
            obj.insert(keys[0].into(), json!(self.cfg.max_tokens));
        }
    }

    /// One HTTP exchange, bounded by the per-request timeout (connect, send
    /// and reading the body together). An injected transport fault takes
    /// the exchange's place (an HTTP error never reaches the endpoint) or
    /// holds it up within the same timeout.
    ///
    /// A streamed reply is read event by event, its text told to `tokens`;
    /// `cut` breaks it off after its first piece of text (the injected
    /// `truncated` fault, as a dropped connection looks on a stream).
    async fn attempt(
        &self,
        body: &Value,
        injected: Option<ModelFaultMode>,
        tokens: &Tokens,
        cut: bool,
    ) -> Result<Attempt, ModelError> {
        if let Some(answered) = injected.and_then(injected_answer) {
            return Ok(answered);
        }
        // Held for the whole exchange, body included; never closed.
        let _turn = match &self.in_flight {
            Some(s) => s.acquire().await.ok(),
            None => None,
        };
        let timeout = Duration::from_millis(self.cfg.timeout_ms);
        let exchange = async {
            match injected {
                Some(ModelFaultMode::Slow { ms }) => tokio::time::sleep(Duration::from_millis(ms)).await,
                Some(ModelFaultMode::Timeout) => std::future::pending::<()>().await,
                _ => {}
            }
            let mut rb = self.client.post(&self.url).json(body);
            match (&self.api_key, self.cfg.api) {
                (Some(key), Dialect::Anthropic) => rb = rb.header("x-api-key", key.expose()),
                (Some(key), _) => rb = rb.bearer_auth(key.expose()),
                (None, _) => {}
            }
            if self.cfg.api == Dialect::Anthropic {
                rb = rb.header("anthropic-version", ANTHROPIC_VERSION);
            }
            let resp = rb.send().await?;
            let status = resp.status().as_u16();
            let retry_after = resp
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(parse_retry_after);
            let cap = self.cfg.max_reply_bytes;
            if resp.content_length().is_some_and(|n| n > cap) {
                return Ok(Attempt::TooLarge);
            }
            let streamed = resp
                .headers()
                .get(reqwest::header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.contains("text/event-stream"));
            if streamed && (200..300).contains(&status) {
                return self.read_stream(resp, tokens, cut).await;
            }
            // Read chunk by chunk so that an endless body stops at the cap
            // instead of filling memory.
            let mut resp = resp;
            let mut body = Vec::new();
            while let Some(chunk) = resp.chunk().await? {
                if (body.len() + chunk.len()) as u64 > cap {
                    return Ok(Attempt::TooLarge);
                }
                body.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>(Attempt::Answered { status, retry_after, body })
        };
        match tokio::time::timeout(timeout, exchange).await {
            Err(_) => Err(ModelError::Timeout { ms: self.cfg.timeout_ms }),
            Ok(Ok(a)) => Ok(a),
            Ok(Err(e)) if e.is_timeout() => Err(ModelError::Timeout { ms: self.cfg.timeout_ms }),
            Ok(Err(e)) if e.is_builder() => Err(ModelError::Transport(error_chain(&e))),
            Ok(Err(e)) => Ok(Attempt::Failed(error_chain(&e))),
        }
    }
}

impl HttpModel {
    /// A streamed reply, event by event, put back together into the body
    /// the endpoint would have sent in one piece.
    async fn read_stream(
        &self,
        mut resp: reqwest::Response,
        tokens: &Tokens,
        cut: bool,
    ) -> Result<Attempt, reqwest::Error> {
        let (mut frames, mut reply, mut read) = (Frames::default(), Reassembly::new(self.cfg.api), 0u64);
        while let Some(chunk) = resp.chunk().await? {
            read += chunk.len() as u64;
            if read > self.cfg.max_reply_bytes {
                return Ok(Attempt::TooLarge);
            }
            for frame in frames.push(&chunk) {
                match reply.feed(&frame) {
                    Ok(Some(text)) => {
                        tokens.send(Delta::Text(redact(&text).into_owned()));
                        if cut {
                            return Ok(Attempt::Cut(format!(
                                "the stream broke off mid-reply after {} events (injected fault)",
                                reply.events
                            )));
                        }
                    }
                    Ok(None) => {}
                    Err(why) => return Ok(Attempt::Failed(why)),
                }
            }
        }
        if !reply.finished() {
            return Ok(Attempt::Failed(format!(
                "the stream ended after {} events, before the reply was finished",
                reply.events
            )));
        }
        let body = serde_json::to_vec(&reply.body()).unwrap_or_default();
        Ok(Attempt::Answered { status: 200, retry_after: None, body })
    }
}

/// An injected HTTP error, as an answer the retry loop reads like any other.
fn injected_answer(fault: ModelFaultMode) -> Option<Attempt> {
    let (status, retry_after, body) = match fault {
        ModelFaultMode::Http500 => (500, None, wire_fault::HTTP_500_BODY),
        ModelFaultMode::RateLimited { retry_after_ms } => {
            (429, Some(Duration::from_millis(retry_after_ms.min(RETRY_AFTER_CAP_MS))), wire_fault::HTTP_429_BODY)
        }
        _ => return None,
    };
    Some(Attempt::Answered { status, retry_after, body: body.as_bytes().to_vec() })
}

/// The attempt with every registered secret masked in what the endpoint
/// sent: from here on its body is quoted in errors and logs, parsed into
/// the reply that traces, cassettes and spans keep, or both.
fn redacted(attempt: Attempt) -> Attempt {
    match attempt {
        Attempt::Answered { status, retry_after, body } => {
            let body = match redact_bytes(&body) {
                std::borrow::Cow::Borrowed(_) => body,
                std::borrow::Cow::Owned(masked) => masked,
            };
            Attempt::Answered { status, retry_after, body }
        }
        Attempt::Failed(msg) => Attempt::Failed(redact(&msg).into_owned()),
        Attempt::Cut(msg) => Attempt::Cut(msg),
        Attempt::TooLarge => Attempt::TooLarge,
    }
}

enum Attempt {
    Answered {
        status: u16,
        retry_after: Option<Duration>,
        body: Vec<u8>,
    },
    /// The endpoint could not be reached or the exchange broke off: worth a retry.
    Failed(String),
    /// The body passed `max_reply_bytes`: not retried, it would only pass it again.
    TooLarge,
    /// A stream broken off by the injected `truncated` fault, which it spent.
    Cut(String),
}

#[async_trait]
impl ChatModel for HttpModel {
    fn info(&self) -> ModelInfo {
        let kind = match self.cfg.api {
            Dialect::Chat => ModelKind::Openai,
            Dialect::Responses => ModelKind::OpenaiResponses,
            Dialect::Anthropic => ModelKind::Anthropic,
        };
        ModelInfo { name: self.cfg.name.clone(), kind, simulated: false }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.chat_with_fault(req, None).await
    }

    /// A transport fault takes the first attempt only: the retries go to
    /// the endpoint. A spoiling fault spoils the first reply that arrives.
    async fn chat_with_fault(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
    ) -> Result<ChatResponse, ModelError> {
        self.chat_streaming(req, fault, &Tokens::none()).await
    }

    async fn chat_streaming(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
        tokens: &Tokens,
    ) -> Result<ChatResponse, ModelError> {
        let mut attempts = 0;
        self.exchanges(req, fault, tokens, &mut attempts).await.map_err(|error| ModelError::AtEndpoint {
            url: self.url.clone(),
            attempts,
            error: Box::new(error),
        })
    }
}

impl HttpModel {
    /// The retry loop: every exchange it starts is counted in `attempts`.
    async fn exchanges(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
        tokens: &Tokens,
        attempts: &mut u32,
    ) -> Result<ChatResponse, ModelError> {
        let mut body = self.request_body(req)?;
        let mut retry = 0u32;
        let (mut transport, mut spoil) = match fault {
            Some(f) if f.is_transport() => (Some(f), None),
            other => (None, other),
        };
        // On a stream, `truncated` is the stream breaking off mid-reply,
        // once: the retry reads the whole reply. A server that answers in
        // one piece has its reply cut in half instead.
        let mut cut = spoil == Some(ModelFaultMode::Truncated);
        if let Some(f) = fault {
            tracing::info!(model = %self.cfg.name, fault = %f, "injecting a model fault");
        }
        loop {
            let style = self.style();
            // A timeout is not retried: a slow local model would only be slow
            // again, multiplying the wait; the caller decides.
            *attempts += 1;
            if *attempts > 1 {
                tokens.send(Delta::Restart);
            }
            let attempt = self.attempt(&body, transport.take(), tokens, std::mem::take(&mut cut)).await?;
            let (failure, wait) = match redacted(attempt) {
                Attempt::Answered { status, body, .. } if (200..300).contains(&status) => {
                    let chat = self.as_chat(&body)?;
                    return match spoil {
                        Some(f) => parse_reply(&wire_fault::spoil(&chat, f), req),
                        None => parse_reply(&chat, req).map(|resp| self.keep_wire(resp, &body, &chat, req)),
                    };
                }
                // A server that does not know this form of response_format
                // gets the next form, at once and for good.
                Attempt::Answered { status, body: reply, .. }
                    if status >= 400
                        && req.response_schema.is_some()
                        && style != SchemaStyle::Off
                        && String::from_utf8_lossy(&reply).contains("response_format") =>
                {
                    let next = style.next();
                    tracing::warn!(model = %self.cfg.name, from = ?style, to = ?next, "response_format refused; switching");
                    self.schema_style.store(next as u8, std::sync::atomic::Ordering::Relaxed);
                    // The refused exchange is not one of the call's 1 + max_retries attempts.
                    *attempts -= 1;
                    body = self.request_body(req)?;
                    continue;
                }
                Attempt::Answered { status, retry_after, body } if status == 429 || status >= 500 => {
                    let err = ModelError::Http { status, body: truncate(&String::from_utf8_lossy(&body)) };
                    (err, retry_after.unwrap_or_else(|| backoff(retry)))
                }
                Attempt::Answered { status, body, .. } => {
                    return Err(ModelError::Http { status, body: truncate(&String::from_utf8_lossy(&body)) });
                }
                Attempt::Failed(msg) => (ModelError::Transport(msg), backoff(retry)),
                Attempt::Cut(msg) => {
                    spoil = None;
                    (ModelError::Transport(msg), backoff(retry))
                }
                Attempt::TooLarge => {
                    return Err(ModelError::TooLarge {
                        limit: crate::tool::limits::megabytes(self.cfg.max_reply_bytes),
                    });
                }
            };
            if retry >= self.cfg.max_retries {
                return Err(failure);
            }
            tracing::warn!(
                model = %self.cfg.name,
                error = %failure,
                retry = retry + 1,
                wait_ms = wait.as_millis() as u64,
                "model call failed; retrying"
            );
            tokio::time::sleep(wait).await;
            retry += 1;
        }
    }
}

impl HttpModel {
    /// A reply body in the pivot (Chat Completions), which the lenient
    /// reader and the fault injection read.
    fn as_chat(&self, body: &[u8]) -> Result<Vec<u8>, ModelError> {
        if self.cfg.api == Dialect::Chat {
            return Ok(body.to_vec());
        }
        let value: Value = serde_json::from_slice(body).map_err(|e| {
            ModelError::Malformed(format!(
                "body is not JSON ({e}); it starts: {}",
                truncate(&String::from_utf8_lossy(&body[..body.len().min(2 * ERROR_BODY_CHARS)]))
            ))
        })?;
        let chat = wire::WireReply { dialect: self.cfg.api, body: value }
            .to_chat()
            .map_err(|u| ModelError::Malformed(format!("the reply cannot be read: {u}")))?;
        Ok(chat.to_string().into_bytes())
    }

    /// A bridged agent gets the upstream's own body, unless the lenient
    /// reader found a tool call the body does not carry natively (written
    /// in the text): then the reply is written out from what was read.
    fn keep_wire(&self, mut resp: ChatResponse, body: &[u8], chat: &[u8], req: &ChatRequest) -> ChatResponse {
        if req.wire.is_none() {
            return resp;
        }
        let (Ok(body), Ok(chat)) = (serde_json::from_slice::<Value>(body), serde_json::from_slice::<Value>(chat))
        else {
            return resp;
        };
        let native = chat.pointer("/choices/0/message/tool_calls").and_then(Value::as_array).map_or(0, Vec::len);
        if native == resp.tool_calls.len() {
            resp.wire = Some(wire::WireReply { dialect: self.cfg.api, body });
        }
        resp
    }
}

fn backoff(retry: u32) -> Duration {
    let ms = BACKOFF_BASE_MS.saturating_mul(1u64 << retry.min(20));
    Duration::from_millis(ms.min(BACKOFF_CAP_MS))
}

/// `Retry-After` as delta-seconds or an HTTP date, capped so a hostile or
/// confused server cannot park a run for hours.
fn parse_retry_after(v: &str) -> Option<Duration> {
    let v = v.trim();
    let ms = if let Ok(secs) = v.parse::<u64>() {
        secs.saturating_mul(1000)
    } else {
        let at = chrono::DateTime::parse_from_rfc2822(v).ok()?;
        let delta = at.with_timezone(&chrono::Utc) - chrono::Utc::now();
        delta.num_milliseconds().max(0) as u64
    };
    Some(Duration::from_millis(ms.min(RETRY_AFTER_CAP_MS)))
}

/// An agent's tools as text, for a server without native tools
/// (`native_tools = false`), whose chat template shows the model neither
/// the `tools` nor `tool` messages nor an assistant's `tool_calls`: the
/// tools are described in the system message with how to call one (a JSON
/// object, which the reply is read back from as a tool call), each earlier
/// call written as that JSON, each result as a user turn naming its tool.
fn tools_as_text(body: &mut Value) {
    let Some(obj) = body.as_object_mut() else { return };
    let Some(Value::Array(tools)) = obj.remove("tools") else { return };
    obj.remove("tool_choice");
    obj.remove("parallel_tool_calls");
    let listed: Vec<String> = tools
        .iter()
        .filter_map(|t| {
            let f = t.get("function")?;
            let name = f.get("name")?.as_str()?;
            let description = f.get("description").and_then(Value::as_str).unwrap_or_default();
            let parameters = f.get("parameters").map(Value::to_string).unwrap_or_else(|| "{}".into());
            Some(format!("- {name}: {description} Arguments (JSON schema): {parameters}"))
        })
        .collect();
    let guide = format!(
        "You have these tools:\n{}\n\nUse a tool for any fact, figure or computation one of them \
         gives, rather than your memory. To call a tool, reply with only a JSON object: \
         {{\"name\": \"TOOL\", \"arguments\": {{...}}}}. Its result comes back as a message \
         \"TOOL returned: RESULT\". Once the results answer the question, reply with the answer \
         in plain words, without JSON.",
        listed.join("\n")
    );
    let Some(messages) = obj.get_mut("messages").and_then(Value::as_array_mut) else { return };
    match messages.first_mut().filter(|m| m.get("role").and_then(Value::as_str) == Some("system")) {
        Some(system) => {
            let said = chat_text(system.get("content"));
            system["content"] = Value::String(if said.is_empty() { guide } else { format!("{said}\n\n{guide}") });
        }
        None => messages.insert(0, json!({"role": "system", "content": guide})),
    }
    let mut names: Vec<(String, String)> = Vec::new();
    for m in messages.iter_mut() {
        match m.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                let Some(calls) = m.as_object_mut().and_then(|o| o.remove("tool_calls")) else { continue };
                let mut text: Vec<String> = Vec::new();
                for c in calls.as_array().into_iter().flatten() {
                    let (Some(id), Some(f)) = (c.get("id").and_then(Value::as_str), c.get("function")) else {
                        continue;
                    };
                    let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                    let args = match f.get("arguments") {
                        Some(Value::String(a)) => serde_json::from_str(a).unwrap_or(Value::String(a.clone())),
                        Some(a) => a.clone(),
                        None => json!({}),
                    };
                    names.push((id.to_string(), name.to_string()));
                    text.push(json!({"name": name, "arguments": args}).to_string());
                }
                // The model's own words, when it wrote the call as text, are kept.
                let said = chat_text(m.get("content"));
                m["content"] = Value::String(if said.trim().is_empty() { text.join("\n") } else { said });
            }
            Some("tool") => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or_default();
                let name = names.iter().find(|(i, _)| i == id).map_or("the tool", |(_, n)| n.as_str()).to_string();
                let result = chat_text(m.get("content"));
                if let Some(o) = m.as_object_mut() {
                    o.remove("tool_call_id");
                    o.insert("role".into(), json!("user"));
                    o.insert("content".into(), json!(format!("{name} returned: {result}")));
                }
            }
            _ => {}
        }
    }
}

fn chat_text(content: Option<&Value>) -> String {
    content.map(dialect::chat::content_text).unwrap_or_default()
}

/// A tool message whose content is a list of text parts, as one string.
/// Chat Completions takes either, and agents send parts (the OpenAI Agents
/// SDK does); llama.cpp's servers take only the string.
fn tool_texts_as_strings(body: &mut Value) {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else { return };
    for m in messages.iter_mut().filter(|m| m.get("role").and_then(Value::as_str) == Some("tool")) {
        let Some(parts) = m.get("content").and_then(Value::as_array) else { continue };
        let texts: Option<Vec<&str>> = parts
            .iter()
            .map(|p| (p.get("type").and_then(Value::as_str) == Some("text")).then(|| p.get("text")?.as_str()).flatten())
            .collect();
        if let Some(texts) = texts {
            m["content"] = Value::String(texts.join("\n"));
        }
    }
}

/// Our `Message` has no `tool_call_id`, and endpoints reject a `tool` message
/// without one, so tool observations go over the wire as user turns.
fn wire_role(s: Speaker) -> &'static str {
    match s {
        Speaker::System => "system",
        Speaker::User | Speaker::Tool => "user",
        Speaker::Assistant => "assistant",
    }
}

fn wire_tool(t: &ToolDef) -> Value {
    json!({
        "type": "function",
        "function": { "name": t.name, "description": t.description, "parameters": t.parameters }
    })
}

/// OpenAI requires the schema name to match `^[a-zA-Z0-9_-]{1,64}$`.
fn schema_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' })
        .take(64)
        .collect();
    if s.is_empty() { "response".to_string() } else { s }
}

fn truncate(s: &str) -> String {
    match s.char_indices().nth(ERROR_BODY_CHARS) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

// Wire types of the reply. Every field is optional: servers differ in what
// they leave out or send as null.

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireReply {
    choices: Option<Vec<WireChoice>>,
    usage: Option<WireUsage>,
    error: Option<Value>,
    /// llama.cpp's server: what the prompt took, cache included.
    timings: Option<WireTimings>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireTimings {
    cache_n: Option<u64>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireChoice {
    message: Option<WireMessage>,
    finish_reason: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireMessage {
    content: Option<Value>,
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireToolCall {
    function: Option<WireFunction>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<Value>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireUsage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
    prompt_tokens_details: Option<WirePromptDetails>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WirePromptDetails {
    cached_tokens: Option<u64>,
}

/// Reads a 2xx reply body of an OpenAI-compatible endpoint, given the
/// request it answers (its tools decide whether a tool call written in the
/// text counts). Public so it can be fuzzed without a server.
pub fn parse_reply(body: &[u8], req: &ChatRequest) -> Result<ChatResponse, ModelError> {
    let reply: WireReply = serde_json::from_slice(body).map_err(|e| {
        ModelError::Malformed(format!(
            "body is not a chat completion JSON object ({e}); it starts: {}",
            truncate(&String::from_utf8_lossy(&body[..body.len().min(2 * ERROR_BODY_CHARS)]))
        ))
    })?;
    let Some(choice) = reply.choices.and_then(|c| c.into_iter().next()) else {
        let why = match reply.error {
            Some(err) => format!("reply has no choices; it carries an error: {}", truncate(&err.to_string())),
            None => "reply has no choices".to_string(),
        };
        return Err(ModelError::Malformed(why));
    };
    let capped = choice.finish_reason.as_deref() == Some("length");
    let message = choice.message.unwrap_or_default();
    let text = content_text(message.content);

    let mut tool_calls = Vec::new();
    for (i, call) in message.tool_calls.unwrap_or_default().into_iter().enumerate() {
        let f = call.function.unwrap_or_default();
        let name = f.name.unwrap_or_default();
        if name.is_empty() {
            return Err(ModelError::Malformed(format!("tool_calls[{i}] has no function name")));
        }
        let arguments = native_arguments(f.arguments)
            .map_err(|e| ModelError::Malformed(format!("tool_calls[{i}] ({name}): arguments are not JSON: {e}")))?;
        tool_calls.push(ToolCallRequest { name, arguments });
    }
    if tool_calls.is_empty()
        && !req.tools.is_empty()
        && let Some(call) = tool_call_in_text(&text, &req.tools)
    {
        tool_calls.push(call);
    }

    let reported = reply.usage.unwrap_or_default();
    let cached = reported
        .prompt_tokens_details
        .as_ref()
        .and_then(|d| d.cached_tokens)
        .or(reply.timings.as_ref().and_then(|t| t.cache_n))
        .unwrap_or(0);
    let completion_estimate = || {
        tokens::count(&text)
            + tool_calls.iter().map(|c| tokens::count(&c.name) + tokens::count(&c.arguments.to_string())).sum::<u64>()
    };
    // Servers that omit usage (or send nulls, or zeros for a real call) get
    // an estimate with the cl100k tokenizer instead, so accounting never
    // shows a real call as free. It is an estimate, not the server's count.
    let usage = match (reported.prompt_tokens, reported.completion_tokens) {
        (Some(p), Some(c)) if p.saturating_add(c) > 0 => Usage::new(p, c),
        (p, c) => Usage::new(
            p.filter(|&n| n > 0).unwrap_or_else(|| tokens::count_messages(&req.messages)),
            c.filter(|&n| n > 0).unwrap_or_else(completion_estimate),
        ),
    };
    // A server counts cached tokens within the prompt's, never beyond it.
    let usage = Usage { cached_tokens: cached.min(usage.prompt_tokens), ..usage };
    Ok(ChatResponse { capped, ..ChatResponse::new(text, tool_calls, usage) })
}

/// Content as a string, an array of parts (`[{"type":"text","text":..}]`),
/// null or missing.
fn content_text(content: Option<Value>) -> String {
    match content {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s,
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                other => other.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join(""),
        Some(other) => other.to_string(),
    }
}

fn native_arguments(args: Option<Value>) -> Result<Value, serde_json::Error> {
    match args {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => serde_json::from_str(&s),
        Some(v) => Ok(v),
    }
}

/// A tool call written as JSON in the content, as small local models do:
/// `{"name": .., "arguments": {..}}` or `{"tool": .., "arguments": {..}}`,
/// bare, in ```json fences, in `<tool_call>` tags or after some prose. Only
/// a call naming an offered tool counts.
fn tool_call_in_text(text: &str, tools: &[ToolDef]) -> Option<ToolCallRequest> {
    text.match_indices(['{', '['])
        .take(MAX_JSON_CANDIDATES)
        .filter_map(|(i, _)| serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>().next()?.ok())
        .find_map(|v| match v {
            Value::Array(items) => items.iter().find_map(|it| tool_call_value(it, tools)),
            other => tool_call_value(&other, tools),
        })
}

fn tool_call_value(v: &Value, tools: &[ToolDef]) -> Option<ToolCallRequest> {
    let obj = v.as_object()?;
    // OpenAI's own shape, written out as text: {"function": {"name":.., "arguments":..}}.
    if let Some(inner) = obj.get("function").filter(|f| f.is_object()) {
        return tool_call_value(inner, tools);
    }
    let name =
        ["name", "tool", "tool_name", "function", "action"].iter().find_map(|k| obj.get(*k).and_then(Value::as_str))?;
    if !tools.iter().any(|t| t.name == name) {
        return None;
    }
    let args = ["arguments", "parameters", "args", "input", "action_input"].iter().find_map(|k| obj.get(*k)).cloned();
    let arguments = match native_arguments(args) {
        Ok(a @ Value::Object(_)) => a,
        _ => return None,
    };
    Some(ToolCallRequest { name: name.to_string(), arguments })
}

#[cfg(test)]
mod tests {
    #[test]
    fn an_agent_s_tools_are_text_for_a_server_without_native_tools() {
        let mut body = json!({
            "messages": [
                {"role": "user", "content": "capital of Australia?"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
                    "function": {"name": "geo_lookup", "arguments": "{\"country\": \"Australia\"}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "{\"capital\": \"Canberra\"}"}],
            "tools": [{"type": "function", "function": {"name": "geo_lookup", "description": "A country's facts.",
                "parameters": {"type": "object"}}}],
            "tool_choice": "auto"});
        tools_as_text(&mut body);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        let system = body["messages"][0]["content"].as_str().unwrap();
        assert!(system.contains("- geo_lookup: A country's facts.") && system.contains("JSON object"), "{system}");
        assert_eq!(
            body["messages"][2],
            json!({"role": "assistant", "content": "{\"name\":\"geo_lookup\",\"arguments\":{\"country\":\"Australia\"}}"})
        );
        assert_eq!(
            body["messages"][3],
            json!({"role": "user", "content": "geo_lookup returned: {\"capital\": \"Canberra\"}"})
        );
    }

    use super::*;

    #[test]
    fn a_tool_message_s_text_parts_go_as_one_string() {
        let mut body = json!({"messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {"role": "tool", "tool_call_id": "c", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            {"role": "tool", "tool_call_id": "d", "content": [{"type": "image_url", "image_url": {"url": "x"}}]},
        ]});
        tool_texts_as_strings(&mut body);
        assert_eq!(body["messages"][1]["content"], "a\nb");
        assert!(body["messages"][0]["content"].is_array(), "only tool messages");
        assert!(body["messages"][2]["content"].is_array(), "parts that are not text stay as they are");
    }

    fn tool(name: &str) -> ToolDef {
        ToolDef { name: name.into(), description: String::new(), parameters: json!({"type": "object"}) }
    }

    #[test]
    fn retry_after_seconds_and_dates_are_capped() {
        assert_eq!(parse_retry_after("2"), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("99999"), Some(Duration::from_millis(RETRY_AFTER_CAP_MS)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), Some(Duration::ZERO));
        let later = (chrono::Utc::now() + chrono::Duration::hours(2)).to_rfc2822();
        assert_eq!(parse_retry_after(&later), Some(Duration::from_millis(RETRY_AFTER_CAP_MS)));
        assert_eq!(parse_retry_after("soon"), None);
    }

    #[test]
    fn an_injected_429_carries_its_retry_after_and_a_500_none() {
        let wait = |f| match injected_answer(f) {
            Some(Attempt::Answered { status, retry_after, .. }) => (status, retry_after),
            _ => panic!("no answer injected for {f:?}"),
        };
        let ms = Duration::from_millis;
        assert_eq!(wait(ModelFaultMode::RateLimited { retry_after_ms: 1234 }), (429, Some(ms(1234))));
        assert_eq!(wait(ModelFaultMode::RateLimited { retry_after_ms: u64::MAX }), (429, Some(ms(RETRY_AFTER_CAP_MS))));
        assert_eq!(wait(ModelFaultMode::Http500), (500, None));
        assert!(injected_answer(ModelFaultMode::Timeout).is_none() && injected_answer(ModelFaultMode::Empty).is_none());
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(0), Duration::from_millis(500));
        assert_eq!(backoff(1), Duration::from_millis(1000));
        assert_eq!(backoff(4), Duration::from_millis(8000));
        assert_eq!(backoff(40), Duration::from_millis(8000));
    }

    #[test]
    fn text_tool_calls_need_an_offered_tool() {
        let tools = [tool("search")];
        let call =
            tool_call_in_text("<tool_call>{\"name\": \"search\", \"arguments\": {\"q\": 1}}</tool_call>", &tools)
                .expect("tagged call");
        assert_eq!(call.arguments, json!({"q": 1}));
        assert!(tool_call_in_text("{\"name\": \"delete_all\", \"arguments\": {}}", &tools).is_none());
        let call = tool_call_in_text("[{\"function\": {\"name\": \"search\", \"arguments\": \"{}\"}}]", &tools)
            .expect("array of calls");
        assert_eq!(call.name, "search");
        assert!(tool_call_in_text("no json {here", &tools).is_none());
    }

    #[test]
    fn schema_names_are_sanitised() {
        assert_eq!(schema_name("tool choice"), "tool_choice");
        assert_eq!(schema_name(""), "response");
        assert_eq!(schema_name(&"x".repeat(80)).len(), 64);
    }
}
