//! The rewoo planner (docs/src/papers/rewoo.md): a plan of up to four steps,
//! each a call of the tool the actor would choose first plus its siblings of
//! the same category, later steps citing the evidence of earlier ones.

use std::collections::HashSet;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::actor::{TWIN_SIMILARITY, needs_id_from, score_candidates};
use super::answer::{UNREADABLE_PROMPT, value_text};
use super::arguments::{fill_arguments, required};
use super::relevance::{doc_of, relevance, task_words, words_match};
use crate::model::Message;
use crate::retrieve::{similarity, tokenize};
use crate::strategy::prompt::{ActorInput, CandidateInput, compact};
use crate::strategy::rewoo::prompt::{self as rp, PlannerInput, PlannerTool};

/// A plan longer than this is a plan a weak model loses its way in.
const MAX_STEPS: usize = 4;
/// Concurrent calls of one step: enough to survive a broken tool, few
/// enough not to waste the budget.
const MAX_LANES: usize = 3;
/// A tool of the same category at least this relevant (against the best)
/// is called alongside it: the paper's multi-calling.
const SIBLING_SHARE: f64 = 0.6;
/// Of a later step's arguments, at most this many that are not IDs may be
/// taken from earlier evidence: a tool that needs everything from
/// elsewhere is not the tool for the step.
const MAX_FREE_CITES: usize = 1;
/// What a note says of a tool the planner may not use.
const FORBIDDING: &[&str] =
    &["forbidden", "blacklisted", "not allowed", "no more", "do not use", "don't use", "not available", "over budget"];

/// One call of a planned step. `cites` are arguments taken from the
/// evidence of an earlier step (`"#E<n>"`); the engine picks the field of
/// that name out of the cited result.
#[derive(Clone, Debug)]
struct Lane {
    tool: usize,
    args: Map<String, Value>,
    cites: Vec<(String, u32)>,
}

struct Step {
    lanes: Vec<Lane>,
}

/// A tool a step could call: how well it serves the step, and its lane if
/// its arguments can be had at all.
struct Choice {
    tool: usize,
    score: f64,
    relevant: bool,
    lane: Option<Lane>,
}

pub(super) fn planner_reply(messages: &[Message], noise: f64, rng: &mut ChaCha8Rng) -> String {
    match rp::parse_planner_prompt(messages) {
        // A weak model drifts from the format now and then (a quarter of
        // its noise); shown the parse error, it writes the strict format.
        Some((view, None)) if rng.random_bool(noise / 4.0) => plan(&view, noise, rng, Format::Loose),
        Some((view, _)) => plan(&view, noise, rng, Format::Strict),
        None => UNREADABLE_PROMPT.into(),
    }
}

/// How the planner writes its plan.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    /// `Plan: …` / `#E1 = tool[{…}]`
    Strict,
    /// A numbered list of calls, as a chatty model writes one.
    Loose,
}

/// One call of a plan as ATC's program writes it: the step's primary tool
/// (an index into the tools given), the arguments the task fills, and the
/// arguments taken from an earlier call (parameter, call number from 1).
pub(super) struct PlannedCall {
    pub tool: usize,
    pub args: Map<String, Value>,
    pub cites: Vec<(String, u32)>,
}

/// The calls a plan would make, one per step (a program calls in
/// sequence): the same choices the rewoo planner makes, so the strategies
/// are compared on the same "intelligence".
pub(super) fn plan_calls(task: &str, tools: &[PlannerTool], noise: f64, rng: &mut ChaCha8Rng) -> Vec<PlannedCall> {
    let refs: Vec<&PlannerTool> = tools.iter().collect();
    steps(task, &refs, noise, rng)
        .into_iter()
        .filter_map(|s| s.lanes.into_iter().next())
        .map(|l| PlannedCall { tool: l.tool, args: l.args, cites: l.cites })
        .collect()
}

fn steps(task: &str, tools: &[&PlannerTool], noise: f64, rng: &mut ChaCha8Rng) -> Vec<Step> {
    let cands: Vec<CandidateInput> = tools
        .iter()
        .map(|t| CandidateInput {
            name: t.name.clone(),
            weight: None,
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        })
        .collect();
    let first = first_choices(task, &cands);
    let Some(step) = build_step(&first, tools, false, noise, rng) else {
        return Vec::new();
    };
    let mut steps = vec![step];
    while steps.len() < MAX_STEPS {
        let choices = later_choices(task, &cands, &steps);
        match build_step(&choices, tools, true, noise, rng) {
            Some(s) => steps.push(s),
            None => break,
        }
    }
    steps
}

