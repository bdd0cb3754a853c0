//! An outside agent as a strategy: its model calls arrive from the gateway
//! (`crate::gateway`) as [`BridgedCall`]s, and each is a model call of the
//! session like any other (the gate, faults, approvals, breakpoints, the
//! trace), in the `agent` role. With a command, each run starts the agent
//! for its task and ends when the agent exits, its answer the agent's.

pub mod process;

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;

use self::process::{AgentCommand, Finished, Running};
use serde_json::Value;

use crate::budget::btp::{self as budget_rules, RunBudget};
use crate::budget::experience::Experience;
use crate::engine::agent::calls::{AgentNext, ToolEnd};
pub use crate::engine::agent::calls::{Bridged, BridgedCall, BridgedToolCall, GatewayRefusal, Refusal};
use crate::engine::{CostShape, EventKind, Halt, Host, Strategy, StrategyKind};
use crate::model::Role;
use crate::strategy::prompt::{HistoryEntry, Observation};
use crate::strategy::toolnet;
use crate::task::Task;

/// What the MCP gateway lists (`tools/list`): the session's library once
/// it is set up, and the names narrowing keeps of it (None: every tool).
/// Each change is a `notifications/tools/list_changed`.
#[derive(Clone, Debug, Default)]
pub struct ToolOffer {
    pub library: Option<crate::tool::ToolLibrary>,
    pub narrowed: Option<Vec<String>>,
}

/// Where the bridge tells the MCP gateway what narrowing keeps.
pub type OfferSender = Arc<tokio::sync::watch::Sender<ToolOffer>>;

pub struct Bridge {
    /// Shared by the session's engines, one after another (an eval's
    /// tasks): one agent runs at a time.
    calls: Arc<tokio::sync::Mutex<mpsc::Receiver<Bridged>>>,
    agent: Option<AgentCommand>,
    offer: Option<OfferSender>,
    /// What the offer was last narrowed for: (narrowing, K, tool calls served).
    offered_for: Option<(crate::engine::Narrowing, usize, usize)>,
}

/// Where a session's bridge will hear from its gateway: set up before the
/// session (the gateway must listen before the agent starts), taken once by
/// the session's engine.
#[derive(Clone)]
pub struct BridgeInbox {
    calls: Arc<tokio::sync::Mutex<mpsc::Receiver<Bridged>>>,
    pub agent: Option<AgentCommand>,
    /// The MCP gateway's offer, narrowed as `narrow` says.
    pub offer: Option<OfferSender>,
}

impl BridgeInbox {
    pub fn new(calls: mpsc::Receiver<Bridged>, agent: Option<AgentCommand>) -> Self {
        BridgeInbox { calls: Arc::new(tokio::sync::Mutex::new(calls)), agent, offer: None }
    }

    /// A bridge over this inbox, for the session's next engine. The
    /// engines of one session take turns (`eval --agent` runs one task at
    /// a time): two at once would answer each other's agents.
    pub fn bridge(&self) -> Bridge {
        Bridge {
            calls: Arc::clone(&self.calls),
            agent: self.agent.clone(),
            offer: self.offer.clone(),
            offered_for: None,
        }
    }
}

impl std::fmt::Debug for BridgeInbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BridgeInbox").field("agent", &self.agent.as_ref().map(|a| &a.argv)).finish()
    }
}

impl Bridge {
    /// Serves the calls that arrive on `calls`; with `agent`, starts it once
    /// per run.
    pub fn new(calls: mpsc::Receiver<Bridged>, agent: Option<AgentCommand>) -> Self {
        Bridge { calls: Arc::new(tokio::sync::Mutex::new(calls)), agent, offer: None, offered_for: None }
    }

    /// Narrows what the MCP gateway lists as `narrow` says.
    pub fn with_offer(mut self, offer: OfferSender) -> Self {
        self.offer = Some(offer);
        self
    }

    /// Narrows the MCP gateway's offer again when narrowing, its K or the
    /// agent's place changed since it was last narrowed.
    fn publish_offer(&mut self, host: &mut dyn Host, served: usize) -> Result<(), Halt> {
        let Some(offer) = self.offer.as_ref() else { return Ok(()) };
        let key = (host.params().narrow, host.params().narrow_k, served);
        if self.offered_for == Some(key) {
            return Ok(());
        }
        self.offered_for = Some(key);
        let narrowed = host.narrowed_offer()?;
        offer.send_if_modified(|o| {
            let changed = o.narrowed != narrowed;
            o.narrowed = narrowed;
            changed
        });
        Ok(())
    }
}

