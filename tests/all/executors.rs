//! The executors: command tools, http tools, argument checks and injected faults.

use std::collections::BTreeMap;
use std::fs;
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use switchyard::tool::exec::{self, Executor};
use switchyard::tool::fault::FaultMode;
use switchyard::tool::nothing_found::{self, NOTHING_FOUND};
use switchyard::tool::{ExecutorSpec, HeaderValue, ToolErrorKind, ToolSpec};
use tempfile::TempDir;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

/// Long enough for any call here; only there so a bug fails instead of hanging.
const GUARD: Duration = Duration::from_secs(60);
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

async fn guarded<F: Future>(f: F) -> F::Output {
    tokio::time::timeout(GUARD, f).await.expect("the test hung")
}

fn params(required: &[&str], props: Value) -> Value {
    json!({ "type": "object", "required": required, "properties": props })
}

fn spec(name: &str, parameters: Value, executor: ExecutorSpec) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: format!("{name} for tests"),
        category: None,
        cost: 1.0,
        parameters,
        response: None,
        executor,
        source: None,
    }
}

/// A python3 script in `dir` run as a command tool taking `{"text": string}`.
fn script_tool(dir: &Path, file: &str, code: &str, extra_args: &[&str]) -> ToolSpec {
    let path = dir.join(file);
    fs::write(&path, code).unwrap();
    let mut argv = vec!["python3".to_string(), path.to_str().unwrap().to_string()];
    argv.extend(extra_args.iter().map(|s| s.to_string()));
    spec(
        file.trim_end_matches(".py"),
        params(&["text"], json!({ "text": { "type": "string" } })),
        ExecutorSpec::Command { argv, cwd: Some(dir.to_path_buf()), timeout_ms: 60_000 },
    )
}

const ECHO: &str = "import json, sys\nargs = json.load(sys.stdin)\nprint(json.dumps({'got': args}))\n";

/// Echoes like ECHO, after leaving a mark that it ran.
const MARK_AND_ECHO: &str = "import json, sys\nopen(sys.argv[1], 'a').write('ran\\n')\nargs = json.load(sys.stdin)\nprint(json.dumps({'got': args}))\n";

async fn run(tool: &ToolSpec, args: Value, fault: Option<FaultMode>) -> switchyard::tool::ToolResult {
    guarded(Executor::new().call(tool, &args, fault, 42, CALL_TIMEOUT)).await
}

#[tokio::test]
async fn command_tool_echoes_its_arguments() {
    let dir = TempDir::new().unwrap();
    let tool = script_tool(dir.path(), "echo.py", ECHO, &[]);
    let args = json!({ "text": "héllo \"world\"", "extra": [1, 2.5, null] });
    let out = run(&tool, args.clone(), None).await.unwrap();
    assert_eq!(out, json!({ "got": args }));
}

#[tokio::test]
async fn command_tool_runs_in_its_cwd() {
    let dir = TempDir::new().unwrap();
    let code = "import json, os\nprint(json.dumps(os.getcwd()))\n";
    let tool = script_tool(dir.path(), "cwd.py", code, &[]);
    let out = run(&tool, json!({ "text": "" }), None).await.unwrap();
    let reported = PathBuf::from(out.as_str().unwrap());
    assert_eq!(reported.canonicalize().unwrap(), dir.path().canonicalize().unwrap());
}

#[tokio::test]
async fn non_zero_exit_is_failed_with_stderr() {
    let dir = TempDir::new().unwrap();
    let code = "import sys\nsys.stderr.write('x' * 2000 + 'the disk is on fire\\n')\nsys.exit(3)\n";
    let tool = script_tool(dir.path(), "fail.py", code, &[]);
    let err = run(&tool, json!({ "text": "a" }), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed, "{err}");
    assert!(err.message.contains("code 3"), "{err}");
    assert!(err.message.contains("the disk is on fire"), "{err}");
    // Only the end of a long stderr is quoted.
    assert!(err.message.len() < 1000, "{err}");
}

#[tokio::test]
async fn killed_by_a_signal_is_crashed() {
    let dir = TempDir::new().unwrap();
    let code = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n";
    let tool = script_tool(dir.path(), "die.py", code, &[]);
    let err = run(&tool, json!({ "text": "a" }), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Crashed, "{err}");
    assert!(err.message.contains("signal 9"), "{err}");
}

