//! A step of concurrent calls (the rewoo strategy's multi-calling,
//! docs/src/papers/rewoo.md): each call is a lane with its own gate, its own
//! faults and timeout; the user can hold, release, run or fail one lane while
//! its siblings run on.
//!
//! The lanes are futures polled together in the engine's task, next to the
//! control channel, so every event is still emitted in order by the engine.

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::Arc;

use futures::future::{AbortHandle, Abortable};
use futures::stream::{FuturesUnordered, StreamExt};

use super::approval::Vetted;
use super::calls::unknown_tool;
use super::conductor::Engine;
use super::control::{Control, LaneAction};
use super::error::EngineError;
use super::event::{EventKind, LanePlan, RefuseReason, ToolOutcome};
use super::fork::RecordedResult;
use super::host::{Halt, LaneDone, LaneRequest};
use crate::budget::btp::RunBudget;
use crate::tool::fault::FaultMode;
use crate::tool::{ToolError, ToolErrorKind, ToolResult, ToolSpec};

/// What a lane's future hands back: its lane, result (None: cut short by
/// the user) and latency.
type LaneResult = (usize, Option<ToolResult>, u64);
type LaneFuture = Pin<Box<dyn std::future::Future<Output = LaneResult> + Send>>;

/// Where a lane of the running step is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    Waiting,
    Held,
    Running,
    Done,
}

/// One lane ready to run (or already settled before it could).
struct Lane {
    plan: LanePlan,
    spec: Option<Arc<ToolSpec>>,
    /// Settled before running: bad input, unknown tool, refused by the budget.
    settled: Option<Settled>,
    slot: Slot,
    /// A fault the user asked for on this lane.
    user_fault: Option<FaultMode>,
    abort: Option<AbortHandle>,
    result: Option<ToolResult>,
    /// A fork's prefix: the trace's result for this lane's call.
    recorded: Option<RecordedResult>,
}

enum Settled {
    Failed(ToolError),
    Refused(RefuseReason, String),
}

impl Engine {
    /// Runs one step's calls concurrently: admission, `StepStarted`, the
    /// lanes, each call spent as it ends.
    pub(super) async fn step_calls(
        &mut self,
        label: u32,
        thought: String,
        requests: Vec<LaneRequest>,
        budget: Option<&mut RunBudget>,
    ) -> Result<Vec<LaneDone>, Halt> {
        let mut lanes = self.admit_lanes(label, requests, budget.as_deref());
        self.emit(EventKind::StepStarted {
            evidence: label,
            thought,
            lanes: lanes.iter().map(|l| l.plan.clone()).collect(),
        })?;
        // Breakpoints and approvals, lane by lane, before any lane starts.
        for l in lanes.iter_mut().filter(|l| l.settled.is_none()) {
            self.break_before(Some(&l.plan.tool))?;
            let Some(spec) = l.spec.clone() else { continue };
            match self.approve_call(l.plan.call, &spec, &l.plan.args, Some(l.plan.lane)).await? {
                Vetted::Run(Some(args)) => l.plan.args = args,
                Vetted::Run(None) => {}
                Vetted::Rejected(error) => l.settled = Some(Settled::Failed(error)),
            }
        }
        let mut lanes = self.run_lanes(lanes, budget).await?;
        for l in lanes.iter_mut() {
            if let Some(r) = l.result.take() {
                l.result = Some(self.review_result(l.plan.call, &l.plan.tool, r).await?);
            }
        }
        Ok(lanes.into_iter().map(|l| LaneDone { plan: l.plan, result: l.result }).collect())
    }

