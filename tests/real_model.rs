//! Against a real model: the local Qwen server that `scripts/local-model.sh
//! start` runs on loopback. These tests are ignored by default (they need
//! the server); `.ci/run` starts it and runs them with `--ignored`, giving
//! its address in `SWITCHYARD_LOCAL_MODEL_URL`.

use std::collections::BTreeMap;

use switchyard::config::{Config, ModelConfig};
use switchyard::engine::event::{EventKind, RefuseReason, RunOutcome};
use switchyard::engine::trace::read_trace;
use switchyard::engine::{SessionState, StrategyKind};
use switchyard::model::http_model::{HttpModel, HttpModelConfig};
use switchyard::model::stream::{Delta, Tokens};
use switchyard::model::{ChatModel, ChatRequest, Message, Role};
use switchyard::session::{self, GraphSource, SessionOptions, Tape, TaskSource};
use switchyard::strategy::prompt::{self, ActorAction, ActorInput, CandidateInput, finish_candidate};

fn base_url() -> String {
    std::env::var("SWITCHYARD_LOCAL_MODEL_URL").unwrap_or_else(|_| {
        panic!("set SWITCHYARD_LOCAL_MODEL_URL (scripts/local-model.sh start prints it as base_url)")
    })
}

fn model_name() -> String {
    std::env::var("SWITCHYARD_LOCAL_MODEL_NAME").unwrap_or_else(|_| "qwen2.5-coder-0.5b-instruct".into())
}

fn openai(url: &str) -> ModelConfig {
    ModelConfig::Openai {
        api: Default::default(),
        base_url: url.to_string(),
        model: model_name(),
        api_key_env: None,
        timeout_ms: 180_000,
        max_retries: 1,
        native_tools: false,
        json_schema: true,
        max_tokens: 1024,
        max_reply_mb: 16.0,
        stream: true,
        cache_prompt: false,
        slots: Default::default(),
        max_in_flight: None,
        price: Default::default(),
    }
}

/// The embedded default with the local model in every role.
fn config(dir: &std::path::Path, url: &str) -> Config {
    let mut c = Config { data_dir: Some(dir.to_path_buf()), ..Config::default() };
    c.models.insert("local".into(), openai(url));
    c.roles = Role::ALL.into_iter().map(|r| (r, "local".to_string())).collect::<BTreeMap<_, _>>();
    c
}

fn smoke() -> TaskSource {
    TaskSource::File(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools/tasks/smoke.toml"))
}

fn run(config: &Config, opts: &SessionOptions) -> SessionState {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(session::run(session::prepare(config, opts).unwrap())).unwrap().state
}

/// Unstreamed: llama-cpp-python's server counts a reply's tokens only in
/// a reply sent whole.
fn model() -> HttpModel {
    let mut cfg = HttpModelConfig::new("local", base_url(), model_name());
    cfg.native_tools = false;
    cfg.timeout_ms = 180_000;
    cfg.stream = false;
    HttpModel::new(cfg).unwrap()
}

#[tokio::test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
async fn a_streamed_reply_arrives_in_pieces_that_make_the_whole() {
    let mut cfg = HttpModelConfig::new("local", base_url(), model_name());
    cfg.timeout_ms = 180_000;
    let m = HttpModel::new(cfg).unwrap();
    let mut req = ChatRequest::new(Role::Actor, vec![Message::user("Count from one to ten in words.")]);
    req.temperature = Some(0.0);
    req.max_tokens = Some(48);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let r = m.chat_streaming(&req, None, &Tokens::to(tx)).await.unwrap();
    let mut pieces = Vec::new();
    while let Ok(Delta::Text(t)) = rx.try_recv() {
        pieces.push(t);
    }
    assert!(pieces.len() > 5, "the reply came in {} pieces", pieces.len());
    assert_eq!(pieces.concat(), r.text);
    // The server counts no tokens in a stream: they are estimated.
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0, "{:?}", r.usage);
}

#[tokio::test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
async fn a_chat_completion_with_the_servers_token_counts() {
    let mut req = ChatRequest::new(Role::Actor, vec![Message::user("Reply with the single word: hello")]);
    req.temperature = Some(0.0);
    req.max_tokens = Some(16);
    let r = model().chat(&req).await.unwrap();
    assert!(!r.text.trim().is_empty());
    assert!(r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0, "{:?}", r.usage);
}

