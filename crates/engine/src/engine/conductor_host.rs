//! The engine serving a strategy: [`Host`] over the conductor's own parts.

use std::collections::BTreeMap;
use std::path::Path;

use async_trait::async_trait;
use serde_json::Value;

use super::agent::calls::{AgentNext, Bridged};
use super::conductor::Engine;
use super::error::EngineError;
use super::event::EventKind;
use super::host::{Halt, Host, Labels, LaneDone, LaneRequest, Strategy};
use super::models::Models;
use super::params::Params;
use crate::budget::btp::RunBudget;
use crate::budget::experience::Experience;
use crate::graph::ToolGraph;
use crate::model::{ChatRequest, ChatResponse};
use crate::tool::{ToolLibrary, ToolResult};

impl Engine {
    /// The top `k` tools, shown as a `Retrieved` event with each score's
    /// parts. A dense embedder that fails (an endpoint gone down) is left
    /// out from then on, and the switch to BM25 is an event of its own.
    pub(super) fn retrieve_k(&mut self, query: &str, k: usize) -> Result<Vec<String>, EngineError> {
        // A task with its own candidate set is ranked within it.
        let within = !self.candidates.is_empty();
        let depth = if within { self.library.len() } else { k };
        let mut hits = match self.retriever.search(query, depth) {
            Ok(hits) => hits,
            Err(e) => {
                self.fall_back_to_lexical(&e)?;
                self.retriever.search_lexical(query, depth)
            }
        };
        if within {
            hits.retain(|h| self.candidates.contains(&h.name));
            hits.truncate(k);
        }
        self.emit(EventKind::Retrieved {
            query: query.to_owned(),
            source: self.retriever.source(),
            hits: hits.clone(),
        })?;
        let mut names: Vec<String> = hits.into_iter().map(|h| h.name).collect();
        // Walked lazily: the loop stops at k, and the library may hold
        // 16,000 names.
        let fill: Box<dyn Iterator<Item = &str>> = if within {
            Box::new(self.candidates.iter().map(String::as_str).filter(|c| self.library.get(c).is_some()))
        } else {
            Box::new(self.library.names())
        };
        for t in fill {
            if names.len() >= k {
                break;
            }
            if !names.iter().any(|n| n == t) {
                names.push(t.to_string());
            }
        }
        Ok(names)
    }

    /// The dense part failed: BM25 ranks alone from now on, and says so.
    pub(super) fn fall_back_to_lexical(&mut self, e: &crate::retrieve::EmbedError) -> Result<(), EngineError> {
        let from = self.retriever.source();
        self.retriever.drop_dense();
        self.emit(EventKind::RetrievalFallback { from, reason: e.to_string() })
    }

    /// Keeps what the graph learnt: saved durably after every change, so a
    /// session killed mid-run loses nothing it finished.
    pub(super) fn save_graph(&mut self) -> Result<(), EngineError> {
        if let (Some(store), Some(g)) = (self.graph_store.as_mut(), self.graph.as_ref()) {
            // A journal line per change; nothing when nothing changed.
            store.save(g)?;
        }
        Ok(())
    }
}

#[async_trait]
impl Host for Engine {
    fn params(&self) -> &Params {
        &self.params
    }

    fn library(&self) -> &ToolLibrary {
        &self.library
    }

    fn models(&self) -> &Models {
        &self.models
    }

    fn retrieve(&mut self, query: &str, k: usize) -> Result<Vec<String>, EngineError> {
        self.retrieve_k(query, k)
    }

    fn requery(&self) -> bool {
        self.requery
    }

    fn needs_tool(&mut self, query: &str) -> Result<bool, EngineError> {
        match self.retriever.judge(query) {
            None => Ok(true),
            Some(Ok((judge, score, needed))) => {
                self.emit(EventKind::ToolJudged { judge, score, needed })?;
                Ok(needed)
            }
            Some(Err(e)) => {
                // Without the query vector there is no verdict: tools stay offered.
                self.fall_back_to_lexical(&e)?;
                Ok(true)
            }
        }
    }

    fn graph(&self) -> Option<&ToolGraph> {
        self.graph.as_ref()
    }

    fn step(&self) -> u32 {
        self.step
    }

