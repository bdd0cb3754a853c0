//! Fuzzing of every parser that reads outside input: config,
//! manifests (TOML, OpenAI functions, OpenAPI), task files, traces, model
//! and tool cassettes, the OpenAI wire reply, every role's reply, ReWOO
//! plans, tool outputs, MCP messages and sandbox programs. Each takes
//! arbitrary bytes and mutations of valid seeds (`fuzz/mutate.rs`) and must
//! never panic, and reject with a clear error. A test run tries a few
//! hundred cases per parser; `SWITCHYARD_FUZZ_CASES` sets the count for a
//! campaign (`scripts/fuzz-campaign.sh`). This file is long because it
//! holds one test, its seeds and its checks for each of twenty parsers;
//! the regression tests for what the campaign found close it.

mod harness;
mod mutate;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use proptest::prelude::*;
use serde_json::{Value, json};
use switchyard::config::Config;
use switchyard::engine::event::Event;
use switchyard::engine::trace::{TraceError, read_trace};
use switchyard::model::cassette::{Cassette, CassetteError, request_key};
use switchyard::model::http_model::parse_reply;
use switchyard::model::{ChatRequest, ChatResponse, Message, ModelInfo, ModelKind, Role, ToolCallRequest, ToolDef};
use switchyard::program::sandbox::{self, CallRequest, Limits, Port, bindings};
use switchyard::program::{attribute, schema};
use switchyard::strategy::atc::prompt::{parse_probe_reply, parse_program_reply};
use switchyard::strategy::prompt::{parse_actor_reply, parse_eval_reply, parse_judge_reply};
use switchyard::strategy::rewoo::args::{Evidence, resolve};
use switchyard::strategy::rewoo::parse::{layers, parse_plan_reply};
use switchyard::strategy::rewoo::prompt::{parse_classifier_reply, parse_solver_reply};
use switchyard::task::{TaskError, parse_tasks};
use switchyard::tool::manifest::{ManifestError, load_file};
use switchyard::tool::mcp::{McpServerConfig, call_output, error_text, observation, remote_tool, specs};
use switchyard::tool::sources::load_json;
use switchyard::tool::tape::{TapeError, ToolTape};
use switchyard::tool::{FileOptions, ToolLibrary, ToolResult, read_command_stdout, read_http_body};
use tempfile::TempDir;

use harness::{Check, Verdict, clear, clear_at_line, fuzz};
use mutate::{Format, Input, inputs};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn file(rel: &str) -> Vec<u8> {
    std::fs::read(root().join(rel)).unwrap_or_else(|e| panic!("seed {rel}: {e}"))
}

fn texts(items: &[&str]) -> Vec<Vec<u8>> {
    items.iter().map(|s| s.as_bytes().to_vec()).collect()
}

fn jsons(items: &[Value]) -> Vec<Vec<u8>> {
    items.iter().map(|v| serde_json::to_vec_pretty(v).unwrap()).collect()
}

fn response(text: &str) -> ChatResponse {
    ChatResponse::new(text.to_string(), Vec::new(), Default::default())
}

fn accepted_if<T, E: std::fmt::Display>(r: Result<T, E>) -> Check {
    match r {
        Ok(_) => Ok(Verdict::Accepted),
        Err(e) => clear(&e.to_string(), None),
    }
}

/// A scratch file per test, rewritten for every case.
struct Scratch {
    _dir: TempDir,
    path: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = TempDir::new().unwrap();
        let path = dir.path().join(name);
        Scratch { _dir: dir, path }
    }

    fn write(&self, input: &Input) -> &Path {
        std::fs::write(&self.path, &input.0).unwrap();
        &self.path
    }
}

// ---------------------------------------------------------------- config

#[test]
fn fuzz_config() {
    let path = Path::new("/fuzz/switchyard.toml");
    let seeds = vec![
        file("config.example.toml"),
        b"seed = 7\nstrategy = \"rewoo\"\n[roles]\nplanner = \"sim-strong\"\n[btp]\nlambda = 2.0\n".to_vec(),
        b"[[mcp]]\nname = \"time\"\ncommand = \"./srv\"\n[atc]\nreflect_rounds = 2\n[params]\nalpha = 0.3\n".to_vec(),
    ];
    fuzz("config", 1000, inputs(seeds, Format::Toml), |i| match Config::parse(&i.text(), path) {
        Ok(_) => Ok(Verdict::Accepted),
        Err(e) => clear(&e.to_string(), Some(path)),
    });
}

