//! Switchyard's model gateway driven by clients nobody here wrote: the
//! official `openai` and `anthropic` Python SDKs, LangGraph's prebuilt ReAct
//! agent and a `Send` fan-out over `langchain-openai`, and the OpenAI Agents
//! SDK (one agent, an agent as a tool, a handoff), each started by
//! `switchyard run --agent -- …` against the simulated model. They are
//! installed pinned by `scripts/agent-clients.sh install`; their Python comes
//! from `SWITCHYARD_AGENT_PYTHON` (what `scripts/agent-clients.sh env`
//! prints; `.ci/run` exports it), else from that script. On a machine
//! without them every test says so and passes without running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use switchyard::engine::event::{EventKind, ThreadHow};
use switchyard::engine::trace::read_trace;
use switchyard::model::Role;
use switchyard::model::wire::Dialect;
use tempfile::TempDir;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's python, or why there is none.
fn python() -> Result<PathBuf, String> {
    if let Ok(p) = std::env::var("SWITCHYARD_AGENT_PYTHON") {
        return Ok(PathBuf::from(p));
    }
    let out = Command::new("bash")
        .arg(repo().join("scripts/agent-clients.sh"))
        .arg("env")
        .stderr(Stdio::null())
        .output()
        .map_err(|e| format!("could not run scripts/agent-clients.sh: {e}"))?;
    if !out.status.success() {
        return Err("the agent clients are not installed (bash scripts/agent-clients.sh install)".into());
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("export SWITCHYARD_AGENT_PYTHON="))
        .map(|p| PathBuf::from(p.trim().trim_matches('\'')))
        .ok_or_else(|| "scripts/agent-clients.sh env printed no SWITCHYARD_AGENT_PYTHON".into())
}

macro_rules! python_or_skip {
    () => {
        match python() {
            Ok(p) => p,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        }
    };
}

struct Ran {
    out: Output,
    summary: Value,
    events: Vec<switchyard::engine::Event>,
    _dir: TempDir,
}

/// `switchyard run --agent -- PYTHON tests/agents/SCRIPT ARGS…`, its JSON
/// summary and its trace.
fn run_agent(python: &Path, script: &str, args: &[&str]) -> Ran {
    run_agent_with(python, None, script, args)
}

/// `run_agent` with a config of `[models]` and `[roles]` (TOML).
fn run_agent_with(python: &Path, config: Option<&str>, script: &str, args: &[&str]) -> Ran {
    run_agent_full(python, config, &[], script, args)
}

/// `run_agent_with`, with more of `switchyard run`'s flags.
fn run_agent_full(python: &Path, config: Option<&str>, flags: &[&str], script: &str, args: &[&str]) -> Ran {
    run_agent_env(python, config, flags, &[], script, args)
}

/// `run_agent_full`, with variables for the agent's environment.
fn run_agent_env(
    python: &Path,
    config: Option<&str>,
    flags: &[&str],
    vars: &[(&str, &str)],
    script: &str,
    args: &[&str],
) -> Ran {
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchyard"));
    if let Some(text) = config {
        let path = dir.path().join("switchyard.toml");
        std::fs::write(&path, text).unwrap();
        cmd.arg("--config").arg(path);
    }
    cmd.arg("--data-dir").arg(dir.path()).args(["run", "--json", "--trace"]).arg(&trace).args(flags);
    cmd.arg("--agent").arg("--");
    cmd.arg(python).arg(repo().join("tests/agents").join(script)).args(args);
    cmd.envs(vars.iter().copied());
    let out = cmd.output().unwrap();
    let summary = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    let events = read_trace(&trace).unwrap_or_default();
    Ran { out, summary, events, _dir: dir }
}

impl Ran {
    fn answer(&self) -> &str {
        self.summary.pointer("/runs/0/answer").and_then(Value::as_str).unwrap_or_default()
    }

    fn dialects(&self) -> Vec<Dialect> {
        self.events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ModelCall { role: Role::Agent, wire: Some(w), .. } => Some(w.dialect),
                _ => None,
            })
            .collect()
    }

    fn explain(&self) -> String {
        format!(
            "exit {:?}\nstdout: {}\nstderr: {}",
            self.out.status.code(),
            String::from_utf8_lossy(&self.out.stdout),
            String::from_utf8_lossy(&self.out.stderr)
        )
    }

    /// The tool loop ran: a call asked for `add`, its result came back, and
    /// the agent answered from it; every call in `dialect`.
    fn assert_tool_loop(&self, dialect: Dialect) {
        assert!(self.out.status.success(), "{}", self.explain());
        assert_eq!(self.answer(), "The answer is 5.", "{}", self.explain());
        let dialects = self.dialects();
        assert_eq!(dialects.len(), 2, "two model calls: the tool call, then the answer\n{}", self.explain());
        assert!(dialects.iter().all(|d| *d == dialect), "{dialects:?}");
        let exited = self.events.iter().any(|e| matches!(e.kind, EventKind::AgentExited { code: Some(0), .. }));
        assert!(exited, "the agent's exit is recorded");
    }
}

/// The most model calls of the agent sent and not yet answered at once,
/// in the trace's order: more than one, and the gateway served them
/// concurrently.
fn most_in_flight(events: &[switchyard::engine::Event]) -> i32 {
    let (mut out, mut most) = (0i32, 0i32);
    for e in events {
        match &e.kind {
            EventKind::ModelCall { role: Role::Agent, .. } => {
                out += 1;
                most = most.max(out);
            }
            EventKind::ModelReply { role: Role::Agent, .. } | EventKind::ModelFailed { role: Role::Agent, .. } => {
                out -= 1
            }
            _ => {}
        }
    }
    most
}

/// LangGraph's `Send`: three branches, each its own conversation (a
/// thread), their model calls in flight at once.
#[test]
fn langgraph_s_send_fans_out_concurrently_in_threads() {
    let py = python_or_skip!();
    let flags = ["--fault", "model:agent:slow=400"];
    let questions = ["first question", "second question", "third question"];
    let ran = run_agent_full(&py, None, &flags, "langgraph_fanout.py", &questions);
    assert!(ran.out.status.success(), "{}", ran.explain());
    assert_eq!(most_in_flight(&ran.events), 3, "the branches' calls went one at a time\n{}", ran.explain());
    let named: Vec<String> = threads(&ran.events).into_iter().map(|t| t.0).collect();
    assert_eq!(named, ["t1", "t2", "t3"], "{}", ran.explain());
}