    fn next_step(&mut self) -> Result<(), EngineError> {
        self.step += 1;
        self.apply_pending()
    }

    fn cut_short(&self) -> bool {
        self.stop || self.restart
    }

    fn agent_tool(&self, name: &str) -> bool {
        self.is_agent_tool(name)
    }

    fn take_user_program(&mut self) -> Option<String> {
        if self.replaying() {
            return self.recorded_user_program();
        }
        self.user_program.take()
    }

    fn protocol_store(&self) -> Option<&crate::program::protocol::ProtocolStore> {
        self.protocols.as_ref()
    }

    fn emit(&mut self, kind: EventKind) -> Result<(), EngineError> {
        Engine::emit(self, kind)
    }

    async fn next_control(&mut self) -> Result<bool, EngineError> {
        Engine::next_control(self).await
    }

    async fn model(&mut self, req: ChatRequest) -> Result<ChatResponse, Halt> {
        self.model_call(req).await
    }

    async fn tool(&mut self, name: &str, args: &Value) -> Result<ToolResult, Halt> {
        self.tool_call(name, args).await
    }

    async fn step_calls(
        &mut self,
        label: u32,
        thought: String,
        lanes: Vec<LaneRequest>,
        budget: Option<&mut RunBudget>,
    ) -> Result<Vec<LaneDone>, Halt> {
        Engine::step_calls(self, label, thought, lanes, budget).await
    }

    async fn serve_agent(
        &mut self,
        incoming: Option<&mut tokio::sync::mpsc::Receiver<Bridged>>,
        budget: Option<&mut RunBudget>,
    ) -> Result<AgentNext, Halt> {
        Engine::serve_agent(self, incoming, budget).await
    }

    async fn end_agent_calls(&mut self, why: &str) -> Result<Vec<AgentNext>, Halt> {
        Engine::end_agent_calls(self, why).await
    }

    fn plan_budget(&mut self, query: &str, strategy: &dyn Strategy) -> Result<Option<RunBudget>, Halt> {
        Engine::plan_budget(self, query, strategy)
    }

    fn spend(&mut self, budget: &mut RunBudget, tool: &str, notes: &mut Vec<String>) -> Result<(), EngineError> {
        Engine::spend(self, budget, tool, notes)
    }

    fn spent(&self) -> f64 {
        self.tally.cost
    }

    fn judge_by_model(&self) -> bool {
        self.btp.as_ref().is_some_and(|b| b.model_judge)
    }

    fn record_usages(&mut self, usages: &[Experience]) -> Result<(), EngineError> {
        if let Some(b) = self.btp.as_mut() {
            b.experience.append(usages)?;
            if let Some(k) = self.kept.as_mut() {
                k.usages.extend_from_slice(usages);
            }
        }
        Ok(())
    }

    fn narrowed_offer(&mut self) -> Result<Option<Vec<String>>, EngineError> {
        self.narrowed_library()
    }

    fn learn(&mut self, scores: &BTreeMap<String, i32>) -> Result<(), EngineError> {
        let (alpha, beta) = (self.params.alpha, self.params.beta);
        if let Some(g) = self.graph.as_mut() {
            if let Some(k) = self.kept.as_mut() {
                k.scores.push(scores.clone());
            }
            // A bridged agent's own functions (those it offered its model,
            // called or not) join the graph when it first learns, from
            // `start` as a tool the library gains does: narrowing then
            // ranks a twin never called beside the one that failed.
            let mut joining: Vec<&String> = self.agent.own.seen.iter().filter(|n| !g.contains(n)).collect();
            joining.sort();
            for name in joining {
                if let Err(e) = g.add_tool(name) {
                    tracing::warn!(tool = %name, error = %e, "the agent's tool could not join the graph");
                }
            }
            let update = g.apply_scores(scores, alpha, beta);
            Engine::emit(self, EventKind::GraphUpdated { update })?;
            self.save_graph()?;
        }
        Ok(())
    }

    fn labels(&self) -> &Labels {
        &self.labels
    }

    fn set_labels(&mut self, labels: Labels, cache_key: Option<(String, String)>) {
        self.labels = labels;
        if cache_key.is_some() {
            self.label_key = cache_key;
        }
    }

    fn label_cache(&self) -> Option<&Path> {
        self.label_cache.as_deref()
    }
}