#[tokio::test]
async fn non_json_or_empty_stdout_is_bad_output() {
    let dir = TempDir::new().unwrap();
    let tool = script_tool(dir.path(), "text.py", "print('hello world, not json')\n", &[]);
    let err = run(&tool, json!({ "text": "a" }), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadOutput, "{err}");
    assert!(err.message.contains("hello world, not json"), "{err}");

    let tool = script_tool(dir.path(), "silent.py", "pass\n", &[]);
    let err = run(&tool, json!({ "text": "a" }), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::BadOutput, "{err}");
    assert!(err.message.contains("nothing on stdout"), "{err}");
}

#[tokio::test]
async fn missing_program_is_failed() {
    let tool = spec(
        "ghost",
        params(&[], json!({})),
        ExecutorSpec::Command { argv: vec!["switchyard-no-such-program".into()], cwd: None, timeout_ms: 1000 },
    );
    let err = run(&tool, json!({}), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed, "{err}");
    assert!(err.message.contains("could not start 'switchyard-no-such-program'"), "{err}");
}

#[cfg(target_os = "linux")]
fn process_exists(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

#[cfg(target_os = "linux")]
#[tokio::test]
async fn hanging_command_times_out_and_is_killed() {
    let dir = TempDir::new().unwrap();
    let pid_file = dir.path().join("pid");
    // The pid file is written whole (rename) before the long sleep.
    let code = "import os, sys, time\np = sys.argv[1]\nopen(p + '.tmp', 'w').write(str(os.getpid()))\nos.rename(p + '.tmp', p)\ntime.sleep(60)\n";
    let tool = script_tool(dir.path(), "hang.py", code, &[pid_file.to_str().unwrap()]);
    let exec = Executor::new();
    // On a loaded machine python may not reach the pid file within 300 ms;
    // a longer timeout is then tried, so the kill is always observed.
    for ms in [300, 2_000, 10_000] {
        let _ = fs::remove_file(&pid_file);
        let timeout = Duration::from_millis(ms);
        let err = guarded(exec.call(&tool, &json!({ "text": "" }), None, 1, timeout)).await.unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::Timeout, "{err}");
        assert!(err.message.contains(&format!("{ms} ms")), "{err}");
        if let Ok(pid) = fs::read_to_string(&pid_file) {
            let pid: u32 = pid.trim().parse().unwrap();
            assert!(!process_exists(pid), "process {pid} survived its timeout");
            return;
        }
    }
    panic!("the script never wrote its pid file");
}

#[tokio::test]
async fn manifest_timeout_bounds_the_call() {
    let dir = TempDir::new().unwrap();
    let mut tool = script_tool(dir.path(), "sleepy.py", "import time\ntime.sleep(60)\n", &[]);
    if let ExecutorSpec::Command { timeout_ms, .. } = &mut tool.executor {
        *timeout_ms = 200;
    }
    let err = run(&tool, json!({ "text": "" }), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout, "{err}");
    assert!(err.message.contains("200 ms"), "{err}");
}

#[tokio::test]
async fn crash_fault_kills_a_command_tool() {
    let dir = TempDir::new().unwrap();
    let tool = script_tool(dir.path(), "echo.py", ECHO, &[]);
    let err = run(&tool, json!({ "text": "a" }), Some(FaultMode::Crash)).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Crashed, "{err}");
    assert!(err.message.contains("signal 9"), "{err}");
    // The fault does not outlive the call.
    assert!(run(&tool, json!({ "text": "a" }), None).await.is_ok());
}

/// Every fault mode, on a tool that records each real run in `marks`.
async fn check_fault_modes(tool: &ToolSpec, args: Value, marks: Option<&Path>) {
    let runs = || marks.map(|m| fs::read_to_string(m).unwrap_or_default().lines().count());
    let exec = Executor::new();
    let call_within = |fault, seed, timeout| {
        let (exec, tool, args) = (&exec, tool, &args);
        async move { guarded(exec.call(tool, args, fault, seed, timeout)).await }
    };
    let call = |fault, seed| call_within(fault, seed, CALL_TIMEOUT);
    let normal = call(None, 1).await.unwrap();
    let runs_before = runs();

    let err = call(Some(FaultMode::Error), 1).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("injected"), "{err}");

    let nothing = call(Some(FaultMode::NothingFound), 1).await.unwrap();
    assert_eq!(nothing, json!(NOTHING_FOUND));
    assert!(nothing_found::is_nothing_found(&nothing));

    let g1 = call(Some(FaultMode::Garbage), 7).await.unwrap();
    let text = g1.as_str().expect("garbage is a string");
    assert!(text.chars().count() >= 20, "{text}");
    assert!(text.chars().all(|c| c.is_ascii_graphic() && !c.is_ascii_alphanumeric()), "{text}");
    assert!(serde_json::from_str::<Value>(text).is_err(), "garbage parsed as JSON: {text}");
    assert_eq!(call(Some(FaultMode::Garbage), 7).await.unwrap(), g1);
    assert_ne!(call(Some(FaultMode::Garbage), 8).await.unwrap(), g1);

    let err = call_within(Some(FaultMode::Timeout), 1, Duration::from_millis(100)).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout);
    assert!(err.message.contains("100 ms") && err.message.contains("injected"), "{err}");

    // None of the faults above ran the tool.
    assert_eq!(runs(), runs_before);

    let slow = call(Some(FaultMode::Slow { ms: 20 }), 1).await.unwrap();
    assert_eq!(slow, normal);
    assert_eq!(runs(), runs_before.map(|n| n + 1), "slow runs the tool");

    let err = call(Some(FaultMode::Crash), 1).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Crashed, "{err}");
}