// ---------------------------------------------------------------- manifests

fn manifest_check(path: &Path, r: Result<Vec<switchyard::tool::ToolSpec>, ManifestError>, text: &[u8]) -> Check {
    match r {
        Ok(tools) => {
            ToolLibrary::new(tools).map_err(|e| format!("a loaded file makes no library: {e}"))?;
            Ok(Verdict::Accepted)
        }
        Err(ManifestError::Syntax { line, ref message, .. }) | Err(ManifestError::Json { line, ref message, .. })
            if message.is_empty() =>
        {
            Err(format!("line {line}: empty message"))
        }
        Err(e @ (ManifestError::Syntax { .. } | ManifestError::Json { .. })) => {
            let line = match e {
                ManifestError::Syntax { line, .. } | ManifestError::Json { line, .. } => line,
                _ => unreachable!(),
            };
            clear_at_line(&e.to_string(), path, line, text)
        }
        Err(e) => clear(&e.to_string(), Some(path)),
    }
}

#[test]
fn fuzz_manifest_toml() {
    let seeds = ["math", "geo", "dates", "text", "knowledge"]
        .iter()
        .map(|n| file(&format!("sample-tools/{n}.toml")))
        .chain(texts(&[concat!(
            "[[tool]]\nname = \"weather\"\ndescription = \"Weather now\"\n",
            "[tool.parameters]\ntype = \"object\"\nrequired = [\"city\"]\n[tool.parameters.properties.city]\ntype = \"string\"\n",
            "[tool.executor]\nkind = \"http\"\nmethod = \"GET\"\nurl = \"https://api.example.com/{city}/now\"\n",
            "[tool.executor.headers]\nAuthorization = { env = \"KEY\", prefix = \"Bearer \" }\n",
            "[[tool]]\nname = \"stats\"\ndescription = \"d\"\n[tool.executor]\nkind = \"command\"\nargv = [\"python3\", \"s.py\"]\n",
            "[[tool]]\nname = \"rec\"\ndescription = \"d\"\n[tool.executor]\nkind = \"recorded\"\ncassette = \"tape.jsonl\"\n",
        )]))
        .collect();
    let scratch = Scratch::new("tools.toml");
    fuzz("manifest_toml", 1000, inputs(seeds, Format::Toml), |i| {
        let path = scratch.write(&i);
        manifest_check(path, load_file(path), &i.0)
    });
}