#[tokio::test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
async fn a_constrained_choice_names_an_offered_tool() {
    let lib =
        switchyard::tool::manifest::load_paths(
            &[std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-tools")],
        )
        .unwrap();
    let cases = [
        ("What is the capital of the country 'Japan'?", ["geo_lookup", "calculator", "weekday_of"]),
        ("Calculate (17 + 5) * 3 - 4.", ["date_add_days", "calculator", "glossary_lookup"]),
        ("Convert 10 miles to kilometers.", ["city_search", "unit_convert", "web_search"]),
    ];
    let m = model();
    for (task, names) in cases {
        let mut candidates: Vec<CandidateInput> = names
            .iter()
            .map(|n| {
                let t = lib.get(n).unwrap();
                CandidateInput {
                    name: t.name.clone(),
                    weight: None,
                    description: t.description.clone(),
                    parameters: t.parameters.clone(),
                }
            })
            .collect();
        candidates.push(finish_candidate(None));
        let view = ActorInput { task: task.into(), history: vec![], candidates, notes: vec![] };
        let offered: Vec<String> = view.candidates.iter().map(|c| c.name.clone()).collect();
        let mut req = ChatRequest::new(Role::Actor, prompt::render_actor(&view));
        req.response_schema = Some(prompt::actor_schema(&offered));
        req.temperature = Some(0.0);
        let reply = m.chat(&req).await.unwrap();
        match prompt::parse_actor_reply(&reply) {
            Ok(ActorAction::Call { tool, .. }) => assert!(names.contains(&tool.as_str()), "{task}: {tool}"),
            Ok(ActorAction::Finish { .. }) => {}
            Err(e) => panic!("{task}: unreadable reply {:?}: {e}", reply.text),
        }
    }
}

/// A reply in ReAct text that goes on to imagine its tool's result ends
/// at the actor's stop sequences, and the cut reply still reads as the
/// call it began with; the same request without them runs on.
#[tokio::test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
async fn a_text_reply_ends_at_the_actor_s_stop_sequences() {
    let prompt = vec![
        Message::system(
            "Continue the transcript for three more steps. Every step is four lines: \
             `Thought: ...`, `Action: <tool>`, `Action Input: <JSON>`, `Observation: <result>`.",
        ),
        Message::user(
            "Question: what is (3 + 4) * 5?\nThought: I add first.\nAction: add\nAction Input: {\"a\": 3, \"b\": 4}\n\
             Observation: 7\nThought: Now I multiply.",
        ),
    ];
    let mut req = ChatRequest::new(Role::Actor, prompt);
    req.temperature = Some(0.0);
    req.max_tokens = Some(160);
    let m = model();
    let free = m.chat(&req).await.unwrap();
    assert!(free.text.contains("Observation:"), "the control must run on past its action: {:?}", free.text);
    let stopped = m.chat(&req.stopping_at(prompt::ACTOR_STOP)).await.unwrap();
    assert!(!stopped.text.contains("Observation:"), "{:?}", stopped.text);
    assert!(stopped.usage.completion_tokens < free.usage.completion_tokens, "{:?} {:?}", stopped.usage, free.usage);
    match prompt::parse_actor_reply(&stopped) {
        Ok(ActorAction::Call { tool, .. }) => assert!(!tool.is_empty()),
        other => panic!("the cut reply must still name its call: {other:?} from {:?}", stopped.text),
    }
}

/// A toolnet and a rewoo session on five sample tasks complete with a valid
/// trace, the server's token counts, and no reply refused as unreadable.
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn toolnet_and_rewoo_runs_complete_with_a_valid_trace() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &base_url());
    for strategy in [StrategyKind::Toolnet, StrategyKind::Rewoo] {
        let trace = dir.path().join(format!("{strategy}.jsonl"));
        let opts = SessionOptions {
            strategy: Some(strategy),
            tasks: smoke(),
            count: Some(5),
            graph: GraphSource::Fresh,
            trace: Some(trace.clone()),
            fresh_categories: true,
            ..Default::default()
        };
        let state = run(&cfg, &opts);
        assert_eq!(state.finished.len(), 5, "{strategy}");
        for r in &state.finished {
            assert!(!matches!(r.outcome, RunOutcome::Failed { .. }), "{strategy}: {:?}", r.outcome);
        }
        let events = read_trace(&trace).unwrap();
        assert_eq!(SessionState::from_events(&events).finished.len(), 5, "the trace folds to the same runs");
        let mut replies = 0;
        for e in &events {
            match &e.kind {
                EventKind::ModelReply { usage, .. } => {
                    replies += 1;
                    assert!(usage.prompt_tokens > 0, "{strategy}: a reply without the server's usage");
                }
                EventKind::Refused { reason: RefuseReason::Malformed, detail, .. } => {
                    panic!("{strategy}: a malformed answer was refused: {detail}")
                }
                _ => {}
            }
        }
        assert!(replies >= 5, "{strategy}");
    }
}

