//! Secrets: with API keys in the environment, every command, every
//! model fault and every error path is run against loopback endpoints that
//! are adversarial — they echo the Authorization header they were sent back
//! in error bodies, in a 200 reply's content, in a malformed reply and in a
//! tool's result — and then every file the program wrote (traces, logs,
//! cassettes, eval folders, reports), everything it printed and every OTLP
//! request it sent are searched for the key, raw, base64- and URL-encoded:
//! none may hold it. The endpoints also record what they were sent, so the
//! test fails if the key never left the program (a vacuous pass). The file
//! is long (over 600 lines): the server, the configs, the commands and the
//! search are one test, read together.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::cli_helpers::{bin, s};

const KEY_VAR: &str = "SWITCHYARD_SECRETS_TEST_KEY";
/// Named by a config, never set.
const MISSING_VAR: &str = "SWITCHYARD_SECRETS_TEST_UNSET";

/// A distinctive key, new for each run, with characters that URL-encoding
/// changes (`+`, `/`, `=`), so its encoded form is a form of its own.
fn fresh_key() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    format!("sk-switchyard+secret/{:016x}{:08x}=", nanos as u64, std::process::id())
}

fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The forms of the key a leak could take. Base64 without its padding, so
/// the key inside a longer encoded text is found too when it starts on a
/// 3-byte boundary.
fn forms(key: &str) -> Vec<(&'static str, String)> {
    let b64 = base64(key.as_bytes());
    let bearer_b64 = base64(format!("Bearer {key}").as_bytes());
    vec![
        ("raw", key.to_string()),
        ("url-encoded", url_encode(key)),
        ("base64", b64.trim_end_matches('=').to_string()),
        ("base64 of the header", bearer_b64.trim_end_matches('=').to_string()),
    ]
}

/// What an endpoint gives back of a header it was sent: the header itself,
/// and its token base64- and URL-encoded.
fn echo(auth: &str) -> String {
    let token = auth.strip_prefix("Bearer ").unwrap_or(auth);
    format!("you sent '{auth}' (base64 {}, url {})", base64(token.as_bytes()), url_encode(token))
}

/// One request as the loopback server read it.
#[derive(Clone, Debug)]
struct Seen {
    path: String,
    auth: Option<String>,
    body: Vec<u8>,
}

/// The adversarial server: one port, routes by path.
///
/// - `/ok/v1/chat/completions`: a model that first calls `echo_http` with
///   the header as its argument, then finishes with the header as its
///   answer (by the number of assistant turns in the request).
/// - `/401/…`, `/500/…`: the header in the error body.
/// - `/malformed/…`: a 200 that is not JSON, with the header in it.
/// - `/nochoices/…`: a 200 JSON with no choices and the header as its error.
/// - `/tool/echo`: a tool's result with the header; `/tool/401` its error.
/// - `/embed/v1/embeddings`: vectors; `/embed401/…`: the header in a 401.
/// - `/otlp/v1/traces`: accepts spans; `/otlp401/…`: the header in a 401.
/// - anything else (an MCP URL): a 401 with the header.
struct Server {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl Server {
    fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&seen);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let log = Arc::clone(&log);
                std::thread::spawn(move || serve(stream, &log));
            }
        });
        Server { port, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, log: &Mutex<Vec<Seen>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut first = String::new();
    if reader.read_line(&mut first).unwrap_or(0) == 0 {
        return;
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/").to_string();
    let (mut len, mut auth) = (0usize, None);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        let (k, v) = line.split_once(':').unwrap_or((&line, ""));
        if k.eq_ignore_ascii_case("content-length") {
            len = v.trim().parse().unwrap_or(0);
        }
        if k.eq_ignore_ascii_case("authorization") {
            auth = Some(v.trim().to_string());
        }
    }
    let mut body = vec![0u8; len];
    let _ = reader.read_exact(&mut body);
    let said = echo(auth.as_deref().unwrap_or("no header"));
    let route = path.split('?').next().unwrap_or("").to_string();
    log.lock().unwrap().push(Seen { path: path.clone(), auth, body: body.clone() });

    let (status, content_type, reply): (u16, &str, Vec<u8>) = match route.as_str() {
        "/ok/v1/chat/completions" => (200, "application/json", chat_reply(&body, &said)),
        "/malformed/v1/chat/completions" => (200, "application/json", format!("<html>{said}</html>").into_bytes()),
        "/nochoices/v1/chat/completions" => (200, "application/json", json!({"error": said}).to_string().into_bytes()),
        "/500/v1/chat/completions" => (500, "application/json", json!({"error": said}).to_string().into_bytes()),
        "/tool/echo" => (200, "application/json", json!({"seen": said, "path": path}).to_string().into_bytes()),
        "/embed/v1/embeddings" => (200, "application/json", embeddings(&body)),
        "/otlp/v1/traces" => (200, "application/x-protobuf", Vec::new()),
        _ => (
            401,
            "application/json",
            json!({"error": {"message": format!("bad key: {said}")}}).to_string().into_bytes(),
        ),
    };
    let head = format!(
        "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        reply.len()
    );
    let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&reply));
}

