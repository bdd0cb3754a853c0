//! One full frame of the workbench at 160×48 over a 16,000-tool library late
//! in a long session (goal: median ≤ 1 ms), in the neighbourhood and
//! whole-graph views; then each pane alone in the room the frame gives it,
//! so a regression shows where it is.
//!
//! The session is what ToolNet writes: a graph learnt from trajectories
//! (or, in the `_shared_row` benches, built without them: the tools' rows
//! one shared row), then `RUNS` finished tasks, each ending in the
//! evaluator's scores and the `GraphUpdated` they cause (the long rows as a
//! shared weight plus the tools told apart), and a task under way whose
//! agent stands on a tool with a long history. Each session is made the
//! first time a bench that needs it runs.

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::cell::RefCell;
use std::collections::BTreeMap;

use criterion::{Bencher, Criterion, criterion_group, criterion_main};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde_json::json;

use switchyard::engine::event::{GraphSnapshot, Offered, RoleModel, RunOutcome, StrategyKind, ToolBrief, ToolOutcome};
use switchyard::engine::{Event, EventKind, Params};
use switchyard::graph::{START, ToolGraph};
use switchyard::model::price::Price;
use switchyard::model::{Message, ModelInfo, ModelKind, Role, Usage};
use switchyard::retrieve::retriever::Scored;
use switchyard::ui::app::{Action, App};
use switchyard::ui::draw::{draw, render_pane, status_area, wide_panes};
use switchyard::ui::panes::status;
use switchyard::ui::{GraphMode, Pane, PaneCtx, Theme};

const TOOLS: usize = 16_000;
/// Finished tasks before the one under way, each with its graph update.
const RUNS: usize = 3_000;
/// Tools the tasks keep coming back to: most scores fall on them.
const POPULAR: usize = 400;
const SIZE: (u16, u16) = (160, 48);

fn ev(run: u32, step: u32, t: u64, kind: EventKind) -> Event {
    Event { v: 1, run, step, t, kind }
}

/// A graph from random 9-tool trajectories, one per tool (~8 observed
/// successors per tool besides its self and end edges), as `graph_update`
/// builds it.
fn learnt_graph(names: &[String], rng: &mut ChaCha8Rng) -> ToolGraph {
    let trajectories: Vec<Vec<String>> =
        (0..names.len()).map(|_| (0..9).map(|_| names[rng.random_range(0..names.len())].clone()).collect()).collect();
    ToolGraph::from_trajectories(names, &trajectories).unwrap_or_else(|e| panic!("bench graph: {e}"))
}

/// A tool a task uses: mostly a popular one.
fn pick(names: &[String], rng: &mut ChaCha8Rng) -> String {
    let i = if rng.random_bool(0.8) { rng.random_range(0..POPULAR) } else { rng.random_range(0..names.len()) };
    names[i].clone()
}

fn model_events(run: u32, step: u32, t: u64, call: u64, reply: &str) -> [Event; 2] {
    [
        ev(
            run,
            step,
            t,
            EventKind::ModelCall {
                call,
                role: Role::Actor,
                model: "sim".into(),
                simulated: true,
                messages: vec![Message::system("You are the actor."), Message::user("Task: find it\n".repeat(20))],
                wire: None,
            },
        ),
        ev(
            run,
            step,
            t,
            EventKind::ModelReply {
                call,
                role: Role::Actor,
                model: "sim".into(),
                text: reply.into(),
                tool_calls: vec![],
                usage: Usage::new(900, 12),
                cost: 0.0009,
                latency_ms: 3,
                fault: None,
                wire: None,
                first_token_ms: None,
                capped: None,
            },
        ),
    ]
}

fn tool_events(run: u32, step: u32, t: u64, call: u64, tool: &str, done: bool) -> Vec<Event> {
    let mut out =
        vec![ev(run, step, t, EventKind::ToolCall { call, tool: tool.into(), args: json!({"q": "x"}), lane: None })];
    if done {
        out.push(ev(
            run,
            step,
            t,
            EventKind::ToolResult {
                call,
                tool: tool.into(),
                outcome: ToolOutcome::Ok { value: json!({"result": "a".repeat(300)}) },
                latency_ms: 2,
                cost: 1.0,
                fault: None,
                filtered: false,
                lane: None,
                source: None,
            },
        ));
    }
    out
}

