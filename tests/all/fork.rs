//! Time travel: `switchyard fork TRACE --at N`. A trace recorded against a
//! real HTTP model endpoint is forked after the endpoint is gone: the prefix
//! must come back event for event from the trace alone, and the first call
//! that reaches the (dead) endpoint must be the first one past the fork point.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::cli_helpers::{bin, lines, s};
use super::common::{call, finish};

/// An OpenAI-compatible endpoint on loopback answering chat requests from a
/// script, in turn; `stop` closes it for good.
struct Endpoint {
    port: u16,
    served: Arc<Mutex<usize>>,
    closed: Arc<AtomicBool>,
}

impl Endpoint {
    fn start(script: Vec<String>) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let served = Arc::new(Mutex::new(0usize));
        let closed = Arc::new(AtomicBool::new(false));
        let (served2, closed2) = (served.clone(), closed.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if closed2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut len = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap_or(0);
                    }
                }
                let mut body = vec![0u8; len];
                let _ = reader.read_exact(&mut body);
                let mut n = served2.lock().unwrap();
                let text = script[*n % script.len()].clone();
                *n += 1;
                let reply = json!({
                    "id": "x", "object": "chat.completion", "created": 0, "model": "m",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
                })
                .to_string();
                let _ = write!(
                    stream,
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{reply}",
                    reply.len()
                );
            }
        });
        Endpoint { port, served, closed }
    }

    fn served(&self) -> usize {
        *self.served.lock().unwrap()
    }

    /// Closed: the listener goes away after one last connection.
    fn stop(self) {
        self.closed.store(true, Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn setup(dir: &Path, port: u16) -> (String, String) {
    let cfg = dir.join("cfg.toml");
    std::fs::write(
        &cfg,
        format!(
            "[models.remote]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\nmodel = \"m\"\nmax_retries = 0\ntimeout_ms = 3000\nnative_tools = false\njson_schema = false\n[roles]\nactor = \"remote\"\nevaluator = \"remote\"\n"
        ),
    )
    .unwrap();
    let tasks = dir.join("tasks.jsonl");
    std::fs::write(
        &tasks,
        "{\"id\":\"a\",\"query\":\"Calculate 2+3.\",\"answer\":\"5\"}\n{\"id\":\"b\",\"query\":\"Calculate 7*6.\",\"answer\":\"42\"}\n",
    )
    .unwrap();
    (s(&cfg).to_string(), s(&tasks).to_string())
}

fn strip_t(e: &Value) -> Value {
    let mut e = e.clone();
    e.as_object_mut().unwrap().remove("t");
    e
}

#[test]
fn a_fork_replays_its_prefix_from_the_trace_and_goes_live_exactly_at_the_fork_point() {
    let d = tempfile::tempdir().unwrap();
    let script = vec![
        call("calculator", json!({"expression": "2+3"})),
        finish("5"),
        call("calculator", json!({"expression": "7*6"})),
        finish("42"),
    ];
    let server = Endpoint::start(script);
    let (cfg, tasks) = setup(d.path(), server.port);
    let parent = d.path().join("parent.jsonl");
    let out = bin()
        .arg("--data-dir")
        .arg(d.path().join("data"))
        .args(["--config", &cfg, "run", "--strategy", "react", "--tasks", &tasks, "--no-save", "--trace", s(&parent)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recorded = lines(&parent);
    let model_calls = recorded.iter().filter(|e| e["type"] == "ModelCall").count();
    assert_eq!(server.served(), model_calls, "every model call of the parent reached the endpoint");
    server.stop();

    // Fork points: on the first task's first ModelReply, in the middle, and
    // on the second task's ModelCall.
    let index = |ty: &str, nth: usize| recorded.iter().enumerate().filter(|(_, e)| e["type"] == ty).nth(nth).unwrap().0;
    for at in [index("ModelReply", 0), index("ToolResult", 0) + 1, index("ModelCall", 2)] {
        let child = d.path().join(format!("fork-{at}.jsonl"));
        let out = bin()
            .arg("--data-dir")
            .arg(d.path().join("data"))
            .args(["--config", &cfg, "fork", s(&parent), "--at", &at.to_string(), "--tasks", &tasks, "--json"])
            .args(["--trace", s(&child)])
            .output()
            .unwrap();
        let forked = lines(&child);
        // The prefix: the parent's own events, times included.
        assert_eq!(&forked[..at], &recorded[..at], "fork at {at}: the prefix is the parent's, event for event");
        assert_eq!(forked[at]["type"], "Forked", "fork at {at}: {}", forked[at]);
        assert_eq!(forked[at]["at"], at as u64);
        assert_eq!(forked[at]["parent"], s(&parent));
        // Past the fork point the first model call is live: the endpoint is
        // gone, so it fails, and it is the first call the prefix did not answer.
        let first_live = forked[at + 1..].iter().find(|e| e["type"] == "ModelReply" || e["type"] == "ModelFailed");
        let first_live = first_live.expect("a model call after the fork point");
        assert_eq!(first_live["type"], "ModelFailed", "fork at {at}: {first_live}");
        // The parent's first model call whose reply lies past the fork point.
        let reply_at = |call: &Value| recorded.iter().position(|e| e["type"] == "ModelReply" && &e["call"] == call);
        let expected = recorded
            .iter()
            .filter(|e| e["type"] == "ModelCall")
            .find(|c| reply_at(&c["call"]).is_none_or(|i| i >= at))
            .expect("a model call past the fork point");
        assert_eq!(
            first_live["call"], expected["call"],
            "fork at {at}: the first live call is the first one not in the prefix"
        );
        assert!(
            forked[..at].iter().all(|e| e["type"] != "ModelFailed"),
            "fork at {at}: nothing in the prefix reached the endpoint"
        );
        // Same run, same task text past the fork point: only the model is missing.
        let run_of = |e: &Value| e["run"].as_u64().unwrap();
        assert_eq!(run_of(first_live), run_of(expected));
        assert_eq!(strip_t(&forked[at - 1]), strip_t(&recorded[at - 1]));
        assert_eq!(
            out.status.code(),
            Some(2),
            "a model that failed for good fails the fork: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A headless sim session's trace, for the forks below.
fn sim_parent(dir: &Path, strategy: &str) -> std::path::PathBuf {
    let parent = dir.join(format!("{strategy}.jsonl"));
    let out = bin()
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["run", "--strategy", strategy, "--count", "3", "--seed", "5", "--logical-clock", "--budget", "30"])
        .args(["--trace", s(&parent)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    parent
}

fn fork(dir: &Path, parent: &Path, at: usize, child: &Path, extra: &[&str]) -> std::process::Output {
    bin()
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["fork", s(parent), "--at", &at.to_string(), "--logical-clock", "--trace", s(child)])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn an_unchanged_fork_of_every_strategy_goes_on_as_its_parent_did() {
    let d = tempfile::tempdir().unwrap();
    for strategy in ["react", "toolnet", "rewoo", "atc"] {
        let parent = sim_parent(d.path(), strategy);
        let recorded = lines(&parent);
        // After the first run's first tool result, and in the second run.
        let first_result = recorded.iter().position(|e| e["type"] == "ToolResult").unwrap();
        let second_run = recorded.iter().position(|e| e["type"] == "RunStarted" && e["run"] == 2).unwrap();
        for at in [first_result + 1, second_run + 3] {
            let child = d.path().join(format!("{strategy}-{at}.jsonl"));
            let out = fork(d.path(), &parent, at, &child, &[]);
            assert!(out.status.success(), "{strategy} at {at}: {}", String::from_utf8_lossy(&out.stderr));
            let forked = lines(&child);
            assert_eq!(&forked[..at], &recorded[..at], "{strategy} at {at}");
            assert_eq!(forked[at]["type"], "Forked");
            // The simulated model answers from the request alone, so with
            // nothing changed the live part is the parent's again.
            let rest: Vec<Value> = forked[at + 1..].iter().map(strip_t).collect();
            let then: Vec<Value> = recorded[at..].iter().map(strip_t).collect();
            assert_eq!(rest, then, "{strategy} at {at}: the live part differs from the parent's");
        }
    }
}

#[test]
fn changes_at_the_fork_point_take_effect_there_and_a_fork_of_a_fork_names_its_parent() {
    let d = tempfile::tempdir().unwrap();
    let parent = sim_parent(d.path(), "react");
    let recorded = lines(&parent);
    let at = recorded.iter().position(|e| e["type"] == "ToolCall").unwrap();
    let tool = recorded[at]["tool"].as_str().unwrap().to_string();
    let child = d.path().join("child.jsonl");
    let out = fork(d.path(), &parent, at, &child, &["--fault", &format!("{tool}:error:once"), "--set", "max_steps=3"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let forked = lines(&child);
    let after: Vec<&Value> = forked[at + 1..].iter().collect();
    let kinds: Vec<&str> = after.iter().take(4).map(|e| e["type"].as_str().unwrap()).collect();
    // The changes are applied at the next decision point, before the call.
    assert_eq!(&kinds[..3], ["ParamChanged", "FaultInjected", "ToolCall"], "{kinds:?}");
    let result = after.iter().find(|e| e["type"] == "ToolResult").unwrap();
    assert_eq!(result["fault"]["mode"], "error", "{result}");
    assert_eq!(result["tool"], tool.as_str());

    // A fork of the fork: its prefix holds the first fork's own Forked event.
    let grandchild = d.path().join("grandchild.jsonl");
    let out = fork(d.path(), &child, at + 3, &grandchild, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let g = lines(&grandchild);
    let origins: Vec<(&str, u64)> = g
        .iter()
        .filter(|e| e["type"] == "Forked")
        .map(|e| (e["parent"].as_str().unwrap(), e["at"].as_u64().unwrap()))
        .collect();
    assert_eq!(origins, [(s(&parent), at as u64), (s(&child), at as u64 + 3)]);
}

#[test]
fn the_answer_at_the_cursor_can_be_replaced_and_bad_forks_say_why() {
    let d = tempfile::tempdir().unwrap();
    let parent = sim_parent(d.path(), "react");
    let recorded = lines(&parent);
    let at = recorded.iter().position(|e| e["type"] == "ToolResult").unwrap();
    let child = d.path().join("edited.jsonl");
    let out = fork(d.path(), &parent, at, &child, &["--answer", "{\"answer\": \"edited by hand\"}"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let forked = lines(&child);
    assert_eq!(forked[at]["type"], "Forked");
    assert_eq!(forked[at]["edit"]["edit"], "result");
    assert_eq!(forked[at]["edit"]["before"], recorded[at]["value"]);
    let result = forked[at + 1..].iter().find(|e| e["type"] == "ToolResult").unwrap();
    assert_eq!(result["call"], recorded[at]["call"]);
    assert_eq!(result["value"], json!({"answer": "edited by hand"}));

    let err = |extra: &[&str], at: usize| {
        let out = fork(d.path(), &parent, at, &d.path().join("bad.jsonl"), extra);
        assert!(!out.status.success());
        String::from_utf8_lossy(&out.stderr).to_string()
    };
    let started = recorded.iter().position(|e| e["type"] == "RunStarted").unwrap();
    let e = err(&["--answer", "x"], started);
    assert!(e.contains("RunStarted") && e.contains("only the answer at the fork point"), "{e}");
    let e = err(&[], recorded.len() + 5);
    assert!(e.contains(&format!("the trace has {} events", recorded.len())), "{e}");
    let e = err(&[], recorded.len());
    assert!(e.contains("the session had ended"), "{e}");
    let e = err(&["--fault", "calculator:error@2"], 5);
    assert!(e.contains("no @TASK"), "{e}");
    // A trace recorded elsewhere: its tools are not this library's.
    let alien = d.path().join("alien.jsonl");
    let text = std::fs::read_to_string(&parent).unwrap().replacen("\"calculator\"", "\"abacus\"", 1);
    std::fs::write(&alien, text).unwrap();
    let out =
        bin().arg("--data-dir").arg(d.path().join("data")).args(["fork", s(&alien), "--at", "5"]).output().unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && e.contains("'abacus' is not in this config's library"), "{e}");
}

/// `--count` past the task file's length: the trace opens with one round of
/// the tasks (schema 3), the positions past it run the round again, and a
/// fork inside a later round goes on as the parent did.
#[test]
fn a_wrapping_task_list_is_traced_as_one_round_and_forks_past_it() {
    let d = tempfile::tempdir().unwrap();
    let tasks = d.path().join("two.toml");
    std::fs::write(
        &tasks,
        "[[task]]\nid = \"add\"\nquery = \"Calculate 2+2.\"\nanswer = \"4\"\n\n\
         [[task]]\nid = \"capital\"\nquery = \"What is the capital of 'France'?\"\nanswer = \"Paris\"\n",
    )
    .unwrap();
    let parent = d.path().join("parent.jsonl");
    let out = bin()
        .arg("--data-dir")
        .arg(d.path().join("data"))
        .args(["run", "--strategy", "toolnet", "--tasks", s(&tasks), "--count", "5", "--seed", "5", "--logical-clock"])
        .args(["--no-save", "--trace", s(&parent)])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let recorded = lines(&parent);
    let first = &recorded[0];
    assert_eq!((first["v"].as_u64(), first["schema"].as_u64()), (Some(3), Some(3)));
    assert_eq!(first["tasks"], 5);
    let listed: Vec<&str> = first["task_list"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(listed, ["add", "capital"], "one round, not five positions");
    let ran: Vec<&str> =
        recorded.iter().filter(|e| e["type"] == "RunStarted").map(|e| e["task_id"].as_str().unwrap()).collect();
    assert_eq!(ran, ["add", "capital", "add", "capital", "add"]);

    let fourth = recorded.iter().position(|e| e["type"] == "RunStarted" && e["index"] == 4).unwrap();
    let at = fourth + 2;
    let child = d.path().join("child.jsonl");
    let out = fork(d.path(), &parent, at, &child, &["--tasks", s(&tasks)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let forked = lines(&child);
    assert_eq!(&forked[..at], &recorded[..at]);
    let rest: Vec<Value> = forked[at + 1..].iter().map(strip_t).collect();
    let then: Vec<Value> = recorded[at..].iter().map(strip_t).collect();
    assert_eq!(rest, then, "the live part of the fork differs from the parent's");
}
