//! Runs a model's program in rhai with the offered tools as its only
//! functions. The engine is built raw (no packages but the language's own
//! string, array, map and math functions, no module resolver, no `eval`),
//! so a program can reach nothing outside but through a tool; limits on
//! operations, call depth, sizes and a deadline stop a program that would
//! not. The deadline counts the sandbox's own time only: a program waiting
//! on a tool (a paused session, a slow API) is not running away.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rhai::packages::{Package, StandardPackage};
use rhai::{Dynamic, Engine, EvalAltResult, NativeCallContext, Position};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a program may use. The defaults let a tool chain of a few dozen
/// calls over large API responses run, and stop a runaway loop in well
/// under a second.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    pub max_operations: u64,
    pub max_call_levels: usize,
    pub max_string_bytes: usize,
    pub max_array_len: usize,
    pub max_map_len: usize,
    /// The sandbox's own time (tool calls excluded), in milliseconds.
    pub deadline_ms: u64,
    /// The longest program accepted, in bytes.
    pub max_source_bytes: usize,
    /// Tool calls one program may make.
    pub max_tool_calls: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_operations: 2_000_000,
            max_call_levels: 24,
            max_string_bytes: 1 << 20,
            max_array_len: 20_000,
            max_map_len: 20_000,
            deadline_ms: 2_000,
            max_source_bytes: 32 * 1024,
            max_tool_calls: 50,
        }
    }
}

impl Limits {
    pub fn deadline(&self) -> Duration {
        Duration::from_millis(self.deadline_ms)
    }
}

/// A tool as the program sees it: the function it calls and the tool it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub function: String,
    pub tool: String,
}

/// Tool names become rhai identifiers (`GET_movie-movie_id` cannot be
/// called as written); a clash gets a numbered suffix.
pub fn bindings<'a>(tools: impl IntoIterator<Item = &'a str>) -> Vec<Binding> {
    let mut out: Vec<Binding> = Vec::new();
    for tool in tools {
        let mut base: String =
            tool.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
        if base.is_empty() || base.starts_with(|c: char| c.is_ascii_digit()) {
            base.insert(0, '_');
        }
        let mut function = base.clone();
        let mut n = 2;
        while out.iter().any(|b| b.function == function) || RESERVED.contains(&function.as_str()) {
            function = format!("{base}_{n}");
            n += 1;
        }
        out.push(Binding { function, tool: tool.to_string() });
    }
    out
}

/// Names a tool function may not take: rhai's keywords and the functions
/// the standard package already defines that a program is likely to use.
const RESERVED: &[&str] = &[
    "print",
    "debug",
    "type_of",
    "len",
    "eval",
    "fn",
    "let",
    "const",
    "if",
    "else",
    "for",
    "in",
    "while",
    "loop",
    "return",
    "throw",
    "try",
    "catch",
    "true",
    "false",
    "this",
    "import",
    "export",
    "switch",
    "do",
    "until",
    "break",
    "continue",
    "private",
    "global",
    "is_def_var",
    "is_def_fn",
    "Fn",
    "call",
    "curry",
    "parse_int",
    "parse_float",
    "to_string",
    "keys",
    "values",
    "contains",
    "range",
];

/// A tool call from a running program.
#[derive(Clone, Debug, PartialEq)]
pub struct CallRequest {
    pub tool: String,
    pub args: Value,
    /// The program's line that made the call (1-based).
    pub line: Option<u32>,
}

/// Where a program's tool calls and prints go. `call` blocks the program
/// until the tool has answered: the error text is what the program sees.
pub trait Port {
    fn call(&mut self, req: CallRequest) -> Result<Value, String>;
    fn print(&mut self, text: String);
}

/// Why a program did not return.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    /// The text is not a program (a syntax error).
    Parse,
    /// A tool answered with an error.
    Tool,
    /// A field or index the response does not have.
    MissingField,
    /// A value of the wrong type (indexing a string, adding a map, a non-map argument).
    Type,
    /// A function that is not an offered tool.
    UnknownFunction,
    /// Operations, call depth, sizes or tool calls over their limits.
    Limit,
    /// The sandbox's own time ran out.
    Deadline,
    /// The session stopped the program.
    Cancelled,
    /// Any other runtime error (an explicit `throw`, arithmetic).
    Runtime,
}

impl FailKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FailKind::Parse => "syntax error",
            FailKind::Tool => "tool error",
            FailKind::MissingField => "missing field",
            FailKind::Type => "type error",
            FailKind::UnknownFunction => "unknown function",
            FailKind::Limit => "limit",
            FailKind::Deadline => "deadline",
            FailKind::Cancelled => "cancelled",
            FailKind::Runtime => "runtime error",
        }
    }
}

/// A program's failure, with where it happened and, for a tool error, the
/// tool that raised it (attribution to other tools is `attribute`'s job).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailKind,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// The tool whose call raised the error, when a call did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
}

