//! Engine cost per step: a whole session over the smoke tasks, with the
//! simulated model and the sample builtin tools, reported per step (one
//! model call plus, usually, one tool call). A second group replaces the
//! model with an instant one to show the engine's own share, and a third
//! saves the learnt graph after every task as `run` does.
//!
//! With the instant model, seven of the eight smoke tasks are not offered the
//! calculator, so its calls are refused and they run to `max_steps` (8 steps
//! each, 58 in all): most of `instant_model`'s steps are a model call and a
//! refusal, not a tool call. `instant_model_2plus2` runs the task of
//! scripts/langgraph-side-by-side.sh instead, "Calculate 2+2." eight times in
//! a session: each a calculator call, then the answer (two steps; retrieval
//! offers the calculator for this wording, not for "What is 2+2?").
//!
//! Each session gets the one retrieval index its library has, built once,
//! as `session::prepare` gives every engine of a session (and every task of
//! a concurrent eval) the same one.
//!
//! `engine_step_16000_tools` runs the 2+2 session over the generated
//! 16,000-tool library of `support/library.rs`: react (retrieval over the
//! whole library every task) and toolnet (also the graph's candidates, and
//! after every task the update of `start`'s row and the shared row, each
//! leading to every tool), in sessions of 64 tasks.

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/library.rs"]
mod library;

#[path = "support/peak.rs"]
mod peak;

use std::cell::{Cell, OnceCell};
use std::sync::Arc;

use async_trait::async_trait;
use criterion::{Bencher, Criterion, Throughput, criterion_group, criterion_main};

use switchyard::config::Config;
use switchyard::engine::{Engine, EngineSetup, LogicalClock, Models, StrategyKind};
use switchyard::graph::GraphStore;
use switchyard::model::price::Price;
use switchyard::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage};
use switchyard::retrieve::Retriever;
use switchyard::session;
use switchyard::task::{Task, load_tasks};
use switchyard::tool::ToolLibrary;

/// Calls the calculator once, then answers: the cheapest possible model.
struct Instant;

#[async_trait]
impl ChatModel for Instant {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "instant".into(), kind: ModelKind::Sim, simulated: true }
    }
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let text = match req.role {
            Role::Evaluator => r#"{"scores": {"calculator": 1}}"#.to_string(),
            _ if req.messages.iter().any(|m| m.content.contains("-> result:")) => {
                r#"{"tool": "finish", "answer": "4"}"#.into()
            }
            _ => r#"{"tool": "calculator", "arguments": {"expression": "2+2"}}"#.into(),
        };
        Ok(ChatResponse::new(text, vec![], Usage::new(100, 10)))
    }
}

/// `n` tasks of "Calculate 2+2.", the task of the side-by-side script.
fn adds(n: usize) -> Vec<Task> {
    (1..=n)
        .map(|i| Task {
            id: format!("add{i}"),
            query: "Calculate 2+2.".into(),
            answer: Some("4".into()),
            tools: vec!["calculator".into()],
            ..Task::default()
        })
        .collect()
}

/// The library's one retrieval index, as `session::prepare` builds it.
fn bm25(library: &ToolLibrary) -> Retriever {
    Retriever::lexical(library.tools().iter().map(|t| (t.name.as_str(), t.description.as_str())))
}