fn function_seeds() -> Vec<Vec<u8>> {
    jsons(&[
        json!([
            {"type": "function", "function": {"name": "get_weather", "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
             "x-switchyard": {"executor": {"kind": "http", "method": "GET", "url": "http://127.0.0.1:9/w/{city}"},
                              "cost": 2, "category": "geo"}},
            {"name": "add", "description": "Add", "parameters": {"type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}}},
             "x-switchyard": {"executor": {"kind": "builtin", "function": "calculator"}}}
        ]),
        json!({"tools": [{"type": "function", "function": {"name": "t1", "description": "d",
            "parameters": {"type": "object", "properties": {}}},
            "x-switchyard": {"executor": {"kind": "synthesized"}}}]}),
        json!({"functions": [{"name": "f", "description": "", "parameters": {"type": "object",
            "properties": {"q": {"type": "array", "items": {"type": "string"}}}}}]}),
    ])
}

#[test]
fn fuzz_openai_functions() {
    let scratch = Scratch::new("functions.json");
    fuzz("openai_functions", 1000, inputs(function_seeds(), Format::Json), |i| {
        let path = scratch.write(&i);
        manifest_check(path, load_json(path, &FileOptions::default()), &i.0)
    });
}

fn openapi_seeds() -> Vec<Vec<u8>> {
    jsons(&[
        json!({
            "openapi": "3.0.3", "info": {"title": "pets", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9/v1/"}],
            "paths": {
                "/pets/{pet_id}": {
                    "parameters": [{"$ref": "#/components/parameters/PetId"}],
                    "get": {"summary": "Get a pet", "description": "By id.",
                        "parameters": [{"name": "fields", "in": "query", "schema": {"type": "string"}}],
                        "responses": {"200": {"description": "ok", "content": {"application/json": {
                            "schema": {"$ref": "#/components/schemas/Pet"}}}}}},
                    "put": {"summary": "Rename a pet",
                        "parameters": [{"name": "notify", "in": "query", "schema": {"type": "boolean"}}],
                        "requestBody": {"required": true, "content": {"application/json": {
                            "schema": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}}}},
                        "responses": {"204": {"description": "done"}}}
                },
                "/a~b/search": {"post": {"operationId": "search pets", "summary": "Search",
                    "responses": {"200": {"description": "ok"}}}}
            },
            "components": {
                "parameters": {"PetId": {"name": "pet_id", "in": "path", "required": true, "schema": {"type": "integer"}}},
                "schemas": {"Pet": {"type": "object", "properties": {"name": {"type": "string"},
                    "parent": {"$ref": "#/components/schemas/Pet"}}}}
            }
        }),
        json!({
            "openapi": "3.1.0", "info": {"title": "echo", "version": "1"},
            "servers": [{"url": "http://127.0.0.1:9"}],
            "paths": {"/echo/{word}": {"get": {"operationId": "echo_word", "summary": "Echo a word",
                "parameters": [
                    {"name": "word", "in": "path", "required": true, "schema": {"type": "string"}},
                    {"name": "times", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}}}}
        }),
        json!({"swagger": "2.0", "host": "x.example", "basePath": "/api",
            "paths": {"/a": {"get": {"operationId": "a", "parameters": [{"name": "q", "in": "query", "type": "string"}],
                "responses": {"200": {"description": "ok"}}}}}}),
    ])
}

#[test]
fn fuzz_openapi() {
    let scratch = Scratch::new("api.json");
    fuzz("openapi", 1000, inputs(openapi_seeds(), Format::Json), |i| {
        let path = scratch.write(&i);
        manifest_check(path, load_json(path, &FileOptions::default()), &i.0)
    });
}

// ---------------------------------------------------------------- tasks

fn tasks_check(path: &Path, text: &str) -> Check {
    match parse_tasks(text, path) {
        Ok(tasks) if tasks.is_empty() => Err("no task, and no error".into()),
        Ok(_) => Ok(Verdict::Accepted),
        Err(e @ TaskError::Json { line, .. }) => clear_at_line(&e.to_string(), path, line, text.as_bytes()),
        Err(e) => clear(&e.to_string(), Some(path)),
    }
}

#[test]
fn fuzz_tasks_toml() {
    let path = Path::new("/fuzz/tasks.toml");
    let seeds = vec![file("sample-tools/tasks/sample.toml"), file("sample-tools/tasks/smoke.toml")];
    fuzz("tasks_toml", 1000, inputs(seeds, Format::Toml), |i| tasks_check(path, &i.text()));
}

#[test]
fn fuzz_tasks_jsonl() {
    let path = Path::new("/fuzz/tasks.jsonl");
    let seeds = texts(&[concat!(
        "{\"id\": 1, \"query\": \"What is 12 * 7?\", \"answer\": 84, \"tools\": [\"calculator\"], \"match\": \"approx:0.01\"}\n",
        "{\"id\": \"t2\", \"query\": \"Capital of Japan?\", \"answer\": \"Tokyo\", \"candidates\": [\"geo_lookup\"]}\n",
        "\n",
        "{\"id\": \"t3\", \"query\": \"q\", \"gold_call\": {\"tool\": \"calculator\", \"args\": {\"expression\": \"1+1\"}}}\n",
    )]);
    fuzz("tasks_jsonl", 1000, inputs(seeds, Format::Jsonl), |i| tasks_check(path, &i.text()));
}

// ---------------------------------------------------------------- traces

/// The one call of `read_trace` (its signature is changing; one place to follow it).
fn read_trace_file(path: &Path) -> Result<Vec<Event>, TraceError> {
    read_trace(path)
}

/// Windows of a few lines from every golden trace and fixture, so every
/// kind of event (and version 1's) is a seed without parsing 100 kB a case.
fn trace_seeds() -> Vec<Vec<u8>> {
    let mut seeds = Vec::new();
    for dir in ["tests/golden", "tests/fixtures"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        for f in files {
            let text = std::fs::read_to_string(&f).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let step = (lines.len() / 8).max(1);
            for start in (0..lines.len()).step_by(step) {
                let end = (start + 4).min(lines.len());
                seeds.push((lines[start..end].join("\n") + "\n").into_bytes());
            }
        }
    }
    seeds
}

#[test]
fn fuzz_trace() {
    let scratch = Scratch::new("trace.jsonl");
    fuzz("trace", 500, inputs(trace_seeds(), Format::Jsonl), |i| {
        let path = scratch.write(&i);
        match read_trace_file(path) {
            Ok(_) => Ok(Verdict::Accepted),
            Err(e @ (TraceError::Parse { line, .. } | TraceError::Version { line, .. })) => {
                clear_at_line(&e.to_string(), path, line, &i.0)
            }
            Err(e) => clear(&e.to_string(), Some(path)),
        }
    });
}

// ---------------------------------------------------------------- cassettes

fn cassette_seeds() -> Vec<Vec<u8>> {
    let info = ModelInfo { name: "gpt".into(), kind: ModelKind::Openai, simulated: false };
    let mut req = ChatRequest::new(Role::Actor, vec![Message::system("You act."), Message::user("Task: 2+2")]);
    req.tools = vec![ToolDef { name: "calculator".into(), description: "calc".into(), parameters: json!({}) }];
    let resp = ChatResponse {
        text: "{\"tool\": \"calculator\"}".into(),
        tool_calls: vec![ToolCallRequest { name: "calculator".into(), arguments: json!({"expression": "2+2"}) }],
        usage: Default::default(),
        capped: false,
        wire: None,
    };
    let line = |req: &ChatRequest, resp: &ChatResponse| {
        json!({"key": request_key(req), "request": req, "response": resp, "model": info}).to_string()
    };
    let solver = ChatRequest::new(Role::Solver, vec![Message::user("Answer?")]);
    vec![
        format!("{}\n{}\n", line(&req, &resp), line(&solver, &response("Answer: 4"))).into_bytes(),
        format!("{}\n", line(&solver, &response(""))).into_bytes(),
    ]
}

#[test]
fn fuzz_model_cassette() {
    let scratch = Scratch::new("model.jsonl");
    fuzz("model_cassette", 1000, inputs(cassette_seeds(), Format::Jsonl), |i| {
        let path = scratch.write(&i);
        match Cassette::replay(path) {
            Ok(_) => Ok(Verdict::Accepted),
            Err(e @ CassetteError::Parse { line, .. }) => clear_at_line(&e.to_string(), path, line, &i.0),
            Err(e) => clear(&e.to_string(), Some(path)),
        }
    });
}

fn tape_seeds() -> Vec<Vec<u8>> {
    let dir = TempDir::new().unwrap();
    let path = dir.path().join("tape.jsonl");
    let tape = ToolTape::record(&path).unwrap();
    let calls: [(&str, Value, ToolResult); 3] = [
        ("calculator", json!({"expression": "2+2"}), Ok(json!(4))),
        ("geo_lookup", json!({"city": "Tokyo", "fields": ["lat", "lon"]}), Ok(json!({"lat": 35.7, "lon": 139.7}))),
        (
            "flaky",
            json!({}),
            Err(switchyard::tool::ToolError::new(switchyard::tool::ToolErrorKind::Timeout, "timed out")),
        ),
    ];
    for (tool, args, result) in &calls {
        tape.append(tool, args, result, 12).unwrap();
    }
    vec![std::fs::read(&path).unwrap()]
}

#[test]
fn fuzz_tool_cassette() {
    let scratch = Scratch::new("tape.jsonl");
    fuzz("tool_cassette", 1000, inputs(tape_seeds(), Format::Jsonl), |i| {
        let path = scratch.write(&i);
        match ToolTape::replay(path, false) {
            Ok(_) => Ok(Verdict::Accepted),
            Err(e @ TapeError::Parse { line, .. }) => clear_at_line(&e.to_string(), path, line, &i.0),
            Err(e) => clear(&e.to_string(), Some(path)),
        }
    });
}

// ---------------------------------------------------------------- model replies

fn offered() -> Vec<ToolDef> {
    ["calculator", "geo_lookup", "search"]
        .iter()
        .map(|n| ToolDef { name: n.to_string(), description: String::new(), parameters: json!({"type": "object"}) })
        .collect()
}

#[test]
fn fuzz_openai_reply() {
    let seeds = jsons(&[
        json!({"id": "x", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Answer: 4"},
            "finish_reason": "stop"}], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}),
        json!({"choices": [{"message": {"content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "search", "arguments": "{\"q\": \"rust\"}"}}]}}]}),
        json!({"choices": [{"message": {"content": [{"type": "text", "text": "```json\n{\"name\": \"calculator\", \"arguments\": {\"expression\": \"1+1\"}}\n```"}]}}]}),
        json!({"error": {"message": "rate limited", "code": 429}}),
    ]);
    let with_tools = ChatRequest { tools: offered(), ..ChatRequest::new(Role::Actor, vec![Message::user("q")]) };
    let bare = ChatRequest::new(Role::Solver, vec![Message::user("q")]);
    fuzz("openai_reply", 1000, (inputs(seeds, Format::Json), any::<bool>()), |(i, tools)| {
        accepted_if(parse_reply(&i.0, if tools { &with_tools } else { &bare }))
    });
}

