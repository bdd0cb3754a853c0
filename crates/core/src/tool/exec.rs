//! Runs tool calls: checks the arguments, applies the fault the engine drew,
//! and dispatches to the builtin, command, http, recorded or synthesized
//! executor, or to the session's tool cassette.

use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};

use super::builtin::{self, BuiltinCtx};
use super::fault::FaultMode;
use super::mcp::McpHub;
use super::nothing_found::NOTHING_FOUND;
use super::source::CallSource;
use super::synthesized::synthesize;
use super::tape::ToolTape;
use super::{ExecutorSpec, ToolError, ToolErrorKind, ToolResult, ToolSpec, command, http};

const GARBAGE_LEN: usize = 40;
const GARBAGE_CHARS: &[u8] = b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn has_type(v: &Value, ty: &str) -> bool {
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => match v {
            Value::Number(n) => n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0),
            _ => false,
        },
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "null" => v.is_null(),
        // A type the manifest check let through but we cannot judge: accept.
        _ => true,
    }
}

/// JSON equality where 1 and 1.0 are the same number.
fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(60) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

/// A light JSON Schema check of the arguments against the tool's parameter
/// schema: an object, required fields present, declared types and enums
/// respected. Extra fields are allowed (models add them, tools ignore them).
pub fn check_arguments(spec: &ToolSpec, args: &Value) -> Result<(), ToolError> {
    check_against(&spec.parameters, args)
}

/// [`check_arguments`] against a parameter schema alone (the workbench
/// checks a user's edit of a call's arguments before sending it).
pub fn check_against(schema: &Value, args: &Value) -> Result<(), ToolError> {
    let bad = |msg: String| ToolError::new(ToolErrorKind::BadArguments, msg);
    let Some(given) = args.as_object() else {
        return Err(bad(format!("arguments must be a JSON object, got {}", json_type(args))));
    };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        for name in required.iter().filter_map(Value::as_str) {
            if !given.contains_key(name) {
                return Err(bad(format!("missing required argument '{name}'")));
            }
        }
    }
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (name, value) in given {
        let Some(prop) = props.get(name) else {
            continue;
        };
        match prop.get("type") {
            Some(Value::String(ty)) if !has_type(value, ty) => {
                return Err(bad(format!("argument '{name}' must be {ty}, got {} {}", json_type(value), short(value))));
            }
            Some(Value::Array(types)) => {
                let types: Vec<&str> = types.iter().filter_map(Value::as_str).collect();
                if !types.iter().any(|t| has_type(value, t)) {
                    return Err(bad(format!(
                        "argument '{name}' must be {}, got {} {}",
                        types.join(" or "),
                        json_type(value),
                        short(value)
                    )));
                }
            }
            _ => {}
        }
        if let Some(allowed) = prop.get("enum").and_then(Value::as_array)
            && !allowed.iter().any(|a| same_value(a, value))
        {
            let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
            return Err(bad(format!("argument '{name}' must be one of {}, got {}", allowed.join(", "), short(value))));
        }
    }
    Ok(())
}

/// ~40 printable, non-alphanumeric characters, the same for the same seed.
fn garbage(seed: u64) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..GARBAGE_LEN).map(|_| GARBAGE_CHARS[rng.random_range(0..GARBAGE_CHARS.len())] as char).collect()
}

/// The time a call may take: the caller's bound, tightened by the
/// manifest's own timeout for executors that have one.
fn effective_timeout(spec: &ToolSpec, timeout: Duration) -> Duration {
    spec.own_timeout().map_or(timeout, |own| timeout.min(own))
}

/// Runs tool calls. Cheap to share: one HTTP connection pool for all calls,
/// one session tape and the recorded tools' cassettes, loaded once.
#[derive(Clone, Debug)]
pub struct Executor {
    /// Built on the first HTTP call: building one reads the system's root
    /// certificates, which a session without HTTP tools need not pay for.
    http: Arc<OnceLock<reqwest::Client>>,
    /// The session's `--record-tools` or `--replay-tools` cassette.
    tape: Option<Arc<ToolTape>>,
    cassettes: Arc<Mutex<HashMap<PathBuf, Arc<ToolTape>>>>,
    /// The session's MCP servers.
    mcp: Option<Arc<McpHub>>,
    /// The most a command's stdout or an HTTP body may take, in bytes.
    output_cap: u64,
}