/// ATC with a real model: constrained decoding gives a JSON reply whose
/// `program` is free text, so every program is read; what it does when run
/// (an answer, or a failure blamed on a tool and rewritten) is the model's.
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn atc_programs_from_a_real_model_are_read_run_and_reflected_on() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), &base_url());
    let trace = dir.path().join("atc.jsonl");
    let opts = SessionOptions {
        strategy: Some(StrategyKind::Atc),
        tasks: smoke(),
        count: Some(3),
        trace: Some(trace.clone()),
        ..Default::default()
    };
    let state = run(&cfg, &opts);
    assert_eq!(state.finished.len(), 3);
    for r in &state.finished {
        assert!(!matches!(r.outcome, RunOutcome::Failed { .. }), "{:?}", r.outcome);
    }
    let events = read_trace(&trace).unwrap();
    let (mut written, mut ended) = (0, 0);
    for e in &events {
        match &e.kind {
            EventKind::ProgramWritten { program, .. } => {
                written += 1;
                assert!(!program.trim().is_empty());
            }
            EventKind::ProgramReturned { .. } => ended += 1,
            EventKind::ProgramFailed { error, .. } => {
                ended += 1;
                assert!(!error.is_empty());
            }
            EventKind::Refused { reason: RefuseReason::Malformed, detail, .. } => {
                panic!("a constrained reply could not be read: {detail}")
            }
            _ => {}
        }
    }
    assert!(
        written >= 3 && ended == written,
        "every program written was run to an end: {written} written, {ended} ended"
    );
}

/// A real run recorded, then replayed against a port where nothing
/// listens: the same trace, without the server.
#[test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
fn a_recorded_real_run_replays_identically_without_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("real.cassette.jsonl");
    let trace = |cfg: &Config, name: &str, tape: Tape| {
        let path = dir.path().join(name);
        let opts = SessionOptions {
            strategy: Some(StrategyKind::Rewoo),
            tasks: smoke(),
            count: Some(2),
            trace: Some(path.clone()),
            logical_clock: true,
            fresh_categories: true,
            tape,
            ..Default::default()
        };
        run(cfg, &opts);
        std::fs::read_to_string(path).unwrap()
    };
    let recorded = trace(&config(dir.path(), &base_url()), "recorded.jsonl", Tape::Record(cassette.clone()));
    let dead = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let replayed = trace(&config(dir.path(), &format!("http://{dead}/v1")), "replayed.jsonl", Tape::Replay(cassette));
    let (r0, r_rest) = recorded.split_once('\n').unwrap();
    let (p0, p_rest) = replayed.split_once('\n').unwrap();
    assert!(r_rest == p_rest, "the replay diverged from the recording");
    // The first event differs in the models' kind (a replay says so) and the URL is not in a trace.
    let as_replay = |s: &str| {
        s.replace("\"kind\":\"openai\"", "\"kind\":\"replay\"").replace("\"kind\":\"sim\"", "\"kind\":\"replay\"")
    };
    assert_eq!(as_replay(r0), p0);
}