/// How a program ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    pub result: Result<Value, Failure>,
    /// Tools called, in order, with the line of each call.
    pub calls: Vec<(String, Option<u32>)>,
}

/// State shared by the engine's callbacks while one program runs.
struct Shared {
    port: RefCell<Box<dyn Port>>,
    /// Time spent inside tool calls: not the sandbox's.
    waited: Cell<Duration>,
    calls: RefCell<Vec<(String, Option<u32>)>>,
    /// The last tool error the program saw, to tell a tool's error from the program's.
    tool_error: RefCell<Option<(String, String)>>,
    max_calls: u32,
}

/// Runs `source` with the tools of `bindings` as its functions, until it
/// returns, fails, or `cancel` is set. Never panics on any program.
pub fn run(
    source: &str,
    bindings: &[Binding],
    limits: &Limits,
    port: Box<dyn Port>,
    cancel: Arc<AtomicBool>,
) -> Outcome {
    let shared = Rc::new(Shared {
        port: RefCell::new(port),
        waited: Cell::new(Duration::ZERO),
        calls: RefCell::new(Vec::new()),
        tool_error: RefCell::new(None),
        max_calls: limits.max_tool_calls,
    });
    let result = if source.len() > limits.max_source_bytes {
        Err(Failure {
            kind: FailKind::Limit,
            message: format!("the program is {} bytes, over the limit of {}", source.len(), limits.max_source_bytes),
            line: None,
            tool: None,
        })
    } else {
        let engine = engine(bindings, limits, &shared, cancel);
        match engine.compile(source) {
            Err(e) => Err(Failure {
                kind: FailKind::Parse,
                message: parse_message(&e.err_type().to_string()),
                line: line_of(e.position()),
                tool: None,
            }),
            Ok(ast) => match engine.eval_ast::<Dynamic>(&ast) {
                Ok(v) => Ok(to_json(&v)),
                Err(e) => Err(failure(&e, bindings, &shared)),
            },
        }
    };
    let calls = shared.calls.borrow().clone();
    Outcome { result, calls }
}

fn engine(bindings: &[Binding], limits: &Limits, shared: &Rc<Shared>, cancel: Arc<AtomicBool>) -> Engine {
    let mut engine = Engine::new_raw();
    engine.register_global_module(StandardPackage::new().as_shared_module());
    engine
        .set_max_operations(limits.max_operations)
        .set_max_call_levels(limits.max_call_levels)
        .set_max_string_size(limits.max_string_bytes)
        .set_max_array_size(limits.max_array_len)
        .set_max_map_size(limits.max_map_len)
        .set_max_expr_depths(64, 32)
        .set_max_variables(1_000)
        .set_max_functions(100)
        // A field the response lacks is an error naming it, not a silent ().
        .set_fail_on_invalid_map_property(true)
        // The raw engine interns no strings; a program building many would grow without it.
        .set_max_strings_interned(1_024);
    engine.disable_symbol("eval");
    let started = Instant::now();
    let deadline = limits.deadline();
    let s = Rc::clone(shared);
    engine.on_progress(move |_| {
        if cancel.load(Ordering::Relaxed) {
            return Some(Dynamic::from("cancelled"));
        }
        let own = started.elapsed().saturating_sub(s.waited.get());
        (own > deadline).then(|| Dynamic::from(format!("deadline: the program ran {} ms", own.as_millis())))
    });
    let s = Rc::clone(shared);
    engine.on_print(move |text| s.port.borrow_mut().print(text.to_string()));
    let s = Rc::clone(shared);
    engine.on_debug(move |text, _, _| s.port.borrow_mut().print(text.to_string()));
    for b in bindings {
        let (s, tool) = (Rc::clone(shared), b.tool.clone());
        engine
            .register_fn(b.function.as_str(), move |ctx: NativeCallContext, args: Dynamic| call(&s, &tool, &ctx, args));
        let (s, tool) = (Rc::clone(shared), b.tool.clone());
        engine.register_fn(b.function.as_str(), move |ctx: NativeCallContext| {
            call(&s, &tool, &ctx, Dynamic::from_map(Default::default()))
        });
    }
    engine
}

/// One tool call from the program: the argument must be a map; the answer
/// comes back as rhai values (maps, arrays, strings, numbers).
fn call(s: &Shared, tool: &str, ctx: &NativeCallContext, args: Dynamic) -> Result<Dynamic, Box<EvalAltResult>> {
    let pos = ctx.call_position();
    if !args.is_map() {
        return Err(Box::new(EvalAltResult::ErrorMismatchDataType(
            "a map of arguments, like #{name: value}".into(),
            format!("{} passed to {tool}", args.type_name()),
            pos,
        )));
    }
    if s.calls.borrow().len() as u32 >= s.max_calls {
        return Err(Box::new(EvalAltResult::ErrorDataTooLarge(
            format!("tool calls (the limit is {})", s.max_calls),
            pos,
        )));
    }
    let args = to_json(&args);
    let line = line_of(pos);
    s.calls.borrow_mut().push((tool.to_string(), line));
    let before = Instant::now();
    let answer = s.port.borrow_mut().call(CallRequest { tool: tool.to_string(), args, line });
    s.waited.set(s.waited.get() + before.elapsed());
    match answer {
        Ok(v) => rhai::serde::to_dynamic(&v),
        Err(message) => {
            *s.tool_error.borrow_mut() = Some((tool.to_string(), message.clone()));
            Err(Box::new(EvalAltResult::ErrorRuntime(Dynamic::from(format!("{tool}: {message}")), pos)))
        }
    }
}