/// What a bridged run keeps of its tool calls: BTP's budget for the
/// run, and each call's usage for BTP's experience.
#[derive(Default)]
struct ToolLedger {
    budget: Option<RunBudget>,
    usages: Vec<Experience>,
    /// The run's tool calls in order: ToolNet's trajectory of the run.
    history: Vec<HistoryEntry>,
}

/// ToolNet's rule when no model evaluates: each call that helped counts
/// +1 for its tool, each that did not -1, clamped to the evaluator's
/// [-3, 3].
fn rule_scores(history: &[HistoryEntry]) -> BTreeMap<String, i32> {
    let mut scores = BTreeMap::new();
    for h in history {
        let raw: Result<Value, String> = match &h.observation {
            Observation::Result(v) => Ok(v.clone()),
            Observation::Error(e) | Observation::Refused(e) => Err(e.clone()),
        };
        *scores.entry(h.tool.clone()).or_insert(0) += if budget_rules::rule(&raw) { 1 } else { -1 };
    }
    scores.values_mut().for_each(|s: &mut i32| *s = (*s).clamp(-3, 3));
    scores
}

/// The graph learns from a bridged run as from one of ToolNet's: the
/// evaluator scores every tool the agent used when its role has a real
/// model, else the rule does; a run cut short teaches nothing.
async fn learn_from(
    host: &mut dyn Host,
    task: &Task,
    history: &[HistoryEntry],
    answer: Option<&str>,
) -> Result<(), Halt> {
    if history.is_empty() || host.cut_short() {
        return Ok(());
    }
    if !host.models().get(Role::Evaluator).model.info().simulated {
        return match toolnet::evaluate(host, task, history, answer).await {
            Err(Halt::Engine(e)) => Err(Halt::Engine(e)),
            _ => Ok(()),
        };
    }
    let scores: BTreeMap<String, i32> = rule_scores(history)
        .into_iter()
        .filter(|(t, _)| host.library().get(t).is_some() || host.agent_tool(t))
        .collect();
    host.emit(EventKind::Evaluated { scores: scores.clone() })?;
    host.learn(&scores)?;
    Ok(())
}

impl ToolLedger {
    /// One of the agent's tool calls ended: BTP spends it (and blacklists
    /// a tool whose result did not help), ToolNet's trajectory takes it.
    fn keep(&mut self, host: &mut dyn Host, query: &str, tool: String, args: Value, end: ToolEnd) -> Result<(), Halt> {
        let result = match end {
            ToolEnd::Abandoned => return Ok(()),
            ToolEnd::Refused(detail) => {
                self.history.push(HistoryEntry { tool, arguments: args, observation: Observation::Refused(detail) });
                return Ok(());
            }
            ToolEnd::Ran(result) => result,
        };
        let raw: Result<Value, String> = result.clone().map_err(|e| e.message);
        let helpful = budget_rules::rule(&raw);
        self.usages.push(budget_rules::usage(query, &tool, &args, &raw, helpful));
        let observation = match &result {
            Ok(v) => Observation::Result(v.clone()),
            Err(e) => Observation::Error(e.message.clone()),
        };
        // An unknown tool's call is the agent's mistake, not a tool's.
        let known = host.library().get(&tool).is_some();
        self.history.push(HistoryEntry { tool: tool.clone(), arguments: args, observation });
        if let Some(b) = self.budget.as_mut().filter(|_| known) {
            // Notes are for Switchyard's own actor; the agent reads refusals.
            host.spend(b, &tool, &mut Vec::new())?;
            if !helpful {
                b.blacklisted.insert(tool.clone());
                let reason = "its result was an error or empty for this task".to_string();
                host.emit(EventKind::Blacklisted { tool, reason })?;
            }
        }
        Ok(())
    }
}

/// What an agent's failed exit says, for the run's outcome.
fn failure(code: Option<i32>, last_words: Option<String>) -> String {
    let how = match code {
        Some(c) => format!("the agent exited with code {c}"),
        None => "the agent was killed by a signal".to_string(),
    };
    match last_words {
        Some(w) => format!("{how}: {w}"),
        None => how,
    }
}

#[async_trait]
impl Strategy for Bridge {
    fn kind(&self) -> StrategyKind {
        StrategyKind::Agent
    }

    /// ToolNet's graph learns from the agent's tool calls (through the MCP
    /// gateway), so the Graph pane follows an outside agent too.
    fn walks_graph(&self) -> bool {
        true
    }

