//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};
use switchyard::engine::{Control, EngineHandle, Event, EventKind};
use tokio::sync::mpsc::UnboundedReceiver;

use switchyard::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage};
use switchyard::tool::{ExecutorSpec, ToolLibrary, ToolSpec};

/// A model that answers from a script: actor replies in order, a fixed
/// evaluator reply. It records every request it saw.
pub struct Scripted {
    actor: Mutex<VecDeque<String>>,
    evaluator: String,
    pub seen: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    pub fn new(actor: &[&str], evaluator: &str) -> Arc<Self> {
        Arc::new(Scripted {
            actor: Mutex::new(actor.iter().map(|s| s.to_string()).collect()),
            evaluator: evaluator.to_string(),
            seen: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl ChatModel for Scripted {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "scripted".into(), kind: ModelKind::Sim, simulated: true }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.seen.lock().unwrap().push(req.clone());
        let text = match req.role {
            Role::Evaluator => self.evaluator.clone(),
            _ => self
                .actor
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| r#"{"tool": "finish", "answer": "out of script"}"#.to_string()),
        };
        Ok(ChatResponse::new(text, vec![], Usage::new(10, 2)))
    }
}

pub fn builtin(name: &str, function: &str, description: &str, param: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        category: None,
        cost: 1.0,
        parameters: json!({"type": "object", "required": [param], "properties": {param: {"type": "string"}}}),
        response: None,
        executor: ExecutorSpec::Builtin { function: function.into() },
        source: None,
    }
}

/// calculator, geo_lookup and its mirror, a search that finds nothing.
pub fn small_library() -> Arc<ToolLibrary> {
    Arc::new(
        ToolLibrary::new(vec![
            builtin("calculator", "calculator", "Evaluate an arithmetic expression", "expression"),
            builtin("geo_lookup", "geo_lookup", "Country facts lookup: capital, population, currency", "country"),
            builtin(
                "geo_lookup_mirror",
                "geo_lookup",
                "Country facts lookup (mirror): capital, population, currency",
                "country",
            ),
            builtin("web_search", "web_search", "Search the web for anything", "query"),
        ])
        .unwrap(),
    )
}

pub fn call(tool: &str, args: Value) -> String {
    json!({"tool": tool, "arguments": args}).to_string()
}

pub fn finish(answer: &str) -> String {
    json!({"tool": "finish", "answer": answer}).to_string()
}

/// The events of a fixture trace in `tests/fixtures/`.
pub fn fixture(name: &str) -> Vec<switchyard::engine::Event> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    switchyard::engine::trace::read_trace(&path).unwrap()
}

/// The state after the first `n` events of a fixture (all of them with None).
pub fn fixture_state(name: &str, n: Option<usize>) -> switchyard::engine::SessionState {
    let events = fixture(name);
    let n = n.unwrap_or(events.len()).min(events.len());
    switchyard::engine::SessionState::from_events(&events[..n])
}