fn plan(view: &PlannerInput, noise: f64, rng: &mut ChaCha8Rng, format: Format) -> String {
    let tools: Vec<&PlannerTool> = view.tools.iter().filter(|t| !forbidden(&t.name, &view.notes)).collect();
    let steps = steps(&view.task, &tools, noise, rng);
    if steps.is_empty() {
        return "Plan: No listed tool can help with this task.".into();
    }
    match format {
        Format::Strict => render_plan(&steps, &tools),
        Format::Loose => render_loose(&steps, &tools),
    }
}

fn render_loose(steps: &[Step], tools: &[&PlannerTool]) -> String {
    let mut out = String::from("Sure! Here is how I would solve it:\n");
    for (k, step) in steps.iter().enumerate() {
        let calls: Vec<String> =
            step.lanes.iter().map(|l| format!("{}({})", tools[l.tool].name, render_args(l))).collect();
        out.push_str(&format!("{}. {} — call {}\n", k + 1, thought(step, tools), calls.join(" and ")));
    }
    out
}

/// Budget notes name tools the plan may not use any more.
fn forbidden(name: &str, notes: &[String]) -> bool {
    notes.iter().any(|n| {
        let lower = n.to_lowercase();
        let named = ['\'', '`', '"'].iter().any(|q| n.contains(&format!("{q}{name}{q}")));
        named && FORBIDDING.iter().any(|w| lower.contains(w))
    })
}

/// The first step is the actor's first move: the tools scored as the actor
/// scores them with nothing done yet, callable if the task fills them.
fn first_choices(task: &str, cands: &[CandidateInput]) -> Vec<Choice> {
    let refs: Vec<&CandidateInput> = cands.iter().collect();
    let empty = ActorInput { task: task.to_string(), history: Vec::new(), candidates: Vec::new(), notes: Vec::new() };
    let docs: Vec<String> = cands.iter().map(doc_of).collect();
    let rel = relevance(&task_words(task), &docs);
    let mut choices: Vec<Choice> = score_candidates(&empty, &refs)
        .into_iter()
        .enumerate()
        .map(|(i, s)| Choice {
            tool: i,
            score: s.score,
            relevant: rel[i] > 0.0,
            lane: s.fillable.then(|| Lane { tool: i, args: object(s.arguments), cites: Vec::new() }),
        })
        .collect();
    // Nothing the task can fill: a plan must still say something, so the
    // most relevant tool is called with what there is (and likely fails).
    if choices.iter().all(|c| c.lane.is_none())
        && let Some(best) = argmax(&choices, |_| true)
    {
        let (args, _) = fill_arguments(task, &[], &cands[best].parameters);
        choices[best].lane = Some(Lane { tool: best, args: object(args), cites: Vec::new() });
    }
    choices
}

/// A later step serves the task words no planned tool speaks of yet, and
/// may take what the task lacks from earlier evidence.
fn later_choices(task: &str, cands: &[CandidateInput], steps: &[Step]) -> Vec<Choice> {
    let planned: HashSet<usize> = steps.iter().flat_map(|s| s.lanes.iter().map(|l| l.tool)).collect();
    let covered: Vec<String> = planned.iter().flat_map(|&i| tokenize(&doc_of(&cands[i]))).collect();
    // Numbers are arguments, not needs: "1000" is no reason to factor it.
    let open: Vec<String> = task_words(task)
        .into_iter()
        .filter(|t| !t.chars().all(|c| c.is_ascii_digit()) && !covered.iter().any(|c| words_match(t, c)))
        .collect();
    if open.is_empty() {
        return Vec::new();
    }
    let docs: Vec<String> = cands.iter().map(doc_of).collect();
    let rel = relevance(&open, &docs);
    let imagined: Vec<Value> = steps.iter().enumerate().map(|(k, s)| imagined_result(s, k + 1, cands)).collect();
    let mut choices: Vec<Choice> = (0..cands.len())
        .filter(|i| !planned.contains(i))
        .map(|i| Choice {
            tool: i,
            score: rel[i],
            relevant: rel[i] > 0.0,
            lane: later_lane(i, task, &cands[i], &imagined, steps, cands),
        })
        .collect();
    // As the actor does: a tool that needs the ID the last step gives is the
    // next link of a chain, and the other relevant tools wait.
    if let Some(last) = imagined.last() {
        let chain = |c: &Choice| c.relevant && c.lane.is_some() && needs_id_from(&cands[c.tool], last);
        if choices.iter().any(chain) {
            for c in choices.iter_mut().filter(|c| !chain(c)) {
                c.relevant = false;
                c.score = 0.0;
            }
        }
    }
    choices
}

