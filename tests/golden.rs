//! The golden traces: the contract of every refactor. Each scenario runs a
//! session on the logical clock with a fixed seed and fixed controls, and its
//! trace must be byte-identical to the one committed in `tests/golden/`.
//!
//! A change of behaviour updates a golden trace in its own commit, saying why:
//! `SWITCHYARD_BLESS=1 cargo test --test golden` rewrites the fixtures.

use std::path::{Path, PathBuf};

use switchyard::budget::experience::import_trajectories;
use switchyard::config::Config;
use switchyard::engine::event::{EventKind, LaneAction};
use switchyard::engine::{Control, Event, ParamChange, Scheduled, StrategyKind};
use switchyard::model::Role;
use switchyard::session::{self, ExperienceSource, GraphSource, SessionOptions, ToolCosts};
use switchyard::tool::fault::{Fault, FaultMode, FaultScope};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn config(dir: &Path) -> Config {
    Config { data_dir: Some(dir.to_path_buf()), ..Config::default() }
}

fn base(strategy: StrategyKind, count: usize) -> SessionOptions {
    SessionOptions {
        strategy: Some(strategy),
        seed: Some(42),
        count: Some(count),
        graph: GraphSource::Fresh,
        logical_clock: true,
        fresh_categories: true,
        experience: ExperienceSource::InMemory(Vec::new()),
        ..Default::default()
    }
}

/// BTP in the paper's setting: random integer costs, B = 20, experience
/// from the sample trajectories.
fn with_btp(mut opts: SessionOptions) -> SessionOptions {
    let experience = import_trajectories(&root().join("sample-tools/trajectories.jsonl")).unwrap();
    opts.experience = ExperienceSource::InMemory(experience);
    opts.btp = Some(true);
    opts.tool_costs = Some(ToolCosts::Random { lo: 1, hi: 10 });
    opts.param_changes = vec![ParamChange::Budget(Some(20.0)), ParamChange::TopK(5)];
    opts
}

fn fault(tool: &str, mode: FaultMode, scope: FaultScope) -> Control {
    Control::InjectFault { tool: tool.into(), fault: Fault { mode, scope } }
}

/// How a scenario is driven: headless to the end, or by a script that sends
/// controls through the control channel as the events come in.
enum Drive {
    Headless,
    Script(fn(&mut Driver, &Event)),
}

/// Sends controls only where the engine is known to wait at its next gate
/// with nothing else to do, so that where each control takes effect (and so
/// the trace) never depends on timing.
struct Driver {
    handle: switchyard::engine::EngineHandle,
    /// Step controls sent and not yet used by a gate.
    outstanding: u32,
    candidates: u32,
    steps_started: u32,
    plan_steps: u32,
    step_in_run: u32,
    lanes_now: u32,
    done: bool,
}

impl Driver {
    fn send(&self, c: Control) {
        assert!(self.handle.send(c), "the engine ended early");
    }

    /// One call may pass. A Step sent while the gate is closed emits nothing
    /// where it is applied, so it is the same wherever it lands.
    fn step(&mut self) {
        self.outstanding += 1;
        self.send(Control::Step);
    }

    fn see(&mut self, e: &Event) {
        if matches!(e.kind, EventKind::Stepped) {
            self.outstanding -= 1;
        }
    }
}

/// toolnet, paused from the start, stepped call by call; at chosen
/// candidate lists (where the engine waits at the model gate and nowhere
/// else) the user edits a score, changes α and τ, injects and clears a
/// fault, switches a model, and at the end resumes.
fn toolnet_controls(d: &mut Driver, e: &Event) {
    d.see(e);
    if d.done {
        return;
    }
    match &e.kind {
        EventKind::Candidates { .. } if d.outstanding == 0 => {
            d.candidates += 1;
            match d.candidates {
                1 => d.send(Control::EditScore { tool: "geo_lookup".into(), score: -2.0 }),
                2 => d.send(Control::SetParam { change: ParamChange::Alpha(0.8) }),
                3 => d.send(fault("geo_lookup", FaultMode::Error, FaultScope::Times { n: 2 })),
                5 => d.send(Control::SwitchModel { role: Role::Evaluator, model: "sim-strong".into() }),
                6 => {
                    d.send(Control::SetParam { change: ParamChange::Tau(0.4) });
                    d.send(Control::EditScore { tool: "calculator".into(), score: 2.0 });
                }
                8 => d.send(Control::ClearFault { tool: None }),
                _ => {}
            }
            if d.candidates == 10 {
                d.done = true;
                d.send(Control::Resume);
            } else {
                d.step();
            }
        }
        // The actor chose: the next gate is its tool call, its evaluator, or
        // the next run's first model call.
        EventKind::ModelReply { role: Role::Actor, .. } if d.outstanding == 0 => d.step(),
        // The step limit: the evaluator's gate follows the last tool call.
        EventKind::ToolResult { .. } if e.step >= 8 && d.outstanding == 0 => d.step(),
        _ => {}
    }
}