/// The `anthropic` SDK's AsyncAnthropic with two calls at once: both in
/// flight together through the Messages endpoint, two threads.
#[test]
fn the_anthropic_sdk_s_two_concurrent_calls() {
    let py = python_or_skip!();
    let flags = ["--fault", "model:agent:slow=400"];
    let ran = run_agent_full(&py, None, &flags, "anthropic_fanout.py", &["hello one", "hello two"]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    assert_eq!(ran.dialects(), [Dialect::Anthropic, Dialect::Anthropic]);
    assert_eq!(most_in_flight(&ran.events), 2, "{}", ran.explain());
    assert_eq!(threads(&ran.events).len(), 2, "{}", ran.explain());
}

/// A plain script fanning out over AsyncOpenAI, with functions of its
/// own: its conversations' model calls are in flight at once (the trace
/// sends a call before an earlier one came back: the gateway served them
/// concurrently), and its functions are calls of the session, the fault
/// on `word_count` rewriting its result before the model read it.
#[test]
fn a_script_that_fans_out_with_functions_of_its_own() {
    let py = python_or_skip!();
    let flags = ["--fault", "model:agent:slow=400", "--fault", "word_count:error"];
    let ran =
        run_agent_full(&py, None, &flags, "openai_fanout.py", &["--n", "3", "Count the words in 'a b c' please."]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    assert!(most_in_flight(&ran.events) >= 2, "the conversations' calls were served one at a time\n{}", ran.explain());
    let own: Vec<(String, Option<switchyard::tool::fault::FaultMode>)> = ran
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, fault, source: Some(switchyard::tool::CallSource::Agent), .. } => {
                Some((tool.clone(), *fault))
            }
            _ => None,
        })
        .collect();
    assert!(!own.is_empty(), "the script's own functions are calls of the session\n{}", ran.explain());
    for (tool, fault) in &own {
        assert!(tool != "word_count" || *fault == Some(switchyard::tool::fault::FaultMode::Error), "{own:?}");
    }
    assert_eq!(
        ran.summary.pointer("/runs/0/tool_calls").and_then(Value::as_u64),
        Some(own.len() as u64),
        "{}",
        ran.summary
    );
}

/// The threads of a run: (name, parent's name, how it began).
fn threads(events: &[switchyard::engine::Event]) -> Vec<(String, Option<String>, ThreadHow)> {
    let mut names: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for e in events {
        if let EventKind::ThreadOpened { name, parent, how, .. } = &e.kind {
            out.push((name.clone(), parent.map(|p| names[p as usize].clone()), how.clone()));
            names.push(name.clone());
        }
    }
    out
}