/// Renders with a TestBackend of `width` × `height` and returns the buffer.
pub fn render(width: u16, height: u16, draw: impl FnOnce(&mut ratatui::Frame)) -> ratatui::buffer::Buffer {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal.draw(draw).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing spaces kept (for snapshots).
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// (x, y) of the first cell of `needle` on screen, stepping over the blank
/// second cell of wide symbols.
pub fn find(buf: &ratatui::buffer::Buffer, needle: &str) -> Option<(u16, u16)> {
    let want: Vec<String> = needle.chars().map(String::from).collect();
    let area = buf.area;
    for y in 0..area.height {
        let mut cells: Vec<(u16, &str)> = Vec::new();
        let mut x = 0;
        while x < area.width {
            let sym = buf[(x, y)].symbol();
            cells.push((x, sym));
            x += ratatui::text::Span::raw(sym).width().max(1) as u16;
        }
        for start in 0..cells.len() {
            if want.iter().enumerate().all(|(k, w)| cells.get(start + k).is_some_and(|c| c.1 == w)) {
                return Some((cells[start].0, y));
            }
        }
    }
    None
}

/// The foreground colour where `needle` starts on screen.
pub fn fg_at(buf: &ratatui::buffer::Buffer, needle: &str) -> ratatui::style::Color {
    let (x, y) = find(buf, needle).unwrap_or_else(|| panic!("'{needle}' not on screen:\n{}", buffer_text(buf)));
    buf[(x, y)].fg
}

/// One event of a hand-written trace.
fn ev(run: u32, step: u32, t: u64, kind: switchyard::engine::EventKind) -> switchyard::engine::Event {
    switchyard::engine::Event { v: switchyard::engine::event::SCHEMA_VERSION, run, step, t, kind }
}

/// A rewoo run over `small_library`'s tools, as the engine would tell it:
/// the classifier labels the tools, the planner (sim-weak) writes a plan of
/// two steps, #E1 calls geo_lookup and geo_lookup_mirror concurrently (the
/// first fails under an injected fault and is filtered to null), #E2 calls
/// the calculator three times citing #E1. The user paused before #E2 and
/// stepped its lane 0, which is running; lanes 1 and 2 wait, lane 2 with a
/// fault the user asked for. With `finish`, the step ends, the solver
/// (sim-strong) answers and the run finishes.
pub fn rewoo_events(finish: bool) -> Vec<switchyard::engine::Event> {
    use switchyard::engine::EventKind as K;
    use switchyard::engine::event::{
        LabelSource, LaneAction, LanePlan, RoleModel, RunOutcome, StrategyKind, TaskBrief, ToolBrief, ToolLabel,
        ToolOutcome,
    };
    use switchyard::model::price::Price;
    use switchyard::model::{Message, ModelKind};
    use switchyard::strategy::rewoo::parse::{RewooCall, RewooStep};
    use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
    use switchyard::tool::{ToolError, ToolErrorKind};

    let model = |name: &str| ModelInfo { name: name.into(), kind: ModelKind::Sim, simulated: true };
    let price = |i: f64, o: f64| Price { input_per_mtok: i, output_per_mtok: o };
    let role = |role: Role, name: &str, p: Price| RoleModel { role, model: model(name), price: p };
    let cost = |p: Price, u: Usage| {
        (u.prompt_tokens as f64 * p.input_per_mtok + u.completion_tokens as f64 * p.output_per_mtok) / 1e6
    };
    let (weak, strong, sim) = (price(0.5, 1.5), price(5.0, 15.0), price(0.0, 0.0));
    let tool = |name: &str, description: &str, category: Option<&str>| ToolBrief {
        name: name.into(),
        description: description.into(),
        category: category.map(str::to_string),
        cost: 1.0,
        server: None,
    };
    let label = |tool: &str, category: &str, source: LabelSource| ToolLabel {
        tool: tool.into(),
        category: category.into(),
        source,
    };
    let call = |tool: &str, input: &str| RewooCall { tool: tool.into(), input: input.into() };
    let lane = |lane: u32, call: u64, tool: &str, input: &str, args: Value| LanePlan {
        lane,
        call,
        tool: tool.into(),
        input: input.into(),
        args,
    };
    let injected = || ToolOutcome::Err { error: ToolError::new(ToolErrorKind::Failed, "injected fault: error") };
    let task = "What are France's population in millions, its people per km², and its share of the EU's 448 million?";
    let france = json!({
        "name": "France", "capital": "Paris", "population": 68170000, "area_km2": 643801,
        "currency_code": "EUR", "continent": "Europe", "languages": ["French"], "figures_as_of": "2023",
    });
    let thought1 = "Look up France's figures with both country lookups at once.";
    let thought2 = "From #E1, work out the population in millions, the density and the share of the EU.";
    let plan_text = format!(
        "Plan: {thought1}\n#E1 = geo_lookup[France]; geo_lookup_mirror[France]\nPlan: {thought2}\n\
         #E2 = calculator[#E1.population / 1e6]; calculator[#E1.population / #E1.area_km2]; \
         calculator[#E1.population / 448e6 * 100]"
    );
    let e2_inputs = ["#E1.population / 1e6", "#E1.population / #E1.area_km2", "#E1.population / 448e6 * 100"];
    let e2_args = ["68170000 / 1e6", "68170000 / 643801", "68170000 / 448e6 * 100"];
    let classifier_use = Usage::new(230, 41);
    let planner_use = Usage::new(412, 96);
    let solver_use = Usage::new(388, 52);

    let mut out = vec![
        ev(
            0,
            0,
            0,
            K::SessionStarted {
                schema: switchyard::engine::event::SCHEMA_VERSION,
                strategy: StrategyKind::Rewoo,
                seed: 7,
                params: switchyard::engine::Params::default(),
                models: vec![
                    role(Role::Planner, "sim-weak", weak),
                    role(Role::Solver, "sim-strong", strong),
                    role(Role::Actor, "sim", sim),
                    role(Role::Evaluator, "sim", sim),
                    role(Role::Classifier, "sim", sim),
                    role(Role::Judge, "sim", sim),
                ],
                tools: vec![
                    tool("calculator", "Evaluate an arithmetic expression", None),
                    tool("geo_lookup", "Country facts lookup: capital, population, currency", None),
                    tool("geo_lookup_mirror", "Country facts lookup (mirror): capital, population, currency", None),
                    tool("web_search", "Search the web for anything", Some("Information Retrieval")),
                ]
                .into(),
                cost_unit: "credits".into(),
                tasks: 3,
                task_list: vec![TaskBrief { id: "france-figures".into(), query: task.into() }],
                available_models: vec![model("sim"), model("sim-weak"), model("sim-strong")],
                pace_ms: 0,
                graph: None,
                experience: None,
            },
        ),
        ev(
            0,
            0,
            10,
            K::ModelCall {
                call: 1,
                role: Role::Classifier,
                model: "sim".into(),
                simulated: true,
                messages: vec![
                    Message::system("Label each tool with one category."),
                    Message::user("Categories: Information Retrieval, Task Completion\n\nTools:\n- calculator: ..."),
                ],
                wire: None,
            },
        ),
        ev(
            0,
            0,
            60,
            K::ModelReply {
                call: 1,
                role: Role::Classifier,
                model: "sim".into(),
                text: "calculator: Task Completion\ngeo_lookup: Information Retrieval\n\
                   geo_lookup_mirror: Information Retrieval"
                    .into(),
                tool_calls: vec![],
                usage: classifier_use,
                cost: cost(sim, classifier_use),
                latency_ms: 50,
                fault: None,
                wire: None,
                first_token_ms: None,
                capped: None,
            },
        ),
        ev(
            0,
            0,
            61,
            K::ToolsClassified {
                categories: vec!["Information Retrieval".into(), "Task Completion".into()],
                labels: vec![
                    label("calculator", "Task Completion", LabelSource::Model),
                    label("geo_lookup", "Information Retrieval", LabelSource::Model),
                    label("geo_lookup_mirror", "Information Retrieval", LabelSource::Model),
                    label("web_search", "Information Retrieval", LabelSource::Manifest),
                ],
                model: Some("sim".into()),
            },
        ),
        ev(
            0,
            0,
            70,
            K::FaultInjected {
                tool: "geo_lookup".into(),
                fault: Fault { mode: FaultMode::Error, scope: FaultScope::Once },
            },
        ),
        ev(
            1,
            0,
            100,
            K::RunStarted {
                task_id: "france-figures".into(),
                task: task.into(),
                gold: Some("68.17 million; 106 per km²; 15.2%".into()),
                index: 1,
                total: 3,
            },
        ),
        ev(
            1,
            1,
            110,
            K::ModelCall {
                call: 2,
                role: Role::Planner,
                model: "sim-weak".into(),
                simulated: true,
                messages: vec![Message::system("Write a plan."), Message::user(format!("Task: {task}"))],
                wire: None,
            },
        ),
        ev(
            1,
            1,
            1100,
            K::ModelReply {
                call: 2,
                role: Role::Planner,
                model: "sim-weak".into(),
                text: plan_text,
                tool_calls: vec![],
                usage: planner_use,
                cost: cost(weak, planner_use),
                latency_ms: 990,
                fault: None,
                wire: None,
                first_token_ms: None,
                capped: None,
            },
        ),
        ev(
            1,
            1,
            1101,
            K::PlanWritten {
                attempt: 1,
                steps: vec![
                    RewooStep {
                        evidence: 1,
                        thought: thought1.into(),
                        calls: vec![call("geo_lookup", "France"), call("geo_lookup_mirror", "France")],
                        depends_on: vec![],
                    },
                    RewooStep {
                        evidence: 2,
                        thought: thought2.into(),
                        calls: e2_inputs.iter().map(|i| call("calculator", i)).collect(),
                        depends_on: vec![1],
                    },
                ],
            },
        ),
        ev(
            1,
            2,
            1200,
            K::StepStarted {
                evidence: 1,
                thought: thought1.into(),
                lanes: vec![
                    lane(0, 1, "geo_lookup", "France", json!({"country": "France"})),
                    lane(1, 2, "geo_lookup_mirror", "France", json!({"country": "France"})),
                ],
            },
        ),
        ev(
            1,
            2,
            1200,
            K::ToolCall { call: 1, tool: "geo_lookup".into(), args: json!({"country": "France"}), lane: Some(0) },
        ),
        ev(
            1,
            2,
            1203,
            K::ToolCall {
                call: 2,
                tool: "geo_lookup_mirror".into(),
                args: json!({"country": "France"}),
                lane: Some(1),
            },
        ),
        ev(
            1,
            2,
            1250,
            K::ToolResult {
                call: 1,
                tool: "geo_lookup".into(),
                outcome: injected(),
                latency_ms: 50,
                cost: 1.0,
                fault: Some(FaultMode::Error),
                filtered: true,
                lane: Some(0),
                source: None,
            },
        ),
        ev(
            1,
            2,
            1290,
            K::ToolResult {
                call: 2,
                tool: "geo_lookup_mirror".into(),
                outcome: ToolOutcome::Ok { value: france.clone() },
                latency_ms: 87,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: Some(1),
                source: None,
            },
        ),
        ev(1, 2, 1291, K::StepFinished { evidence: 1, results: vec![None, Some(france)], tokens_saved: 12 }),
        ev(1, 2, 1300, K::Paused),
        ev(
            1,
            3,
            1310,
            K::StepStarted {
                evidence: 2,
                thought: thought2.into(),
                lanes: (0..3)
                    .map(|i| {
                        lane(
                            i,
                            3 + i as u64,
                            "calculator",
                            e2_inputs[i as usize],
                            json!({"expression": e2_args[i as usize]}),
                        )
                    })
                    .collect(),
            },
        ),
        ev(1, 3, 1400, K::LaneChanged { lane: 0, action: LaneAction::Step }),
        ev(
            1,
            3,
            1400,
            K::ToolCall { call: 3, tool: "calculator".into(), args: json!({"expression": e2_args[0]}), lane: Some(0) },
        ),
        ev(1, 3, 1450, K::LaneChanged { lane: 2, action: LaneAction::Fail { fault: FaultMode::Error } }),
    ];
    if !finish {
        return out;
    }
    let result = |v: f64| ToolOutcome::Ok { value: json!({"result": v}) };
    let answer = "68.17 million people; about 106 per km²; 15.2% of the EU";
    out.extend([
        ev(1, 3, 2000, K::Resumed),
        ev(
            1,
            3,
            2001,
            K::ToolCall { call: 4, tool: "calculator".into(), args: json!({"expression": e2_args[1]}), lane: Some(1) },
        ),
        ev(
            1,
            3,
            2002,
            K::ToolCall { call: 5, tool: "calculator".into(), args: json!({"expression": e2_args[2]}), lane: Some(2) },
        ),
        ev(
            1,
            3,
            2003,
            K::ToolResult {
                call: 5,
                tool: "calculator".into(),
                outcome: injected(),
                latency_ms: 1,
                cost: 1.0,
                fault: Some(FaultMode::Error),
                filtered: true,
                lane: Some(2),
                source: None,
            },
        ),
        ev(
            1,
            3,
            2020,
            K::ToolResult {
                call: 3,
                tool: "calculator".into(),
                outcome: result(68.17),
                latency_ms: 620,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: Some(0),
                source: None,
            },
        ),
        ev(
            1,
            3,
            2030,
            K::ToolResult {
                call: 4,
                tool: "calculator".into(),
                outcome: result(105.89),
                latency_ms: 29,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: Some(1),
                source: None,
            },
        ),
        ev(
            1,
            3,
            2031,
            K::StepFinished {
                evidence: 2,
                results: vec![Some(json!({"result": 68.17})), Some(json!({"result": 105.89})), None],
                tokens_saved: 9,
            },
        ),
        ev(
            1,
            4,
            2040,
            K::ModelCall {
                call: 6,
                role: Role::Solver,
                model: "sim-strong".into(),
                simulated: true,
                messages: vec![Message::system("Answer from the evidence."), Message::user(format!("Task: {task}"))],
                wire: None,
            },
        ),
        ev(
            1,
            4,
            3200,
            K::ModelReply {
                call: 6,
                role: Role::Solver,
                model: "sim-strong".into(),
                text: answer.into(),
                tool_calls: vec![],
                usage: solver_use,
                cost: cost(strong, solver_use),
                latency_ms: 1160,
                fault: None,
                wire: None,
                first_token_ms: None,
                capped: None,
            },
        ),
        ev(
            1,
            4,
            3201,
            K::RunFinished {
                outcome: RunOutcome::Answered,
                answer: Some(answer.into()),
                success: Some(true),
                cost: cost(weak, planner_use) + cost(strong, solver_use) + 5.0,
                usage: Usage::new(800, 148),
                steps: 4,
                tool_calls: 5,
                expect: None,
            },
        ),
    ]);
    out
}

/// The rewoo run mid-way: #E1 done, #E2 running one of its three lanes.
pub fn rewoo_fixture() -> switchyard::engine::SessionState {
    switchyard::engine::SessionState::from_events(&rewoo_events(false))
}

/// The rewoo run finished: both steps done, the solver answered.
pub fn rewoo_fixture_finished() -> switchyard::engine::SessionState {
    switchyard::engine::SessionState::from_events(&rewoo_events(true))
}

/// The next events up to the first that `pred` holds for, kept in `seen`.
pub async fn until(rx: &mut UnboundedReceiver<Event>, seen: &mut Vec<Event>, pred: impl Fn(&EventKind) -> bool) {
    loop {
        let e = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .expect("timed out waiting for an event")
            .expect("engine ended before the expected event");
        let hit = pred(&e.kind);
        seen.push(e);
        if hit {
            return;
        }
    }
}

/// A control that the engine answers with an event: once its event is
/// seen, everything the engine could do before it has been done.
pub async fn settle(handle: &EngineHandle, rx: &mut UnboundedReceiver<Event>, seen: &mut Vec<Event>) {
    handle.send(Control::SetPace { ms: 0 });
    until(rx, seen, |k| matches!(k, EventKind::PaceChanged { .. })).await;
}

/// A workbench that saw the events live.
pub fn app(events: Vec<Event>) -> switchyard::ui::app::App {
    let mut app = switchyard::ui::app::App::live();
    for e in events {
        app.update(switchyard::ui::app::Action::Engine(e));
    }
    app
}

pub fn press(app: &mut switchyard::ui::app::App, code: crossterm::event::KeyCode) -> Vec<switchyard::ui::app::Effect> {
    use crossterm::event::{KeyEvent, KeyModifiers};
    app.update(switchyard::ui::app::Action::Key(KeyEvent::new(code, KeyModifiers::NONE)))
}

/// The whole screen, drawn from the app's state.
pub fn screen(app: &switchyard::ui::app::App, w: u16, h: u16) -> ratatui::buffer::Buffer {
    let theme = switchyard::ui::Theme::default();
    render(w, h, |f| switchyard::ui::draw::draw(f, app, &theme))
}

/// Answers each role from its own script, in order, and records every request.
pub struct Roles {
    replies: Mutex<BTreeMap<Role, VecDeque<String>>>,
    usage: Usage,
    seen: Mutex<Vec<ChatRequest>>,
}

impl Roles {
    pub fn new(script: &[(Role, &str)]) -> Arc<Self> {
        Self::with_usage(script, Usage::new(10, 2))
    }

    pub fn with_usage(script: &[(Role, &str)], usage: Usage) -> Arc<Self> {
        let mut replies: BTreeMap<Role, VecDeque<String>> = BTreeMap::new();
        for (role, text) in script {
            replies.entry(*role).or_default().push_back(text.to_string());
        }
        Arc::new(Roles { replies: Mutex::new(replies), usage, seen: Mutex::new(Vec::new()) })
    }

    pub fn requests(&self, role: Role) -> Vec<ChatRequest> {
        self.seen.lock().unwrap().iter().filter(|r| r.role == role).cloned().collect()
    }
}

#[async_trait]
impl ChatModel for Roles {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "roles".into(), kind: ModelKind::Sim, simulated: true }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.seen.lock().unwrap().push(req.clone());
        let text = self.replies.lock().unwrap().get_mut(&req.role).and_then(VecDeque::pop_front);
        let text = text.ok_or_else(|| ModelError::Other(format!("no scripted reply left for {}", req.role)))?;
        Ok(ChatResponse::new(text, vec![], self.usage))
    }
}