fn chat_reply(request: &[u8], said: &str) -> Vec<u8> {
    let request: Value = serde_json::from_slice(request).unwrap_or(Value::Null);
    let turns = request["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
    let content = if turns == 0 {
        json!({"tool": "echo_http", "arguments": {"q": said}, "thought": said}).to_string()
    } else {
        json!({"tool": "finish", "answer": said}).to_string()
    };
    json!({
        "id": said, "object": "chat.completion", "created": 0, "model": said,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 3},
    })
    .to_string()
    .into_bytes()
}

fn embeddings(request: &[u8]) -> Vec<u8> {
    let request: Value = serde_json::from_slice(request).unwrap_or(Value::Null);
    let inputs = request["input"].as_array().cloned().unwrap_or_default();
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let t = text.as_str().unwrap_or("");
            let v: Vec<f64> = (0..4).map(|d| 1.0 + t.bytes().skip(d).step_by(4).map(f64::from).sum::<f64>()).collect();
            json!({"index": i, "embedding": v})
        })
        .collect();
    json!({"data": data}).to_string().into_bytes()
}

/// A loopback port where nothing listens.
fn dead_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// The files of the test: a manifest with http tools that take the key from
/// the environment, tasks, and configs that differ in the actor's model.
struct Setup {
    dir: PathBuf,
    data: PathBuf,
    tasks: String,
}

impl Setup {
    fn new(dir: &Path, server: &Server) -> Setup {
        let manifest = dir.join("echo.toml");
        let tool = |name: &str, what: &str, path: &str| {
            format!(
                "[[tool]]\nname = \"{name}\"\ndescription = \"{what}\"\n[tool.parameters]\ntype = \"object\"\nrequired = [\"q\"]\n\
                 [tool.parameters.properties.q]\ntype = \"string\"\n[tool.executor]\nkind = \"http\"\nmethod = \"GET\"\n\
                 url = \"{}\"\ntimeout_ms = 3000\n[tool.executor.headers]\nAuthorization = {{ env = \"{KEY_VAR}\", prefix = \"Bearer \" }}\n\n",
                server.url(path)
            )
        };
        let text = [
            tool("echo_http", "Echo lookup: look up the echo of a word", "/tool/echo"),
            tool("echo_http_broken", "Echo lookup (mirror): look up the echo of a word", "/tool/401"),
        ]
        .concat();
        std::fs::write(&manifest, text).unwrap();
        let tasks = dir.join("tasks.jsonl");
        std::fs::write(
            &tasks,
            "{\"id\":\"t1\",\"query\":\"Look up the echo of the word alpha\",\"answer\":\"alpha\"}\n\
             {\"id\":\"t2\",\"query\":\"Look up the echo of the word beta\",\"answer\":\"beta\"}\n",
        )
        .unwrap();
        Setup { dir: dir.to_path_buf(), data: dir.join("data"), tasks: s(&tasks).to_string() }
    }