/// The Agents SDK's teams: an agent used as a tool runs its conversation
/// as a sub-agent thread under the one whose tool call waits on it, its
/// own tool call (`add`) in that thread; a handoff is a thread of the
/// agent handed to, under the one that handed off; `X-Switchyard-Agent`
/// names each thread after its agent.
#[test]
fn the_openai_agents_sdk_s_teams_are_threads() {
    let py = python_or_skip!();
    let task = "Ask the calculator: what is 2 + 3?";
    let ran = run_agent(&py, "openai_agents_team.py", &["--as-tool", task]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    let sub = ThreadHow::SubAgent { tool: "ask_calculator".into() };
    assert_eq!(
        threads(&ran.events),
        [("t1".into(), None, ThreadHow::Conversation), ("ask_calculator".into(), Some("t1".into()), sub)],
        "{}",
        ran.explain()
    );
    let add_thread = ran.events.iter().find_map(|e| match &e.kind {
        EventKind::LaneOpened { name, thread, model: false, .. } if name == "add" => Some(*thread),
        _ => None,
    });
    assert_eq!(add_thread, Some(Some(1)), "the calculator's add is a call of its own thread");
    assert!(ran.answer().contains('5'), "{}", ran.explain());

    let ran = run_agent(&py, "openai_agents_team.py", &["--handoff", task]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    assert_eq!(
        threads(&ran.events),
        [("t1".into(), None, ThreadHow::Conversation), ("calculator".into(), Some("t1".into()), ThreadHow::Handoff)],
        "{}",
        ran.explain()
    );

    let ran = run_agent(&py, "openai_agents_team.py", &["--as-tool", "--agent-header", task]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    let named: Vec<String> = threads(&ran.events).into_iter().map(|t| t.0).collect();
    assert_eq!(named, ["orchestrator", "calculator"], "{}", ran.explain());
}

/// The Agents SDK's parallel tool calls: the orchestrator asks its
/// calculator two things in one reply, the SDK runs both conversations at
/// once (their model calls in flight together), each a sub-agent thread
/// under the orchestrator's, and its answer holds both sums.
#[test]
fn the_openai_agents_sdk_s_parallel_tool_calls_run_its_sub_agents_at_once() {
    let py = python_or_skip!();
    let flags = ["--fault", "model:agent:slow=400"];
    let task = "Ask the calculator: what is 2 + 3? Ask the calculator: what is 4 + 5?";
    let ran = run_agent_full(&py, None, &flags, "openai_agents_team.py", &["--as-tool", task]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    let asked: Vec<&str> = ran
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::LaneOpened { name, model: false, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(asked, ["ask_calculator", "ask_calculator", "add", "add"], "{}", ran.explain());
    assert_eq!(most_in_flight(&ran.events), 2, "the calculator's conversations ran one at a time\n{}", ran.explain());
    let sub = || ThreadHow::SubAgent { tool: "ask_calculator".into() };
    assert_eq!(
        threads(&ran.events),
        [
            ("t1".into(), None, ThreadHow::Conversation),
            ("ask_calculator".into(), Some("t1".into()), sub()),
            ("ask_calculator#2".into(), Some("t1".into()), sub()),
        ],
        "{}",
        ran.explain()
    );
    let answer = ran.answer();
    assert!(answer.contains('5') && answer.contains('9'), "{}", ran.explain());
}

#[test]
fn openai_chat_completions_with_a_tool_loop() {
    let py = python_or_skip!();
    run_agent(&py, "openai_chat.py", &["--tools", "What is 2 + 3?"]).assert_tool_loop(Dialect::Chat);
}

#[test]
fn openai_chat_completions_streamed() {
    let py = python_or_skip!();
    run_agent(&py, "openai_chat.py", &["--stream", "--tools", "What is 2 + 3?"]).assert_tool_loop(Dialect::Chat);
}

#[test]
fn openai_responses_with_a_tool_loop_streamed_and_not() {
    let py = python_or_skip!();
    run_agent(&py, "openai_responses.py", &["--tools", "What is 2 + 3?"]).assert_tool_loop(Dialect::Responses);
    run_agent(&py, "openai_responses.py", &["--stream", "--tools", "What is 2 + 3?"])
        .assert_tool_loop(Dialect::Responses);
}

#[test]
fn anthropic_messages_with_a_tool_loop_streamed_and_not() {
    let py = python_or_skip!();
    run_agent(&py, "anthropic_messages.py", &["--tools", "What is 2 + 3?"]).assert_tool_loop(Dialect::Anthropic);
    run_agent(&py, "anthropic_messages.py", &["--stream", "--tools", "What is 2 + 3?"])
        .assert_tool_loop(Dialect::Anthropic);
}

#[test]
fn a_langgraph_react_agent() {
    let py = python_or_skip!();
    run_agent(&py, "langgraph_agent.py", &["What is 2 + 3?"]).assert_tool_loop(Dialect::Chat);
}

#[test]
fn the_openai_agents_sdk() {
    let py = python_or_skip!();
    run_agent(&py, "openai_agents_sdk.py", &["What is 2 + 3?"]).assert_tool_loop(Dialect::Chat);
}

/// The same runs seen twice: by the model gateway the agent calls, and
/// from the spans its OpenTelemetry instrumentation exports to `otlp serve`.
/// The two traces agree on the tasks, the model calls, the tool calls with
/// their arguments and results, and the answers.
#[test]
fn the_openai_agents_sdk_s_spans_received_over_otlp() {
    use std::io::BufRead;
    let py = python_or_skip!();
    let dir = TempDir::new().unwrap();
    let received = dir.path().join("otlp.jsonl");
    let mut server = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["otlp", "serve", "--listen", "0", "--trace"])
        .arg(&received)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(server.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let url = first.split_whitespace().find(|w| w.starts_with("http://")).unwrap().trim_end_matches(',').to_string();
    let endpoint = url.trim_end_matches("/v1/traces").to_string();
    let tasks = ["What is 2 + 3?", "What is 10 + 32?"];
    let ran =
        run_agent_env(&py, None, &[], &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)], "openai_agents_otel.py", &tasks);
    assert!(ran.out.status.success(), "{}", ran.explain());
    // The receiver writes what it holds and ends on SIGTERM.
    assert!(Command::new("kill").args(["-TERM", &server.id().to_string()]).status().unwrap().success());
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(server.wait().unwrap().success(), "{rest:?}");
    let said = rest.iter().find(|l| l.starts_with("received ")).expect("the counts are said");
    assert!(said.contains("2 runs, 4 model calls, 2 tool calls"), "{said}");

    let otlp = read_trace(&received).unwrap();
    let runs: Vec<(String, Option<String>)> = otlp
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::RunStarted { task, .. } => Some((task.clone(), None)),
            EventKind::RunFinished { answer, .. } => Some((String::new(), answer.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(runs.len(), 4, "{runs:?}");
    assert_eq!(runs[0].0, tasks[0]);
    assert_eq!(runs[2].0, tasks[1]);
    assert_eq!(runs[1].1.as_deref(), Some("The answer is 5."));
    assert_eq!(runs[3].1.as_deref(), Some("The answer is 42."));
    // Each reply that asked for a tool names it, as the gateway saw it.
    let asked = |events: &[switchyard::engine::Event]| -> Vec<(String, Value)> {
        events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::ModelReply { tool_calls, .. } => Some(tool_calls.clone()),
                _ => None,
            })
            .flatten()
            .map(|c| (c.name, c.arguments))
            .collect()
    };
    let want = vec![
        ("add".to_string(), serde_json::json!({"a": 2, "b": 3})),
        ("add".to_string(), serde_json::json!({"a": 10, "b": 32})),
    ];
    assert_eq!(asked(&otlp), want);
    assert_eq!(asked(&ran.events), want, "the gateway's trace");
    let results: Vec<Value> = otlp
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { outcome: switchyard::engine::event::ToolOutcome::Ok { value }, .. } => {
                Some(value.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(results, vec![serde_json::json!(5), serde_json::json!(42)]);
    let model_calls = |events: &[switchyard::engine::Event]| {
        events.iter().filter(|e| matches!(e.kind, EventKind::ModelCall { .. })).count()
    };
    assert_eq!(model_calls(&otlp), model_calls(&ran.events));
    // The SDK's own spans (its turns, the agent inside the workflow) are kept.
    assert!(
        otlp.iter()
            .any(|e| matches!(&e.kind, EventKind::SpanReceived { name, .. } if name == "invoke_agent calculator"))
    );
}

#[test]
fn the_models_list() {
    let py = python_or_skip!();
    let ran = run_agent(&py, "openai_models.py", &[]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    assert!(ran.answer().split(' ').any(|m| m == "sim"), "{}", ran.explain());
}

#[test]
fn a_wrong_key_is_refused_in_the_sdk_s_own_error() {
    let py = python_or_skip!();
    // The agent overrides the key it was given: the SDK raises its own
    // AuthenticationError with the gateway's message.
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let script = "import os, subprocess, sys; os.environ['OPENAI_API_KEY'] = 'sk-not-the-token-1234'; \
        sys.exit(subprocess.call([sys.executable] + sys.argv[1:]))";
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--trace"])
        .arg(&trace)
        .args(["--agent", "--"])
        .arg(&py)
        .args(["-c", script])
        .arg(repo().join("tests/agents/openai_chat.py"))
        .arg("hi")
        .output()
        .unwrap();
    let text = std::fs::read_to_string(&trace).unwrap();
    assert!(text.contains("AuthenticationError"), "the agent's stderr tail names the SDK's error: {text}");
    assert!(text.contains("\"code\":1"), "{text}");
    assert!(!out.status.success() || text.contains("401"), "{text}");
}

/// The local Qwen server as the agent role's model (Chat Completions), or
/// why there is none.
fn local_model() -> Result<String, String> {
    local_model_with("")
}

/// `local_model`'s config with more lines in the model's table.
fn local_model_with(more: &str) -> Result<String, String> {
    let url = std::env::var("SWITCHYARD_LOCAL_MODEL_URL")
        .map_err(|_| "SWITCHYARD_LOCAL_MODEL_URL is not set (scripts/local-model.sh start)".to_string())?;
    let name = std::env::var("SWITCHYARD_LOCAL_MODEL_NAME").unwrap_or_else(|_| "qwen2.5-coder-0.5b-instruct".into());
    // A reply the agent sets no limit for is cut at 256 tokens: four turns
    // of a 0.5B model rambling to the default 1,024 fill its 4,096 tokens
    // of context before the agent can answer.
    Ok(format!(
        "[models.qwen]\nkind = \"openai\"\nbase_url = \"{url}\"\nmodel = \"{name}\"\ntimeout_ms = 180000\n\
         max_retries = 1\nmax_tokens = 256\n{more}\n[roles]\nagent = \"qwen\"\n"
    ))
}

/// The Anthropic SDK's requests translated to the local model's Chat
/// Completions and its replies back, streamed from the model: every
/// request is served (a small model need not get the sum right).
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn the_anthropic_sdk_through_translation_to_the_local_model() {
    let py = python_or_skip!();
    let config = local_model().unwrap();
    // The local server answers one request at a time and the other tests
    // of this binary share it: a request may wait its turn longer than the
    // SDK's 60 s, which it would take for a dead server and send again.
    let waits = ["--timeout", "600", "--stream"];
    for prompt in [&["Say hello in one word."][..], &["--tools", "What is 2 + 3?"][..]] {
        let args: Vec<&str> = waits.iter().chain(prompt).copied().collect();
        let ran = run_agent_with(&py, Some(&config), "anthropic_messages.py", &args);
        let calls = ran.dialects();
        assert!(!calls.is_empty() && calls.iter().all(|d| *d == Dialect::Anthropic), "{calls:?}\n{}", ran.explain());
        // A reply that is only a tool call tells no text, so it has no
        // first token to time; every reply with text must have one.
        let unstreamed = ran
            .events
            .iter()
            .filter(|e| {
                matches!(&e.kind, EventKind::ModelReply { role: Role::Agent, first_token_ms: None, text, .. }
                    if !text.trim().is_empty())
            })
            .count();
        assert_eq!(unstreamed, 0, "every reply with text streamed from the model\n{}", ran.explain());
        // With tools a 0.5B model may loop until one of its calls fails
        // (seen in CI after 4 rounds): that is the model's, not the
        // translation's. The plain question must go through whole.
        if !args.contains(&"--tools") {
            let replies = ran.events.iter().filter(|e| matches!(e.kind, EventKind::ModelReply { .. })).count();
            assert_eq!(replies, calls.len(), "every call answered\n{}", ran.explain());
            let failed = ran.events.iter().any(|e| matches!(e.kind, EventKind::ModelFailed { .. }));
            assert!(!failed, "{}", ran.explain());
            assert!(ran.out.status.success(), "{}", ran.explain());
            assert!(!ran.answer().trim().is_empty(), "{}", ran.explain());
        }
    }
}

/// The agents that fan out, with the local model as their model, bounded
/// as `scripts/local-model.sh` prints (one request at a time, tools as
/// text): LangGraph's `Send`, the `anthropic` SDK's two calls at once, a
/// plain script with functions of its own and the Agents SDK's team. The
/// gateway takes each agent's calls at once (the upstream's bound holds
/// them, not the agent), every call is answered, every one is in a thread
/// and every function the model asked for is a call of the session with
/// its result (a 0.5B model need not choose well).
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn the_agents_that_fan_out_on_the_local_model() {
    let py = python_or_skip!();
    let config = local_model_with("max_in_flight = 1\nnative_tools = false\n").unwrap();
    // The other tests of this binary share the server (see above).
    let wait = ["--timeout", "600"];
    let runs: [(&str, Vec<&str>, i32); 4] = [
        ("langgraph_fanout.py", vec!["Say yes.", "Say no.", "Say hi."], 3),
        ("anthropic_fanout.py", vec!["Say one.", "Say two."], 2),
        ("openai_fanout.py", vec!["--n", "2", "Count the words in 'a b c' please."], 2),
        ("openai_agents_team.py", vec!["--as-tool", "Ask the calculator: what is 2 + 3?"], 1),
    ];
    for (script, args, at_once) in runs {
        let args: Vec<&str> = wait.iter().copied().chain(args).collect();
        let ran = run_agent_with(&py, Some(&config), script, &args);
        assert!(!ran.dialects().is_empty(), "{script}\n{}", ran.explain());
        assert!(most_in_flight(&ran.events) >= at_once, "{script}\n{}", ran.explain());
        let failed = ran.events.iter().any(|e| matches!(e.kind, EventKind::ModelFailed { .. }));
        assert!(!failed, "{script}\n{}", ran.explain());
        let unthreaded =
            ran.events.iter().any(|e| matches!(e.kind, EventKind::LaneOpened { model: true, thread: None, .. }));
        assert!(!unthreaded, "{script}: every model call is in a thread\n{}", ran.explain());
        let calls = ran.events.iter().filter(|e| matches!(e.kind, EventKind::ToolCall { .. })).count();
        let results = ran.events.iter().filter(|e| matches!(e.kind, EventKind::ToolResult { .. })).count();
        assert_eq!(calls, results, "{script}: every function called was answered\n{}", ran.explain());
        if script != "openai_agents_team.py" {
            assert!(ran.out.status.success(), "{script}\n{}", ran.explain());
            assert_eq!(threads(&ran.events).len(), at_once as usize, "{script}\n{}", ran.explain());
        }
    }
}

/// `switchyard fork` of an agent's session: the agent is started again, its
/// first calls answered from the trace, and the call at the fork point
/// given the user's answer; an agent that asks otherwise than it recorded
/// stops the fork at the first field that differs.
#[test]
fn a_fork_starts_the_agent_again_and_answers_its_first_calls_from_the_trace() {
    let py = python_or_skip!();
    let parent = run_agent(&py, "openai_chat.py", &["--tools", "What is 2 + 3?"]);
    parent.assert_tool_loop(Dialect::Chat);
    let trace = parent._dir.path().join("trace.jsonl");
    // Replaying this many events puts the cursor on the second reply.
    let second_reply = parent
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.kind, EventKind::ModelReply { .. }))
        .nth(1)
        .map(|(i, _)| i)
        .unwrap();
    let fork = |env: &[(&str, &str)], out: &Path| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_switchyard"));
        cmd.arg("--data-dir").arg(parent._dir.path()).arg("fork").arg(&trace);
        cmd.args(["--at", &second_reply.to_string(), "--answer", "The answer is 6.", "--json", "--trace"]).arg(out);
        cmd.envs(env.iter().copied()).output().unwrap()
    };
    let out_path = parent._dir.path().join("fork.jsonl");
    let out = fork(&[], &out_path);
    let explain = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{explain}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    // The first call came from the trace (its tool call, 2 + 3), the second
    // is the user's answer, which the agent printed as its own.
    assert_eq!(summary.pointer("/runs/0/answer"), Some(&Value::from("The answer is 6.")), "{explain}");
    let forked = read_trace(&out_path).unwrap();
    let pids: Vec<u32> = [&parent.events, &forked]
        .iter()
        .filter_map(|evs| {
            evs.iter().find_map(|e| match e.kind {
                EventKind::AgentStarted { pid, .. } => Some(pid),
                _ => None,
            })
        })
        .collect();
    assert!(pids.len() == 2 && pids[0] != pids[1], "the agent ran again as a process of its own: {pids:?}");

    let out = fork(&[("AGENT_MODEL", "another-model")], &parent._dir.path().join("diverged.jsonl"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains(".wire.body.model: \"gpt-4o-mini\" recorded, \"another-model\" replayed"), "{err}");
    assert!(err.contains("The agent sent another request than the one recorded"), "{err}");
}

/// `switchyard resume` of an agent's session killed mid-run (its trace cut
/// after the first reply, as `kill -9` leaves it): the agent is started
/// again, its first call answered from the trace, and the session ends as
/// the uninterrupted one did.
#[test]
fn resume_starts_the_agent_again_and_ends_as_the_session_would_have() {
    let py = python_or_skip!();
    let parent = run_agent(&py, "openai_chat.py", &["--tools", "What is 2 + 3?"]);
    parent.assert_tool_loop(Dialect::Chat);
    let dir = parent._dir.path();
    let first_reply = parent.events.iter().position(|e| matches!(e.kind, EventKind::ModelReply { .. })).unwrap() + 1;
    let whole = std::fs::read_to_string(dir.join("trace.jsonl")).unwrap();
    let cut: String = whole.lines().take(first_reply).map(|l| format!("{l}\n")).collect();
    let killed = dir.join("killed.jsonl");
    std::fs::write(&killed, cut).unwrap();
    let resumed = dir.join("resumed.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir)
        .arg("resume")
        .arg(&killed)
        .args(["--headless", "--json", "--trace"])
        .arg(&resumed)
        .output()
        .unwrap();
    let explain = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{explain}");
    let summary: Value = serde_json::from_slice(&out.stdout).unwrap();
    let answer = |evs: &[switchyard::engine::Event]| {
        evs.iter().find_map(|e| match &e.kind {
            EventKind::RunFinished { answer, .. } => answer.clone(),
            _ => None,
        })
    };
    let events = read_trace(&resumed).unwrap();
    assert_eq!(answer(&events), answer(&parent.events), "{explain}");
    assert_eq!(summary.pointer("/runs/0/answer").and_then(Value::as_str), answer(&parent.events).as_deref());
    assert!(
        events.iter().any(|e| matches!(&e.kind, EventKind::Forked { origin, .. } if origin.resumed
            && origin.at as usize == first_reply)),
        "{explain}"
    );
    let replies = |evs: &[switchyard::engine::Event]| {
        evs.iter().filter(|e| matches!(e.kind, EventKind::ModelReply { .. })).count()
    };
    assert_eq!(replies(&events), replies(&parent.events), "nothing asked twice, nothing left out");
}

/// The JSON lines an MCP client script printed.
fn json_lines(out: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&out.stdout).lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The line the client printed for its call of `tool` (the `nth`).
fn call_line<'a>(lines: &'a [Value], tool: &str, nth: usize) -> &'a Value {
    lines.iter().filter(|l| l["call"] == tool).nth(nth).unwrap_or_else(|| panic!("no call of {tool}: {lines:?}"))
}

/// The MCP Python SDK's client starts `switchyard mcp serve` over stdio:
/// every library tool listed (two pages), a call answered, structured
/// content where the tool has an output schema, an unknown tool an
/// invalid-params error naming it, arguments that break the schema a tool
/// error the model can read; the calls that ran are the session's, traced.
#[test]
fn the_mcp_sdk_over_stdio_through_mcp_serve() {
    let py = python_or_skip!();
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    // The sample tools and 120 synthesized quotes: two pages of tools/list.
    let quotes: String = (0..120)
        .map(|i| {
            format!(
                "[[tool]]\nname = \"quote_{i:03}\"\ndescription = \"A stock quote\"\n[tool.executor]\n\
                 kind = \"synthesized\"\n[tool.response]\ntype = \"object\"\nrequired = [\"price\"]\n\
                 [tool.response.properties.price]\ntype = \"number\"\n\n"
            )
        })
        .collect();
    std::fs::write(dir.path().join("quotes.toml"), quotes).unwrap();
    let config = dir.path().join("switchyard.toml");
    let samples = repo().join("sample-tools");
    std::fs::write(&config, format!("library = [{:?}, \"quotes.toml\"]\n", samples.display().to_string())).unwrap();
    let out = Command::new(&py)
        .arg(repo().join("tests/agents/mcp_client.py"))
        .args(["--stdio", "--call", "calculator", r#"{"expression": "2+3"}"#, "--call", "calculater", "{}"])
        .args(["--call", "calculator", r#"{"expr": 5}"#, "--call", "quote_119", "{}", "--"])
        .arg(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.path())
        .args(["mcp", "serve", "--trace"])
        .arg(&trace)
        .output()
        .unwrap();
    let explain =
        format!("stdout: {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{explain}");
    let lines = json_lines(&out);
    let listed = lines.iter().find(|l| l["tools"].is_array()).expect(&explain);
    let tools = listed["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 137, "every tool of the library, across pages: {explain}");
    assert_eq!(listed["pages"], 2, "{explain}");
    assert!(tools.iter().any(|t| t == "calculator") && tools.iter().any(|t| t == "quote_119"), "{explain}");
    let quote = call_line(&lines, "quote_119", 0);
    assert!(quote["structured"]["price"].is_number(), "an output schema gives structured content: {explain}");
    let ok = call_line(&lines, "calculator", 0);
    assert_eq!(ok["is_error"], false, "{explain}");
    assert!(ok["text"].as_str().unwrap().contains('5'), "{explain}");
    let unknown = call_line(&lines, "calculater", 0);
    assert_eq!(unknown["code"], -32602, "{explain}");
    assert!(unknown["error"].as_str().unwrap().contains("did you mean calculator"), "{explain}");
    let bad = call_line(&lines, "calculator", 1);
    assert_eq!(bad["is_error"], true, "{explain}");
    assert!(bad["text"].as_str().unwrap().starts_with("bad_arguments:"), "{explain}");
    let events = read_trace(&trace).unwrap();
    let calls =
        events.iter().filter(|e| matches!(&e.kind, EventKind::ToolCall { tool, .. } if tool == "calculator")).count();
    assert_eq!(calls, 2, "both calls of a known tool are the session's");
    assert!(
        events.iter().any(|e| matches!(e.kind, EventKind::SessionFinished { .. })),
        "the session ended with the client"
    );
}

/// An agent started with `--agent` finds the gateway's MCP endpoint and
/// token in its environment (SWITCHYARD_MCP_URL, SWITCHYARD_MCP_TOKEN); its
/// calls meet the session's faults, and the path is the run's.
#[test]
fn the_mcp_sdk_over_http_through_the_gateway_meets_an_injected_fault() {
    let py = python_or_skip!();
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--json", "--fault", "calculator:error", "--trace"])
        .arg(&trace)
        .args(["--agent", "--"])
        .arg(&py)
        .arg(repo().join("tests/agents/mcp_client.py"))
        .args(["--http", "--call", "calculator", r#"{"expression": "2+3"}"#])
        .args(["--call", "roman_numerals", r#"{"value": "12"}"#])
        .output()
        .unwrap();
    let explain =
        format!("stdout: {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{explain}");
    let summary: Value = serde_json::from_slice(&out.stdout).expect(&explain);
    assert_eq!(
        summary.pointer("/runs/0/path"),
        Some(&serde_json::json!(["calculator", "roman_numerals"])),
        "{explain}"
    );
    let events = read_trace(&trace).unwrap();
    let results: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, outcome, fault, .. } => Some((tool.clone(), outcome.clone(), *fault)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results[0].2.is_some(), "the injected fault hit the agent's call: {results:?}");
    assert!(matches!(results[0].1, switchyard::engine::event::ToolOutcome::Err { .. }), "{results:?}");
    assert!(matches!(results[1].1, switchyard::engine::event::ToolOutcome::Ok { .. }), "{results:?}");
}

/// A client that reads its servers from a file (Claude Code's
/// `--mcp-config` form) is given one with `{mcp_config}`: the MCP SDK
/// connects from it alone (the script refuses a file others may read), and
/// the file, which holds the token, is gone with the session.
#[test]
fn the_mcp_sdk_connects_from_the_client_file_the_gateway_writes() {
    let py = python_or_skip!();
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--json", "--trace"])
        .arg(&trace)
        .args(["--agent", "--"])
        .arg(&py)
        .arg(repo().join("tests/agents/mcp_client.py"))
        .args(["--config", "{mcp_config}", "--call", "calculator", r#"{"expression": "2+3"}"#])
        .output()
        .unwrap();
    let explain =
        format!("stdout: {}\nstderr: {}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{explain}");
    let summary: Value = serde_json::from_slice(&out.stdout).expect(&explain);
    assert_eq!(summary.pointer("/runs/0/path"), Some(&serde_json::json!(["calculator"])), "{explain}");
    let events = read_trace(&trace).unwrap();
    let command = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::AgentStarted { command, .. } => Some(command.clone()),
            _ => None,
        })
        .expect("the agent started");
    let file = command.split_whitespace().find(|a| a.ends_with("mcp.json")).expect(&command);
    assert!(!std::path::Path::new(file).exists(), "{file} is removed with the session");
    let written = std::fs::read_to_string(&trace).unwrap();
    assert!(!written.contains("Bearer sy-"), "the token is not in the trace");
}

/// Without the session token the gateway's MCP endpoint answers 401 with
/// a JSON-RPC error, which the SDK's client raises with its message.
#[test]
fn the_gateway_s_mcp_endpoint_asks_for_the_token() {
    let py = python_or_skip!();
    let dir = TempDir::new().unwrap();
    let script = "import os, subprocess, sys; os.environ['SWITCHYARD_MCP_TOKEN'] = 'sy-not-the-token'; \
        sys.exit(subprocess.call([sys.executable] + sys.argv[1:]))";
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--agent", "--"])
        .arg(&py)
        .args(["-c", script])
        .arg(repo().join("tests/agents/mcp_client.py"))
        .arg("--http")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(stderr.contains("invalid or missing bearer token"), "the client reads the refusal: {stderr}");
    assert!(!stderr.contains("sy-not-the-token"), "{stderr}");
}

/// The OpenAI Agents SDK with no tool of its own and Switchyard as its MCP
/// server: its model calls and its tool calls both go through the session,
/// the path is the agent's, and its answer comes from the tool's result.
#[test]
fn the_openai_agents_sdk_with_switchyard_s_tools_over_mcp() {
    let py = python_or_skip!();
    let ran = run_agent(&py, "openai_agents_mcp.py", &["Convert the roman numerals MCMXCIV"]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    assert!(ran.answer().contains("1994"), "{}", ran.explain());
    assert_eq!(ran.summary.pointer("/runs/0/path"), Some(&serde_json::json!(["roman_numerals"])), "{}", ran.explain());
    assert_eq!(ran.dialects(), [Dialect::Chat, Dialect::Chat], "the tool call, then the answer");
    let offered = ran.events.iter().find_map(|e| match &e.kind {
        EventKind::ModelCall { wire: Some(w), .. } => w.body["tools"].as_array().map(Vec::len),
        _ => None,
    });
    assert_eq!(offered, Some(17), "the SDK offered its model the library's tools");
}

/// ToolNet's Figure 4 on an agent nobody here wrote: the Agents SDK asks
/// the same question run after run, its favourite tool breaks, the graph
/// learns from its failed calls, and graph narrowing (K = 2 of the MCP
/// list) moves it to the backup; `report DIR --trace` draws the figure.
/// ToolNet's Figure 4 on an agent whose twin tools are functions of its
/// own: the graph takes both as nodes (the twin never called too), learns
/// from the agent's calls, narrowing moves the agent to the twin once its
/// favourite breaks, and the figure is drawn from the trace.
#[test]
fn figure_4_on_an_agent_s_own_twin_functions() {
    let py = python_or_skip!();
    let flags = ["--count", "8", "--fault", "word_count:error@3", "--set", "narrow=graph", "--set", "narrow_k=1"];
    let task = "Count the words in 'a b c' please.";
    let ran = run_agent_full(&py, None, &flags, "openai_fanout.py", &["--n", "1", "--twins", task]);
    assert!(ran.out.status.success(), "{}", ran.explain());
    let paths: Vec<Value> = ran.summary["runs"].as_array().unwrap().iter().map(|r| r["path"].clone()).collect();
    assert_eq!(paths[0], serde_json::json!(["word_count"]), "its favourite at first: {paths:?}");
    assert_eq!(paths[7], serde_json::json!(["word_count_mirror"]), "the twin at the end: {paths:?}");
    let learnt = ran.events.iter().any(|e| {
        matches!(&e.kind, EventKind::GraphUpdated { update } if update.scores.iter().any(|(t, _)| &**t == "word_count_mirror"))
    });
    assert!(learnt, "the graph learnt the twin's score");
    // Each task's agent is a new process: its conversation is the run's first thread.
    let threads: Vec<(u32, u32)> = (ran.events.iter())
        .filter_map(|e| match &e.kind {
            EventKind::ThreadOpened { thread, .. } => Some((e.run, *thread)),
            _ => None,
        })
        .collect();
    assert_eq!(threads, (1..=8).map(|run| (run, 0)).collect::<Vec<_>>());
    let figure = ran._dir.path().join("figure");
    let trace = ran._dir.path().join("trace.jsonl");
    let drawn =
        Command::new(env!("CARGO_BIN_EXE_switchyard")).arg("report").arg(&figure).arg("--trace").arg(&trace).output();
    let drawn = drawn.unwrap();
    assert!(drawn.status.success(), "{}", String::from_utf8_lossy(&drawn.stderr));
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(figure.join("toolnet-fault.json")).unwrap()).unwrap();
    assert_eq!((data["broken"].as_str(), data["backup"].as_str()), (Some("word_count"), Some("word_count_mirror")));
}

#[test]
fn graph_narrowing_moves_an_outside_agent_off_its_broken_tool() {
    let py = python_or_skip!();
    let dir = TempDir::new().unwrap();
    let trace = dir.path().join("trace.jsonl");
    let out = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("--data-dir")
        .arg(dir.path())
        .args(["run", "--json", "--count", "16", "--fault", "geo_lookup:error@3"])
        .args(["--set", "narrow=graph", "--set", "narrow_k=2", "--task", "What is the capital of France?"])
        .arg("--trace")
        .arg(&trace)
        .args(["--agent", "--"])
        .arg(&py)
        .arg(repo().join("tests/agents/openai_agents_mcp.py"))
        .arg("{task}")
        .output()
        .unwrap();
    let explain = format!("stderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{explain}");
    let summary: Value = serde_json::from_slice(&out.stdout).expect(&explain);
    let paths: Vec<Value> = summary["runs"].as_array().unwrap().iter().map(|r| r["path"].clone()).collect();
    assert_eq!(paths[0], serde_json::json!(["geo_lookup"]), "its favourite at first: {paths:?}");
    assert_eq!(paths[15], serde_json::json!(["geo_lookup_mirror"]), "the backup at the end: {paths:?}");
    let figure = dir.path().join("figure");
    let drawn = Command::new(env!("CARGO_BIN_EXE_switchyard"))
        .arg("report")
        .arg(&figure)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(drawn.status.success(), "{}", String::from_utf8_lossy(&drawn.stderr));
    let data: Value =
        serde_json::from_str(&std::fs::read_to_string(figure.join("toolnet-fault.json")).unwrap()).unwrap();
    assert_eq!((data["broken"].as_str(), data["backup"].as_str()), (Some("geo_lookup"), Some("geo_lookup_mirror")));
    assert!(figure.join("toolnet-fault.png").is_file());

    // Its successful runs are trajectories, and the 2-gram graph built
    // from them leads from start to each tool by its share of the runs.
    let file = dir.path().join("trajectories.jsonl");
    let sy = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_switchyard")).arg("--data-dir").arg(dir.path()).args(args).output();
        let out = out.unwrap();
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    sy(&["trace", "to-trajectories", trace.to_str().unwrap(), "--out", file.to_str().unwrap()]);
    let kept: Vec<Value> =
        std::fs::read_to_string(&file).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ok: Vec<&Value> =
        summary["runs"].as_array().unwrap().iter().filter(|r| r["path"].as_array().is_some()).collect();
    let mirror = kept.iter().filter(|t| t["tools"] == serde_json::json!(["geo_lookup_mirror"])).count();
    let primary = kept.iter().filter(|t| t["tools"] == serde_json::json!(["geo_lookup"])).count();
    // `@3`: the third task is the first to meet the fault.
    assert_eq!((primary, mirror + primary), (2, kept.len()), "the two runs before the fault, then the mirror's");
    assert!(kept.len() < ok.len(), "runs with a failed call are left out");
    sy(&["graph", "build", "--trajectories", file.to_str().unwrap()]);
    let start: Value = serde_json::from_str(&sy(&["graph", "show", "start", "--json"])).unwrap();
    let weight = |to: &str| {
        start["out"].as_array().unwrap().iter().find(|e| e[0] == to).map(|e| e[1].as_f64().unwrap()).unwrap_or(0.0)
    };
    assert!((weight("geo_lookup_mirror") - mirror as f64 / kept.len() as f64).abs() < 1e-9, "{start}");
}

/// The Agents SDK over SimpleToolQuestions' 1,836 tools (its MCP list),
/// two questions, with narrowing off and by retrieval (K = 8), through
/// `eval --agent --sweep`: the rows of each mode, and what it sent its model.
/// `config` adds the model (the simulated one by default).
fn eval_over_stquestions(py: &Path, config: Option<&str>) -> Option<(TempDir, Vec<Value>)> {
    let data = repo().join("../shared/data/simpletoolquestions");
    if !data.is_dir() {
        eprintln!("skipped: no {} (../shared/data)", data.display());
        return None;
    }
    let dir = TempDir::new().unwrap();
    let sy = env!("CARGO_BIN_EXE_switchyard");
    let import = dir.path().join("import");
    let imported = Command::new(sy).args(["bench", "import", "simpletoolquestions"]).arg(&data).arg(&import).output();
    assert!(imported.unwrap().status.success());
    let mut toml = std::fs::read_to_string(import.join("switchyard.toml")).unwrap();
    toml.push_str(config.unwrap_or(""));
    std::fs::write(import.join("run.toml"), toml).unwrap();
    let out = dir.path().join("eval");
    let ran = Command::new(sy)
        .arg("--config")
        .arg(import.join("run.toml"))
        .args(["eval", "--count", "2", "--sweep", "narrow=off,retrieval", "--set", "narrow_k=8", "--tasks"])
        .arg(import.join("tasks/test.jsonl"))
        .arg("--out")
        .arg(&out)
        .args(["--agent", "--"])
        .arg(py)
        .arg(repo().join("tests/agents/openai_agents_mcp.py"))
        .args(["--max-turns", "4", "{task}"])
        .output()
        .unwrap();
    assert!(ran.status.success(), "{}", String::from_utf8_lossy(&ran.stderr));
    let rows = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let rows = rows.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    Some((dir, rows))
}

fn mode<'a>(rows: &'a [Value], narrow: &str) -> Vec<&'a Value> {
    rows.iter().filter(|r| r["setting"].as_str().is_some_and(|s| s.ends_with(&format!("narrow={narrow}")))).collect()
}

/// Narrowing cuts what a real agent sends its model by two orders of
/// magnitude over a large library, and both modes are judged by Path%.
#[test]
fn narrowing_an_outside_agent_over_1836_tools() {
    let py = python_or_skip!();
    let Some((_dir, rows)) = eval_over_stquestions(&py, None) else { return };
    let tokens = |narrow: &str| mode(&rows, narrow).iter().map(|r| r["prompt_tokens"].as_u64().unwrap()).sum::<u64>();
    let (off, narrowed) = (tokens("off"), tokens("retrieval"));
    assert_eq!(mode(&rows, "off").len() + mode(&rows, "retrieval").len(), 4, "{rows:?}");
    assert!(narrowed > 0 && narrowed * 20 < off, "prompt tokens: {off} off, {narrowed} narrowed");
    assert!(rows.iter().all(|r| r["gold_tools"].as_array().is_some_and(|g| !g.is_empty())), "Path% has its gold");
}

/// With the local model (4,096 tokens of context): without narrowing the
/// agent's first request cannot fit, with it every request does.
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn narrowing_lets_the_local_model_take_an_agent_over_1836_tools() {
    let py = python_or_skip!();
    let config = local_model().unwrap();
    let Some((_dir, rows)) = eval_over_stquestions(&py, Some(&format!("\n{config}"))) else { return };
    let over = |r: &&Value| r["error"].as_str().is_some_and(|e| e.contains("maximum context length"));
    assert!(mode(&rows, "off").iter().all(&over), "{rows:?}");
    let narrowed = mode(&rows, "retrieval");
    assert!(!narrowed.iter().any(over), "{narrowed:?}");
    assert!(narrowed.iter().all(|r| r["prompt_tokens"].as_u64().unwrap() > 0), "{narrowed:?}");
}

/// The same agent with the local model as its model: both gateways serve
/// every call (a 0.5B model need not choose well).
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn the_openai_agents_sdk_over_mcp_with_the_local_model() {
    let py = python_or_skip!();
    let config = local_model().unwrap();
    let ran = run_agent_with(&py, Some(&config), "openai_agents_mcp.py", &["--max-turns", "4", "What is 21 * 3?"]);
    assert!(!ran.dialects().is_empty(), "{}", ran.explain());
    assert!(!ran.events.iter().any(|e| matches!(e.kind, EventKind::ModelFailed { .. })), "{}", ran.explain());
    let calls = ran.events.iter().filter(|e| matches!(e.kind, EventKind::ToolCall { .. })).count();
    let results = ran.events.iter().filter(|e| matches!(e.kind, EventKind::ToolResult { .. })).count();
    assert_eq!(calls, results, "every tool call the model made was answered\n{}", ran.explain());
}