/// Model replies: the text, and sometimes the same input as a native tool
/// call (its first line the name, the whole the arguments).
fn reply_inputs(seeds: &[&str]) -> impl Strategy<Value = (Input, bool)> {
    (inputs(texts(seeds), Format::Json), any::<bool>())
}

fn reply_of(i: &Input, native: bool) -> ChatResponse {
    let text = i.text();
    let mut r = response(&text);
    if native {
        let arguments = serde_json::from_str(&text).unwrap_or(Value::String(text.clone()));
        r.tool_calls = vec![ToolCallRequest { name: text.lines().next().unwrap_or("").to_string(), arguments }];
    }
    r
}

#[test]
fn fuzz_actor_reply() {
    let seeds = [
        "{\"tool\": \"calculator\", \"arguments\": {\"expression\": \"2+2\"}}",
        "```json\n{\"name\": \"finish\", \"answer\": \"Tokyo\"}\n```",
        "Thought: I need the city.\nAction: geo_lookup\nAction Input: {\"city\": \"Tokyo\"}",
        "Action: search{\"q\": \"x\"}\nObservation: ...",
        "Final Answer: 42",
        "{\"action\": \"Final Answer\", \"action_input\": \"{\\\"answer\\\": 3}\"}",
    ];
    fuzz("actor_reply", 1000, reply_inputs(&seeds), |(i, native)| {
        accepted_if(parse_actor_reply(&reply_of(&i, native)))
    });
}

