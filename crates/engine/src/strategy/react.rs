//! ReAct, the baseline: at every step the actor is offered the top-K tools
//! retrieved for the task, without weights. The smallest strategy: a new one
//! starts from this file (implement [`Strategy`], register it in `mod.rs`).

use async_trait::async_trait;

use super::stepwise::{self, Candidates};
use crate::engine::{CostShape, Halt, Host, Strategy, StrategyKind};
use crate::task::Task;

#[derive(Clone, Copy, Debug, Default)]
pub struct React;

impl Candidates for React {
    fn candidates(&self, _host: &dyn Host, _node: &str, retrieved: &[String]) -> Vec<(String, Option<f64>)> {
        retrieved.iter().map(|n| (n.clone(), None)).collect()
    }

    /// Retrieved once per task, unless each helpful result re-queries.
    fn steady(&self, host: &dyn Host) -> bool {
        !host.requery()
    }
}

#[async_trait]
impl Strategy for React {
    fn kind(&self) -> StrategyKind {
        StrategyKind::React
    }

    fn cost_shape(&self, host: &dyn Host, query: &str, candidates: &[String]) -> CostShape {
        stepwise::cost_shape(self, host, query, candidates)
    }

    async fn run(&mut self, host: &mut dyn Host, task: &Task) -> Result<Option<String>, Halt> {
        stepwise::act(self, host, task, &mut Vec::new()).await
    }
}