    /// A config whose every role is the echoing model but the actor, and
    /// whose extra lines come last.
    fn config(&self, server: &Server, name: &str, actor: &str, extra: &str) -> String {
        let model = |name: &str, base: &str, key_var: &str, retries: u32| {
            format!(
                "[models.{name}]\nkind = \"openai\"\nbase_url = \"{base}\"\nmodel = \"m\"\napi_key_env = \"{key_var}\"\n\
                 max_retries = {retries}\ntimeout_ms = 2000\n\n"
            )
        };
        let mut text = format!(
            "library = [\"echo.toml\"]\ntrajectories = \"trajectories.jsonl\"\n[params]\nmax_steps = 3\n\n[roles]\nactor = \"{actor}\"\n\
             evaluator = \"ok\"\njudge = \"ok\"\nplanner = \"ok\"\nsolver = \"ok\"\nclassifier = \"ok\"\n\n"
        );
        text += &model("ok", &server.url("/ok/v1"), KEY_VAR, 1);
        text += &model("unauthorised", &server.url("/401/v1"), KEY_VAR, 0);
        text += &model("broken", &server.url("/500/v1"), KEY_VAR, 1);
        text += &model("garbled", &server.url("/malformed/v1"), KEY_VAR, 0);
        text += &model("nochoices", &server.url("/nochoices/v1"), KEY_VAR, 0);
        text += &model("down", &format!("http://127.0.0.1:{}/v1", dead_port()), KEY_VAR, 1);
        text += &model("keyless", &server.url("/ok/v1"), MISSING_VAR, 0);
        text += extra;
        let path = self.dir.join(format!("{name}.toml"));
        std::fs::write(&path, text).unwrap();
        s(&path).to_string()
    }

    fn path(&self, name: &str) -> String {
        s(&self.dir.join(name)).to_string()
    }
}

/// Every command run, with what it printed.
#[derive(Default)]
struct Runs {
    outputs: Vec<(String, Output)>,
}

impl Runs {
    /// Runs the binary with the key (and the OTLP receiver's) in its
    /// environment and logging at its most verbose; whatever the exit, it
    /// must not have panicked.
    fn run(&mut self, setup: &Setup, key: &str, args: &[&str]) -> Output {
        let out = bin()
            .arg("--data-dir")
            .arg(&setup.data)
            .args(args)
            .current_dir(&setup.dir)
            .env(KEY_VAR, key)
            .env_remove(MISSING_VAR)
            .env("SWITCHYARD_LOG", "trace")
            .env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", format!("authorization=Bearer {key}"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
        self.outputs.push((args.join(" "), out.clone()));
        out
    }

    fn ok(&mut self, setup: &Setup, key: &str, args: &[&str]) -> Output {
        let out = self.run(setup, key, args);
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        out
    }

    fn fails(&mut self, setup: &Setup, key: &str, args: &[&str]) -> Output {
        let out = self.run(setup, key, args);
        assert!(!out.status.success(), "{args:?} should have failed: {}", String::from_utf8_lossy(&out.stdout));
        out
    }
}

/// Every file under `dir`, recursively.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

/// `where: line N (forms): the line` for each line of `bytes` that holds a
/// form of the key, the line cut to what is around the first hit.
fn hits(place: &str, bytes: &[u8], forms: &[(&str, String)], out: &mut Vec<String>) {
    for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
        let found: Vec<(&str, usize)> = forms
            .iter()
            .filter_map(|(form, needle)| {
                Some((*form, line.windows(needle.len()).position(|w| w == needle.as_bytes())?))
            })
            .collect();
        if let Some(&(_, at)) = found.first() {
            let around = &line[at.saturating_sub(80)..line.len().min(at + 80)];
            let names: Vec<&str> = found.iter().map(|(f, _)| *f).collect();
            out.push(format!("{place}: line {} ({}): …{}…", n + 1, names.join(", "), String::from_utf8_lossy(around)));
        }
    }
}