#[test]
fn fuzz_evaluator_reply() {
    let seeds = ["{\"scores\": {\"calculator\": 3, \"geo_lookup\": -2}}", "{\"a\": \"1.5\", \"b\": 1e300}", "no"];
    fuzz("evaluator_reply", 1000, reply_inputs(&seeds), |(i, native)| {
        accepted_if(parse_eval_reply(&reply_of(&i, native)))
    });
}

#[test]
fn fuzz_judge_reply() {
    let seeds =
        ["{\"helpful\": true}", "{\"helpful\": \"yes\"}", "It was not helpful.", "```json\n{\"helpful\": 1}\n```"];
    fuzz("judge_reply", 1000, reply_inputs(&seeds), |(i, native)| {
        accepted_if(parse_judge_reply(&reply_of(&i, native)))
    });
}

#[test]
fn fuzz_classifier_reply() {
    let seeds = [
        "{\"categories\": {\"calculator\": \"Task Completion\", \"geo_lookup\": \"Information Retrieval\"}}",
        "- calculator: Task Completion\n- `geo_lookup`: \"Information Retrieval\",\n* search: Other",
    ];
    fuzz("classifier_reply", 1000, reply_inputs(&seeds), |(i, native)| {
        accepted_if(parse_classifier_reply(&reply_of(&i, native)))
    });
}