#[tokio::test]
async fn fault_modes_on_a_command_tool() {
    let dir = TempDir::new().unwrap();
    let marks = dir.path().join("marks");
    let tool = script_tool(dir.path(), "mark.py", MARK_AND_ECHO, &[marks.to_str().unwrap()]);
    check_fault_modes(&tool, json!({ "text": "a" }), Some(&marks)).await;
}

#[tokio::test]
async fn fault_modes_on_a_builtin_tool() {
    let tool = spec(
        "calc",
        params(&["expression"], json!({ "expression": { "type": "string" } })),
        ExecutorSpec::Builtin { function: "calculator".into() },
    );
    check_fault_modes(&tool, json!({ "expression": "2 * (3 + 4)" }), None).await;
    let out = run(&tool, json!({ "expression": "2 * (3 + 4)" }), None).await.unwrap();
    assert!(out.to_string().contains("14"), "{out}");
}

#[tokio::test]
async fn builtin_randomness_follows_the_call_seed() {
    let tool = spec(
        "noisy",
        params(&["expression"], json!({ "expression": { "type": "string" } })),
        ExecutorSpec::Builtin { function: "random_calculator".into() },
    );
    let exec = Executor::new();
    let args = json!({ "expression": "1 + 1" });
    let at = |seed| exec.call(&tool, &args, None, seed, CALL_TIMEOUT);
    let a = guarded(at(11)).await.unwrap();
    assert_eq!(guarded(at(11)).await.unwrap(), a);
    let others = [guarded(at(12)).await.unwrap(), guarded(at(13)).await.unwrap()];
    assert!(others.iter().any(|o| o != &a), "the seed changed nothing: {a}");
}

#[tokio::test]
async fn unknown_builtin_is_failed() {
    let tool = spec("ghost", params(&[], json!({})), ExecutorSpec::Builtin { function: "no_such_builtin".into() });
    let err = run(&tool, json!({}), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains("no_such_builtin"), "{err}");
}

#[tokio::test]
async fn bad_arguments_stop_the_call_before_the_tool_runs() {
    let dir = TempDir::new().unwrap();
    let marks = dir.path().join("marks");
    let tool = script_tool(dir.path(), "mark.py", MARK_AND_ECHO, &[marks.to_str().unwrap()]);
    for (args, field) in
        [(json!({ "other": 1 }), "'text'"), (json!({ "text": 5 }), "'text'"), (json!("text"), "object")]
    {
        // Even a fault does not get past the argument check.
        let err = run(&tool, args, Some(FaultMode::NothingFound)).await.unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::BadArguments, "{err}");
        assert!(err.message.contains(field), "{err}");
    }
    assert!(!marks.exists(), "the tool ran");
}

#[test]
fn argument_types_and_enums() {
    let tool = spec(
        "convert",
        params(
            &["value", "unit"],
            json!({
                "value": { "type": "number" },
                "count": { "type": "integer" },
                "unit": { "enum": ["m", "km"] },
                "note": { "type": ["string", "null"] },
                "tags": { "type": "array" },
                "exact": { "type": "boolean" },
            }),
        ),
        ExecutorSpec::Builtin { function: "x".into() },
    );
    let check = |args: Value| exec::check_arguments(&tool, &args);
    assert!(check(json!({ "value": 3, "unit": "m" })).is_ok(), "number accepts integers");
    assert!(check(json!({ "value": 3.5, "unit": "km", "count": 2.0 })).is_ok(), "whole float is an integer");
    assert!(check(json!({ "value": 1, "unit": "m", "note": null, "tags": [], "exact": true, "whatever": {} })).is_ok());

    for (args, field) in [
        (json!({ "value": 1, "unit": "m", "count": 2.5 }), "'count'"),
        (json!({ "value": "1", "unit": "m" }), "'value'"),
        (json!({ "value": 1, "unit": "yd" }), "'unit'"),
        (json!({ "value": 1, "unit": "m", "note": 3 }), "'note'"),
        (json!({ "value": 1, "unit": "m", "exact": "yes" }), "'exact'"),
        (json!({ "unit": "m" }), "'value'"),
        (json!([1]), "object"),
    ] {
        let err = check(args.clone()).expect_err(&args.to_string());
        assert_eq!(err.kind, ToolErrorKind::BadArguments);
        assert!(err.message.contains(field), "{args}: {err}");
    }
}

