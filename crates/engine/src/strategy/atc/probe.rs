//! ATC's black-box probing (§4.1) and chain of probing (§4.2): for a tool
//! whose response is not documented, the planner invents a question and a
//! program that calls the tool; the program runs through the engine like
//! any other; what the tool answered becomes a general schema (merged over
//! the samples), saved with the question and program as the tool's
//! protocol. A tool that no probe could call alone (it needs an id another
//! tool returns) is probed again in later rounds with helper tools that are
//! already documented or probed: the program may call them first.

use std::collections::BTreeSet;

use serde_json::Value;

use super::config::AtcConfig;
use super::exec::{self, Trail};
use super::known::Known;
use super::prompt::{self, ProbeInput};
use crate::engine::event::EventKind;
use crate::engine::{Halt, Host};
use crate::model::{ChatRequest, Role};
use crate::program::protocol::{Probed, Protocol, spec_hash};
use crate::program::sandbox::{Binding, bindings};
use crate::program::schema::{Shape, infer_all};
use crate::strategy::stepwise::refuse_malformed;

/// Helper tools offered to one chain probe: enough for an id's source, few
/// enough for a small model's context.
const HELPERS: usize = 5;
/// Samples merged into a schema before a tool counts as probed.
const ENOUGH: usize = 2;

/// `switchyard probe`: probes `tools` (empty: every library tool that
/// documents no response) and answers with a summary.
pub async fn probe_only(
    known: &mut Known,
    config: &AtcConfig,
    host: &mut dyn Host,
    tools: &[String],
) -> Result<Option<String>, Halt> {
    let all: Vec<String> = host.library().names().map(str::to_string).collect();
    let targets: Vec<String> = if tools.is_empty() {
        all.iter().filter(|t| known.protocol(host, t).is_some_and(|p| p.response.is_none())).cloned().collect()
    } else {
        tools.to_vec()
    };
    let done = probe_tools(known, config, host, &targets, &all).await?;
    let failed: Vec<&str> = targets.iter().filter(|t| !done.contains(*t)).map(String::as_str).collect();
    Ok(Some(if failed.is_empty() {
        format!("probed {} of {} tool(s)", done.len(), targets.len())
    } else {
        format!("probed {} of {} tool(s); not probed: {}", done.len(), targets.len(), failed.join(", "))
    }))
}

/// Probes `targets`, helped in later rounds by the tools of `pool` whose
/// responses are known. Returns the tools probed.
pub async fn probe_tools(
    known_protocols: &mut Known,
    config: &AtcConfig,
    host: &mut dyn Host,
    targets: &[String],
    pool: &[String],
) -> Result<BTreeSet<String>, Halt> {
    let mut known: Vec<String> = pool
        .iter()
        .filter(|t| !targets.contains(t) && known_protocols.protocol(host, t).is_some_and(|p| p.response.is_some()))
        .cloned()
        .collect();
    let mut left: Vec<String> = targets.to_vec();
    let mut done = BTreeSet::new();
    for round in 0..=config.probe_rounds {
        for tool in left.clone() {
            let helpers = if round == 0 { Vec::new() } else { pick_helpers(host, &tool, &known) };
            if round > 0 && helpers.is_empty() {
                continue;
            }
            if probe_one(known_protocols, config, host, &tool, round, &helpers).await? {
                left.retain(|t| t != &tool);
                known.push(tool.clone());
                done.insert(tool);
            }
        }
        if left.is_empty() {
            break;
        }
    }
    for tool in left {
        host.emit(EventKind::ProtocolSaved { tool, schema: None, samples: 0, path: None })?;
    }
    Ok(done)
}