#[test]
fn no_command_fault_or_error_path_leaks_an_api_key() {
    let key = fresh_key();
    let d = tempfile::tempdir().unwrap();
    let server = Server::start();
    let setup = Setup::new(d.path(), &server);
    std::fs::write(
        d.path().join("trajectories.jsonl"),
        "{\"query\":\"Look up the echo of gamma\",\"tools\":[\"echo_http\"]}\n",
    )
    .unwrap();
    let mut runs = Runs::default();
    let tasks = setup.tasks.clone();
    let otlp = server.url("/otlp");
    let otel = format!("[otel]\nendpoint = \"{otlp}\"\ncontent = true\n");
    let good = setup.config(&server, "good", "ok", &otel);

    // A session against the echoing model, recorded every way it can be,
    // exported live with content.
    let trace = setup.path("run.jsonl");
    let cassette = setup.path("models.jsonl");
    let tape = setup.path("tools.jsonl");
    runs.ok(
        &setup,
        &key,
        &["--config", &good, "run", "--strategy", "react", "--tasks", &tasks, "--trace", &trace, "--record", &cassette],
    );
    runs.ok(
        &setup,
        &key,
        &["--config", &good, "run", "--strategy", "toolnet", "--tasks", &tasks, "--record-tools", &tape],
    );
    runs.ok(
        &setup,
        &key,
        &["--config", &good, "run", "--strategy", "react", "--tasks", &tasks, "--replay", &cassette, "--json"],
    );
    runs.run(&setup, &key, &["--config", &good, "run", "--tasks", &tasks, "--replay-tools", &tape, "--otel-content"]);
    for strategy in ["rewoo", "atc"] {
        let t = setup.path(&format!("{strategy}.jsonl"));
        runs.run(&setup, &key, &["--config", &good, "run", "--strategy", strategy, "--tasks", &tasks, "--trace", &t]);
    }

    // Every model fault, on the actor and on the evaluator.
    for mode in ["malformed", "empty", "truncated", "http-500", "429=10", "timeout", "slow=10"] {
        for role in ["actor", "evaluator"] {
            let spec = format!("model:{role}:{mode}:once");
            let t = setup.path(&format!("fault-{role}-{}.jsonl", mode.replace('=', "-")));
            runs.run(
                &setup,
                &key,
                &[
                    "--config",
                    &good,
                    "run",
                    "--strategy",
                    "react",
                    "--task",
                    "Look up the echo of delta",
                    "--fault",
                    &spec,
                    "--trace",
                    &t,
                ],
            );
        }
    }
    // A tool fault, and the tool whose endpoint refuses the key.
    runs.run(&setup, &key, &["--config", &good, "run", "--tasks", &tasks, "--fault", "echo_http:error@1"]);

    // Error paths: the endpoint refuses the key, fails, garbles, answers
    // no choices, is down; the key's variable is not set.
    for actor in ["unauthorised", "broken", "garbled", "nochoices", "down", "keyless"] {
        let cfg = setup.config(&server, actor, actor, "");
        let t = setup.path(&format!("error-{actor}.jsonl"));
        runs.run(
            &setup,
            &key,
            &["--config", &cfg, "run", "--strategy", "react", "--tasks", &tasks, "--trace", &t, "--json"],
        );
        runs.run(&setup, &key, &["--config", &cfg, "run", "--strategy", "rewoo", "--tasks", &tasks]);
    }

    // Evals, their reports and a comparison.
    let (e1, e2) = (setup.path("eval-1"), setup.path("eval-2"));
    runs.run(
        &setup,
        &key,
        &["--config", &good, "eval", "--strategy", "react,toolnet,rewoo,atc", "--tasks", &tasks, "--out", &e1],
    );
    let broken = setup.config(&server, "eval-broken", "unauthorised", "");
    runs.run(
        &setup,
        &key,
        &[
            "--config",
            &broken,
            "eval",
            "--strategy",
            "react",
            "--tasks",
            &tasks,
            "--out",
            &e2,
            "--fault",
            "model:evaluator:http-500",
            "--json",
        ],
    );
    runs.run(&setup, &key, &["--config", &good, "report", &e1]);
    runs.run(&setup, &key, &["--config", &good, "report", &e2, "--trace", &trace, "--json"]);
    runs.run(&setup, &key, &["--config", &good, "compare", &e1, &e2]);
    runs.run(&setup, &key, &["--config", &good, "compare", &e1, &e2, "--json"]);

    // Traces: shown, diffed, made tasks, exported, forked.
    let broken_trace = setup.path("error-unauthorised.jsonl");
    runs.ok(&setup, &key, &["--config", &good, "trace", "show", &trace]);
    runs.ok(&setup, &key, &["--config", &good, "trace", "show", &broken_trace, "--json"]);
    runs.run(&setup, &key, &["--config", &good, "trace", "diff", &trace, &broken_trace]);
    runs.run(&setup, &key, &["--config", &good, "trace", "diff", &trace, &broken_trace, "--json"]);
    runs.run(&setup, &key, &["--config", &good, "trace", "to-tasks", &trace]);
    runs.run(&setup, &key, &["--config", &good, "trace", "to-tasks", &trace, "--out", &setup.path("cases.jsonl")]);
    runs.ok(&setup, &key, &["--config", &good, "trace", "export", &trace, "--otlp", &otlp, "--content"]);
    runs.ok(&setup, &key, &["--config", &good, "trace", "export", &broken_trace, "--otlp", &otlp]);
    runs.fails(&setup, &key, &["--config", &good, "trace", "export", &trace, "--otlp", &server.url("/otlp401")]);
    runs.run(
        &setup,
        &key,
        &[
            "--config",
            &good,
            "fork",
            &trace,
            "--at",
            "6",
            "--tasks",
            &tasks,
            "--trace",
            &setup.path("fork.jsonl"),
            "--json",
        ],
    );
    runs.run(
        &setup,
        &key,
        &["--config", &good, "fork", &trace, "--at", "4", "--tasks", &tasks, "--model", "actor=unauthorised"],
    );

    // Tools, probing, graph, budget, retrieval.
    runs.ok(&setup, &key, &["--config", &good, "tools", "list"]);
    runs.ok(&setup, &key, &["--config", &good, "tools", "list", "--json"]);
    runs.ok(&setup, &key, &["--config", &good, "tools", "call", "echo_http", "--args", "{\"q\": \"x\"}"]);
    runs.run(
        &setup,
        &key,
        &["--config", &good, "tools", "call", "echo_http_broken", "--args", "{\"q\": \"x\"}", "--json"],
    );
    runs.run(&setup, &key, &["--config", &good, "tools", "call", "echo_http_broken", "--args", "{\"q\": \"x\"}"]);
    runs.run(&setup, &key, &["--config", &good, "tools", "list", "--mcp-url", &server.url("/bare-mcp")]);
    let mcp = format!(
        "[[mcp]]\nname = \"remote\"\nurl = \"{}\"\nheaders = {{ Authorization = {{ env = \"{KEY_VAR}\", prefix = \"Bearer \" }} }}\n",
        server.url("/mcp")
    );
    let with_mcp = setup.config(&server, "mcp", "ok", &mcp);
    runs.fails(&setup, &key, &["--config", &with_mcp, "tools", "list"]);
    runs.fails(&setup, &key, &["--config", &with_mcp, "run", "--tasks", &tasks]);
    runs.run(&setup, &key, &["--config", &good, "probe", "--all", "--trace", &setup.path("probe.jsonl"), "--json"]);
    runs.run(&setup, &key, &["--config", &good, "graph", "build"]);
    runs.run(&setup, &key, &["--config", &good, "graph", "show", "echo_http", "--json"]);
    runs.run(&setup, &key, &["--config", &good, "plan", "--task", "Look up the echo of alpha", "--budget", "10"]);
    runs.run(&setup, &key, &["--config", &good, "experience", "show"]);
    let embed = |name: &str, path: &str, var: &str| {
        let extra = format!(
            "[retrieval]\nembedder = \"http\"\nurl = \"{}\"\nmodel = \"e\"\napi_key_env = \"{var}\"\n",
            server.url(path)
        );
        setup.config(&server, name, "ok", &extra)
    };
    let (embedding, unembedding, keyless) = (
        embed("embed", "/embed/v1", KEY_VAR),
        embed("embed401", "/embed401/v1", KEY_VAR),
        embed("embed-keyless", "/embed/v1", MISSING_VAR),
    );
    runs.ok(
        &setup,
        &key,
        &["--config", &embedding, "retrieval", "search", "--task", "Look up the echo of alpha", "--json"],
    );
    runs.run(&setup, &key, &["--config", &embedding, "run", "--tasks", &tasks, "--strategy", "toolnet"]);
    runs.fails(&setup, &key, &["--config", &unembedding, "retrieval", "search", "--task", "Look up the echo of alpha"]);
    runs.run(&setup, &key, &["--config", &unembedding, "run", "--tasks", &tasks]);
    runs.fails(&setup, &key, &["--config", &keyless, "retrieval", "search", "--task", "Look up the echo of alpha"]);
    let pool = setup.path("pool.json");
    std::fs::write(&pool, json!({"tool_information": {"<echo_http>": "Echo lookup: look up the echo of a word", "<calc>": "Evaluate arithmetic"}}).to_string())
        .unwrap();
    let questions = setup.path("questions.jsonl");
    std::fs::write(&questions, "{\"question\":\"Look up the echo of alpha\",\"tool\":\"echo_http\"}\n").unwrap();
    for config in [&embedding, &unembedding] {
        let args = ["--config", config, "retrieval", "eval", "--tools", &pool, "--questions", &questions];
        runs.run(&setup, &key, &[&args[..], &["--embedder", "http"]].concat());
    }
    runs.run(&setup, &key, &["--config", &good, "bench", "score", "--tasks", &tasks, &trace]);

    // The workbench, in a pseudo-terminal: a live session, then a replay.
    let screens = vec![
        workbench(
            &setup,
            &key,
            &format!("--config {good} ui --tasks {tasks} --pace 0 --no-save --trace {}", setup.path("ui.jsonl")),
        ),
        workbench(&setup, &key, &format!("--config {good} replay {trace}")),
    ];

    // The key went out: to the model, the tools, the embedder, the OTLP
    // receiver and the MCP server; else the test would prove nothing.
    let seen = server.seen();
    for prefix in [
        "/ok/",
        "/401/",
        "/500/",
        "/malformed/",
        "/nochoices/",
        "/tool/echo",
        "/tool/401",
        "/embed/",
        "/embed401/",
        "/otlp/",
        "/otlp401/",
        "/mcp",
    ] {
        let sent = seen.iter().filter(|r| r.path.starts_with(prefix)).collect::<Vec<_>>();
        assert!(!sent.is_empty(), "nothing reached {prefix}");
        assert!(
            sent.iter().all(|r| r.auth.as_deref().is_some_and(|a| a.contains(&key))),
            "a request to {prefix} went without the key: {:?}",
            sent.iter().map(|r| &r.auth).collect::<Vec<_>>()
        );
    }

    // Now look for it everywhere.
    let forms = forms(&key);
    let mut found = Vec::new();
    let mut written = Vec::new();
    files(d.path(), &mut written);
    assert!(written.iter().any(|p| p.ends_with("logs/switchyard.log")), "no log was written");
    let mut bytes = 0usize;
    for path in &written {
        let content = std::fs::read(path).unwrap();
        bytes += content.len();
        hits(&path.display().to_string(), &content, &forms, &mut found);
    }
    for (args, out) in &runs.outputs {
        hits(&format!("stdout of `{args}`"), &out.stdout, &forms, &mut found);
        hits(&format!("stderr of `{args}`"), &out.stderr, &forms, &mut found);
        bytes += out.stdout.len() + out.stderr.len();
    }
    for (what, raw) in &screens {
        hits(&format!("the terminal of `{what}`"), raw, &forms, &mut found);
        bytes += raw.len();
    }
    let mut exports = 0;
    for r in seen.iter().filter(|r| r.path.starts_with("/otlp")) {
        hits(&format!("OTLP request to {}", r.path), &r.body, &forms, &mut found);
        bytes += r.body.len();
        exports += 1;
    }
    let mut tally: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &seen {
        *tally.entry(r.path.split('/').nth(1).unwrap_or("")).or_default() += 1;
    }
    eprintln!(
        "secrets: {} commands and {} terminal sessions; {} files, {} OTLP requests, {bytes} bytes searched; requests per route {tally:?}; {} hits",
        runs.outputs.len(),
        screens.len(),
        written.len(),
        exports,
        found.len()
    );
    // Every hit is listed, the first hundred in the message.
    let shown = found.iter().take(100).cloned().collect::<Vec<_>>().join("\n");
    assert!(found.is_empty(), "the key leaked in {} places:\n{shown}", found.len());
}