impl Default for Executor {
    fn default() -> Self {
        Self::new()
    }
}

impl Executor {
    pub fn new() -> Self {
        Executor {
            http: Arc::default(),
            tape: None,
            cassettes: Arc::default(),
            mcp: None,
            output_cap: super::limits::DEFAULT_OUTPUT_CAP,
        }
    }

    fn http_client(&self) -> &reqwest::Client {
        self.http.get_or_init(|| {
            reqwest::Client::builder()
                .user_agent(concat!("switchyard/", env!("CARGO_PKG_VERSION")))
                .build()
                .unwrap_or_default()
        })
    }

    /// Every call that reaches a tool goes through `tape`: recorded to it,
    /// or answered from it.
    pub fn with_tape(tape: ToolTape) -> Self {
        Executor { tape: Some(Arc::new(tape)), ..Executor::new() }
    }

    /// A command's stdout and an HTTP body beyond `bytes` fail the call.
    pub fn with_output_cap(self, bytes: u64) -> Self {
        Executor { output_cap: bytes, ..self }
    }

    /// Calls to `mcp` tools go to these servers.
    pub fn with_mcp(self, hub: Arc<McpHub>) -> Self {
        Executor { mcp: Some(hub), ..self }
    }

    /// Where a call's answer came from when not from the tool itself: a
    /// replayed cassette, a recorded or a synthesized executor. An injected
    /// fault (other than a delay) or refused arguments never reached it.
    pub fn source(&self, spec: &ToolSpec, fault: Option<FaultMode>, result: &ToolResult) -> Option<CallSource> {
        if fault.is_some_and(|f| !matches!(f, FaultMode::Slow { .. }))
            || matches!(result, Err(e) if e.kind == ToolErrorKind::BadArguments)
        {
            return None;
        }
        if self.tape.as_ref().is_some_and(|t| t.is_replay()) {
            return Some(CallSource::Recorded);
        }
        match spec.executor {
            ExecutorSpec::Recorded { .. } => Some(CallSource::Recorded),
            ExecutorSpec::Synthesized => Some(CallSource::Synthesized),
            _ => None,
        }
    }

    fn cassette(&self, path: &Path) -> Result<Arc<ToolTape>, ToolError> {
        let mut loaded = self.cassettes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = loaded.get(path) {
            return Ok(Arc::clone(t));
        }
        let tape =
            Arc::new(ToolTape::replay(path, false).map_err(|e| ToolError::new(ToolErrorKind::Failed, e.to_string()))?);
        loaded.insert(path.to_path_buf(), Arc::clone(&tape));
        Ok(tape)
    }

