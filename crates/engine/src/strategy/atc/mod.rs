//! ATC (docs/src/papers/atc.md): the planner writes the whole tool chain as
//! one program from the tools' protocols; the program runs sandboxed, its
//! tool calls going through the engine; on a runtime error the failure is
//! attributed to a tool and the planner rewrites the program with that
//! tool's protocol in view, at most `reflect_rounds` times. Tools without a
//! documented response are probed first when `probe` is on.

pub mod config;
pub mod exec;
pub mod known;
pub mod probe;
pub mod prompt;

use async_trait::async_trait;
use serde_json::Value;

pub use self::config::AtcConfig;
use self::exec::Trail;
use self::known::Known;
use self::prompt::{Failed, ProgramInput};
use super::stepwise::refuse_malformed;
use crate::budget::btp;
use crate::engine::event::EventKind;
use crate::engine::{CostShape, Halt, Host, Strategy, StrategyKind};
use crate::model::{ChatRequest, Role};
use crate::program::attribute::{attribute, diff, snippet};
use crate::program::protocol::{Protocol, RESPONSE_CHARS, Response, ResponseSource};
use crate::program::sandbox::{Binding, FailKind, Failure};
use crate::program::schema::infer_all;
use crate::task::Task;

/// What a run of the strategy does: solve tasks, or only probe tools
/// (`switchyard probe`).
#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    Solve,
    /// Probe these tools (empty: every tool of the library without a response).
    ProbeOnly(Vec<String>),
}

pub struct Atc {
    pub config: AtcConfig,
    pub mode: Mode,
    known: Known,
}

impl Atc {
    pub fn new(config: AtcConfig) -> Self {
        Atc { config, mode: Mode::Solve, known: Known::default() }
    }

    pub fn probe_only(config: AtcConfig, tools: Vec<String>) -> Self {
        Atc { config, mode: Mode::ProbeOnly(tools), known: Known::default() }
    }
}

impl Default for Atc {
    fn default() -> Self {
        Atc::new(AtcConfig::default())
    }
}

#[async_trait]
impl Strategy for Atc {
    fn kind(&self) -> StrategyKind {
        StrategyKind::Atc
    }

    /// One planner call writes the program; one more is kept back for a
    /// rewrite. Tool calls cost no model step of their own.
    fn cost_shape(&self, host: &dyn Host, query: &str, candidates: &[String]) -> CostShape {
        let protocols = self.known.protocols(host, candidates);
        let view = ProgramInput {
            task: query.to_string(),
            protocols: protocols.iter().map(Protocol::render).collect(),
            failed: None,
        };
        let tokens = crate::model::tokens::count_messages(&prompt::render_program(&view));
        let planner = btp::step_cost(&host.models().get(Role::Planner).price, tokens);
        CostShape { per_call: 0.0, fixed: planner, reserve: planner }
    }

    async fn run(&mut self, host: &mut dyn Host, task: &Task) -> Result<Option<String>, Halt> {
        if let Mode::ProbeOnly(tools) = &self.mode {
            let tools = tools.clone();
            return probe::probe_only(&mut self.known, &self.config, host, &tools).await;
        }
        let offered =
            if host.needs_tool(&task.query)? { host.retrieve(&task.query, host.params().top_k)? } else { Vec::new() };
        if self.config.probe {
            let undocumented: Vec<String> = offered
                .iter()
                .filter(|t| self.known.protocol(host, t).is_some_and(|p| p.response.is_none()))
                .cloned()
                .collect();
            if !undocumented.is_empty() {
                probe::probe_tools(&mut self.known, &self.config, host, &undocumented, &offered).await?;
            }
        }
        let mut budget = host.plan_budget(&task.query, self)?;
        let mut trail = Trail::default();
        let result = self.solve(host, task, &offered, budget.as_mut(), &mut trail).await;
        host.record_usages(&trail.usages)?;
        result
    }
}