#[test]
fn fuzz_solver_reply() {
    let seeds = ["Thinking...\nAnswer: Tokyo", "**Answer:** 42", "{\"answer\": 7}", "Tokyo", "## ANSWER: x\nanswer"];
    fuzz("solver_reply", 1000, reply_inputs(&seeds), |(i, native)| {
        accepted_if(parse_solver_reply(&reply_of(&i, native)))
    });
}

#[test]
fn fuzz_atc_program_reply() {
    let seeds = [
        "```rhai\nlet m = search(#{query: \"x\"});\nm.results[0].id\n```",
        "{\"question\": \"What does it return?\", \"program\": \"let r = geo_lookup(#{city: `Tokyo`});\\nr\"}",
        "Here is the program:\n```\nlet x = 1;\nx\n```\nDone.",
    ];
    fuzz("atc_program_reply", 1000, reply_inputs(&seeds), |(i, native)| {
        let reply = reply_of(&i, native);
        let program = parse_program_reply(&reply);
        let probe = parse_probe_reply(&reply);
        if program.is_ok() != probe.is_ok() {
            return Err("the program and probe readers disagree".into());
        }
        accepted_if(program.and(probe))
    });
}

// ---------------------------------------------------------------- ReWOO plans

fn params() -> BTreeMap<&'static str, Value> {
    BTreeMap::from([
        ("geo_lookup", json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})),
        (
            "currency_convert",
            json!({"type": "object", "properties": {"amount": {"type": "number"}, "to": {"type": "string"},
                "ids": {"type": "array", "items": {"type": "integer"}}}, "required": ["amount", "to"]}),
        ),
        ("calculator", json!({"type": "object", "properties": {"expression": {"type": "string"}}})),
        ("Wikipedia", json!({})),
    ])
}

#[test]
fn fuzz_rewoo_plan() {
    let seeds = [
        "Plan: find the country's currency code.\n#E1 = geo_lookup[Japan]\nPlan: convert.\n#E2 = currency_convert[{\"amount\": 100, \"to\": \"#E1\"}]; calculator[100 * #E1]",
        "```\n1. Plan: look it up\n   #E1 = Wikipedia[Rust (language)]\n2. Plan: compute\n   #E2 = calculator[#E1 + 1]\n```",
        "Plan: pretty JSON\n#E1 = currency_convert[{\n  \"amount\": 5,\n  \"to\": \"EUR\"\n}]\n#E2 = geo_lookup[city=#E1]",
        "{\"steps\": [{\"thought\": \"t\", \"calls\": [{\"tool\": \"geo_lookup\", \"input\": {\"city\": \"Paris\"}}]}, {\"calls\": [{\"tool\": \"calculator\", \"input\": \"#E1\"}]}]}",
    ];
    let params = params();
    let tools: Vec<String> = params.keys().map(|k| k.to_string()).collect();
    let evidence_value =
        inputs(jsons(&[json!({"city": "Tokyo", "results": [{"id": 7}], "code": "JPY"}), json!([1, 2])]), Format::Json);
    fuzz("rewoo_plan", 1000, (inputs(texts(&seeds), Format::Json), evidence_value), |(i, ev)| {
        match parse_plan_reply(&i.text(), &tools) {
            Ok(plan) => {
                let order = layers(&plan);
                if order.iter().map(Vec::len).sum::<usize>() != plan.steps.len() {
                    return Err("the layers do not hold every step once".into());
                }
                // Every planned input is made into arguments against evidence
                // from an arbitrary tool output.
                let value = serde_json::from_slice(&ev.0).unwrap_or(Value::String(ev.text()));
                let evidence: Evidence =
                    plan.steps.iter().map(|s| (s.evidence, vec![Some(value.clone()), None])).collect();
                for call in plan.steps.iter().flat_map(|s| &s.calls) {
                    if let Err(e) = resolve(&call.input, &params[call.tool.as_str()], &evidence) {
                        clear(&e, None)?;
                    }
                }
                Ok(Verdict::Accepted)
            }
            Err(e) => clear(&e.to_string(), None),
        }
    });
}

// ---------------------------------------------------------------- tool outputs

