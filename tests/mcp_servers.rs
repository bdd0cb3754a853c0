//! Against real MCP servers from the package registries: mcp-server-time
//! (PyPI), server-everything and server-memory (npm), installed by
//! `scripts/mcp-servers.sh install`. Their command lines come from
//! `SWITCHYARD_MCP_*` (what `scripts/mcp-servers.sh env` prints; `.ci/run`
//! exports them), else from that script when the servers are installed. On
//! a machine without them every test says so and passes without running.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};
use switchyard::config::Config;
use switchyard::engine::event::{EventKind, ToolOutcome};
use switchyard::engine::trace::read_trace;
use switchyard::tool::mcp::{McpHub, McpServerConfig, ServerEvent, ServerState};
use switchyard::tool::{ExecutorSpec, ToolErrorKind};
use tempfile::TempDir;

/// How long a test waits for a server's state to change before failing.
const EVENT_WAIT: Duration = Duration::from_secs(30);

struct Servers {
    time: Vec<String>,
    everything: Vec<String>,
    everything_js: String,
    memory: Vec<String>,
    node: String,
}

fn from_script() -> Vec<(String, String)> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/mcp-servers.sh");
    let Ok(out) = Command::new("bash").arg(script).arg("env").stderr(Stdio::null()).output() else {
        return Vec::new();
    };
    if !out.status.success() {
        return Vec::new();
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("export "))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.trim_matches('\'').to_string()))
        .collect()
}

fn servers() -> Option<Servers> {
    let script = from_script();
    let var = |name: &str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .or_else(|| script.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()))
    };
    let words = |v: String| v.split(' ').map(str::to_string).collect::<Vec<_>>();
    let found = (|| {
        Some(Servers {
            time: words(var("SWITCHYARD_MCP_TIME_CMD")?),
            everything: words(var("SWITCHYARD_MCP_EVERYTHING_CMD")?),
            everything_js: var("SWITCHYARD_MCP_EVERYTHING_JS")?,
            memory: words(var("SWITCHYARD_MCP_MEMORY_CMD")?),
            node: var("SWITCHYARD_MCP_NODE")?,
        })
    })();
    if found.is_none() {
        eprintln!("skipped: no MCP servers here (run `bash scripts/mcp-servers.sh install`; .ci/run does)");
    }
    found
}

fn toml_list(words: &[String]) -> String {
    let quoted: Vec<String> = words.iter().map(|w| format!("{w:?}")).collect();
    format!("[{}]", quoted.join(", "))
}

fn stdio_entry(name: &str, argv: &[String], extra: &str) -> String {
    format!("[[mcp]]\nname = {name:?}\ncommand = {:?}\nargs = {}\n{extra}\n", argv[0], toml_list(&argv[1..]))
}

fn write_config(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("switchyard.toml");
    std::fs::write(&path, format!("data_dir = \"data\"\n{body}")).unwrap();
    path
}