    /// The lanes with their call numbers, and what fails or the budget
    /// refuses before anything runs.
    fn admit_lanes(&mut self, label: u32, requests: Vec<LaneRequest>, budget: Option<&RunBudget>) -> Vec<Lane> {
        let mut lanes: Vec<Lane> = requests
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                self.next_call += 1;
                let spec = self.library.get(&r.tool).cloned();
                let settled = match (&spec, r.invalid) {
                    (None, _) => Some(Settled::Failed(unknown_tool(&r.tool))),
                    (Some(_), Some(e)) => Some(Settled::Failed(e)),
                    (Some(_), None) => None,
                };
                Lane {
                    plan: LanePlan { lane: i as u32, call: self.next_call, tool: r.tool, input: r.input, args: r.args },
                    spec,
                    settled,
                    slot: Slot::Waiting,
                    user_fault: None,
                    abort: None,
                    result: None,
                    recorded: None,
                }
            })
            .collect();
        let Some(b) = budget else { return lanes };
        for l in lanes.iter_mut().filter(|l| l.settled.is_none()) {
            if let Some((reason, d)) = super::budgeting::refusal(b, &l.plan.tool) {
                l.settled = Some(Settled::Refused(reason, d));
            }
        }
        // A concurrent step spends all its calls at once: refuse it whole
        // when together they would overspend, keeping back the reserve.
        let cost: f64 = lanes
            .iter()
            .filter(|l| l.settled.is_none())
            .map(|l| b.costs.get(&l.plan.tool).copied().unwrap_or_else(|| l.spec.as_ref().map_or(0.0, |s| s.cost)))
            .sum();
        let spent = self.tally.cost;
        if cost > 0.0 && b.over(spent + cost, b.reserve) {
            let detail = format!(
                "step #E{label} would cost {cost:.2} with {spent:.2} of {:.2} spent and {:.2} kept for the solver",
                b.budget, b.reserve
            );
            for l in lanes.iter_mut().filter(|l| l.settled.is_none()) {
                l.settled = Some(Settled::Refused(RefuseReason::OverBudget, detail.clone()));
            }
        }
        lanes
    }

    /// Runs a step's lanes concurrently, each behind its own gate, obeying
    /// controls as they arrive. Returns the lanes with their results.
    async fn run_lanes(&mut self, mut lanes: Vec<Lane>, mut budget: Option<&mut RunBudget>) -> Result<Vec<Lane>, Halt> {
        for lane in lanes.iter_mut() {
            match lane.settled.take() {
                None => {}
                Some(Settled::Refused(reason, detail)) => {
                    lane.slot = Slot::Done;
                    self.emit(EventKind::Refused { tool: lane.plan.tool.clone(), reason, detail })?;
                }
                Some(Settled::Failed(error)) => {
                    // Shown as a call that failed at once, so the lane and
                    // the transcript say why.
                    let p = lane.plan.clone();
                    self.emit(EventKind::ToolCall {
                        call: p.call,
                        tool: p.tool.clone(),
                        args: p.args,
                        lane: Some(p.lane),
                    })?;
                    lane.slot = Slot::Done;
                    let filtered = is_filtered(&Err(error.clone()));
                    lane.result = Some(Err(error.clone()));
                    self.emit(EventKind::ToolResult {
                        call: p.call,
                        tool: p.tool,
                        outcome: ToolOutcome::Err { error },
                        latency_ms: 0,
                        cost: 0.0,
                        fault: None,
                        filtered,
                        lane: Some(p.lane),
                        source: None,
                    })?;
                }
            }
        }
        if lanes.iter().any(|l| l.slot == Slot::Waiting) {
            self.wait_pace().await?;
        }
        let mut running: FuturesUnordered<LaneFuture> = FuturesUnordered::new();
        let mut faults: BTreeMap<usize, Option<FaultMode>> = BTreeMap::new();
        loop {
            if self.stop || self.restart {
                // Every call that started ends with its result before the run does.
                let why = if self.stop { "the session was stopped" } else { "the task was restarted" };
                self.cut_lanes(&mut lanes, &mut running, &faults, why, budget.as_deref_mut()).await?;
                return Err(if self.stop { Halt::Stopped } else { Halt::Restarted });
            }
            // Start every lane the gate lets through.
            for (i, lane) in lanes.iter_mut().enumerate() {
                if lane.slot == Slot::Waiting && self.lane_may_start(lane.plan.call)? {
                    let (fut, fault) = self.start_lane(lane, i)?;
                    faults.insert(i, fault);
                    running.extend(fut);
                }
            }
            if lanes.iter().all(|l| l.slot == Slot::Done) {
                break;
            }
            // A fork's prefix: lanes end, and the user acts on them, in the
            // order the trace records.
            if self.replaying() {
                match self.replay_lanes(&mut lanes, &mut running, &mut faults)? {
                    Replayed::Nothing => {}
                    Replayed::Control => continue,
                    Replayed::Ended(i) => {
                        if let Some(b) = budget.as_deref_mut() {
                            self.spend(b, &lanes[i].plan.tool, &mut Vec::new())?;
                        }
                        continue;
                    }
                }
            }
            if self.forked.as_ref().is_some_and(|f| f.unattended) && lanes.iter().any(|l| l.slot == Slot::Held) {
                let held: Vec<u32> = lanes.iter().filter(|l| l.slot == Slot::Held).map(|l| l.plan.lane).collect();
                for lane in held {
                    self.lane_control(&mut lanes, &mut running, &mut faults, lane, LaneAction::Release)?;
                }
                continue;
            }
            let replaying = self.replaying();
            tokio::select! {
                Some((i, result, latency_ms)) = running.next(), if !running.is_empty() => {
                    let fault = faults.get(&i).copied().flatten();
                    let name = &lanes[i].plan.tool;
                    let result = result.unwrap_or_else(|| {
                        Err(ToolError::new(ToolErrorKind::Failed, format!("'{name}' was failed by the user")))
                    });
                    self.finish_lane(&mut lanes[i], result, latency_ms, fault)?;
                    // Each call is spent as it ends, so the budget pane moves lane by lane.
                    if let Some(b) = budget.as_deref_mut() {
                        self.spend(b, &lanes[i].plan.tool, &mut Vec::new())?;
                    }
                }
                c = self.controls.recv(), if !replaying => match c {
                    Some(Control::Lane { lane, action }) => self.lane_control(&mut lanes, &mut running, &mut faults, lane, action)?,
                    Some(c) => self.apply_control(c)?,
                    // Nobody can open a gate any more: run on rather than hang.
                    None => {
                        for l in lanes.iter_mut().filter(|l| l.slot == Slot::Held) {
                            l.slot = Slot::Waiting;
                        }
                        self.open_for_good()?;
                        if running.is_empty() && !lanes.iter().any(|l| l.slot == Slot::Waiting) {
                            break;
                        }
                    }
                },
                // Only while replaying: nothing recorded can come next here.
                else => return Err(self.replay_stuck("the running step's lanes").into()),
            }
        }
        Ok(lanes)
    }

    /// Starts one lane's call: its fault drawn (or the user's), its events emitted.
    fn start_lane(
        &mut self,
        lane: &mut Lane,
        i: usize,
    ) -> Result<(Option<LaneFuture>, Option<FaultMode>), EngineError> {
        // A lane without a tool was settled before it could start; should
        // one start anyway, its call fails rather than the engine.
        let spec = lane.spec.clone();
        let p = &lane.plan;
        // The user's fault replaces the table's: nothing is drawn or spent.
        let fault = match lane.user_fault {
            Some(f) => Some(f),
            None => self.faults.draw(&p.tool, &mut self.rng),
        };
        self.emit(EventKind::ToolCall {
            call: p.call,
            tool: p.tool.clone(),
            args: p.args.clone(),
            lane: Some(p.lane),
        })?;
        lane.slot = Slot::Running;
        // A fork's prefix: the recorded result ends the lane when its turn comes.
        if let Some(r) = self.recorded_result(p.call) {
            lane.recorded = Some(r);
            return Ok((None, fault));
        }
        let (timeout, call_seed) = (self.call_timeout(spec.as_deref()), self.call_seed(p.call));
        let (executor, clock, args) = (self.executor.clone(), Arc::clone(&self.clock), p.args.clone());
        let (abort, registration) = AbortHandle::new_pair();
        lane.abort = Some(abort);
        let name = p.tool.clone();
        let fut = Box::pin(async move {
            let t0 = clock.now_ms();
            let run = async {
                match spec {
                    Some(spec) => executor.call(&spec, &args, fault, call_seed, timeout).await,
                    None => Err(unknown_tool(&name)),
                }
            };
            let call = Abortable::new(run, registration).await;
            let latency = clock.now_ms().saturating_sub(t0);
            (i, call.ok(), latency)
        });
        Ok((Some(fut), fault))
    }

    /// The run ends while lanes run (stop, restart): each running call is
    /// cut short and ends with its `ToolResult`, so no call is left without.
    async fn cut_lanes(
        &mut self,
        lanes: &mut [Lane],
        running: &mut FuturesUnordered<LaneFuture>,
        faults: &BTreeMap<usize, Option<FaultMode>>,
        why: &str,
        mut budget: Option<&mut RunBudget>,
    ) -> Result<(), EngineError> {
        for l in lanes.iter_mut().filter(|l| l.slot == Slot::Running) {
            if let Some(a) = l.abort.take() {
                a.abort();
            }
        }
        let mut ended: Vec<(usize, ToolResult, u64)> = Vec::new();
        while let Some((i, result, latency_ms)) = running.next().await {
            let name = &lanes[i].plan.tool;
            let cut = || Err(ToolError::new(ToolErrorKind::Failed, format!("'{name}' was cut short: {why}")));
            ended.push((i, result.unwrap_or_else(cut), latency_ms));
        }
        // A fork's recorded lane has no future: it is cut short the same way.
        for (i, l) in lanes.iter().enumerate().filter(|(_, l)| l.slot == Slot::Running) {
            if !ended.iter().any(|e| e.0 == i) {
                let name = &l.plan.tool;
                ended.push((
                    i,
                    Err(ToolError::new(ToolErrorKind::Failed, format!("'{name}' was cut short: {why}"))),
                    0,
                ));
            }
        }
        for (i, result, latency_ms) in ended {
            let fault = faults.get(&i).copied().flatten();
            self.finish_lane(&mut lanes[i], result, latency_ms, fault)?;
            if let Some(b) = budget.as_deref_mut() {
                self.spend(b, &lanes[i].plan.tool, &mut Vec::new())?;
            }
        }
        Ok(())
    }

    fn finish_lane(
        &mut self,
        lane: &mut Lane,
        result: ToolResult,
        latency_ms: u64,
        fault: Option<FaultMode>,
    ) -> Result<(), EngineError> {
        lane.slot = Slot::Done;
        lane.abort = None;
        let filtered = is_filtered(&result);
        let p = &lane.plan;
        self.settle_call(p.call, &p.tool, lane.spec.as_deref(), &result, latency_ms, fault, filtered, Some(p.lane))?;
        lane.result = Some(result);
        Ok(())
    }

    /// A user's action on one lane of the running step.
    fn lane_control(
        &mut self,
        lanes: &mut [Lane],
        running: &mut FuturesUnordered<LaneFuture>,
        faults: &mut BTreeMap<usize, Option<FaultMode>>,
        lane: u32,
        action: LaneAction,
    ) -> Result<(), EngineError> {
        let Some(i) = lanes.iter().position(|l| l.plan.lane == lane) else {
            return self.reject("lane", format!("the running step has no lane {lane} (0 to {})", lanes.len() - 1));
        };
        let l = &mut lanes[i];
        let why = match (action, l.slot) {
            (_, Slot::Done) => Some("it has ended"),
            (LaneAction::Hold, Slot::Waiting) => {
                l.slot = Slot::Held;
                None
            }
            (LaneAction::Hold, _) => Some("it is already running or held"),
            (LaneAction::Release, Slot::Held) => {
                l.slot = Slot::Waiting;
                None
            }
            (LaneAction::Release, _) => Some("it is not held"),
            (LaneAction::Step, Slot::Waiting | Slot::Held) => None,
            (LaneAction::Step, _) => Some("it is already running"),
            (LaneAction::Fail { fault }, Slot::Waiting | Slot::Held) => {
                l.user_fault = Some(fault);
                None
            }
            (LaneAction::Fail { .. }, Slot::Running) => {
                // Cut the call short: its future ends as a failure. A fault
                // the table drew for it stays its fault, as it was spent.
                if let Some(a) = l.abort.take() {
                    a.abort();
                }
                let f = faults.entry(i).or_insert(None);
                f.get_or_insert(FaultMode::Error);
                None
            }
        };
        if let Some(why) = why {
            return self.reject("lane", format!("lane {lane} ({}): {why}", lanes[i].plan.tool));
        }
        self.emit(EventKind::LaneChanged { lane, action })?;
        if action == LaneAction::Step {
            let (fut, fault) = self.start_lane(&mut lanes[i], i)?;
            faults.insert(i, fault);
            running.extend(fut);
        }
        Ok(())
    }
}