/// What the strategies do with a tool's answer: infer its shape (ATC's
/// probing) and cite it as evidence (ReWOO).
fn consume(v: &Value) {
    let shape = schema::infer(v);
    let _ = schema::Shape::from_json_schema(&shape.to_json_schema());
    let _ = shape.render();
    let evidence: Evidence = BTreeMap::from([(1, vec![Some(v.clone())])]);
    for (tool, input) in
        [("geo_lookup", "#E1"), ("currency_convert", "{\"amount\": \"#E1\", \"to\": \"#E1\", \"ids\": \"#E1\"}")]
    {
        let _ = resolve(input, &params()[tool], &evidence);
    }
}

fn output_seeds() -> Vec<Vec<u8>> {
    let mut seeds = jsons(&[
        json!({"mean": 2.5, "median": 2, "values": [1, 2, 3, 4]}),
        json!({"page": 1, "results": [{"id": 155, "title": "The Dark Knight", "cast": [{"name": "Christian Bale"}]}]}),
        json!(["a", 1, null, true, {"nested": {"deeper": [1.5e10]}}]),
    ]);
    seeds.push(std::fs::read(root().join("sample-tools/data/cities.json")).unwrap());
    seeds.push(b"plain text answer\n".to_vec());
    seeds
}

#[test]
fn fuzz_command_output() {
    fuzz("command_output", 1000, inputs(output_seeds(), Format::Json), |i| match read_command_stdout("stats", &i.0) {
        Ok(v) => {
            consume(&v);
            Ok(Verdict::Accepted)
        }
        Err(e) if !e.to_string().contains("'stats'") => Err(format!("the error does not name the tool: {e}")),
        Err(e) => clear(&e.to_string(), None),
    });
}

#[test]
fn fuzz_http_body() {
    let statuses = prop::sample::select(vec![200u16, 201, 204, 299, 400, 404, 429, 500, 503]);
    fuzz("http_body", 1000, (inputs(output_seeds(), Format::Json), statuses), |(i, status)| {
        let status = reqwest::StatusCode::from_u16(status).unwrap();
        match read_http_body("weather", status, &i.0) {
            Ok(v) => {
                consume(&v);
                Ok(Verdict::Accepted)
            }
            Err(e) if !e.to_string().contains("'weather'") => Err(format!("the error does not name the tool: {e}")),
            Err(e) => clear(&e.to_string(), None),
        }
    });
}

// ---------------------------------------------------------------- MCP

#[test]
fn fuzz_mcp_tools_list() {
    let seeds = jsons(&[json!({"tools": [
            {"name": "get_time", "description": "The time", "inputSchema": {"type": "object",
                "properties": {"tz": {"type": "string"}}, "required": ["tz"]}},
            {"name": "get sum/v2", "title": "Sum", "inputSchema": {}, "outputSchema": {"type": "object"},
             "annotations": {"readOnlyHint": true}},
            {"name": "2fa", "inputSchema": {"type": "object"}}
        ], "nextCursor": "abc"})]);
    let config = McpServerConfig::remote("srv", "http://127.0.0.1:9/mcp");
    let taken: HashSet<String> = ["get_time".to_string()].into();
    fuzz("mcp_tools_list", 1000, inputs(seeds, Format::Json), |i| {
        let list: rmcp::model::ListToolsResult = match serde_json::from_slice(&i.0) {
            Ok(l) => l,
            Err(e) => return clear(&e.to_string(), None),
        };
        let remote: Vec<_> = list.tools.into_iter().map(remote_tool).collect();
        let found = specs(&config, &remote, &taken);
        if let Some(t) = found.iter().find(|t| !t.name.starts_with(|c: char| c.is_ascii_alphabetic())) {
            return Err(format!("a tool name the library cannot hold: {:?}", t.name));
        }
        match ToolLibrary::new(found) {
            Ok(_) => Ok(Verdict::Accepted),
            Err(e) => clear(&e.to_string(), None),
        }
    });
}

