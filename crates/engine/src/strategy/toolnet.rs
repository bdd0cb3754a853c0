//! ToolNet (docs/src/papers/toolnet.md): the actor walks the tool graph. It is
//! offered the top-K retrieved tools at the start, ranked by their weight from
//! `start`, then the out-neighbours of the last tool that helped, each with its
//! edge weight (where that tool's row is the uniform prior over the whole
//! library, the top-K retrieved again, weighed from it). After each task an evaluator scores every tool used and the
//! graph learns (the formulas: `graph/toolnet.rs`).

use std::collections::BTreeMap;

use async_trait::async_trait;

use super::prompt::{self, EvalInput, HistoryEntry};
use super::stepwise::{self, Candidates, refuse_malformed};
use crate::engine::{CostShape, Halt, Host, Strategy, StrategyKind};
use crate::graph::{END, START};
use crate::model::{ChatRequest, Role};
use crate::task::Task;

#[derive(Clone, Copy, Debug, Default)]
pub struct Toolnet;

impl Candidates for Toolnet {
    fn candidates(&self, host: &dyn Host, node: &str, retrieved: &[String]) -> Vec<(String, Option<f64>)> {
        let Some(g) = host.graph() else {
            return retrieved.iter().map(|n| (n.clone(), None)).collect();
        };
        if node != START && !g.follows_any_tool_row(node) {
            return g
                .out_edges(node)
                .into_iter()
                .map(|(to, w)| if to == END { (prompt::FINISH.to_string(), Some(w)) } else { (to, Some(w)) })
                .collect();
        }
        // `start`, and a tool whose row is the uniform prior over the whole
        // library (no trajectory told its next steps apart): the retriever
        // picks among the library, the graph weighs what it picked.
        let mut v: Vec<(String, Option<f64>)> = retrieved.iter().map(|n| (n.clone(), g.weight(node, n))).collect();
        if node != START {
            v.push((prompt::FINISH.to_string(), g.weight(node, END)));
        }
        v.sort_by(|a, b| b.1.unwrap_or(0.0).total_cmp(&a.1.unwrap_or(0.0)).then_with(|| a.0.cmp(&b.0)));
        v
    }
}

#[async_trait]
impl Strategy for Toolnet {
    fn kind(&self) -> StrategyKind {
        StrategyKind::Toolnet
    }

    fn walks_graph(&self) -> bool {
        true
    }

    fn cost_shape(&self, host: &dyn Host, query: &str, candidates: &[String]) -> CostShape {
        stepwise::cost_shape(self, host, query, candidates)
    }

    async fn run(&mut self, host: &mut dyn Host, task: &Task) -> Result<Option<String>, Halt> {
        let mut history = Vec::new();
        let found = stepwise::act(self, host, task, &mut history).await;
        // The graph learns from every run that used a tool and was not cut
        // short, whatever its outcome; a failed evaluation teaches nothing.
        let answer = found.as_ref().ok().and_then(|a| a.as_deref());
        if !history.is_empty() && !host.cut_short() {
            match evaluate(host, task, &history, answer).await {
                Ok(())
                | Err(Halt::Stopped | Halt::Restarted | Halt::OutOfBudget | Halt::ModelFailed(_) | Halt::BadPlan(_)) => {
                }
                Err(Halt::Engine(e)) => return Err(Halt::Engine(e)),
            }
        }
        found
    }
}

/// ToolNet's dynamic construction: the evaluator scores every tool used,
/// and the graph learns from the scores.
pub(crate) async fn evaluate(
    host: &mut dyn Host,
    task: &Task,
    history: &[HistoryEntry],
    answer: Option<&str>,
) -> Result<(), Halt> {
    let view = EvalInput { task: task.query.clone(), steps: history.to_vec(), answer: answer.map(str::to_string) };
    let mut used: Vec<String> = history.iter().map(|h| h.tool.clone()).collect();
    used.sort();
    used.dedup();
    let req = ChatRequest::constrained(Role::Evaluator, prompt::render_eval(&view), prompt::eval_schema(&used))
        .stopping_at(prompt::EVAL_STOP);
    let reply = host.model(req).await?;
    let scores = match prompt::parse_eval_reply(&reply) {
        Ok(s) => s,
        Err(e) => {
            refuse_malformed(host, &e)?;
            return Ok(());
        }
    };
    // Only tools that were really called this run can be scored.
    let used: BTreeMap<String, i32> = scores
        .into_iter()
        .filter(|(t, _)| history.iter().any(|h| &h.tool == t) && host.library().get(t).is_some())
        .collect();
    host.emit(crate::engine::EventKind::Evaluated { scores: used.clone() })?;
    host.learn(&used)?;
    Ok(())
}