/// The graph without trajectories: its tools' rows are one shared row.
fn uniform_graph(names: &[String], _: &mut ChaCha8Rng) -> ToolGraph {
    ToolGraph::fully_connected(names)
}

type MakeGraph = fn(&[String], &mut ChaCha8Rng) -> ToolGraph;

/// A session over 16,000 tools: `RUNS` finished tasks, each with its graph
/// update, then a task two tools into its path with a third call in flight.
fn long_session(make_graph: MakeGraph) -> Vec<Event> {
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    let names: Vec<String> = (0..TOOLS).map(|i| format!("tool_{i:05}")).collect();
    let mut graph = make_graph(&names, &mut rng);
    let tools = names
        .iter()
        .map(|n| ToolBrief {
            name: n.clone(),
            description: format!("does {n}"),
            category: None,
            cost: 1.0,
            server: None,
        })
        .collect();
    let model = |role, name: &str| RoleModel {
        role,
        model: ModelInfo { name: name.into(), kind: ModelKind::Sim, simulated: true },
        price: Price { input_per_mtok: 0.5, output_per_mtok: 1.5 },
    };
    let mut out = vec![ev(
        0,
        0,
        0,
        EventKind::SessionStarted {
            schema: 1,
            strategy: StrategyKind::Toolnet,
            seed: 1,
            params: Params::default(),
            models: vec![model(Role::Actor, "sim"), model(Role::Evaluator, "sim")],
            tools,
            cost_unit: "credits".into(),
            tasks: RUNS as u32 + 1,
            task_list: vec![],
            available_models: vec![],
            pace_ms: 0,
            graph: Some(GraphSnapshot::of(&graph)),
            experience: None,
        },
    )];
    let mut t = 1u64;
    let mut call = 1u64;
    let params = Params::default();
    for run in 1..=RUNS as u32 + 1 {
        let last = run == RUNS as u32 + 1;
        out.push(ev(
            run,
            0,
            t,
            EventKind::RunStarted {
                task_id: format!("t{run}"),
                task: "find it".into(),
                gold: None,
                index: run,
                total: RUNS as u32 + 1,
            },
        ));
        let hits: Vec<Scored> = (0..10)
            .map(|k| Scored {
                name: pick(&names, &mut rng),
                score: 10.0 - k as f32,
                lexical: 5.0,
                dense: None,
                head: None,
                rescore: None,
            })
            .collect();
        out.push(ev(run, 0, t, EventKind::Retrieved { query: "find it".into(), source: "bm25".into(), hits }));
        let path: Vec<String> = (0..3).map(|_| pick(&names, &mut rng)).collect();
        let mut from = START.to_string();
        for (step, tool) in path.iter().enumerate() {
            let step = step as u32 + 1;
            t += 1;
            let mut offered: Vec<Offered> = (0..4)
                .map(|_| Offered { name: pick(&names, &mut rng), weight: Some(0.1), shown: Some("10".into()) })
                .collect();
            offered.push(Offered { name: tool.clone(), weight: Some(0.2), shown: Some("20".into()) });
            out.push(ev(run, step, t, EventKind::Candidates { from: from.clone(), offered }));
            out.extend(model_events(run, step, t, call, &format!("{{\"tool\": \"{tool}\"}}")));
            call += 1;
            out.extend(tool_events(run, step, t, call, tool, !(last && step == 3)));
            call += 1;
            from = tool.clone();
        }
        if last {
            break;
        }
        t += 1;
        out.push(ev(
            run,
            4,
            t,
            EventKind::RunFinished {
                outcome: RunOutcome::Answered,
                answer: Some("it".into()),
                success: Some(rng.random_bool(0.7)),
                cost: 3.0,
                usage: Usage::new(2700, 36),
                steps: 3,
                tool_calls: 3,
                expect: None,
            },
        ));
        let scores: BTreeMap<String, i32> = path.iter().map(|p| (p.clone(), rng.random_range(-3..=3))).collect();
        let update = graph.apply_scores(&scores, params.alpha, params.beta);
        out.push(ev(run, 4, t, EventKind::Evaluated { scores }));
        out.push(ev(run, 4, t, EventKind::GraphUpdated { update }));
    }
    out
}