/// rewoo, paused from the start: the classifier and the planner stepped,
/// then at the first plan steps of two lanes the user holds lane 1, runs lane
/// 0 alone, makes lane 1 fail, releases and runs it; single lanes are run one
/// by one; then the user resumes.
fn rewoo_lanes(d: &mut Driver, e: &Event) {
    d.see(e);
    if d.done {
        return;
    }
    match &e.kind {
        // The classifier's (first run) and the planner's gates.
        EventKind::RunStarted { .. } | EventKind::ToolsClassified { .. } if d.outstanding == 0 => d.step(),
        // The planner tries again.
        EventKind::PlanRejected { last: false, .. } => d.step(),
        EventKind::PlanWritten { steps, .. } => {
            d.plan_steps = steps.len() as u32;
            d.step_in_run = 0;
            if steps.is_empty() {
                d.step();
            }
        }
        EventKind::StepStarted { lanes, .. } => {
            d.steps_started += 1;
            d.step_in_run += 1;
            d.lanes_now = lanes.len() as u32;
            match lanes.len() {
                _ if d.steps_started > 6 => {
                    d.done = true;
                    d.send(Control::Resume);
                }
                1 => d.send(Control::Lane { lane: 0, action: LaneAction::Step }),
                2 => {
                    d.send(Control::Lane { lane: 1, action: LaneAction::Hold });
                    d.send(Control::Lane { lane: 0, action: LaneAction::Step });
                }
                _ => {
                    d.done = true;
                    d.send(Control::Resume);
                }
            }
        }
        EventKind::ToolResult { lane: Some(0), .. } if d.lanes_now == 2 => {
            d.send(Control::Lane { lane: 1, action: LaneAction::Fail { fault: FaultMode::Error } });
            d.send(Control::Lane { lane: 1, action: LaneAction::Release });
            d.send(Control::Lane { lane: 1, action: LaneAction::Step });
        }
        // The last step ended: the solver's gate is next.
        EventKind::StepFinished { .. } if d.step_in_run >= d.plan_steps.min(8) && d.outstanding == 0 => d.step(),
        _ => {}
    }
}

struct Scenario {
    name: &'static str,
    opts: SessionOptions,
    config: fn(&Path) -> Config,
    drive: Drive,
}

fn scenarios() -> Vec<Scenario> {
    let fault_at_3 =
        vec![Scheduled { before_task: 3, control: fault("geo_lookup", FaultMode::Error, FaultScope::UntilCleared) }];
    vec![
        Scenario { name: "react", opts: base(StrategyKind::React, 12), config, drive: Drive::Headless },
        Scenario { name: "toolnet", opts: base(StrategyKind::Toolnet, 12), config, drive: Drive::Headless },
        Scenario { name: "rewoo", opts: base(StrategyKind::Rewoo, 12), config, drive: Drive::Headless },
        Scenario { name: "react-btp", opts: with_btp(base(StrategyKind::React, 12)), config, drive: Drive::Headless },
        Scenario {
            name: "toolnet-btp",
            opts: with_btp(base(StrategyKind::Toolnet, 12)),
            config,
            drive: Drive::Headless,
        },
        Scenario { name: "rewoo-btp", opts: with_btp(base(StrategyKind::Rewoo, 12)), config, drive: Drive::Headless },
        Scenario {
            name: "toolnet-fault",
            opts: SessionOptions { schedule: fault_at_3, ..base(StrategyKind::Toolnet, 20) },
            config,
            drive: Drive::Headless,
        },
        Scenario {
            name: "rewoo-weak-planner",
            opts: SessionOptions { seed: Some(3), ..base(StrategyKind::Rewoo, 16) },
            config: |dir| {
                let mut c = config(dir);
                c.roles.insert(Role::Planner, "sim-weak".into());
                c
            },
            drive: Drive::Headless,
        },
        Scenario {
            name: "toolnet-controls",
            opts: SessionOptions { start_paused: true, ..base(StrategyKind::Toolnet, 8) },
            config,
            drive: Drive::Script(toolnet_controls),
        },
        Scenario {
            name: "atc-fault",
            opts: SessionOptions {
                schedule: vec![Scheduled {
                    before_task: 3,
                    control: fault("geo_lookup", FaultMode::Error, FaultScope::UntilCleared),
                }],
                ..base(StrategyKind::Atc, 12)
            },
            config,
            drive: Drive::Headless,
        },
        Scenario {
            name: "atc-probe",
            opts: base(StrategyKind::Atc, 8),
            config: |dir| {
                let mut c = config(dir);
                c.atc.probe = true;
                c
            },
            drive: Drive::Headless,
        },
        Scenario {
            name: "rewoo-lanes",
            opts: SessionOptions { start_paused: true, ..base(StrategyKind::Rewoo, 10) },
            config,
            drive: Drive::Script(rewoo_lanes),
        },
    ]
}