/// The local model as the actor over the tools of a real MCP server
/// (server-everything, which `scripts/mcp-servers.sh` installs and `.ci/run`
/// names in SWITCHYARD_MCP_EVERYTHING_CMD): only its tools are offered, so
/// whatever the model calls is an MCP tool, answered by the server.
#[test]
#[ignore = "needs the local model and the MCP servers: scripts/local-model.sh start, scripts/mcp-servers.sh install"]
fn a_real_model_calls_a_tool_of_a_real_mcp_server() {
    let argv: Vec<String> = std::env::var("SWITCHYARD_MCP_EVERYTHING_CMD")
        .unwrap_or_else(|_| panic!("set SWITCHYARD_MCP_EVERYTHING_CMD (scripts/mcp-servers.sh env prints it)"))
        .split(' ')
        .map(str::to_string)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("no-manifests")).unwrap();
    let quoted: Vec<String> = argv[1..].iter().map(|a| format!("{a:?}")).collect();
    let toml = format!(
        "library = [\"no-manifests\"]\n[[mcp]]\nname = \"everything\"\ncommand = {:?}\nargs = [{}]\n",
        argv[0],
        quoted.join(", ")
    );
    let path = dir.path().join("switchyard.toml");
    let mut cfg = Config::parse(&toml, &path).unwrap();
    let base = config(dir.path(), &base_url());
    cfg.data_dir = base.data_dir.clone();
    cfg.models = base.models.clone();
    cfg.roles = base.roles.clone();
    let tasks = dir.path().join("tasks.toml");
    std::fs::write(
        &tasks,
        "[[task]]\nid = \"sum\"\nquery = \"Use a tool to add the numbers 19 and 23.\"\nanswer = \"42\"\n\n\
         [[task]]\nid = \"echo\"\nquery = \"Use a tool to echo back the message 'hello switchyard'.\"\n",
    )
    .unwrap();
    let trace = dir.path().join("trace.jsonl");
    let opts = SessionOptions {
        strategy: Some(StrategyKind::React),
        tasks: TaskSource::File(tasks),
        trace: Some(trace.clone()),
        ..Default::default()
    };
    let state = run(&cfg, &opts);
    assert_eq!(state.finished.len(), 2);
    let events = read_trace(&trace).unwrap();
    let served: Vec<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolResult { tool, .. } if state.tool_servers.get(tool).is_some_and(|s| s == "everything") => {
                Some(tool.as_str())
            }
            _ => None,
        })
        .collect();
    assert!(!served.is_empty(), "the model called no tool of the server");
}

#[tokio::test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
async fn a_real_model_writes_readable_questions_for_a_tool() {
    use switchyard::dataset::ToolDoc;
    use switchyard::retrieve::synthetic_questions;
    let tool = ToolDoc {
        id: "people/person/place_of_birth".into(),
        description: "place of birth: retrieves the birthplace of a person.".into(),
    };
    let mut req = synthetic_questions::request(&tool, 3);
    req.temperature = Some(0.0);
    req.max_tokens = Some(160);
    let reply = model().chat(&req).await.unwrap();
    let questions = synthetic_questions::parse_reply(&reply.text).unwrap_or_else(|e| panic!("{e}: {}", reply.text));
    assert!((1..=3).contains(&questions.len()), "{questions:?}");
    assert!(questions.iter().all(|q| q.len() > 10 && q.len() < 300), "{questions:?}");
}

/// Re-ranking: the schema's enum holds a constrained server to the
/// candidates, so every reply names one of them (a 0.5B model need not
/// choose the right one).
#[tokio::test]
#[ignore = "needs the local model: scripts/local-model.sh start"]
async fn a_real_model_chooses_one_of_the_candidates() {
    use switchyard::dataset::ToolDoc;
    use switchyard::retrieve::rerank;
    let candidates: Vec<ToolDoc> = [
        ("location/location/people_born_here", "people born here: lists the people born in a location."),
        ("people/person/place_of_birth", "place of birth: retrieves the birthplace of a person."),
        ("people/deceased_person/place_of_death", "place of death: the place where a person died."),
    ]
    .iter()
    .map(|(id, d)| ToolDoc { id: (*id).into(), description: (*d).into() })
    .collect();
    for question in ["Where was Ada Lovelace born?", "Who was born in Lima?", "Where did Nina Simone die?"] {
        let req = rerank::request(question, &candidates);
        let reply = model().chat(&req).await.unwrap();
        let chosen = rerank::parse_reply(&reply.text, &candidates);
        assert!(chosen.is_ok(), "{question}: {chosen:?}: {}", reply.text);
    }
}
