//! The simulated model: deterministic, offline, honest about what it is.
//!
//! It reads the same prompt a real model is shown (the text protocol of
//! `strategy::prompt`), never a side channel, and answers in the same reply
//! format. As actor it chooses among the offered candidates by lexical
//! relevance to the task, the shown weights and seeded noise, and fills the
//! arguments from the task text and the history; as evaluator it scores a
//! trajectory by its observed outcomes; as judge it tells a useful result
//! from an error or an empty one. The rewoo roles (classifier, planner,
//! solver) reuse the actor's heuristics (relevance, argument filling,
//! usefulness), so the two strategies are compared on the same
//! "intelligence"; ATC's program writer (`atc`) plans with the rewoo
//! planner's choices and writes them as a program.
//!
//! This file holds the model and its dispatch on the role; each role answers
//! in a file of its own, over shared readers of the task (`extract`,
//! `relevance`, `arguments`) and of results (`observation`, `answer`).
//!
//! Every call's randomness comes from the seed and a hash of the request, so
//! the same request gets the same reply whatever the call order or timing.

mod actor;
mod agent;
mod answer;
mod arguments;
mod atc;
mod classifier;
mod evaluator;
mod extract;
mod observation;
mod planner;
mod relevance;
mod rerank;
mod scanner;
mod solver;
mod synthetic_questions;

use async_trait::async_trait;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage, tokens};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
#[serde(default)]
pub struct SimConfig {
    pub name: String,
    pub seed: u64,
    /// 0..1: the size of the noise added to the actor's scores, and the
    /// probability that it picks a random candidate instead (a weak model's
    /// mistakes).
    pub noise: f64,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig { name: "sim".into(), seed: 0, noise: 0.1 }
    }
}

pub struct SimModel {
    config: SimConfig,
}

impl SimModel {
    /// A noise outside [0, 1] (or NaN) is clamped into it.
    pub fn new(mut config: SimConfig) -> Self {
        config.noise = if config.noise.is_nan() { 0.0 } else { config.noise.clamp(0.0, 1.0) };
        SimModel { config }
    }

    pub fn config(&self) -> &SimConfig {
        &self.config
    }

    /// The generator of one call: the seed and the request's content, nothing else.
    fn rng_for(&self, req: &ChatRequest) -> ChaCha8Rng {
        let mut h = Sha256::new();
        h.update(self.config.seed.to_le_bytes());
        h.update(req.role.as_str().as_bytes());
        for m in &req.messages {
            h.update(serde_json::to_vec(&m.role).unwrap_or_default());
            h.update((m.content.len() as u64).to_le_bytes());
            h.update(m.content.as_bytes());
        }
        h.update(serde_json::to_vec(&req.tools).unwrap_or_default());
        ChaCha8Rng::from_seed(h.finalize().into())
    }

    fn reply_text(&self, req: &ChatRequest, rng: &mut ChaCha8Rng) -> String {
        match req.role {
            // `retrieval synth` asks the actor's model for questions.
            Role::Actor if crate::retrieve::synthetic_questions::parse_prompt(&req.messages).is_some() => {
                synthetic_questions::synth_reply(&req.messages, rng)
            }
            // `retrieval eval --rerank-model` asks it to choose a tool.
            Role::Actor if crate::retrieve::rerank::parse_prompt(&req.messages).is_some() => {
                rerank::rerank_reply(&req.messages)
            }
            Role::Actor => actor::actor_reply(&req.messages, self.config.noise, rng),
            Role::Evaluator => evaluator::evaluator_reply(&req.messages),
            Role::Judge => evaluator::judge_reply(&req.messages),
            Role::Classifier => classifier::classifier_reply(&req.messages, self.config.noise, rng),
            // ATC's program writer is the planner too, with prompts of its own.
            Role::Planner if atc::is_atc(&req.messages) => atc::atc_reply(&req.messages, self.config.noise, rng),
            Role::Planner => planner::planner_reply(&req.messages, self.config.noise, rng),
            Role::Solver => solver::solver_reply(&req.messages, self.config.noise, rng),
            Role::Agent => agent::agent_reply(&req.messages, &req.tools).0,
            Role::Scanner => scanner::scanner_reply(&req.messages),
        }
    }
}

#[async_trait]
impl ChatModel for SimModel {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: self.config.name.clone(), kind: ModelKind::Sim, simulated: true }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        let mut rng = self.rng_for(req);
        let (text, tool_calls) = match req.role {
            Role::Agent => agent::agent_reply(&req.messages, &req.tools),
            _ => (self.reply_text(req, &mut rng), Vec::new()),
        };
        // As a server does: the reply ends before the first stop sequence.
        let text = match req.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
            Some(end) => text[..end].to_string(),
            None => text,
        };
        let mut prompt_tokens = tokens::count_messages(&req.messages);
        if !req.tools.is_empty() {
            prompt_tokens += tokens::count(&serde_json::to_string(&req.tools).unwrap_or_default());
        }
        let calls: u64 = tool_calls.iter().map(|c| tokens::count(&format!("{}{}", c.name, c.arguments))).sum();
        let usage = Usage::new(prompt_tokens, tokens::count(&text) + calls);
        Ok(ChatResponse::new(text, tool_calls, usage))
    }
}