fn switchyard(config: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--config")
        .arg(config)
        .args(args)
        .env("MEMORY_FILE_PATH", config.with_file_name("memory.jsonl"))
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn three_servers(s: &Servers) -> String {
    [
        stdio_entry("time", &s.time, ""),
        stdio_entry("everything", &s.everything, ""),
        stdio_entry("memory", &s.memory, "env = [\"MEMORY_FILE_PATH\"]"),
    ]
    .join("")
}

#[test]
fn tools_list_shows_every_tool_of_every_server() {
    let Some(s) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let config = write_config(dir.path(), &three_servers(&s));
    let out = switchyard(&config, &["tools", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let by_name = |n: &str| tools.iter().find(|t| t["name"] == n).unwrap_or_else(|| panic!("no tool {n}"));
    for (tool, server) in [
        ("get_current_time", "time"),
        ("convert_time", "time"),
        ("echo", "everything"),
        ("get-sum", "everything"),
        ("create_entities", "memory"),
        ("read_graph", "memory"),
    ] {
        let t = by_name(tool);
        assert_eq!(t["executor"]["kind"], "mcp", "{t}");
        assert_eq!(t["executor"]["server"], server);
        assert_eq!(t["source"], format!("mcp:{server}"));
        assert_eq!(t["parameters"]["type"], "object", "{t}");
    }
    assert_eq!(by_name("get_current_time")["parameters"]["required"], json!(["timezone"]));
    // The sample tools are there too: MCP tools join the library, not replace it.
    assert!(tools.iter().any(|t| t["name"] == "calculator"));
    // The plain listing names the executor and the server.
    let out = switchyard(&config, &["tools", "list"]);
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l.starts_with("get_current_time") && l.contains("mcp time/get_current_time")),
        "{text}"
    );
}

#[test]
fn tools_call_reaches_each_server_and_reports_its_errors() {
    let Some(s) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let config = write_config(dir.path(), &three_servers(&s));
    let out = switchyard(&config, &["tools", "call", "get_current_time", "--args", r#"{"timezone":"UTC"}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["timezone"], "UTC");
    assert!(v["datetime"].as_str().is_some_and(|d| d.ends_with("+00:00")), "{v}");

    let out = switchyard(&config, &["tools", "call", "get-sum", "--args", r#"{"a":19,"b":23}"#]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("42"), "{}", stdout(&out));

    // The memory server keeps its graph in the file named by the
    // environment variable its entry passes on: two calls, two processes.
    let entity = r#"{"entities":[{"name":"Switchyard","entityType":"project","observations":["written in Rust"]}]}"#;
    let out = switchyard(&config, &["tools", "call", "create_entities", "--args", entity]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = switchyard(&config, &["tools", "call", "read_graph"]);
    let graph: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(graph["entities"][0]["name"], "Switchyard", "{graph}");

    // isError: true is a tool error naming the server and the tool, exit 3.
    let out = switchyard(&config, &["tools", "call", "get_current_time", "--args", r#"{"timezone":"Mars/Olympus"}"#]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let err = stderr(&out);
    assert!(
        err.contains("mcp server 'time'") && err.contains("get_current_time") && err.contains("Mars/Olympus"),
        "{err}"
    );
}

#[test]
fn a_clashing_name_gets_the_servers_name_in_front() {
    let Some(s) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let body = [stdio_entry("a", &s.everything, ""), stdio_entry("b", &s.everything, "tools = [\"echo\"]")].join("");
    let config = write_config(dir.path(), &body);
    let out = switchyard(&config, &["tools", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let tools: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let names: HashSet<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains("echo") && names.contains("b.echo"), "{names:?}");
    // The filter kept b to its one tool.
    assert!(!names.contains("b.get-sum"));
    let out = switchyard(&config, &["tools", "call", "b.echo", "--args", r#"{"message":"from b"}"#]);
    assert!(stdout(&out).contains("Echo: from b"), "{}", stderr(&out));
}

#[test]
fn a_server_that_cannot_start_is_named_with_exit_1() {
    let Some(_) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let config = write_config(dir.path(), "[[mcp]]\nname = \"ghost\"\ncommand = \"no-such-mcp-server-here\"\n");
    let out = switchyard(&config, &["tools", "list"]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(err.contains("mcp server 'ghost'") && err.contains("no-such-mcp-server-here"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    // A program that is not an MCP server at all.
    let config = write_config(
        dir.path(),
        "[[mcp]]\nname = \"liar\"\ncommand = \"python3\"\nargs = [\"-c\", \"print('hello')\"]\n",
    );
    let out = switchyard(&config, &["tools", "list"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("mcp server 'liar'"), "{}", stderr(&out));
}

/// A hub over `configs`, with a channel of its state changes.
fn hub(configs: &[McpServerConfig]) -> (McpHub, mpsc::Receiver<ServerEvent>) {
    let (hub, _) = McpHub::start(configs, &HashSet::new()).unwrap();
    let (tx, rx) = mpsc::channel();
    hub.listen(Box::new(move |e| {
        let _ = tx.send(e);
    }));
    (hub, rx)
}

fn stdio(name: &str, argv: &[String]) -> McpServerConfig {
    let toml = stdio_entry(name, argv, "");
    let c = Config::parse(&toml, Path::new("/tmp/x.toml")).unwrap();
    c.mcp.into_iter().next().unwrap()
}

/// Waits for `server` to reach `state`, returning the events seen on the way.
fn wait_for(rx: &mpsc::Receiver<ServerEvent>, server: &str, state: ServerState) -> Vec<ServerEvent> {
    let mut seen = Vec::new();
    loop {
        let e = rx.recv_timeout(EVENT_WAIT).unwrap_or_else(|_| panic!("'{server}' never became {state}: {seen:?}"));
        let done = e.server == server && e.state == state;
        seen.push(e);
        if done {
            return seen;
        }
    }
}

fn kill(pid: u32) {
    Command::new("kill").arg("-9").arg(pid.to_string()).status().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_is_restarted_and_the_next_call_works() {
    let Some(s) = servers() else { return };
    let (hub, rx) = hub(&[stdio("time", &s.time)]);
    assert_eq!(wait_for(&rx, "time", ServerState::Running).len(), 1);
    let args = json!({"timezone": "UTC"});
    let t = Duration::from_secs(20);
    assert!(hub.call("time", "get_current_time", &args, t).await.is_ok());
    let first = hub.pid("time").unwrap();
    kill(first);
    let seen = wait_for(&rx, "time", ServerState::Running);
    let restarting = &seen[0];
    assert_eq!(restarting.state, ServerState::Restarting, "{seen:?}");
    assert!(restarting.detail.as_deref().is_some_and(|d| d.contains("killed by a signal")), "{seen:?}");
    let v = hub.call("time", "get_current_time", &args, t).await.unwrap();
    assert_eq!(v["timezone"], "UTC");
    assert_ne!(hub.pid("time"), Some(first));
    let pid = hub.pid("time").unwrap();
    drop(hub);
    assert!(all_gone(&[pid]), "the restarted server outlived its hub");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_call_times_out_names_the_server_and_restarts_it() {
    let Some(s) = servers() else { return };
    let (hub, rx) = hub(&[stdio("everything", &s.everything)]);
    wait_for(&rx, "everything", ServerState::Running);
    let args = json!({"duration": 30, "steps": 3});
    let err = hub.call("everything", "trigger-long-running-operation", &args, Duration::from_millis(500)).await;
    let err = err.unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Timeout);
    assert!(err.message.contains("mcp server 'everything'") && err.message.contains("500 ms"), "{err:?}");
    let seen = wait_for(&rx, "everything", ServerState::Running);
    assert_eq!(seen[0].state, ServerState::Restarting);
    let v = hub.call("everything", "echo", &json!({"message": "back"}), Duration::from_secs(20)).await.unwrap();
    assert_eq!(v, json!("Echo: back"));
}

/// A stdio MCP server that initializes and lists one tool properly, then
/// answers its first call with a line that is not JSON-RPC.
const GARBLING_SERVER: &str = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": msg["params"]["protocolVersion"],
               "capabilities": {"tools": {}}, "serverInfo": {"name": "garbler", "version": "1"}}}
    elif msg.get("method") == "tools/list":
        out = {"jsonrpc": "2.0", "id": msg["id"], "result": {"tools": [{"name": "speak",
               "description": "Say something", "inputSchema": {"type": "object"}}]}}
    elif msg.get("method") == "tools/call":
        sys.stdout.write("}}} this is not json-rpc {{{\n"); sys.stdout.flush(); continue
    else:
        continue
    sys.stdout.write(json.dumps(out) + "\n"); sys.stdout.flush()
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_from_a_server_is_a_tool_error_and_a_restart() {
    let Some(_) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let script = dir.path().join("garbler.py");
    std::fs::write(&script, GARBLING_SERVER).unwrap();
    let mut config = stdio("garbler", &["python3".to_string(), script.display().to_string()]);
    config.max_restarts = 1;
    let (hub, rx) = hub(&[config]);
    wait_for(&rx, "garbler", ServerState::Running);
    let err = hub.call("garbler", "speak", &json!({}), Duration::from_secs(3)).await.unwrap_err();
    assert!(err.message.contains("mcp server 'garbler'"), "{err:?}");
    let seen = wait_for(&rx, "garbler", ServerState::Running);
    assert_eq!(seen[0].state, ServerState::Restarting, "{seen:?}");
}

/// A free loopback port (the listener is dropped; the server takes it).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// server-everything over Streamable HTTP, as a remote server.
fn http_everything(s: &Servers, port: u16) -> Child {
    let mut child = Command::new(&s.node)
        .arg(&s.everything_js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Wait until it accepts connections (bounded: it starts in well under a second).
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return child;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("server-everything did not listen on {port}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_server_over_http_is_called_and_goes_down_when_it_stays_away() {
    let Some(s) = servers() else { return };
    let port = free_port();
    let mut server = http_everything(&s, port);
    let mut config = McpServerConfig::remote("remote", &format!("http://127.0.0.1:{port}/mcp"));
    config.max_restarts = 1;
    config.timeout_ms = 3_000;
    let (hub, specs) = McpHub::start(std::slice::from_ref(&config), &HashSet::new()).unwrap();
    assert!(specs.iter().any(|t| t.name == "get-sum" && matches!(t.executor, ExecutorSpec::Mcp { .. })));
    let (tx, rx) = mpsc::channel();
    hub.listen(Box::new(move |e| {
        let _ = tx.send(e);
    }));
    let t = Duration::from_secs(3);
    let v = hub.call("remote", "get-sum", &json!({"a": 2, "b": 40}), t).await.unwrap();
    assert!(v.as_str().is_some_and(|s| s.contains("42")), "{v}");
    server.kill().unwrap();
    server.wait().unwrap();
    let err = hub.call("remote", "get-sum", &json!({"a": 1, "b": 1}), t).await.unwrap_err();
    assert!(err.message.contains("mcp server 'remote'"), "{err:?}");
    let seen = wait_for(&rx, "remote", ServerState::Down);
    assert!(seen.iter().any(|e| e.state == ServerState::Restarting), "{seen:?}");
    let err = hub.call("remote", "get-sum", &json!({"a": 1, "b": 1}), t).await.unwrap_err();
    assert!(err.message.contains("is down"), "{err:?}");
}

fn alive(pid: u32) -> bool {
    // A zombie has exited; only its parent's reaping is missing.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

/// Whether every process of `pids` has ended within two seconds: SIGKILL is
/// sent at once, but delivered asynchronously.
fn all_gone(pids: &[u32]) -> bool {
    (0..100).any(|_| {
        let gone = pids.iter().all(|&p| !alive(p));
        if !gone {
            std::thread::sleep(Duration::from_millis(20));
        }
        gone
    })
}

/// The processes whose parent is `pid`.
fn children(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).into_iter().flatten().flatten() {
        let text = std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
        out.extend(text.split_whitespace().filter_map(|p| p.parse::<u32>().ok()));
    }
    out
}

/// A long headless run whose tasks need the servers; returns once both
/// servers run as its children.
fn long_run(config: &Path, trace: &Path) -> (Child, Vec<u32>) {
    let tasks = config.with_file_name("tasks.toml");
    std::fs::write(&tasks, "[[task]]\nid = \"sum\"\nquery = \"What is the sum of 19 and 23?\"\n").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--config")
        .arg(config)
        .args(["run", "--strategy", "react", "--count", "100000", "--trace"])
        .arg(trace)
        .arg("--tasks")
        .arg(&tasks)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The trace grows once the servers are up and the first task runs.
    for _ in 0..400 {
        let kids = children(child.id());
        if kids.len() == 2 && std::fs::metadata(trace).is_ok_and(|m| m.len() > 10_000) {
            return (child, kids);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    panic!("the run never started both servers");
}

#[test]
fn no_server_outlives_switchyard_on_sigterm_or_sigkill() {
    let Some(s) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let body = [stdio_entry("time", &s.time, ""), stdio_entry("everything", &s.everything, "")].join("");
    let config = write_config(dir.path(), &body);
    for signal in ["-TERM", "-KILL"] {
        let trace = dir.path().join(format!("trace{signal}.jsonl"));
        let (mut child, servers) = long_run(&config, &trace);
        assert!(servers.iter().all(|&p| alive(p)));
        Command::new("kill").arg(signal).arg(child.id().to_string()).status().unwrap();
        let status = child.wait().unwrap();
        assert!(!status.success());
        assert!(all_gone(&servers), "{signal}: servers {servers:?} outlived switchyard");
        // What was recorded stays readable: every line of the trace parses.
        if signal == "-TERM" {
            let events = read_trace(&trace).unwrap();
            assert!(events.iter().any(|e| matches!(&e.kind, EventKind::ToolCall { .. })));
        }
    }
}

#[test]
fn a_simulated_run_calls_an_mcp_tool_and_traces_it() {
    let Some(s) = servers() else { return };
    let dir = TempDir::new().unwrap();
    let config = write_config(
        dir.path(),
        &[stdio_entry("time", &s.time, ""), stdio_entry("everything", &s.everything, "")].join(""),
    );
    let tasks = dir.path().join("tasks.toml");
    std::fs::write(
        &tasks,
        "[[task]]\nid = \"sum\"\nquery = \"What is the sum of 19 and 23?\"\nanswer = \"42\"\n\n\
         [[task]]\nid = \"echo\"\nquery = \"Echo back the message 'hello switchyard'.\"\nanswer = \"hello switchyard\"\n",
    )
    .unwrap();
    let trace = dir.path().join("trace.jsonl");
    for strategy in ["react", "toolnet", "rewoo"] {
        let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
            .arg("--config")
            .arg(&config)
            .args(["run", "--json", "--no-save", "--logical-clock", "--strategy", strategy, "--trace"])
            .arg(&trace)
            .arg("--tasks")
            .arg(&tasks)
            .output()
            .unwrap();
        assert!(out.status.success(), "{strategy}: {}", stderr(&out));
        let events = read_trace(&trace).unwrap();
        let EventKind::SessionStarted { tools, .. } = &events[0].kind else { panic!("no SessionStarted") };
        let sum = tools.iter().find(|t| t.name == "get-sum").unwrap();
        assert_eq!(sum.server.as_deref(), Some("everything"));
        let states: Vec<(&str, ServerState)> = events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ServerState { server, state, .. } => Some((server.as_str(), *state)),
                _ => None,
            })
            .collect();
        assert!(states.contains(&("everything", ServerState::Running)), "{states:?}");
        let mcp: HashSet<&str> = tools.iter().filter(|t| t.server.is_some()).map(|t| t.name.as_str()).collect();
        let answered: Vec<(&str, &Value)> = events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ToolResult { tool, outcome: ToolOutcome::Ok { value }, .. }
                    if mcp.contains(tool.as_str()) =>
                {
                    Some((tool.as_str(), value))
                }
                _ => None,
            })
            .collect();
        assert!(
            answered.iter().any(|(t, v)| *t == "echo" && v.to_string().contains("hello switchyard")),
            "{strategy}: {answered:?}"
        );
        let summary: Value = serde_json::from_str(&stdout(&out)).unwrap();
        if strategy == "react" {
            // To the simulated actor, get-sum and the sample library's
            // number_stats are twins it draws between (seeded by the
            // prompt): either gives the sum, from the server or in process.
            let summed = events.iter().any(|e| {
                matches!(&e.kind, EventKind::ToolResult { tool, outcome: ToolOutcome::Ok { value }, .. }
                    if (tool == "get-sum" || tool == "number_stats") && value.to_string().contains("42"))
            });
            assert!(summed, "react: no sum in {answered:?}");
            assert_eq!(summary["runs"][0]["success"], true, "react: {summary}");
        }
        assert_eq!(summary["runs"][1]["success"], true, "{strategy}: {summary}");
    }
}