/// The known tools most likely to yield what `tool` needs: those whose
/// name or description shares words with its required arguments (an
/// argument `movie_id` wants a tool about movies).
fn pick_helpers(host: &dyn Host, tool: &str, known: &[String]) -> Vec<String> {
    let Some(spec) = host.library().get(tool) else { return Vec::new() };
    let needs: BTreeSet<String> = spec
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .flat_map(words)
        .filter(|w| w != "id")
        .collect();
    let mut scored: Vec<(usize, &String)> = known
        .iter()
        .filter_map(|k| {
            let s = host.library().get(k)?;
            let have: BTreeSet<String> = words(&s.name).into_iter().chain(words(&s.description)).collect();
            let score = needs.intersection(&have).count();
            (score > 0 || needs.is_empty()).then_some((score, k))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(HELPERS).map(|(_, k)| k.clone()).collect()
}

fn words(s: &str) -> Vec<String> {
    s.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 1)
        .map(|w| w.to_ascii_lowercase().trim_end_matches('s').to_string())
        .filter(|w| !w.is_empty())
        .collect()
}

/// Up to `probe_samples` probes of one tool; true once its responses gave
/// a schema (which is then saved).
async fn probe_one(
    known: &mut Known,
    config: &AtcConfig,
    host: &mut dyn Host,
    tool: &str,
    round: u32,
    helpers: &[String],
) -> Result<bool, Halt> {
    let names: Vec<&str> = helpers.iter().map(String::as_str).chain(std::iter::once(tool)).collect();
    let binds: Vec<Binding> = bindings(names);
    let shown = |known: &Known, host: &dyn Host, b: &Binding| -> Option<Protocol> {
        let mut p = known.protocol(host, &b.tool)?;
        p.function = b.function.clone();
        Some(p)
    };
    let Some(target_binding) = binds.last() else { return Ok(false) };
    let Some(mut target) = shown(known, host, target_binding) else { return Ok(false) };
    // A probe is black-box: the target is shown without any response it documents.
    target.response = None;
    target.example = None;
    let helper_protocols: Vec<String> =
        binds[..binds.len() - 1].iter().filter_map(|b| shown(known, host, b)).map(|p| p.render()).collect();
    let mut samples: Vec<Value> = Vec::new();
    let mut first: Option<(String, String, Vec<String>)> = None;
    let mut last_error: Option<String> = None;
    for sample in 0..config.probe_samples {
        host.next_step()?;
        let view =
            ProbeInput { target: target.render(), helpers: helper_protocols.clone(), last_error: last_error.take() };
        let req = ChatRequest::constrained(Role::Planner, prompt::render_probe(&view), prompt::probe_schema())
            .stopping_at(prompt::PROBE_STOP);
        let reply = host.model(req).await?;
        let (question, program) = match prompt::parse_probe_reply(&reply) {
            Ok(qp) => qp,
            Err(e) => {
                refuse_malformed(host, &e)?;
                last_error = Some(e.to_string());
                continue;
            }
        };
        let mut trail = Trail::default();
        let out = exec::execute(host, &program, &binds, &config.limits, &question, None, &mut trail).await?;
        let responses: Vec<Value> = trail.responses.iter().filter(|(t, _)| t == tool).map(|(_, v)| v.clone()).collect();
        let used: Vec<String> =
            helpers.iter().filter(|h| trail.responses.iter().any(|(t, _)| t == *h)).cloned().collect();
        let error = match (&out.result, responses.is_empty()) {
            (_, false) => None,
            (Err(f), true) => Some(format!("{}: {}", f.kind.as_str(), f.message)),
            (Ok(_), true) => Some(format!("the program never got a response from {tool}")),
        };
        let schema = infer_all(responses.iter()).map(|s| s.to_value());
        host.emit(EventKind::Probed {
            tool: tool.to_string(),
            round,
            sample: sample + 1,
            question: question.clone(),
            program: program.clone(),
            helpers: used.clone(),
            response: responses.first().map(preview),
            schema,
            error: error.clone(),
        })?;
        if let Some(e) = error {
            last_error = Some(e);
            continue;
        }
        samples.extend(responses);
        first.get_or_insert((question, program, used));
        if samples.len() >= ENOUGH {
            break;
        }
    }
    let (Some(shape), Some((question, program, helpers))) = (infer_all(samples.iter()), first) else {
        return Ok(false);
    };
    save(known, host, tool, question, program, shape, samples.len() as u32, helpers)?;
    Ok(true)
}

#[allow(clippy::too_many_arguments)]
fn save(
    known: &mut Known,
    host: &mut dyn Host,
    tool: &str,
    question: String,
    program: String,
    shape: Shape,
    samples: u32,
    helpers: Vec<String>,
) -> Result<(), Halt> {
    let Some(spec) = host.library().get(tool) else { return Ok(()) };
    let probed = Probed { tool: tool.to_string(), spec: spec_hash(spec), question, program, shape, samples, helpers };
    let path = match host.protocol_store() {
        // Relative to the data directory, so a seeded trace is the same on every machine.
        Some(store) => {
            let path = store.save(&probed).map_err(|e| Halt::Engine(e.into()))?;
            let parent = store.dir().parent().unwrap_or(store.dir());
            Some(path.strip_prefix(parent).unwrap_or(&path).display().to_string())
        }
        None => None,
    };
    let schema = Some(probed.shape.to_value());
    known.insert(probed);
    host.emit(EventKind::ProtocolSaved { tool: tool.to_string(), schema, samples, path })?;
    Ok(())
}

/// A response as the trace keeps it: lists cut to three items and long
/// strings cut, so a large API answer does not swell the trace.
fn preview(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().take(3).map(preview).collect()),
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), preview(v))).collect()),
        Value::String(s) if s.chars().count() > 200 => Value::String(s.chars().take(200).collect::<String>() + "…"),
        other => other.clone(),
    }
}