    /// The agent's calls are not Switchyard's to plan: BTP's budget counts
    /// what they spend and nothing is reserved.
    fn cost_shape(&self, _host: &dyn Host, _query: &str, _candidates: &[String]) -> CostShape {
        CostShape::default()
    }

    async fn run(&mut self, host: &mut dyn Host, task: &Task) -> Result<Option<String>, Halt> {
        let mut running = match &self.agent {
            None => None,
            Some(cmd) => match process::start(cmd, &task.query) {
                Ok(r) => {
                    host.emit(EventKind::AgentStarted {
                        command: cmd.shown(&task.query),
                        pid: r.pid,
                        argv: cmd.argv.clone(),
                        answer_file: cmd.answer_file.clone(),
                    })?;
                    Some(r)
                }
                Err(error) => {
                    host.emit(EventKind::AgentExited {
                        code: None,
                        error: Some(error.clone()),
                        stderr_tail: Vec::new(),
                    })?;
                    return Err(Halt::ModelFailed(error));
                }
            },
        };
        let mut ledger = ToolLedger { budget: host.plan_budget(&task.query, self)?, ..ToolLedger::default() };
        let outcome = self.until_done(host, &task.query, &mut ledger, &mut running).await;
        if outcome.is_ok() {
            if !ledger.usages.is_empty() {
                host.record_usages(&ledger.usages)?;
            }
            let answer = outcome.as_ref().ok().and_then(|a| a.as_deref());
            learn_from(host, task, &ledger.history, answer).await?;
        }
        // Stopped, restarted or failed while the agent still runs: it is
        // killed with its group, and its end recorded.
        if let Some(mut r) = running.filter(|r| r.alive()) {
            r.kill();
            let Finished { stderr_tail, .. } = r.wait().await;
            let error = Some("stopped with its run".to_string());
            let recorded = host.emit(EventKind::AgentExited { code: None, error, stderr_tail });
            // The run's own failure comes first (a fork that diverged says where).
            if outcome.is_ok() {
                recorded?;
            }
        }
        outcome
    }
}

impl Bridge {
    /// Serves the agent's calls until it exits (its answer), the gateway is
    /// gone with no agent to wait for, or the user stops the run.
    async fn until_done(
        &mut self,
        host: &mut dyn Host,
        query: &str,
        ledger: &mut ToolLedger,
        running: &mut Option<Running>,
    ) -> Result<Option<String>, Halt> {
        let mut gateway_open = true;
        let calls = Arc::clone(&self.calls);
        let mut calls = calls.lock().await;
        loop {
            self.publish_offer(host, ledger.history.len())?;
            let exited = async {
                match running.as_mut() {
                    Some(r) => r.wait().await,
                    None => std::future::pending::<Finished>().await,
                }
            };
            let incoming = if gateway_open { Some(&mut *calls) } else { None };
            let budget = ledger.budget.as_mut();
            tokio::select! {
                next = host.serve_agent(incoming, budget) => match next? {
                    AgentNext::Tool { tool, args, end } => ledger.keep(host, query, tool, args, end)?,
                    AgentNext::Moved => {}
                    // The gateway is gone: no call can come any more.
                    AgentNext::Closed if running.is_none() => return Ok(None),
                    AgentNext::Closed => gateway_open = false,
                },
                finished = exited => {
                    let Finished { code, answer, stderr_tail } = finished;
                    let last_words = stderr_tail.last().cloned();
                    host.emit(EventKind::AgentExited { code, error: None, stderr_tail })?;
                    // Calls the agent left behind have nobody to answer:
                    // those open end, those not yet taken are refused.
                    for end in host.end_agent_calls("the agent exited").await? {
                        if let AgentNext::Tool { tool, args, end } = end {
                            ledger.keep(host, query, tool, args, end)?;
                        }
                    }
                    while let Ok(left) = calls.try_recv() {
                        match left {
                            Bridged::Call(call) => {
                                let _ = call.reply.send(Err(Refusal::Stopped));
                            }
                            Bridged::Tool(call) => {
                                let _ = call.reply.send(Err(Refusal::Stopped));
                            }
                            Bridged::Refused(GatewayRefusal { dialect, status, error }) => {
                                host.emit(EventKind::GatewayRefused { dialect, status, error })?;
                            }
                        }
                    }
                    // An agent that failed has no answer, whatever it printed last.
                    return match code {
                        Some(0) => Ok(answer),
                        _ => Err(Halt::ModelFailed(failure(code, last_words))),
                    };
                }
            }
        }
    }
}