/// What the planner expects a step to return: the IDs its tools'
/// descriptions say they give (`city_search` "returns its city_id"), each
/// standing for the step's evidence.
fn imagined_result(step: &Step, evidence: usize, cands: &[CandidateInput]) -> Value {
    let mut out = Map::new();
    for lane in &step.lanes {
        let desc = &cands[lane.tool].description;
        for word in desc.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
            if word.len() > 3 && word.ends_with("_id") {
                out.insert(word.to_string(), json!(format!("#E{evidence}")));
            }
        }
    }
    Value::Object(out)
}

/// A later step's call: the task's values, an ID from the step that gives
/// it, and at most one other argument from related earlier evidence.
fn later_lane(
    tool: usize,
    task: &str,
    cand: &CandidateInput,
    imagined: &[Value],
    steps: &[Step],
    cands: &[CandidateInput],
) -> Option<Lane> {
    let (args, _) = fill_arguments(task, &[], &cand.parameters);
    let mut lane = Lane { tool, args: object(args), cites: Vec::new() };
    let mut free = MAX_FREE_CITES;
    for p in required(&cand.parameters) {
        if lane.args.contains_key(&p) {
            continue;
        }
        let evidence = if p.ends_with("_id") {
            // Only the step that gives the ID can fill it; without one the
            // tool cannot be called.
            imagined.iter().rposition(|r| r.get(&p).is_some())? + 1
        } else {
            free = free.checked_sub(1)?;
            related_step(&p, cand.parameters.pointer(&format!("/properties/{p}")), steps, cands)?
        };
        lane.cites.push((p, evidence as u32));
    }
    Some(lane)
}

/// The latest step whose tools speak of what the parameter is about (the
/// country lookup for a `to_currency`), else simply the latest step.
fn related_step(name: &str, schema: Option<&Value>, steps: &[Step], cands: &[CandidateInput]) -> Option<usize> {
    let desc = schema.and_then(|s| s.get("description")).and_then(Value::as_str).unwrap_or("");
    let words = tokenize(&format!("{} {desc}", name.replace('_', " ")));
    let speaks = |s: &Step| {
        s.lanes.iter().any(|l| {
            let doc = tokenize(&doc_of(&cands[l.tool]));
            words.iter().any(|w| doc.iter().any(|d| words_match(w, d)))
        })
    };
    let related = steps.iter().rposition(speaks);
    related.or(steps.len().checked_sub(1)).map(|k| k + 1)
}

/// One step: the best callable choice (or, for a noisy model, any callable
/// one), then its siblings of the same category. A later step needs a
/// relevant choice; the first takes the best there is.
fn build_step(
    choices: &[Choice],
    tools: &[&PlannerTool],
    need_relevance: bool,
    noise: f64,
    rng: &mut ChaCha8Rng,
) -> Option<Step> {
    let callable: Vec<usize> = (0..choices.len()).filter(|&i| choices[i].lane.is_some()).collect();
    let best = argmax(choices, |c| c.lane.is_some() && (!need_relevance || c.relevant))?;
    let mut primary = best;
    // A weak model's mistake: the wrong tool for the step.
    if callable.len() > 1 && rng.random_bool(noise) {
        let others: Vec<usize> = callable.iter().copied().filter(|&i| i != best).collect();
        primary = others[rng.random_range(0..others.len())];
    }
    let mut lanes: Vec<Lane> = choices[primary].lane.iter().cloned().collect();
    // A weak model's other mistake: it forgets it may call several at once.
    if !rng.random_bool(noise) {
        lanes.extend(siblings(choices, primary, choices[best].score, tools));
    }
    Some(Step { lanes })
}