impl Atc {
    /// Write, run, and on failure reflect and rewrite, round by round.
    async fn solve(
        &mut self,
        host: &mut dyn Host,
        task: &Task,
        offered: &[String],
        mut budget: Option<&mut btp::RunBudget>,
        trail: &mut Trail,
    ) -> Result<Option<String>, Halt> {
        let protocols = self.known.protocols(host, offered);
        let binds: Vec<Binding> =
            protocols.iter().map(|p| Binding { function: p.function.clone(), tool: p.tool.clone() }).collect();
        let rendered = fit(&protocols, &task.query, self.config.prompt_tokens);
        let mut failed: Option<Failed> = None;
        let mut previous: Option<String> = None;
        // A user's edit gets its run on top of the model's rounds.
        let mut limit = self.config.reflect_rounds;
        let mut round = 0;
        loop {
            host.next_step()?;
            if let Some(b) = budget.as_deref() {
                let c_step = btp::step_cost(&host.models().get(Role::Planner).price, 0);
                if b.over(host.spent(), c_step) {
                    return Err(Halt::OutOfBudget);
                }
            }
            // The user's edit (fix and continue) takes this round's place.
            let (program, by_user) = match host.take_user_program() {
                Some(p) => (p, true),
                None => {
                    let view =
                        ProgramInput { task: task.query.clone(), protocols: rendered.clone(), failed: failed.take() };
                    let req = ChatRequest::constrained(
                        Role::Planner,
                        prompt::render_program(&view),
                        prompt::program_schema(),
                    )
                    .stopping_at(prompt::PROGRAM_STOP);
                    let reply = host.model(req).await?;
                    match prompt::parse_program_reply(&reply) {
                        Ok(p) => (p, false),
                        Err(e) => {
                            refuse_malformed(host, &e)?;
                            if round >= limit {
                                return Ok(None);
                            }
                            round += 1;
                            continue;
                        }
                    }
                }
            };
            if by_user {
                limit += 1;
            }
            let d = previous.as_deref().map(|p| diff(p, &program)).unwrap_or_default();
            host.emit(EventKind::ProgramWritten { round, program: program.clone(), diff: d, by_user })?;
            let out =
                exec::execute(host, &program, &binds, &self.config.limits, &task.query, budget.as_deref_mut(), trail)
                    .await?;
            let failure = match out.result {
                Ok(Value::Null) => Failure {
                    kind: FailKind::Runtime,
                    message: "the program returned no value: its last expression must be the answer".into(),
                    line: None,
                    tool: None,
                },
                Ok(value) => {
                    host.emit(EventKind::ProgramReturned { round, value: value.clone() })?;
                    return Ok(Some(answer_text(&value)));
                }
                Err(f) => f,
            };
            let tool = attribute(&program, &failure, &binds, &out.calls);
            let last = round >= limit;
            let snip = snippet(&program, failure.line);
            host.emit(EventKind::ProgramFailed {
                round,
                kind: failure.kind,
                error: failure.message.clone(),
                line: failure.line,
                snippet: snip.clone(),
                tool: tool.clone(),
                last,
            })?;
            if last || failure.kind == FailKind::Cancelled {
                return Ok(None);
            }
            let protocol = tool.as_deref().and_then(|t| protocols.iter().find(|p| p.tool == t)).map(|p| seen(p, trail));
            // The model is shown the function name it wrote, not the tool's.
            let shown = tool
                .as_deref()
                .map(|t| binds.iter().find(|b| b.tool == t).map_or(t, |b| b.function.as_str()).to_string());
            failed = Some(Failed {
                program: program.clone(),
                line: failure.line,
                snippet: snip,
                kind: failure.kind.as_str().to_string(),
                error: failure.message,
                tool: shown,
                protocol,
            });
            previous = Some(program);
            round += 1;
        }
    }
}

/// The protocols as the prompt shows them: whole, or with shapes cut
/// shorter step by step until the prompt fits `budget` tokens.
fn fit(protocols: &[Protocol], task: &str, budget: Option<u64>) -> Vec<String> {
    let render = |chars: usize| protocols.iter().map(|p| p.render_within(chars)).collect::<Vec<_>>();
    let Some(budget) = budget else { return render(RESPONSE_CHARS) };
    let mut chars = RESPONSE_CHARS;
    loop {
        let shown = render(chars);
        let view = ProgramInput { task: task.to_string(), protocols: shown.clone(), failed: None };
        if chars <= 60 || crate::model::tokens::count_messages(&prompt::render_program(&view)) <= budget {
            return shown;
        }
        chars = chars * 2 / 3;
    }
}

/// A protocol as a rewrite is shown it: a response the tool does not
/// document is described by what it answered in this run, so the model
/// sees the fields it really has.
fn seen(p: &Protocol, trail: &Trail) -> String {
    if p.response.is_some() {
        return p.render();
    }
    let answers = trail.responses.iter().filter(|(t, _)| *t == p.tool).map(|(_, v)| v);
    let mut p = p.clone();
    p.response = infer_all(answers).map(|shape| Response { shape, source: ResponseSource::Probed });
    p.render()
}

/// The answer as text: a string as it is, anything else as compact JSON.
pub fn answer_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => super::prompt::compact(other),
    }
}