// ---- http -------------------------------------------------------------

/// A request as the test server saw it.
#[derive(Debug)]
struct Seen {
    method: String,
    target: String,
    headers: BTreeMap<String, String>,
    body: String,
}

enum Reply {
    Respond {
        status: u16,
        content_type: &'static str,
        body: String,
    },
    /// Reads the request, then never answers.
    Hang,
}

fn json_reply(status: u16, body: Value) -> Reply {
    Reply::Respond { status, content_type: "application/json", body: body.to_string() }
}

/// A loopback HTTP/1.1 server answering each connection's one request with
/// the next scripted reply, and reporting what it saw.
async fn serve(replies: Vec<Reply>) -> (SocketAddr, mpsc::UnboundedReceiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut hung = Vec::new();
        for reply in replies {
            let Ok((mut conn, _)) = listener.accept().await else {
                return;
            };
            let Some(seen) = read_request(&mut conn).await else {
                return;
            };
            let _ = tx.send(seen);
            match reply {
                Reply::Respond { status, content_type, body } => {
                    let head = format!(
                        "HTTP/1.1 {status} Scripted\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        body.len()
                    );
                    let _ = conn.write_all(head.as_bytes()).await;
                    let _ = conn.write_all(body.as_bytes()).await;
                    let _ = conn.shutdown().await;
                }
                // Kept open so the client waits.
                Reply::Hang => hung.push(conn),
            }
        }
        // Keep hung connections open until the test ends.
        std::future::pending::<()>().await;
        drop(hung);
    });
    (addr, rx)
}

async fn read_request(conn: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let method = request_line.next()?.to_string();
    let target = request_line.next()?.to_string();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let len: usize = headers.get("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < len {
        let n = conn.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Seen { method, target, headers, body: String::from_utf8_lossy(&body).to_string() })
}

fn http_tool(method: &str, url: String, headers: BTreeMap<String, HeaderValue>) -> ToolSpec {
    spec(
        "web",
        params(
            &[],
            json!({
                "city": { "type": "string" },
                "unit": { "type": "string" },
                "days": { "type": "integer" },
            }),
        ),
        ExecutorSpec::Http { method: method.into(), url, headers, timeout_ms: 60_000, query: Vec::new() },
    )
}

#[tokio::test]
async fn http_get_fills_placeholders_and_sends_query() {
    let (addr, mut seen) = serve(vec![json_reply(200, json!({ "temp": 21 }))]).await;
    let tool = http_tool("GET", format!("http://{addr}/weather/{{city}}/now"), BTreeMap::new());
    let out = run(&tool, json!({ "city": "São Paulo/x?y", "unit": "C & F", "days": 3 }), None).await.unwrap();
    assert_eq!(out, json!({ "temp": 21 }));
    let req = seen.recv().await.unwrap();
    assert_eq!(req.method, "GET");
    let (path, query) = req.target.split_once('?').expect("a query string");
    assert_eq!(path, "/weather/S%C3%A3o%20Paulo%2Fx%3Fy/now");
    let mut pairs: Vec<&str> = query.split('&').collect();
    pairs.sort();
    assert_eq!(pairs, ["days=3", "unit=C+%26+F"]);
    assert!(req.body.is_empty());
}

#[tokio::test]
async fn http_post_sends_a_json_body() {
    let (addr, mut seen) =
        serve(vec![Reply::Respond { status: 201, content_type: "text/plain", body: "created, thanks".into() }]).await;
    let tool = http_tool("POST", format!("http://{addr}/cities/{{city}}"), BTreeMap::new());
    let out = run(&tool, json!({ "city": "Oslo", "unit": "K", "days": 2 }), None).await.unwrap();
    // A text answer comes back as a string.
    assert_eq!(out, json!("created, thanks"));
    let req = seen.recv().await.unwrap();
    assert_eq!(req.method, "POST");
    assert_eq!(req.target, "/cities/Oslo");
    assert!(req.headers["content-type"].contains("application/json"));
    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body, json!({ "unit": "K", "days": 2 }));
}