/// The workbench folded over a long session, in the graph mode asked for;
/// the session is made the first time.
fn scene(slot: &RefCell<Option<App>>, make_graph: MakeGraph, mode: GraphMode) -> std::cell::RefMut<'_, App> {
    let mut app = std::cell::RefMut::map(slot.borrow_mut(), |slot| {
        slot.get_or_insert_with(|| {
            let started = std::time::Instant::now();
            let session = long_session(make_graph);
            let built = started.elapsed();
            let mut app = App::live();
            for e in session {
                app.update(Action::Engine(e));
            }
            eprintln!("session built in {built:?}, folded in {:?}", started.elapsed() - built);
            app
        })
    });
    app.nav.graph_mode = mode;
    app
}

/// Where a pane sits in the full frame.
fn area_of(app: &App, pane: Pane) -> Rect {
    let (main, _) = status_area(Rect::new(0, 0, SIZE.0, SIZE.1));
    let placed = pane.placed(app.state.strategy);
    wide_panes(main, app).iter().find(|(p, _)| *p == placed).map(|(_, r)| *r).expect("the pane is laid out")
}

fn frame(c: &mut Criterion) {
    let theme = Theme::default();
    let learnt = RefCell::new(None);
    let uniform = RefCell::new(None);
    let mut terminal = Terminal::new(TestBackend::new(SIZE.0, SIZE.1)).unwrap();
    let mut group = c.benchmark_group("frame_160x48_16000_tools");
    group.sample_size(30);
    for (id, slot, make_graph, mode) in [
        ("neighbourhood", &learnt, learnt_graph as MakeGraph, GraphMode::Neighbourhood),
        ("whole_ranked_table", &learnt, learnt_graph, GraphMode::Whole),
        ("neighbourhood_shared_row", &uniform, uniform_graph, GraphMode::Neighbourhood),
        ("whole_ranked_table_shared_row", &uniform, uniform_graph, GraphMode::Whole),
    ] {
        group.bench_function(
            id,
            peak::tracked(|b: &mut Bencher| {
                let app = scene(slot, make_graph, mode);
                b.iter(|| {
                    terminal.draw(|f| draw(f, &app, &theme)).unwrap();
                })
            }),
        );
        peak::report(&format!("frame_160x48_16000_tools/{id}"));
    }
    group.finish();

    // Each pane alone, in the room the full frame gives it.
    let mut group = c.benchmark_group("pane_160x48_16000_tools");
    group.sample_size(30);
    // What every pane's figure includes: the terminal's own work on a frame.
    group.bench_function(
        "empty_frame",
        peak::tracked(|b: &mut Bencher| {
            b.iter(|| {
                terminal.draw(|_| ()).unwrap();
            })
        }),
    );
    peak::report("pane_160x48_16000_tools/empty_frame");
    // (id, pane (None: the status line), the pane whose room it takes, graph mode)
    let panes = [
        ("graph_neighbourhood", Some(Pane::Graph), Pane::Graph, GraphMode::Neighbourhood),
        ("graph_whole_table", Some(Pane::Graph), Pane::Graph, GraphMode::Whole),
        ("transcript", Some(Pane::Transcript), Pane::Transcript, GraphMode::Whole),
        ("budget", Some(Pane::Budget), Pane::Budget, GraphMode::Whole),
        ("models", Some(Pane::Models), Pane::Models, GraphMode::Whole),
        ("retrieval", Some(Pane::Retrieval), Pane::Retrieval, GraphMode::Whole),
        ("workers", Some(Pane::Workers), Pane::Workers, GraphMode::Whole),
        // atc's pane, where the graph would be: in a ToolNet session it has no program to show.
        ("program", Some(Pane::Program), Pane::Graph, GraphMode::Whole),
        ("status_line", None, Pane::Graph, GraphMode::Whole),
    ];
    for (id, pane, room, mode) in panes {
        group.bench_function(
            id,
            peak::tracked(|b: &mut Bencher| {
                let app = scene(&learnt, learnt_graph, mode);
                let area = match pane {
                    Some(_) => area_of(&app, room),
                    None => status_area(Rect::new(0, 0, SIZE.0, SIZE.1)).1,
                };
                let ctx =
                    PaneCtx { state: &app.state, nav: &app.nav, theme: &theme, focused: false, now_ms: app.now_ms };
                b.iter(|| {
                    terminal
                        .draw(|f| match pane {
                            Some(p) => render_pane(f, area, p, &ctx),
                            None => status::render(f, area, &ctx),
                        })
                        .unwrap();
                })
            }),
        );
        peak::report(&format!("pane_160x48_16000_tools/{id}"));
    }
    group.finish();
}

criterion_group!(benches, frame);
criterion_main!(benches);