    /// Runs one call. `fault` (already drawn by the engine from its
    /// FaultTable) changes what happens; `call_seed` seeds builtin randomness
    /// and garbage so the same seed gives the same result; `timeout` bounds
    /// every executor (builtin included).
    pub async fn call(
        &self,
        spec: &ToolSpec,
        args: &Value,
        fault: Option<FaultMode>,
        call_seed: u64,
        timeout: Duration,
    ) -> ToolResult {
        check_arguments(spec, args)?;
        let timeout = effective_timeout(spec, timeout);
        match fault {
            None => self.run(spec, args, call_seed, timeout).await,
            Some(FaultMode::Error) => Err(ToolError::new(ToolErrorKind::Failed, "injected fault: error")),
            Some(FaultMode::NothingFound) => Ok(json!(NOTHING_FOUND)),
            Some(FaultMode::Garbage) => Ok(Value::String(garbage(call_seed))),
            Some(FaultMode::Timeout) => {
                tokio::time::sleep(timeout).await;
                Err(ToolError::new(
                    ToolErrorKind::Timeout,
                    format!("'{}' timed out after {} ms (injected)", spec.name, timeout.as_millis()),
                ))
            }
            Some(FaultMode::Slow { ms }) => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                self.run(spec, args, call_seed, timeout).await
            }
            Some(FaultMode::Crash) => match &spec.executor {
                ExecutorSpec::Command { argv, cwd, .. } => {
                    command::crash(&spec.name, argv, cwd.as_deref(), timeout).await
                }
                _ => Err(ToolError::new(ToolErrorKind::Crashed, "injected crash")),
            },
        }
    }

    /// What a fault makes of a call that already ran elsewhere (an outside
    /// agent's own tool): the result it is replaced by, as this executor
    /// would have answered; None for `slow`, which leaves it as it was.
    pub fn injected(tool: &str, fault: FaultMode, call_seed: u64) -> Option<ToolResult> {
        match fault {
            FaultMode::Error => Some(Err(ToolError::new(ToolErrorKind::Failed, "injected fault: error"))),
            FaultMode::NothingFound => Some(Ok(json!(NOTHING_FOUND))),
            FaultMode::Garbage => Some(Ok(Value::String(garbage(call_seed)))),
            FaultMode::Timeout => {
                Some(Err(ToolError::new(ToolErrorKind::Timeout, format!("'{tool}' timed out (injected)"))))
            }
            FaultMode::Crash => Some(Err(ToolError::new(ToolErrorKind::Crashed, "injected crash"))),
            FaultMode::Slow { .. } => None,
        }
    }

    /// A call past the faults: answered by the session's replay, or run and
    /// recorded. Faults stay out of a recording: they are the user's, not
    /// the tool's.
    async fn run(&self, spec: &ToolSpec, args: &Value, call_seed: u64, timeout: Duration) -> ToolResult {
        match self.tape.as_deref() {
            Some(tape) if tape.is_replay() => tape.answer(&spec.name, args).await,
            Some(tape) => {
                let t0 = Instant::now();
                let result = self.backend(spec, args, call_seed, timeout).await;
                let latency_ms = u64::try_from(t0.elapsed().as_millis()).unwrap_or(u64::MAX);
                tape.append(&spec.name, args, &result, latency_ms)?;
                result
            }
            None => self.backend(spec, args, call_seed, timeout).await,
        }
    }

    async fn backend(&self, spec: &ToolSpec, args: &Value, call_seed: u64, timeout: Duration) -> ToolResult {
        match &spec.executor {
            ExecutorSpec::Builtin { function } => {
                let f = builtin::lookup(function).ok_or_else(|| {
                    ToolError::new(ToolErrorKind::Failed, format!("'{}': no builtin function '{function}'", spec.name))
                })?;
                let mut ctx = BuiltinCtx { rng: ChaCha8Rng::seed_from_u64(call_seed) };
                // Builtins are pure and fast, so they run right here; a panic
                // in one is a crash of that tool, not of the engine.
                let run = async {
                    std::panic::catch_unwind(AssertUnwindSafe(|| f(args, &mut ctx))).unwrap_or_else(|_| {
                        Err(ToolError::new(ToolErrorKind::Crashed, format!("builtin '{function}' panicked")))
                    })
                };
                tokio::time::timeout(timeout, run).await.unwrap_or_else(|_| {
                    Err(ToolError::new(
                        ToolErrorKind::Timeout,
                        format!("'{}' timed out after {} ms", spec.name, timeout.as_millis()),
                    ))
                })
            }
            ExecutorSpec::Command { argv, cwd, .. } => {
                command::run(&spec.name, argv, cwd.as_deref(), args, timeout, self.output_cap).await
            }
            ExecutorSpec::Http { method, url, headers, query, .. } => {
                let target = http::Target { method, url, headers, query };
                http::run(self.http_client(), &spec.name, target, args, timeout, self.output_cap).await
            }
            ExecutorSpec::Recorded { cassette } => self.cassette(cassette)?.answer(&spec.name, args).await,
            ExecutorSpec::Mcp { server, tool, .. } => match &self.mcp {
                Some(hub) => hub.call(server, tool, args, timeout).await,
                None => Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!("'{}' needs the mcp server '{server}', which this session did not start", spec.name),
                )),
            },
            ExecutorSpec::Synthesized => match &spec.response {
                Some(schema) => Ok(synthesize(schema, call_seed)),
                None => Err(ToolError::new(
                    ToolErrorKind::Failed,
                    format!("'{}' is synthesized but has no response schema", spec.name),
                )),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_seeded_punctuation() {
        let g = garbage(7);
        assert_eq!(g.chars().count(), GARBAGE_LEN);
        assert!(g.chars().all(|c| c.is_ascii_graphic() && !c.is_ascii_alphanumeric()));
        assert_eq!(g, garbage(7));
        assert_ne!(g, garbage(8));
    }
}