#[test]
fn fuzz_mcp_call_result() {
    let seeds = jsons(&[
        json!({"content": [{"type": "text", "text": "{\"a\": 1}"}], "isError": false}),
        json!({"content": [{"type": "text", "text": "see"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///x", "text": "t"}}], "structuredContent": {"b": [2]}}),
        json!({"content": [{"type": "text", "text": "boom"}], "isError": true}),
    ]);
    fuzz("mcp_call_result", 1000, inputs(seeds, Format::Json), |i| {
        match serde_json::from_slice::<rmcp::model::CallToolResult>(&i.0) {
            Ok(r) => {
                let out = call_output(r);
                if out.is_error && error_text(&out).trim().is_empty() {
                    return Err("an error result with no text for the error".into());
                }
                consume(&observation(&out));
                Ok(Verdict::Accepted)
            }
            Err(e) => clear(&e.to_string(), None),
        }
    });
}

// ---------------------------------------------------------------- sandbox programs

/// Answers every tool with a fixed value; `fail` names one that errs.
struct Answering(Value);

impl Port for Answering {
    fn call(&mut self, req: CallRequest) -> Result<Value, String> {
        match req.tool.as_str() {
            "flaky" => Err(format!("flaky is down (args {})", req.args)),
            _ => Ok(self.0.clone()),
        }
    }
    fn print(&mut self, _text: String) {}
}

#[test]
fn fuzz_sandbox_program() {
    let seeds = texts(&[
        "let m = GET_search_movie(#{query: \"The Dark Knight\"});\nlet id = m.results[0].id;\nprint(`id ${id}`);\nlet c = credits(#{movie_id: id});\nc.cast[0].name",
        "let total = 0;\nfor x in [1, 2, 3] { total += x; }\nif total > 5 { #{sum: total} } else { throw \"small\" }",
        "let r = flaky(#{});\nr",
        "fn twice(x) { x * 2 }\nlet s = \"ab\";\ns.len() + twice(3) + parse_int(\"12\")",
        "let a = [];\nlet i = 0;\nwhile i < 100 { a.push(`k${i}`); i += 1; }\na.len()",
    ]);
    let binds = bindings(["GET_search-movie", "credits", "flaky"]);
    let limits = Limits { deadline_ms: 500, ..Limits::default() };
    let answer = inputs(output_seeds(), Format::Json);
    fuzz("sandbox_program", 300, (inputs(seeds, Format::Text), answer), |(i, a)| {
        let source = i.text();
        let value = serde_json::from_slice(&a.0).unwrap_or(Value::String(a.text()));
        let cancel = Arc::new(AtomicBool::new(false));
        let out = sandbox::run(&source, &binds, &limits, Box::new(Answering(value)), cancel);
        match out.result {
            Ok(_) => Ok(Verdict::Accepted),
            Err(f) => {
                if let Some(line) = f.line
                    && line as usize > source.lines().count() + 1
                {
                    return Err(format!("failure at line {line} of a {}-line program", source.lines().count()));
                }
                let _ = attribute::snippet(&source, f.line);
                let _ = attribute::attribute(&source, &f, &binds, &out.calls);
                clear(&f.message, None)
            }
        }
    });
}

// ---------------------------------------------------------------- regressions

/// Found by `fuzz_mcp_call_result`: an `isError` result whose only text is
/// empty made a tool error with no message.
#[test]
fn an_mcp_error_result_with_blank_text_still_says_what_failed() {
    let r: rmcp::model::CallToolResult =
        serde_json::from_str(r#"{"content":[{"type":"text","text":""}],"isError":true}"#).unwrap();
    assert_eq!(error_text(&call_output(r)), "the tool reported an error");
    let r: rmcp::model::CallToolResult = serde_json::from_str(
        r#"{"content":[{"type":"text","text":" "},{"type":"text","text":"boom"}],"isError":true}"#,
    )
    .unwrap();
    assert_eq!(error_text(&call_output(r)), "boom");
}

/// Found by `fuzz_sandbox_program`: a bare `throw` failed the program with
/// an empty message, which the model would be shown to fix its program by.
#[test]
fn a_bare_throw_fails_the_program_with_a_message() {
    for source in ["let x = 1;\nthrow", "throw \"\"", "throw ()"] {
        let out = sandbox::run(
            source,
            &bindings(["flaky"]),
            &Limits::default(),
            Box::new(Answering(Value::Null)),
            Arc::new(AtomicBool::new(false)),
        );
        let failure = out.result.expect_err(source);
        assert_eq!(failure.message, "the program threw an error without a message", "{source}");
    }
}