impl Engine {
    /// One recorded thing the lanes do next, if the trace's next event is
    /// one: a lane control applied again, or a recorded lane's end.
    fn replay_lanes(
        &mut self,
        lanes: &mut [Lane],
        running: &mut FuturesUnordered<LaneFuture>,
        faults: &mut BTreeMap<usize, Option<FaultMode>>,
    ) -> Result<Replayed, EngineError> {
        // What the user changed while the lanes waited (a parameter, the
        // pace, a fault), and the recorded pauses, come first.
        let at = self.fork.as_ref().map(|r| r.pos);
        self.replay_controls()?;
        if self.fork.as_ref().map(|r| r.pos) != at {
            return Ok(Replayed::Control);
        }
        if let Some((lane, action)) = self.replay_lane_control() {
            self.lane_control(lanes, running, faults, lane, action)?;
            return Ok(Replayed::Control);
        }
        let Some(call) = self.replay_next_result() else { return Ok(Replayed::Nothing) };
        let Some(i) = lanes.iter().position(|l| l.plan.call == call) else { return Ok(Replayed::Nothing) };
        let Some(r) = lanes[i].recorded.take() else { return Ok(Replayed::Nothing) };
        self.finish_lane(&mut lanes[i], r.result, r.latency_ms, r.fault)?;
        Ok(Replayed::Ended(i))
    }
}

/// What replaying a step's lanes did.
enum Replayed {
    Nothing,
    Control,
    /// This lane ended with its recorded result.
    Ended(usize),
}

/// Whether a lane's result reaches the next stage as null: errors and
/// "nothing found" carry nothing a later stage can use (ReWOO's null filter).
pub fn is_filtered(result: &ToolResult) -> bool {
    match result {
        // The user's rejection carries a note the solver must see.
        Err(e) => e.kind != ToolErrorKind::Rejected,
        Ok(v) => crate::tool::nothing_found::is_nothing_found(v),
    }
}
