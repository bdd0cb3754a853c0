//! Chat models: the trait every backend implements, and the request/response
//! types the strategies speak. Backends: `sim` (simulated), `http_model`
//! (an HTTP endpoint in any of the three dialects: Chat Completions,
//! Responses, Messages) and `cassette` (record / replay).

pub mod cassette;
pub mod dialect;
pub mod fault;
pub mod http_model;
pub mod price;
pub mod stream;
pub mod tokens;
pub mod wire;
mod wire_fault;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use fault::ModelFaultMode;

/// What a model is used for in a run (docs/src/models.md).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    Planner,
    Solver,
    Actor,
    Evaluator,
    Classifier,
    Judge,
    /// An outside agent's own model calls, bridged through the gateway. Not
    /// in [`Role::ALL`]: no strategy of Switchyard's calls it.
    Agent,
    /// `scan`'s reader of a failed run's transcript, which names its
    /// failure, and namer of each group of them. Not in [`Role::ALL`]: no
    /// run calls it.
    Scanner,
}

impl Role {
    pub const ALL: [Role; 6] =
        [Role::Planner, Role::Solver, Role::Actor, Role::Evaluator, Role::Classifier, Role::Judge];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Solver => "solver",
            Role::Actor => "actor",
            Role::Evaluator => "evaluator",
            Role::Classifier => "classifier",
            Role::Judge => "judge",
            Role::Agent => "agent",
            Role::Scanner => "scanner",
        }
    }

    pub fn parse(s: &str) -> Option<Role> {
        Role::ALL.into_iter().chain([Role::Agent, Role::Scanner]).find(|r| r.as_str() == s)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.pad(self.as_str())
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Speaker {
    System,
    User,
    Assistant,
    Tool,
}

impl Speaker {
    pub fn as_str(self) -> &'static str {
        match self {
            Speaker::System => "system",
            Speaker::User => "user",
            Speaker::Assistant => "assistant",
            Speaker::Tool => "tool",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct Message {
    pub role: Speaker,
    pub content: String,
}

impl Message {
    pub fn system(s: impl Into<String>) -> Self {
        Message { role: Speaker::System, content: s.into() }
    }
    pub fn user(s: impl Into<String>) -> Self {
        Message { role: Speaker::User, content: s.into() }
    }
    pub fn assistant(s: impl Into<String>) -> Self {
        Message { role: Speaker::Assistant, content: s.into() }
    }
}

/// A tool offered to the model as a native function definition.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ToolDef {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A JSON schema the reply must follow, where the endpoint supports it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ResponseSchema {
    pub name: String,
    pub schema: Value,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ChatRequest {
    /// Which role is calling. Metadata for accounting and for the simulated
    /// model; never sent over the wire.
    pub role: Role,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<ToolDef>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<ResponseSchema>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Where the reply has ended once the model writes one of these: the
    /// headings of the role's own prompt, which a model that rambles past
    /// its reply starts to write. Sent where no response schema binds the
    /// reply (the schema's grammar ends it there).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stop: Vec<String>,
    /// A bridged agent's request as it sent it: a model that speaks its
    /// dialect is sent this body, not one written from the fields above.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<wire::WireRequest>,
}

impl ChatRequest {
    pub fn new(role: Role, messages: Vec<Message>) -> Self {
        ChatRequest {
            role,
            messages,
            tools: Vec::new(),
            response_schema: None,
            temperature: None,
            max_tokens: None,
            stop: Vec::new(),
            wire: None,
        }
    }

    /// The request with `stop` as its stop sequences.
    pub fn stopping_at(self, stop: &[&str]) -> Self {
        ChatRequest { stop: stop.iter().map(|s| s.to_string()).collect(), ..self }
    }

    /// What every role asks: a reply that follows `schema`, at temperature 0
    /// so a run can be repeated.
    pub fn constrained(role: Role, messages: Vec<Message>, schema: ResponseSchema) -> Self {
        ChatRequest { response_schema: Some(schema), temperature: Some(0.0), ..ChatRequest::new(role, messages) }
    }
}

/// A tool call the model asked for natively (or wrote as JSON in its content).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ToolCallRequest {
    pub name: String,
    pub arguments: Value,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Of the prompt tokens, those the server took from its prompt cache
    /// instead of evaluating them, as it reported them (llama.cpp's
    /// `timings.cache_n`, OpenAI's `prompt_tokens_details.cached_tokens`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cached_tokens: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Usage {
    pub fn new(prompt_tokens: u64, completion_tokens: u64) -> Usage {
        Usage { prompt_tokens, completion_tokens, cached_tokens: 0 }
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_tokens += other.cached_tokens;
    }
}

/// The most tokens each role's reply may take, sized by what it must hold
/// (`[reply_tokens]`): a small model asked for a JSON object otherwise
/// writes on until the model's own cap, minutes a call on a CPU. An outside
/// agent's requests keep their own limit.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(default, deny_unknown_fields)]
pub struct ReplyTokens {
    /// One tool call or the answer, as a JSON object.
    pub actor: u32,
    /// A score per tool used.
    pub evaluator: u32,
    /// `{"helpful": true}`.
    pub judge: u32,
    /// A category per tool.
    pub classifier: u32,
    /// rewoo's plan, atc's program.
    pub planner: u32,
    /// The answer from the evidence.
    pub solver: u32,
}

impl Default for ReplyTokens {
    fn default() -> Self {
        ReplyTokens { actor: 256, evaluator: 192, judge: 32, classifier: 512, planner: 1024, solver: 256 }
    }
}

impl ReplyTokens {
    /// The cap of `role`; none for an outside agent's own calls.
    pub fn of(&self, role: Role) -> Option<u32> {
        match role {
            Role::Actor => Some(self.actor),
            Role::Evaluator => Some(self.evaluator),
            Role::Judge => Some(self.judge),
            Role::Classifier => Some(self.classifier),
            Role::Planner => Some(self.planner),
            Role::Solver => Some(self.solver),
            Role::Agent => None,
            // `scan`'s requests carry their own (a phrase and a number).
            Role::Scanner => None,
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ChatResponse {
    pub text: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCallRequest>,
    pub usage: Usage,
    /// The server stopped the reply at its token cap (finish reason
    /// `length`, Anthropic's `max_tokens`): what it says may be cut short.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub capped: bool,
    /// The upstream's reply body, kept for a bridged agent: it gets the
    /// reply as the model wrote it (ids, stop reason) unless a fault or the
    /// user changed it, which drops this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wire: Option<wire::WireReply>,
}

impl ChatResponse {
    pub fn new(text: impl Into<String>, tool_calls: Vec<ToolCallRequest>, usage: Usage) -> Self {
        ChatResponse { text: text.into(), tool_calls, usage, capped: false, wire: None }
    }
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum ModelKind {
    Sim,
    Openai,
    /// Anthropic Messages, natively.
    Anthropic,
    /// The OpenAI Responses API, natively.
    #[serde(rename = "openai-responses")]
    OpenaiResponses,
    Replay,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// The name the config gives the model (e.g. `sim`, `gpt-4o-mini`).
    pub name: String,
    pub kind: ModelKind,
    /// True for the simulated model (and a replay of one): the UI and the
    /// trace say so.
    pub simulated: bool,
}

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum ModelError {
    #[error("model endpoint answered HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("model call timed out after {ms} ms")]
    Timeout { ms: u64 },
    #[error("could not reach the model endpoint: {0}")]
    Transport(String),
    #[error("model reply could not be read: {0}")]
    Malformed(String),
    #[error(
        "model reply passed the {limit} limit (max_reply_mb) and was cut off: the endpoint may be streaming without end"
    )]
    TooLarge { limit: String },
    #[error("environment variable {var} (named by the config for model {model}) is not set")]
    MissingKey { model: String, var: String },
    #[error("no recorded answer for this request in cassette {path}")]
    NotRecorded { path: String },
    /// A bridged request with a field the upstream's dialect has no
    /// counterpart for.
    #[error("the request cannot be translated: {0}")]
    Untranslatable(wire::Untranslatable),
    #[error("{0}")]
    Other(String),
    /// A call to an HTTP endpoint that failed for good: which endpoint,
    /// and how many exchanges were tried, so an event read on its own says
    /// where the failure was and that the retries were spent.
    #[error("{}", at_endpoint(url, *attempts, error))]
    AtEndpoint { url: String, attempts: u32, error: Box<ModelError> },
}

impl ModelError {
    /// The failure itself, without where and after how many attempts.
    pub fn root(&self) -> &ModelError {
        match self {
            ModelError::AtEndpoint { error, .. } => error.root(),
            other => other,
        }
    }
}

fn at_endpoint(url: &str, attempts: u32, error: &ModelError) -> String {
    let tries = if attempts == 1 { "1 attempt".to_string() } else { format!("{attempts} attempts") };
    let text = error.to_string();
    // A transport error already names the URL (the HTTP client says which).
    if text.contains(url) { format!("{text} ({tries})") } else { format!("{text} ({tries} to {url})") }
}

#[async_trait]
pub trait ChatModel: Send + Sync {
    fn info(&self) -> ModelInfo;
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError>;

    /// `chat` with an injected fault (the engine draws it). A model with an
    /// HTTP exchange of its own injects it there, so its retries and parser
    /// meet it; by default it is applied around `chat` ([`fault_around`]).
    async fn chat_with_fault(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
    ) -> Result<ChatResponse, ModelError> {
        fault_around(self, req, fault).await
    }

    /// `chat_with_fault`, telling `tokens` the reply as it arrives. A model
    /// that does not stream answers in one piece and tells nothing.
    async fn chat_streaming(
        &self,
        req: &ChatRequest,
        fault: Option<ModelFaultMode>,
        tokens: &stream::Tokens,
    ) -> Result<ChatResponse, ModelError> {
        let _ = tokens;
        self.chat_with_fault(req, fault).await
    }
}

/// A fault applied around a whole `chat`, for models with no HTTP exchange
/// (simulated, replay): they have no retries, so an HTTP fault is the
/// call's error; they have no timeout, so a timeout fails at once. A
/// spoiled reply is asked for first, so a replay moves on as a real server
/// would.
pub async fn fault_around<M: ChatModel + ?Sized>(
    model: &M,
    req: &ChatRequest,
    fault: Option<ModelFaultMode>,
) -> Result<ChatResponse, ModelError> {
    let Some(fault) = fault else { return model.chat(req).await };
    match fault {
        ModelFaultMode::Slow { ms } => {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            model.chat(req).await
        }
        ModelFaultMode::Timeout => Err(ModelError::Other(
            "model call timed out (injected fault; this model has no timeout of its own, so it failed at once)".into(),
        )),
        ModelFaultMode::Http500 => Err(ModelError::Http { status: 500, body: wire_fault::HTTP_500_BODY.into() }),
        ModelFaultMode::RateLimited { retry_after_ms } => Err(ModelError::Http {
            status: 429,
            body: format!("{} (retry after {retry_after_ms} ms)", wire_fault::HTTP_429_BODY),
        }),
        ModelFaultMode::Malformed => {
            model.chat(req).await?;
            Err(ModelError::Malformed("the reply is not JSON (injected fault)".into()))
        }
        ModelFaultMode::Empty => {
            let mut resp = model.chat(req).await?;
            resp.wire = None;
            resp.text.clear();
            resp.tool_calls.clear();
            Ok(resp)
        }
        ModelFaultMode::Truncated => {
            let mut resp = model.chat(req).await?;
            if let Some(call) = resp.tool_calls.first() {
                // Its arguments, cut half-way, are not JSON any more.
                return Err(ModelError::Malformed(format!(
                    "tool_calls[0] ({}): arguments cut off half-way (injected fault)",
                    call.name
                )));
            }
            resp.text = wire_fault::first_half(&resp.text).to_string();
            resp.wire = None;
            Ok(resp)
        }
    }
}

/// The first JSON value of a reply's text, from its first `{` on: a small
/// model may write prose before the object its schema asked for, or go on
/// after it.
pub fn reply_json(text: &str) -> Result<Value, String> {
    let start = text.find('{').ok_or("no JSON object in the reply")?;
    serde_json::Deserializer::from_str(&text[start..])
        .into_iter::<Value>()
        .next()
        .ok_or("no JSON object in the reply")?
        .map_err(|e| format!("not JSON: {e}"))
}