fn bench(c: &mut Criterion) {
    let cfg = Config::default();
    let library = session::load_library(&cfg).unwrap();
    let tasks = load_tasks(&switchyard::config::sample_dir().join("tasks/smoke.toml")).unwrap();
    let graph = session::build_graph(&cfg, &library).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let models_sim = cfg.build_models(42).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let two_plus_two = adds(8);
    let retriever = bm25(&library);
    let session_steps = |tasks: &[Task], models: Models, saved: bool| {
        let mut setup = EngineSetup::new(library.clone(), models, StrategyKind::Toolnet);
        setup.graph = Some(graph.clone());
        setup.retriever = Some(retriever.clone());
        // The learnt graph saved after every task, as `run` does.
        setup.graph_store = saved.then(|| GraphStore::open(dir.path().join("graph.json")).unwrap().1);
        setup.clock = Arc::new(LogicalClock::default());
        let (engine, _h) = Engine::new(setup);
        let out = rt.block_on(engine.run(tasks.to_vec())).unwrap();
        out.state.finished.iter().map(|r| r.steps as u64).sum::<u64>()
    };

    let mut group = c.benchmark_group("engine_step");
    group.sample_size(20);
    let instant = Models::single(Arc::new(Instant), Price::default());
    for (name, tasks, models, saved) in [
        ("sim", &tasks, models_sim, false),
        ("instant_model", &tasks, instant.clone(), false),
        ("instant_model_saved", &tasks, instant.clone(), true),
        ("instant_model_2plus2", &two_plus_two, instant, false),
    ] {
        let steps = session_steps(tasks, models.clone(), saved);
        if name == "instant_model_2plus2" {
            assert_eq!(steps, 2 * tasks.len() as u64, "each 2+2 task: a calculator call, then the answer");
        }
        group.throughput(Throughput::Elements(steps));
        group.bench_function(
            name,
            peak::tracked(|b: &mut Bencher| b.iter(|| session_steps(tasks, models.clone(), saved))),
        );
        peak::report(&format!("engine_step/{name}"));
    }
    group.finish();
}

/// The 16,000-tool library and what a session of it shares, made only if
/// a bench that needs it runs (the filter may exclude them).
struct Big {
    _dir: tempfile::TempDir,
    library: Arc<ToolLibrary>,
    graph: switchyard::graph::ToolGraph,
    retriever: Retriever,
}

impl Big {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Config::load(&library::write(dir.path(), 16_000)).unwrap();
        let library = session::load_library(&cfg).unwrap();
        assert_eq!(library.tools().len(), 16_000, "{} sample tools and the generated ones", library::SAMPLE_TOOLS);
        let graph = session::build_graph(&cfg, &library).unwrap();
        let retriever = bm25(&library);
        Big { _dir: dir, library, graph, retriever }
    }
}

fn at_16000_tools(c: &mut Criterion) {
    let big = OnceCell::new();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let instant = Models::single(Arc::new(Instant), Price::default());
    // A longer session than above: what a session does once (its first
    // event lists 16,000 tools, and toolnet's carries the graph) is spread
    // over 64 tasks, still far fewer than a session at this scale runs.
    let tasks = adds(64);
    let mut group = c.benchmark_group("engine_step_16000_tools");
    group.sample_size(10);
    for strategy in [StrategyKind::React, StrategyKind::Toolnet] {
        let session_steps = || {
            let big: &Big = big.get_or_init(Big::new);
            let mut setup = EngineSetup::new(big.library.clone(), instant.clone(), strategy);
            setup.graph = (strategy == StrategyKind::Toolnet).then(|| big.graph.clone());
            setup.retriever = Some(big.retriever.clone());
            setup.clock = Arc::new(LogicalClock::default());
            let (engine, _h) = Engine::new(setup);
            let out = rt.block_on(engine.run(tasks.clone())).unwrap();
            out.state.finished.iter().map(|r| r.steps as u64).sum::<u64>()
        };
        // Each 2+2 task: a calculator call, then the answer (checked once,
        // before the bench's first sample).
        let steps = 2 * tasks.len() as u64;
        let checked = Cell::new(false);
        group.throughput(Throughput::Elements(steps));
        let name = format!("{strategy:?}").to_lowercase();
        group.bench_function(
            &name,
            peak::tracked(|b: &mut Bencher| {
                if !checked.replace(true) {
                    assert_eq!(session_steps(), steps, "{strategy:?}: each task, a calculator call then the answer");
                }
                b.iter(session_steps)
            }),
        );
        peak::report(&format!("engine_step_16000_tools/{name}"));
    }
    group.finish();
}

criterion_group!(benches, bench, at_16000_tools);
criterion_main!(benches);