/// Runs a scenario and returns its trace's bytes.
fn trace_of(s: &Scenario) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.jsonl");
    let opts = SessionOptions { trace: Some(path.clone()), ..s.opts.clone() };
    let prepared = session::prepare(&(s.config)(dir.path()), &opts).unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    match s.drive {
        Drive::Headless => {
            rt.block_on(session::run(prepared)).unwrap();
        }
        Drive::Script(script) => {
            let session::Prepared { mut engine, handle, tasks, .. } = prepared;
            let mut events = engine.subscribe();
            let mut driver = Driver {
                handle,
                outstanding: 0,
                candidates: 0,
                steps_started: 0,
                plan_steps: 0,
                step_in_run: 0,
                lanes_now: 0,
                done: false,
            };
            rt.block_on(async move {
                let run = tokio::spawn(engine.run(tasks));
                while let Some(e) = events.recv().await {
                    script(&mut driver, &e);
                }
                drop(driver);
                run.await.unwrap().unwrap();
            });
        }
    }
    std::fs::read(&path).unwrap()
}

#[test]
fn every_scenario_writes_its_golden_trace_byte_for_byte() {
    let bless = std::env::var_os("SWITCHYARD_BLESS").is_some();
    let golden = root().join("tests/golden");
    let mut differ = Vec::new();
    for s in scenarios() {
        let got = trace_of(&s);
        let path = golden.join(format!("{}.jsonl", s.name));
        if bless {
            std::fs::create_dir_all(&golden).unwrap();
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want =
            std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e} (bless with SWITCHYARD_BLESS=1)", path.display()));
        if got != want {
            let (g, w) = (String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
            let at =
                g.lines().zip(w.lines()).position(|(a, b)| a != b).unwrap_or(g.lines().count().min(w.lines().count()));
            differ.push(format!(
                "{}: line {} differs\n  golden: {}\n  now:    {}",
                s.name,
                at + 1,
                w.lines().nth(at).unwrap_or("<end>").chars().take(300).collect::<String>(),
                g.lines().nth(at).unwrap_or("<end>").chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The scenarios exercise what they claim to: controls land, lanes are
/// driven, BTP plans, the fault fires. Checked on the committed fixtures, so
/// a blessing that lost a behaviour does not pass unnoticed.
#[test]
fn the_golden_traces_cover_what_they_are_for() {
    let read = |name: &str| std::fs::read_to_string(root().join(format!("tests/golden/{name}.jsonl"))).unwrap();
    let has = |name: &str, needles: &[&str]| {
        let t = read(name);
        for n in needles {
            assert!(t.contains(n), "{name} lacks {n}");
        }
    };
    has("toolnet", &["\"type\":\"GraphUpdated\"", "\"type\":\"Evaluated\""]);
    has("atc-fault", &["\"type\":\"ProgramFailed\"", "\"kind\":\"tool\"", "\"diff\":", "\"type\":\"ProgramReturned\""]);
    has("atc-probe", &["\"type\":\"Probed\"", "\"type\":\"ProtocolSaved\"", "(probed)"]);
    has("react-btp", &["\"type\":\"PlanMade\"", "\"type\":\"BudgetSpent\""]);
    has("toolnet-btp", &["\"type\":\"PlanMade\"", "\"type\":\"BudgetSpent\""]);
    has("rewoo-btp", &["\"type\":\"PlanMade\"", "\"type\":\"StepStarted\""]);
    has("toolnet-fault", &["\"type\":\"FaultInjected\"", "injected fault"]);
    has("rewoo-btp", &["\"type\":\"PlanRejected\""]);
    has("rewoo-weak-planner", &["\"role\":\"planner\",\"model\":\"sim-weak\""]);
    has(
        "toolnet-controls",
        &[
            "\"type\":\"Stepped\"",
            "\"type\":\"ScoreEdited\"",
            "\"type\":\"ParamChanged\"",
            "\"type\":\"FaultInjected\"",
            "\"type\":\"FaultCleared\"",
            "\"type\":\"ModelSwitched\"",
            "\"type\":\"Resumed\"",
        ],
    );
    has(
        "rewoo-lanes",
        &[
            "\"type\":\"LaneChanged\"",
            "\"action\":\"hold\"",
            "\"action\":\"release\"",
            "\"fail\"",
            "\"type\":\"Resumed\"",
        ],
    );
}