/// The workbench under a shell in a pseudo-terminal until it is done;
/// then `q`. Returns the command and every byte it drew.
fn workbench(setup: &Setup, key: &str, command: &str) -> (String, Vec<u8>) {
    use portable_pty::{CommandBuilder, PtySize, native_pty_system};
    use std::sync::mpsc::channel;
    use std::time::{Duration, Instant};

    let pty = native_pty_system().openpty(PtySize { rows: 40, cols: 140, pixel_width: 0, pixel_height: 0 }).unwrap();
    let script = format!(
        "{bin} --data-dir {data} {command}; echo EXIT=$?",
        bin = env!("CARGO_BIN_EXE_switchyard"),
        data = setup.data.display()
    );
    let mut cmd = CommandBuilder::new("sh");
    cmd.args(["-c", &script]);
    cmd.env("TERM", "xterm-256color");
    cmd.env(KEY_VAR, key);
    cmd.env("SWITCHYARD_LOG", "trace");
    cmd.env("OTEL_EXPORTER_OTLP_TRACES_HEADERS", format!("authorization=Bearer {key}"));
    cmd.env_remove("SWITCHYARD_DATA_DIR");
    cmd.cwd(&setup.dir);
    let mut child = pty.slave.spawn_command(cmd).unwrap();
    drop(pty.slave);
    let mut reader = pty.master.try_clone_reader().unwrap();
    let mut keys = pty.master.take_writer().unwrap();
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let mut buf = [0u8; 8192];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    std::mem::forget(pty.master);
    let mut parser = vt100::Parser::new(40, 140, 0);
    let mut raw = Vec::new();
    // Generous: only stops a broken build from hanging CI.
    let deadline = Instant::now() + Duration::from_secs(60);
    let wait = |parser: &mut vt100::Parser, raw: &mut Vec<u8>, what: &str, pred: &dyn Fn(&str) -> bool| loop {
        let text = parser.screen().contents();
        if pred(&text) {
            return;
        }
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(b) => {
                parser.process(&b);
                raw.extend_from_slice(&b);
            }
            Err(_) => panic!("`{command}`: waited for {what}; the screen shows:\n{text}"),
        }
    };
    wait(&mut parser, &mut raw, "the end", &|t| t.contains("all tasks done") || t.contains("REPLAY event"));
    keys.write_all(b"q").unwrap();
    keys.flush().unwrap();
    wait(&mut parser, &mut raw, "the exit", &|t| t.contains("EXIT="));
    child.wait().unwrap();
    (command.to_string(), raw)
}