/// rhai's parse error, with what a model used to Python or JavaScript
/// needs to know to fix it: `'text'` is a malformed character there.
fn parse_message(m: &str) -> String {
    if m.starts_with("Invalid character") {
        return format!("{m} (strings take double quotes, \"text\"; single quotes hold one character)");
    }
    m.to_string()
}

fn line_of(pos: Position) -> Option<u32> {
    pos.line().map(|l| l as u32)
}

/// rhai's values as JSON: `()` is null, a value JSON cannot hold (a
/// function pointer, a NaN) is its text.
fn to_json(v: &Dynamic) -> Value {
    if v.is_unit() {
        return Value::Null;
    }
    rhai::serde::from_dynamic::<Value>(v).unwrap_or_else(|_| Value::String(v.to_string()))
}

/// A rhai error as a failure: its kind, its message and the innermost line
/// (an error inside a function the program defined points into it).
fn failure(e: &EvalAltResult, bindings: &[Binding], s: &Shared) -> Failure {
    let inner = innermost(e);
    let line = line_of(inner.position()).or_else(|| line_of(e.position()));
    let (kind, message) = match inner {
        EvalAltResult::ErrorRuntime(v, _) => {
            let text = v.to_string();
            match s.tool_error.borrow().as_ref() {
                Some((tool, m)) if text == format!("{tool}: {m}") => {
                    return Failure { kind: FailKind::Tool, message: m.clone(), line, tool: Some(tool.clone()) };
                }
                // A bare `throw` (or `throw ""`) carries nothing to show.
                _ if text.trim().is_empty() => {
                    (FailKind::Runtime, "the program threw an error without a message".into())
                }
                _ => (FailKind::Runtime, text),
            }
        }
        EvalAltResult::ErrorTerminated(v, _) => {
            let text = v.to_string();
            if text == "cancelled" {
                (FailKind::Cancelled, "the session stopped the program".to_string())
            } else {
                (FailKind::Deadline, text)
            }
        }
        EvalAltResult::ErrorPropertyNotFound(p, _) => (FailKind::MissingField, format!("the map has no field '{p}'")),
        EvalAltResult::ErrorIndexNotFound(i, _) => (FailKind::MissingField, format!("the map has no field {i}")),
        EvalAltResult::ErrorArrayBounds(len, i, _) => {
            (FailKind::MissingField, format!("index {i} is out of bounds: the array has {len} item(s)"))
        }
        EvalAltResult::ErrorStringBounds(len, i, _) => {
            (FailKind::MissingField, format!("index {i} is out of bounds: the string has {len} character(s)"))
        }
        EvalAltResult::ErrorFunctionNotFound(sig, _) => {
            let offered: Vec<&str> = bindings.iter().map(|b| b.function.as_str()).collect();
            (
                FailKind::UnknownFunction,
                format!(
                    "no function {sig}; the tools offered are: {}",
                    if offered.is_empty() { "none".into() } else { offered.join(", ") }
                ),
            )
        }
        EvalAltResult::ErrorMismatchDataType(want, got, _) => (FailKind::Type, format!("expected {want}, got {got}")),
        EvalAltResult::ErrorIndexingType(t, _) => (FailKind::Type, format!("a value of type {t} cannot be indexed")),
        EvalAltResult::ErrorDotExpr(m, _) => (FailKind::Type, format!("bad field access: {m}")),
        EvalAltResult::ErrorTooManyOperations(_) => (FailKind::Limit, "too many operations (a runaway loop?)".into()),
        EvalAltResult::ErrorStackOverflow(_) => (FailKind::Limit, "calls nested too deep (runaway recursion?)".into()),
        EvalAltResult::ErrorDataTooLarge(what, _) => (FailKind::Limit, format!("{what} over the limit")),
        EvalAltResult::ErrorTooManyVariables(_) => (FailKind::Limit, "too many variables".into()),
        other => (FailKind::Runtime, other.to_string()),
    };
    Failure { kind, message, line, tool: None }
}

fn innermost(e: &EvalAltResult) -> &EvalAltResult {
    match e {
        EvalAltResult::ErrorInFunctionCall(_, _, inner, _) => innermost(inner),
        other => other,
    }
}