/// Callable tools of the primary's category that are its near-twins or
/// nearly as relevant as the best: twins first, then by relevance.
fn siblings(choices: &[Choice], primary: usize, best_score: f64, tools: &[&PlannerTool]) -> Vec<Lane> {
    let p = tools[choices[primary].tool];
    let mut twins = Vec::new();
    let mut near = Vec::new();
    for (i, c) in choices.iter().enumerate() {
        let t = tools[c.tool];
        if i == primary || c.lane.is_none() || t.category != p.category {
            continue;
        }
        if similarity(&t.description, &p.description) >= TWIN_SIMILARITY {
            twins.push(i);
        } else if c.relevant && c.score >= SIBLING_SHARE * best_score {
            near.push(i);
        }
    }
    near.sort_by(|&a, &b| choices[b].score.total_cmp(&choices[a].score));
    twins.into_iter().chain(near).take(MAX_LANES - 1).filter_map(|i| choices[i].lane.clone()).collect()
}

/// The index of the best-scored choice passing `keep`, the first on ties.
fn argmax(choices: &[Choice], keep: impl Fn(&Choice) -> bool) -> Option<usize> {
    (0..choices.len())
        .filter(|&i| keep(&choices[i]))
        .max_by(|&a, &b| choices[a].score.total_cmp(&choices[b].score).then(b.cmp(&a)))
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn render_plan(steps: &[Step], tools: &[&PlannerTool]) -> String {
    let mut out = String::new();
    for (k, step) in steps.iter().enumerate() {
        let calls: Vec<String> =
            step.lanes.iter().map(|l| format!("{}[{}]", tools[l.tool].name, render_args(l))).collect();
        out.push_str(&format!("Plan: {}\n#E{} = {}\n", thought(step, tools), k + 1, calls.join("; ")));
    }
    out
}

/// The JSON input of a call, written by hand so that citations stay
/// `"#E<n>"` while literal text that merely looks like one does not.
fn render_args(lane: &Lane) -> String {
    let key = |k: &str| escape_refs(&compact(&json!(k)));
    let mut parts: Vec<String> =
        lane.args.iter().map(|(k, v)| format!("{}: {}", key(k), escape_refs(&compact(v)))).collect();
    parts.extend(lane.cites.iter().map(|(k, n)| format!("{}: \"#E{n}\"", key(k))));
    format!("{{{}}}", parts.join(", "))
}

/// A literal `#E1` in a task's text would read as a citation of step 1.
/// JSON's `\u0045` spells the same `E` for whoever parses the input, and
/// hides it from the plan parser. `#` occurs in compact JSON only inside
/// strings, where no escape sequence involves it.
fn escape_refs(json: &str) -> String {
    let chars: Vec<char> = json.chars().collect();
    let mut out = String::with_capacity(json.len());
    for (i, &c) in chars.iter().enumerate() {
        let cited = i > 0 && chars[i - 1] == '#' && chars.get(i + 1).is_some_and(char::is_ascii_digit);
        match c {
            'E' if cited => out.push_str("\\u0045"),
            'e' if cited => out.push_str("\\u0065"),
            _ => out.push(c),
        }
    }
    out
}

/// "Use geo_lookup and geo_lookup_mirror at once with country Japan."
fn thought(step: &Step, tools: &[&PlannerTool]) -> String {
    let names: Vec<String> = step.lanes.iter().map(|l| tools[l.tool].name.clone()).collect();
    let who = match names.len() {
        1 => names[0].clone(),
        _ => format!("{} at once", and_list(&names)),
    };
    let Some(lane) = step.lanes.first() else { return format!("Use {who}.") };
    let mut items: Vec<String> = lane.args.iter().map(|(k, v)| describe(k, v)).collect();
    items.extend(lane.cites.iter().map(|(k, n)| format!("{k} from #E{n}")));
    if items.is_empty() { format!("Use {who}.") } else { format!("Use {who} with {}.", and_list(&items)) }
}

/// A short value is named; a long one (the whole task as a query) only
/// said to come from the task. `#` is dropped so a value cannot read as a
/// step of the plan, and the line is one line with one full stop.
fn describe(name: &str, v: &Value) -> String {
    let text: String = value_text(v).replace('#', " ").split_whitespace().collect::<Vec<_>>().join(" ");
    let text = text.trim_end_matches(['.', '?', '!']);
    if text.is_empty() || text.chars().count() > 40 {
        format!("{name} from the task")
    } else {
        format!("{name} {text}")
    }
}

fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_references_are_hidden_but_citations_kept() {
        let lane = Lane {
            tool: 0,
            args: object(json!({"query": "what is #E1 and #e22?"})),
            cites: vec![("city_id".into(), 1)],
        };
        let text = render_args(&lane);
        assert_eq!(text, r##"{"query": "what is #\u00451 and #\u006522?", "city_id": "#E1"}"##);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back["query"], "what is #E1 and #e22?");
    }
}