/// The workbench's app wired to a real engine: keys go through
/// `App::update`, the controls they make go to the engine, its events come
/// back as actions.
pub struct AppRig {
    pub app: switchyard::ui::app::App,
    pub handle: EngineHandle,
    pub events: UnboundedReceiver<Event>,
    pub seen: Vec<Event>,
    pub engine: tokio::task::JoinHandle<Result<switchyard::engine::SessionOutcome, switchyard::session::SetupError>>,
    _dir: tempfile::TempDir,
}

impl AppRig {
    /// A session of `opts` over the default config, in a data dir of its own.
    pub fn start(opts: switchyard::session::SessionOptions) -> AppRig {
        let dir = tempfile::tempdir().unwrap();
        let cfg = switchyard::config::Config { data_dir: Some(dir.path().to_path_buf()), ..Default::default() };
        let mut prepared = switchyard::session::prepare(&cfg, &opts).unwrap();
        let events = prepared.engine.subscribe();
        let handle = prepared.handle.clone();
        let engine = tokio::spawn(switchyard::session::run(prepared));
        AppRig { app: switchyard::ui::app::App::live(), handle, events, seen: Vec::new(), engine, _dir: dir }
    }

    /// Presses keys; sends the controls they produce to the engine.
    pub fn press(
        &mut self,
        actions: impl IntoIterator<Item = switchyard::ui::app::Action>,
    ) -> Vec<switchyard::engine::Control> {
        let mut sent = Vec::new();
        for a in actions {
            for e in self.app.update(a) {
                if let switchyard::ui::app::Effect::Control(c) = e {
                    self.handle.send(c.clone());
                    sent.push(c);
                }
            }
        }
        sent
    }

    /// Feeds engine events to the app until one matches.
    pub async fn until(&mut self, pred: impl Fn(&EventKind) -> bool) -> Event {
        loop {
            let e = self.events.recv().await.expect("the engine ended first");
            self.app.update(switchyard::ui::app::Action::Engine(e.clone()));
            self.seen.push(e.clone());
            if pred(&e.kind) {
                return e;
            }
        }
    }
}