#[tokio::test]
async fn http_error_status_is_failed_with_the_body() {
    let (addr, _seen) = serve(vec![json_reply(404, json!({ "error": "no such city" }))]).await;
    let tool = http_tool("GET", format!("http://{addr}/w/{{city}}"), BTreeMap::new());
    let err = run(&tool, json!({ "city": "Atlantis" }), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed, "{err}");
    assert!(err.message.contains("404"), "{err}");
    assert!(err.message.contains("no such city"), "{err}");
}

#[tokio::test]
async fn http_timeout_is_timeout() {
    let (addr, _seen) = serve(vec![Reply::Hang]).await;
    let tool = http_tool("GET", format!("http://{addr}/slow"), BTreeMap::new());
    let err = guarded(Executor::new().call(&tool, &json!({}), None, 1, Duration::from_millis(200))).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout, "{err}");
    assert!(err.message.contains("200 ms"), "{err}");
}

#[tokio::test]
async fn http_header_from_env_and_secrets_stay_out_of_errors() {
    let var = format!("SWITCHYARD_TEST_KEY_{}", std::process::id());
    let secret = "s3cr3t-token-value-9f2c";
    // SAFETY: the variable is unique to this test and std serialises its own
    // environment access; no other code reads it.
    unsafe { std::env::set_var(&var, secret) };
    let headers = BTreeMap::from([
        ("Authorization".to_string(), HeaderValue::Env { env: var.clone(), prefix: "Bearer ".into() }),
        ("Accept".to_string(), HeaderValue::Literal("application/json".into())),
    ]);
    let (addr, mut seen) =
        serve(vec![json_reply(200, json!({ "ok": true })), json_reply(500, json!({ "error": "boom" })), Reply::Hang])
            .await;
    let tool = http_tool("GET", format!("http://{addr}/x"), headers.clone());
    assert_eq!(run(&tool, json!({}), None).await.unwrap(), json!({ "ok": true }));
    let req = seen.recv().await.unwrap();
    assert_eq!(req.headers["authorization"], format!("Bearer {secret}"));
    assert_eq!(req.headers["accept"], "application/json");

    let mut errors = Vec::new();
    errors.push(run(&tool, json!({}), None).await.unwrap_err());
    let exec = Executor::new();
    errors.push(guarded(exec.call(&tool, &json!({}), None, 1, Duration::from_millis(200))).await.unwrap_err());
    // A port that was just bound and released refuses connections.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let refused = http_tool("GET", format!("http://{closed}/x"), headers.clone());
    errors.push(run(&refused, json!({}), None).await.unwrap_err());
    let kinds: Vec<ToolErrorKind> = errors.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [ToolErrorKind::Failed, ToolErrorKind::Timeout, ToolErrorKind::Failed]);
    for e in &errors {
        assert!(!e.to_string().contains(secret), "secret leaked: {e}");
        assert!(!format!("{e:?}").contains(secret), "secret leaked: {e:?}");
    }

    let missing_var = format!("SWITCHYARD_TEST_UNSET_{}", std::process::id());
    let unset = http_tool(
        "GET",
        format!("http://{addr}/x"),
        BTreeMap::from([("X-Key".to_string(), HeaderValue::Env { env: missing_var.clone(), prefix: String::new() })]),
    );
    let err = run(&unset, json!({}), None).await.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Failed);
    assert!(err.message.contains(&format!("environment variable {missing_var} is not set")), "{err}");
}

/// A tool that exits without reading its input, many times over, through
/// the binary (which keeps SIGPIPE's default): a write of the input into a
/// closed pipe ended the whole process (exit 141).
#[test]
fn a_command_tool_that_ignores_its_input_does_not_end_switchyard() {
    let dir = tempfile::TempDir::new().unwrap();
    let big = "x".repeat(100_000);
    std::fs::write(
        dir.path().join("tools.toml"),
        "[[tool]]\nname = \"deaf\"\ndescription = \"Answers without listening.\"\n\
         [tool.parameters]\ntype = \"object\"\n[tool.executor]\nkind = \"command\"\nargv = [\"sh\", \"-c\", \"echo 1\"]\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("switchyard.toml"), "library = [\"tools.toml\"]\n").unwrap();
    let config = dir.path().join("switchyard.toml");
    let args = serde_json::json!({ "padding": big }).to_string();
    for _ in 0..10 {
        let out =
            super::cli_helpers::run(&["--config", config.to_str().unwrap(), "tools", "call", "deaf", "--args", &args]);
        assert!(out.status.success(), "exit {:?}: {}", out.status.code(), String::from_utf8_lossy(&out.stderr));
    }
}
