//! One full frame of the workbench at 160×48 over a 16,000-tool library
//! (goal: median ≤ 5 ms), in the neighbourhood and whole-graph views.

use criterion::{Criterion, criterion_group, criterion_main};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use switchyard::engine::event::{GraphSnapshot, Offered, StrategyKind, ToolBrief, ToolOutcome};
use switchyard::engine::{Event, EventKind, Params};
use switchyard::model::{Message, Role, Usage};
use switchyard::ui::app::{Action, App};
use switchyard::ui::draw::draw;
use switchyard::ui::{GraphMode, Theme};

const TOOLS: usize = 16_000;
const OUT_EDGES: usize = 10;

fn ev(run: u32, step: u32, t: u64, kind: EventKind) -> Event {
    Event { v: 1, run, step, t, kind }
}

/// A session over 16,000 tools, a few steps into its third run.
fn big_session() -> Vec<Event> {
    let names: Vec<String> = (0..TOOLS).map(|i| format!("tool_{i:05}")).collect();
    let mut edges = Vec::with_capacity(TOOLS * (OUT_EDGES + 2));
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for (i, from) in names.iter().enumerate() {
        let w = 1.0 / (OUT_EDGES + 2) as f64;
        edges.push((from.clone(), from.clone(), w));
        edges.push((from.clone(), "end".to_string(), w));
        for _ in 0..OUT_EDGES {
            let j = (next() as usize) % TOOLS;
            if j != i {
                edges.push((from.clone(), names[j].clone(), w));
            }
        }
        edges.push(("start".to_string(), from.clone(), 1.0 / TOOLS as f64));
    }
    let scores = names.iter().take(500).enumerate().map(|(i, n)| (n.clone(), (i % 7) as f64 - 3.0)).collect();
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
    let mut out = vec![ev(
        0,
        0,
        0,
        EventKind::SessionStarted {
            schema: 1,
            strategy: StrategyKind::Toolnet,
            seed: 1,
            params: Params::default(),
            models: vec![],
            tools,
            cost_unit: "credits".into(),
            tasks: 3,
            task_list: vec![],
            available_models: vec![],
            pace_ms: 0,
            graph: Some(GraphSnapshot::new(2, edges, scores)),
            experience: None,
        },
    )];
    let mut t = 1;
    for run in 1..=3u32 {
        out.push(ev(
            run,
            0,
            t,
            EventKind::RunStarted {
                task_id: format!("t{run}"),
                task: "find it".into(),
                gold: None,
                index: run,
                total: 3,
            },
        ));
        for step in 1..=3u32 {
            t += 1;
            let from = if step == 1 { "start".to_string() } else { names[step as usize].clone() };
            let offered = (0..5)
                .map(|k| Offered { name: names[k * 7].clone(), weight: Some(0.1), shown: Some("10".into()) })
                .collect();
            out.push(ev(run, step, t, EventKind::Candidates { from, offered }));
            out.push(ev(
                run,
                step,
                t,
                EventKind::ModelCall {
                    call: t,
                    role: Role::Actor,
                    model: "sim".into(),
                    simulated: true,
                    messages: vec![Message::system("You are the actor."), Message::user("Task: find it\n".repeat(20))],
                },
            ));
            out.push(ev(
                run,
                step,
                t,
                EventKind::ModelReply {
                    call: t,
                    role: Role::Actor,
                    model: "sim".into(),
                    text: "{\"tool\": \"tool_00003\"}".into(),
                    tool_calls: vec![],
                    usage: Usage { prompt_tokens: 900, completion_tokens: 12 },
                    cost: 0.0,
                    latency_ms: 3,
                    fault: None,
                },
            ));
            out.push(ev(
                run,
                step,
                t,
                EventKind::ToolCall { call: t + 1, tool: names[3].clone(), args: json!({"q": "x"}), lane: None },
            ));
            if !(run == 3 && step == 3) {
                out.push(ev(
                    run,
                    step,
                    t,
                    EventKind::ToolResult {
                        call: t + 1,
                        tool: names[3].clone(),
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
            t += 1;
        }
    }
    out
}

fn bench(c: &mut Criterion) {
    let theme = Theme::default();
    let mut app = App::live();
    for e in big_session() {
        app.update(Action::Engine(e));
    }
    let mut terminal = Terminal::new(TestBackend::new(160, 48)).unwrap();
    let mut group = c.benchmark_group("frame_160x48_16000_tools");
    group.sample_size(30);
    group.bench_function("neighbourhood", |b| {
        b.iter(|| {
            terminal.draw(|f| draw(f, &app, &theme)).unwrap();
        })
    });
    app.view.graph_mode = GraphMode::Whole;
    group.bench_function("whole_ranked_table", |b| {
        b.iter(|| {
            terminal.draw(|f| draw(f, &app, &theme)).unwrap();
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
