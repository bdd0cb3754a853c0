//! One rewoo step of N = 2, 4, 8 calls of 200 ms each, through the engine:
//! the lanes run together, so the run takes about as long as one call
//! (goal: within 1.1x of 200 ms), where the seed's reference worker,
//! calling them one after another, takes N x 200 ms. The planner and the
//! solver answer at once, so the run's time is the step's.

#[path = "support/allocator.rs"]
mod allocator;

#[path = "support/peak.rs"]
mod peak;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use criterion::{Bencher, BenchmarkId, Criterion, SamplingMode, criterion_group, criterion_main};
use serde_json::json;
use switchyard::engine::{Control, Engine, EngineSetup, Models, Scheduled, StrategyKind};
use switchyard::model::price::Price;
use switchyard::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage};
use switchyard::task::Task;
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};
use switchyard::tool::{ExecutorSpec, ToolLibrary, ToolSpec};

const CALL_MS: u64 = 200;

/// Plans one step calling every tool together, then answers.
struct OneStep {
    plan: String,
}

#[async_trait]
impl ChatModel for OneStep {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "one-step".into(), kind: ModelKind::Sim, simulated: true }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let text = if req.role == Role::Planner { self.plan.clone() } else { "Answer: done".into() };
        Ok(ChatResponse::new(text, vec![], Usage::default()))
    }
}

fn tool(i: usize) -> ToolSpec {
    ToolSpec {
        name: format!("lookup_{i}"),
        description: "Country facts lookup".into(),
        category: Some("Information Retrieval".into()),
        cost: 1.0,
        parameters: json!({"type": "object", "required": ["country"], "properties": {"country": {"type": "string"}}}),
        response: None,
        executor: ExecutorSpec::Builtin { function: "geo_lookup".into() },
        source: None,
    }
}

fn setup(n: usize) -> (EngineSetup, Vec<Task>) {
    let library = Arc::new(ToolLibrary::new((0..n).map(tool).collect()).expect("library"));
    let calls: Vec<String> = (0..n).map(|i| format!("lookup_{i}[{{\"country\": \"Japan\"}}]")).collect();
    let model = Arc::new(OneStep { plan: format!("Plan: all at once.\n#E1 = {}", calls.join("; ")) });
    let mut s = EngineSetup::new(library, Models::single(model, Price::default()), StrategyKind::Rewoo);
    s.params.top_k = n;
    // Every call takes 200 ms: the slow fault delays it, then it runs.
    let slow = Fault { mode: FaultMode::Slow { ms: CALL_MS }, scope: FaultScope::UntilCleared };
    s.schedule = (0..n)
        .map(|i| Scheduled {
            before_task: 1,
            control: Control::InjectFault { tool: format!("lookup_{i}"), fault: slow },
        })
        .collect();
    let task = Task { id: "t".into(), query: "Capital of Japan?".into(), ..Task::default() };
    (s, vec![task])
}

fn step(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    let mut group = c.benchmark_group("rewoo_step");
    // Every iteration is >= 200 ms: one per sample, ten samples.
    group.sampling_mode(SamplingMode::Flat);
    group.sample_size(10);
    group.warm_up_time(Duration::from_millis(500));
    group.measurement_time(Duration::from_secs(3));
    for n in [2usize, 4, 8] {
        group.bench_with_input(
            BenchmarkId::from_parameter(n),
            &n,
            peak::tracked_input(|b: &mut Bencher, &n: &usize| {
                b.to_async(&rt).iter(|| async move {
                    let (s, tasks) = setup(n);
                    let (engine, _handle) = Engine::new(s);
                    let outcome = engine.run(tasks).await.expect("run");
                    assert_eq!(outcome.state.finished[0].tool_calls as usize, n);
                })
            }),
        );
        peak::report(&format!("rewoo_step/{n}"));
    }
    group.finish();
}

criterion_group!(benches, step);
criterion_main!(benches);
