//! The simulated model: deterministic, offline, honest about what it is.
//!
//! It reads the same prompt a real model is shown (the text protocol of
//! `strategy::actor`), never a side channel, and answers in the same reply
//! format. As actor it chooses among the offered candidates by lexical
//! relevance to the task, the shown weights and seeded noise, and fills the
//! arguments from the task text and the history; as evaluator it scores a
//! trajectory by its observed outcomes; as judge it tells a useful result
//! from an error or an empty one. The rewoo roles (classifier, planner,
//! solver) live in `sim/rewoo.rs` and reuse these heuristics.
//!
//! Every call's randomness comes from the seed and a hash of the request, so
//! the same request gets the same reply whatever the call order or timing.

mod rewoo;

use std::collections::{BTreeMap, HashSet};

use async_trait::async_trait;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage, tokens};
use crate::retrieve::{similarity, tokenize};
use crate::strategy::actor::{
    self, ActorAction, ActorView, CandidateView, EvalView, FINISH, HistoryEntry, Observation,
};
use crate::task::answer_matches;
use crate::tool::builtin;
use crate::tool::nothing_found::is_nothing_found;

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
            Role::Actor => {
                let action = match actor::parse_actor_prompt(&req.messages) {
                    Some(view) => act(&view, self.config.noise, rng),
                    None => ActorAction::Finish { answer: UNREADABLE_PROMPT.into() },
                };
                actor::render_actor_reply(&action)
            }
            Role::Evaluator => {
                let scores = actor::parse_eval_prompt(&req.messages).map(|v| evaluate(&v)).unwrap_or_default();
                actor::render_eval_reply(&scores)
            }
            Role::Judge => {
                let helpful = actor::parse_judge_prompt(&req.messages)
                    .is_some_and(|v| is_useful(&v.observation) && !is_wrong_arithmetic(&v.arguments, &v.observation));
                actor::render_judge_reply(helpful)
            }
            Role::Classifier => rewoo::classifier_reply(&req.messages, self.config.noise, rng),
            Role::Planner => rewoo::planner_reply(&req.messages, self.config.noise, rng),
            Role::Solver => rewoo::solver_reply(&req.messages, self.config.noise, rng),
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
        let text = self.reply_text(req, &mut rng);
        let mut prompt_tokens = tokens::count_messages(&req.messages);
        if !req.tools.is_empty() {
            prompt_tokens += tokens::count(&serde_json::to_string(&req.tools).unwrap_or_default());
        }
        let usage = Usage { prompt_tokens, completion_tokens: tokens::count(&text) };
        Ok(ChatResponse { text, tool_calls: Vec::new(), usage })
    }
}

const UNREADABLE_PROMPT: &str = "I could not read the prompt.";
const GIVE_UP: &str = "I could not find the answer.";

// ---------------------------------------------------------------- actor

/// After this many failed calls in one run the actor gives up, as a model
/// that keeps hitting errors would.
const MAX_FAILURES: usize = 3;
/// The actor's own step limit, below any engine's: a weak model stops
/// trying eventually.
const MAX_CALLS: usize = 6;
/// A tool already used successfully is rarely worth calling again.
const USED_PENALTY: f64 = 0.1;
/// A tool that failed or was refused in this run: try something else. This
/// is what moves the actor to the backup when the primary breaks mid-task.
const FAILED_PENALTY: f64 = 0.02;
/// Cosine similarity of two descriptions above which the tools are taken
/// for twins (a primary and its mirror): between twins the actor chooses in
/// proportion to the shown weights, not by argmax, so the weights steer it.
const TWIN_SIMILARITY: f64 = 0.9;

/// One step of the actor.
fn act(view: &ActorView, noise: f64, rng: &mut ChaCha8Rng) -> ActorAction {
    let failures = view.history.iter().filter(|h| !is_useful(&h.observation)).count();
    let last_useful = view.history.iter().rev().find(|h| is_useful(&h.observation));
    let best_answer = || match last_useful {
        Some(h) => ActorAction::Finish { answer: answer_from(&view.task, result_of(h)) },
        None => ActorAction::Finish { answer: GIVE_UP.into() },
    };
    if failures >= MAX_FAILURES {
        return ActorAction::Finish { answer: GIVE_UP.into() };
    }
    if view.history.len() >= MAX_CALLS {
        return best_answer();
    }
    let tools: Vec<&CandidateView> = view.candidates.iter().filter(|c| c.name != FINISH).collect();
    if tools.is_empty() {
        return best_answer();
    }
    let scored = score_candidates(view, &tools);
    // A tool whose required arguments are nowhere to be found is not worth a call.
    let mut pool: Vec<usize> = (0..scored.len()).filter(|&i| scored[i].fillable).collect();
    // Once something useful came back (even if a later call failed): go on
    // only for a reason, and only among the candidates that give it.
    if let Some(last) = last_useful {
        let obs = result_of(last);
        let remaining = uncovered_words(view, &tools);
        let rel = relevance(&remaining, &tools.iter().map(|c| doc_of(c)).collect::<Vec<_>>());
        let open: Vec<usize> =
            (0..scored.len()).filter(|&i| scored[i].fresh && scored[i].fillable && rel[i] > 0.0).collect();
        // A two-step chain: a candidate needs an ID the last result just gave.
        let chain: Vec<usize> = open.iter().copied().filter(|&i| needs_id_from(scored[i].candidate, obs)).collect();
        pool = if chain.is_empty() { open } else { chain };
        if pool.is_empty() {
            return ActorAction::Finish { answer: answer_from(&view.task, obs) };
        }
    }
    if pool.is_empty() {
        return best_answer();
    }
    // A weak model's mistake: any candidate at all.
    if rng.random_bool(noise) {
        let pick = &scored[rng.random_range(0..scored.len())];
        return ActorAction::Call { tool: pick.candidate.name.clone(), arguments: pick.arguments.clone() };
    }
    let noisy: Vec<f64> = scored.iter().map(|s| s.score + noise * rng.random::<f64>()).collect();
    let best = pool.iter().copied().max_by(|&a, &b| noisy[a].total_cmp(&noisy[b])).unwrap_or(0);
    let twins: Vec<usize> = pool
        .iter()
        .copied()
        .filter(|&i| {
            i == best
                || (scored[i].penalty >= scored[best].penalty
                    && similarity(&scored[i].candidate.description, &scored[best].candidate.description)
                        >= TWIN_SIMILARITY)
        })
        .collect();
    let chosen = if twins.len() > 1 {
        let total: f64 = twins.iter().map(|&i| scored[i].weight).sum();
        let mut x = rng.random::<f64>() * total;
        let mut pick = best;
        for &i in &twins {
            if x < scored[i].weight {
                pick = i;
                break;
            }
            x -= scored[i].weight;
        }
        pick
    } else {
        best
    };
    ActorAction::Call { tool: scored[chosen].candidate.name.clone(), arguments: scored[chosen].arguments.clone() }
}

struct Scored<'a> {
    candidate: &'a CandidateView,
    /// The shown weight over the largest shown weight (1 when none is shown).
    weight: f64,
    penalty: f64,
    score: f64,
    /// Not used in this run yet, successfully or not.
    fresh: bool,
    fillable: bool,
    arguments: Value,
}

fn score_candidates<'a>(view: &ActorView, tools: &[&'a CandidateView]) -> Vec<Scored<'a>> {
    let rel = relevance(&task_words(&view.task), &tools.iter().map(|c| doc_of(c)).collect::<Vec<_>>());
    let max_rel = rel.iter().copied().fold(0.0, f64::max);
    let weights: Vec<Option<f64>> = tools.iter().map(|c| c.weight.as_deref().and_then(parse_weight)).collect();
    let max_w = weights.iter().flatten().copied().fold(0.0, f64::max);
    tools
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (arguments, fillable) = fill_arguments(&view.task, &view.history, &c.parameters);
            let used_ok = view.history.iter().any(|h| h.tool == c.name && is_useful(&h.observation));
            let failed = view.history.iter().any(|h| h.tool == c.name && !is_useful(&h.observation));
            let mut penalty = 1.0;
            if used_ok {
                penalty *= USED_PENALTY;
            }
            if failed {
                penalty *= FAILED_PENALTY;
            }
            let weight = match weights[i] {
                Some(w) if max_w > 0.0 => w / max_w,
                Some(_) => 0.0,
                None => 1.0,
            };
            let rel_norm = if max_rel > 0.0 { rel[i] / max_rel } else { 0.0 };
            Scored {
                candidate: c,
                weight,
                penalty,
                // The floor keeps weights meaningful among tools none of
                // whose words the task uses.
                score: (0.05 + rel_norm) * weight * penalty,
                fresh: !used_ok && !failed,
                fillable,
                arguments,
            }
        })
        .collect()
}

fn doc_of(c: &CandidateView) -> String {
    format!("{} {}", c.name, c.description)
}

/// The words of the task that say what is needed: quoted phrases are the
/// arguments, not the need, so they are left out.
fn task_words(task: &str) -> Vec<String> {
    dedup(tokenize(&extract_quoted(task).1))
}

/// Task words that no tool used successfully in this run speaks of: what
/// is still to be done. A tool no longer offered is known by its name.
fn uncovered_words(view: &ActorView, tools: &[&CandidateView]) -> Vec<String> {
    let mut covered: Vec<String> = Vec::new();
    for h in view.history.iter().filter(|h| is_useful(&h.observation)) {
        let doc = tools.iter().find(|c| c.name == h.tool).map(|c| doc_of(c)).unwrap_or_else(|| h.tool.clone());
        covered.extend(tokenize(&doc));
        // What was asked and what came back cover the task's words too: a
        // tool that left the list (BTP forbids it) is still remembered by
        // its call and its result, as a real model remembers them.
        if !tools.iter().any(|c| c.name == h.tool) {
            covered.extend(tokenize(&h.arguments.to_string()));
            if let Observation::Result(v) = &h.observation {
                covered.extend(tokenize(&v.to_string()));
            }
        }
    }
    task_words(&view.task).into_iter().filter(|t| !covered.iter().any(|c| words_match(t, c))).collect()
}

/// A shown weight: "37", "0.37" or "370" all read as numbers; only their
/// ratio to the largest matters.
fn parse_weight(s: &str) -> Option<f64> {
    s.trim().trim_end_matches('%').parse::<f64>().ok().filter(|w| w.is_finite() && *w >= 0.0)
}

/// Task words found in each document, each weighted by its BM25 inverse
/// document frequency over the documents: a word every candidate has
/// tells them apart less.
fn relevance(task_tokens: &[String], docs: &[String]) -> Vec<f64> {
    let doc_tokens: Vec<Vec<String>> = docs.iter().map(|d| dedup(tokenize(d))).collect();
    let n = doc_tokens.len() as f64;
    task_tokens
        .iter()
        .map(|t| {
            let hits: Vec<bool> = doc_tokens.iter().map(|d| d.iter().any(|w| words_match(t, w))).collect();
            let df = hits.iter().filter(|h| **h).count() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            hits.into_iter().map(|h| if h { idf } else { 0.0 }).collect::<Vec<f64>>()
        })
        .fold(vec![0.0; docs.len()], |acc, row| acc.iter().zip(row).map(|(a, b)| a + b).collect())
}

fn dedup(v: Vec<String>) -> Vec<String> {
    let mut seen = HashSet::new();
    v.into_iter().filter(|t| seen.insert(t.clone())).collect()
}

/// Stemmed words match when equal, when the shorter (of at least four
/// letters) begins the longer ("week", "weekday"), or when they share six
/// leading letters ("conversion", "convert").
fn words_match(a: &str, b: &str) -> bool {
    if a == b {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.chars().count() >= 4 && long.starts_with(short) {
        return true;
    }
    a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count() >= 6
}

fn needs_id_from(c: &CandidateView, obs: &Value) -> bool {
    required(&c.parameters).iter().any(|p| p.ends_with("_id") && obs.get(p.as_str()).is_some_and(|v| !v.is_null()))
}

fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

fn result_of(h: &HistoryEntry) -> &Value {
    match &h.observation {
        Observation::Result(v) => v,
        _ => &Value::Null,
    }
}

/// A result that helps: not an error or refusal, not "nothing found", not garbage.
fn is_useful(obs: &Observation) -> bool {
    match obs {
        Observation::Result(v) => !is_nothing_found(v) && !is_garbage(v),
        Observation::Error(_) | Observation::Refused(_) => false,
    }
}

/// Text that is mostly symbols (what a garbage fault returns) is no answer.
fn is_garbage(v: &Value) -> bool {
    let Value::String(s) = v else { return false };
    let total = s.chars().count();
    if s.contains('\u{FFFD}') {
        return true;
    }
    if total < 8 {
        return false;
    }
    let readable = s.chars().filter(|c| c.is_alphanumeric() || c.is_whitespace()).count();
    (readable as f64) < 0.5 * total as f64
}

/// A calculation whose claimed result is not what its expression gives (a
/// careful reviewer re-does the arithmetic): misleading, worse than nothing.
fn is_wrong_arithmetic(arguments: &Value, obs: &Observation) -> bool {
    let (Some(expr), Observation::Result(v)) = (arguments.get("expression").and_then(Value::as_str), obs) else {
        return false;
    };
    let Some(claimed) = v.get("result").and_then(Value::as_f64).or_else(|| v.as_f64()) else {
        return false;
    };
    match builtin::evaluate_expression(expr) {
        Ok(x) => (x - claimed).abs() > 1e-6 * x.abs().max(claimed.abs()).max(1.0),
        Err(_) => false,
    }
}

// ------------------------------------------------------------- answers

/// The answer a result gives to the task: the field the task asks about,
/// else a `result`/`answer`/`value` field, else the only field, else the
/// whole result as compact JSON.
fn answer_from(task: &str, v: &Value) -> String {
    let Value::Object(map) = v else { return value_text(v) };
    let task_tokens = tokenize(task);
    let wants_id = task_tokens.iter().any(|t| t == "id" || t == "identifier");
    let mut best: Option<(f64, &Value)> = None;
    for (key, value) in map {
        if key.ends_with("_id") && !wants_id {
            continue;
        }
        let parts: Vec<String> = key.split('_').flat_map(tokenize).collect();
        if parts.is_empty() {
            continue;
        }
        let hit = parts.iter().filter(|p| task_tokens.iter().any(|t| words_match(t, p))).count();
        let score = hit as f64 / parts.len() as f64;
        if hit > 0 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, value));
        }
    }
    if let Some((_, value)) = best {
        return value_text(value);
    }
    for key in ["result", "answer", "value"] {
        if let Some(value) = map.get(key) {
            return value_text(value);
        }
    }
    if map.len() == 1 {
        return map.values().next().map(value_text).unwrap_or_default();
    }
    actor::compact(v)
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        Value::Object(_) => actor::compact(v),
    }
}

// ----------------------------------------------------------- arguments

/// Fills a tool's arguments from the task and the history, by parameter
/// schema. Returns the arguments and whether every required one was found.
///
/// - a name ending in `_id`: the most recent result with that field, else an
///   ID-like token of the task ("C0042");
/// - a name that is a field of the last useful result: that value (a chain);
/// - an enum: the allowed values mentioned in the task, then in the
///   results, in order of mention (so `from_*` gets the first, `to_*` the next);
/// - `format: date`: the task's YYYY-MM-DD dates in order;
/// - a name containing `expression`: the arithmetic expression in the task;
/// - numbers: the task's numbers in order (an array of numbers takes all);
/// - other strings: quoted phrases in order, else proper nouns, else (for a
///   free-text parameter such as `query`) the task itself.
fn fill_arguments(task: &str, history: &[HistoryEntry], schema: &Value) -> (Value, bool) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return (json!({}), true);
    };
    let required = required(schema);
    let pools = Pools::new(task);
    let mut used = Used::default();
    let last = history.iter().rev().find(|h| is_useful(&h.observation)).map(result_of);
    let mut order: Vec<(usize, &String, &Value)> = props.iter().enumerate().map(|(i, (k, v))| (i, k, v)).collect();
    order.sort_by_key(|(i, name, _)| (position_rank(name), *i));
    let mut args = Map::new();
    let mut complete = true;
    for (_, name, p) in order {
        let value = fill_one(name, p, task, history, last, &pools, &mut used);
        match value {
            Some(v) => {
                args.insert(name.clone(), v);
            }
            None if required.contains(name) => complete = false,
            None => {}
        }
    }
    (Value::Object(args), complete)
}

/// `from`/`start` parameters take the first mention, `to`/`end` the next,
/// whatever order the schema lists them in.
fn position_rank(name: &str) -> u8 {
    let parts: Vec<&str> = name.split('_').collect();
    let has = |words: &[&str]| parts.iter().any(|p| words.contains(p));
    if has(&["from", "start", "begin", "first", "source", "origin"]) {
        0
    } else if has(&["to", "end", "until", "last", "target", "destination"]) {
        2
    } else {
        1
    }
}

#[derive(Default)]
struct Used {
    dates: usize,
    numbers: usize,
    quoted: Vec<bool>,
    proper: usize,
    /// Per enum (its values joined), how many mentions were taken.
    enums: BTreeMap<String, usize>,
}

struct Pools {
    dates: Vec<String>,
    numbers: Vec<f64>,
    quoted: Vec<Quoted>,
    proper: Vec<String>,
}

impl Pools {
    fn new(task: &str) -> Self {
        let (dates, without_dates) = extract_dates(task);
        let (quoted, unquoted) = extract_quoted(task);
        Pools { dates, numbers: extract_numbers(&without_dates), quoted, proper: extract_proper(&unquoted) }
    }
}

fn fill_one(
    name: &str,
    p: &Value,
    task: &str,
    history: &[HistoryEntry],
    last: Option<&Value>,
    pools: &Pools,
    used: &mut Used,
) -> Option<Value> {
    let ty = p.get("type").and_then(Value::as_str).unwrap_or("string");
    if name.ends_with("_id") {
        let from_history = history
            .iter()
            .rev()
            .filter(|h| is_useful(&h.observation))
            .find_map(|h| result_of(h).get(name).filter(|v| !v.is_null()));
        return match from_history {
            Some(Value::String(s)) => Some(json!(s)),
            Some(other) => Some(json!(value_text(other))),
            None => extract_id(task).map(Value::String),
        };
    }
    if let Some(v) = last.and_then(|l| l.get(name)).filter(|v| fits(v, ty)) {
        return Some(v.clone());
    }
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let allowed: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        let mut texts = vec![task.to_string()];
        texts.extend(history.iter().filter(|h| is_useful(&h.observation)).map(|h| actor::compact(result_of(h))));
        let mentions: Vec<&str> = texts.iter().flat_map(|t| enum_mentions(t, &allowed)).collect();
        let key = allowed.join("|");
        let k = used.enums.entry(key).or_default();
        let v = mentions.get(*k).map(|s| json!(s));
        *k += 1;
        return v;
    }
    match ty {
        "integer" | "number" => {
            let integer = ty == "integer";
            while used.numbers < pools.numbers.len() {
                let x = pools.numbers[used.numbers];
                used.numbers += 1;
                if !integer || x.fract() == 0.0 {
                    return Some(number_value(x));
                }
            }
            None
        }
        "array" => {
            let item_ty = p.pointer("/items/type").and_then(Value::as_str).unwrap_or("");
            if matches!(item_ty, "number" | "integer") && !pools.numbers.is_empty() {
                let rest = &pools.numbers[used.numbers.min(pools.numbers.len())..];
                used.numbers = pools.numbers.len();
                return Some(Value::Array(rest.iter().map(|x| number_value(*x)).collect()));
            }
            None
        }
        "boolean" => None,
        _ => {
            if p.get("format").and_then(Value::as_str) == Some("date") {
                let d = pools.dates.get(used.dates).cloned();
                used.dates += 1;
                return d.map(Value::String);
            }
            if name.contains("expression") {
                return extract_expression(task, &pools.quoted).map(Value::String);
            }
            used.quoted.resize(pools.quoted.len(), false);
            let fit = (0..pools.quoted.len()).find(|&i| !used.quoted[i] && label_fits(&pools.quoted[i], name, p));
            if let Some(i) = fit {
                used.quoted[i] = true;
                return Some(json!(pools.quoted[i].text));
            }
            if let Some(n) = pools.proper.get(used.proper) {
                used.proper += 1;
                return Some(json!(n));
            }
            // The whole task suits a free-text parameter only: a country
            // named by the task's full text is no argument at all.
            let free_text = name.split('_').any(|w| FREE_TEXT_NAMES.contains(&w));
            free_text.then(|| json!(task))
        }
    }
}

/// Parameter names (or parts of them) that take free text.
const FREE_TEXT_NAMES: &[&str] =
    &["query", "question", "text", "prompt", "input", "search", "q", "message", "content", "topic"];

fn fits(v: &Value, ty: &str) -> bool {
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        _ => !v.is_null(),
    }
}

fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 { json!(x as i64) } else { json!(x) }
}

/// YYYY-MM-DD dates in order, and the text with them blanked out (so their
/// digits are not read as numbers).
fn extract_dates(text: &str) -> (Vec<String>, String) {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut rest = chars.clone();
    let shape = |i: usize| -> bool {
        let pattern = "dddd-dd-dd";
        if i + pattern.len() > chars.len() {
            return false;
        }
        let ok = pattern.chars().enumerate().all(|(k, p)| match p {
            'd' => chars[i + k].is_ascii_digit(),
            _ => chars[i + k] == '-',
        });
        let before = i == 0 || !chars[i - 1].is_alphanumeric();
        let after = chars.get(i + pattern.len()).is_none_or(|c| !c.is_alphanumeric());
        ok && before && after
    };
    let mut i = 0;
    while i < chars.len() {
        if shape(i) {
            out.push(chars[i..i + 10].iter().collect());
            for c in rest.iter_mut().skip(i).take(10) {
                *c = ' ';
            }
            i += 10;
        } else {
            i += 1;
        }
    }
    (out, rest.into_iter().collect())
}

/// Numbers in order. A '-' is a sign only where a number may start; digits
/// glued to letters (IDs like C0042) are not numbers; thousands separators
/// ("1,250") are read.
fn extract_numbers(text: &str) -> Vec<f64> {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let starts = c[i].is_ascii_digit() && (i == 0 || !(c[i - 1].is_alphanumeric() || c[i - 1] == '.'));
        if !starts {
            i += 1;
            continue;
        }
        let negative = i > 0 && c[i - 1] == '-' && (i == 1 || c[i - 2].is_whitespace() || "([=:".contains(c[i - 2]));
        let mut s = String::new();
        let mut j = i;
        while j < c.len() {
            if c[j].is_ascii_digit() {
                s.push(c[j]);
                j += 1;
            } else if c[j] == ','
                && c.get(j + 1..j + 4).is_some_and(|g| g.iter().all(char::is_ascii_digit))
                && c.get(j + 4).is_none_or(|x| !x.is_ascii_digit())
            {
                j += 1;
            } else {
                break;
            }
        }
        if j + 1 < c.len() && c[j] == '.' && c[j + 1].is_ascii_digit() {
            s.push('.');
            j += 1;
            while j < c.len() && c[j].is_ascii_digit() {
                s.push(c[j]);
                j += 1;
            }
        }
        let glued = c.get(j).is_some_and(|x| x.is_alphabetic());
        if !glued && let Ok(v) = s.parse::<f64>() {
            out.push(if negative { -v } else { v });
        }
        i = j;
    }
    out
}

/// A quoted phrase and the word that introduces it ("the city 'Lyon'" has
/// the label `city`), stop words skipped.
struct Quoted {
    text: String,
    label: Option<String>,
}

/// Nouns that say what kind of thing a quoted phrase is. A phrase labelled
/// with one of them goes only to a parameter whose name or description
/// uses the same noun: 'Lyon' in "the city 'Lyon'" is no country.
const KIND_NOUNS: &[&str] = &[
    "city",
    "country",
    "term",
    "text",
    "word",
    "sentence",
    "numeral",
    "number",
    "currency",
    "unit",
    "date",
    "name",
    "phrase",
    "expression",
    "code",
    "query",
    "topic",
];

/// Phrases in "double", 'single', “curly” or ‘curly’ quotes, and the text
/// with them blanked out. A straight apostrophe inside a word ("don't")
/// neither opens nor closes a quote.
fn extract_quoted(text: &str) -> (Vec<Quoted>, String) {
    let c: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut rest = c.clone();
    let mut i = 0;
    while i < c.len() {
        let close = match c[i] {
            '"' => Some('"'),
            '“' => Some('”'),
            '‘' => Some('’'),
            '\'' if i == 0 || !c[i - 1].is_alphanumeric() => Some('\''),
            _ => None,
        };
        let Some(close) = close else {
            i += 1;
            continue;
        };
        let end = (i + 1..c.len())
            .find(|&j| c[j] == close && (close != '\'' || c.get(j + 1).is_none_or(|n| !n.is_alphanumeric())));
        match end {
            Some(j) if j > i + 1 => {
                let phrase: String = c[i + 1..j].iter().collect();
                if !phrase.trim().is_empty() {
                    let before: String = c[..i].iter().collect();
                    let label = before.split_whitespace().rev().find_map(|w| tokenize(w).pop());
                    out.push(Quoted { text: phrase.trim().to_string(), label });
                }
                for ch in rest.iter_mut().take(j + 1).skip(i) {
                    *ch = ' ';
                }
                i = j + 1;
            }
            _ => i += 1,
        }
    }
    (out, rest.into_iter().collect())
}

/// Whether a quoted phrase may fill a parameter (see `KIND_NOUNS`).
fn label_fits(q: &Quoted, name: &str, p: &Value) -> bool {
    let Some(label) = &q.label else { return true };
    let kind = KIND_NOUNS.iter().any(|k| tokenize(k).iter().any(|t| t == label));
    if !kind {
        return true;
    }
    let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
    tokenize(&format!("{} {desc}", name.replace('_', " "))).iter().any(|t| words_match(t, label))
}

/// Runs of capitalised words that do not start a sentence ("New Zealand"),
/// acronyms left out ("USD" is rarely the name asked for).
fn extract_proper(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut run: Vec<&str> = Vec::new();
    let mut sentence_start = true;
    for raw in text.split_whitespace() {
        let word = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let capital = word.chars().next().is_some_and(char::is_uppercase);
        let acronym = word.chars().filter(|c| c.is_alphabetic()).all(char::is_uppercase) && word.chars().count() <= 4;
        if capital && !sentence_start && !acronym {
            run.push(word);
        } else if !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
        // A run also ends at punctuation after the word.
        if raw.ends_with([',', ';', ':', '?', '!', '.', ')']) && !run.is_empty() {
            out.push(run.join(" "));
            run.clear();
        }
        sentence_start = raw.ends_with(['.', '?', '!', ':']);
    }
    if !run.is_empty() {
        out.push(run.join(" "));
    }
    out
}

fn extract_id(text: &str) -> Option<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .find(|w| {
            let letters = w.chars().take_while(char::is_ascii_uppercase).count();
            letters > 0 && w.len() > letters && w.chars().skip(letters).all(|c| c.is_ascii_digit())
        })
        .map(str::to_string)
}

const EXPRESSION_CHARS: &str = "0123456789.+-*/^%()×÷− ";

/// The arithmetic in the task: a quoted phrase that is arithmetic, else the
/// longest run of arithmetic characters with an operator between numbers.
fn extract_expression(task: &str, quoted: &[Quoted]) -> Option<String> {
    let is_arith = |s: &str| {
        let s = s.trim();
        s.chars().all(|c| EXPRESSION_CHARS.contains(c))
            && s.chars().any(|c| c.is_ascii_digit())
            && s.chars().any(|c| "+-*/^%×÷−".contains(c))
    };
    if let Some(q) = quoted.iter().find(|q| is_arith(&q.text)) {
        return Some(q.text.trim().to_string());
    }
    let mut best: Option<String> = None;
    let mut cur = String::new();
    let mut consider = |cur: &str| {
        let t = tidy_expression(cur);
        if is_arith(&t) && best.as_ref().is_none_or(|b| t.len() > b.len()) {
            best = Some(t);
        }
    };
    for ch in task.chars() {
        if EXPRESSION_CHARS.contains(ch) {
            cur.push(ch);
        } else {
            consider(&cur);
            cur.clear();
        }
    }
    consider(&cur);
    best
}

/// Trims what cannot end or start an expression (a sentence's full stop,
/// an unmatched parenthesis).
fn tidy_expression(s: &str) -> String {
    let mut t = s.trim().trim_end_matches(['.', ' ', '+', '*', '/', '^', '%', '-']).trim().to_string();
    loop {
        let open = t.matches('(').count();
        let close = t.matches(')').count();
        if close > open && t.ends_with(')') {
            t.pop();
        } else if open > close && t.starts_with('(') {
            t.remove(0);
        } else {
            break;
        }
        t = t.trim().to_string();
    }
    t
}

/// Allowed enum values mentioned in `text`, in order of mention. All-caps
/// values (currency codes) match case-sensitively, so "try" is not TRY;
/// others ignore case, accept a plural "s", and read `_` as a space. A
/// mention inside a longer one ("mile" in "nautical mile") does not count.
fn enum_mentions<'a>(text: &str, allowed: &[&'a str]) -> Vec<&'a str> {
    let lower = text.to_lowercase();
    let mut found: Vec<(usize, usize, &'a str)> = Vec::new();
    for &v in allowed {
        let case_sensitive = !v.chars().any(char::is_lowercase);
        let hay = if case_sensitive { text } else { lower.as_str() };
        let needles: Vec<String> = if case_sensitive {
            vec![v.to_string()]
        } else {
            let l = v.to_lowercase();
            let spaced = l.replace('_', " ");
            if spaced == l { vec![l] } else { vec![l, spaced] }
        };
        for needle in needles {
            // Lower-casing that changes byte lengths would shift positions
            // against the case-sensitive matches; such text is skipped.
            if needle.is_empty() || hay.len() != text.len() {
                continue;
            }
            for (pos, _) in hay.match_indices(needle.as_str()) {
                let end = pos + needle.len();
                let before_ok = hay[..pos].chars().next_back().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                let mut stop = end;
                if !case_sensitive && hay[end..].starts_with('s') {
                    stop += 1;
                }
                let boundary = |at: usize| hay[at..].chars().next().is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
                if before_ok && (boundary(end) || boundary(stop)) {
                    found.push((pos, end, v));
                }
            }
        }
    }
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut out: Vec<(usize, usize, &'a str)> = Vec::new();
    for m in found {
        if out.iter().any(|o| m.0 >= o.0 && m.1 <= o.1) {
            continue;
        }
        out.push(m);
    }
    out.into_iter().map(|(_, _, v)| v).collect()
}

// ------------------------------------------------------------ evaluator

/// A call that failed, was refused, found nothing or returned garbage did
/// harm: the most negative score, so a broken tool's weight falls fast.
const FAILURE_SCORE: i32 = -3;
/// A useful result that later calls used, or that became the answer. Kept
/// at +1 on purpose: ToolNet's weights follow the accumulated scores, and a
/// primary that has gathered +2 per task before it breaks needs many -3s to
/// fall below its backup. With +1 per use and the sample task mix, the
/// backup overtakes within a few tasks (the Figure 4 experiment); with +2 for
/// the answer it took noticeably longer in a simulation of the dynamics.
const USED_SCORE: i32 = 1;
/// The result that became the answer: the same +1, for the reason above.
const ANSWER_SCORE: i32 = 1;
/// A result that worked but that nothing used: neither helped nor harmed.
const UNUSED_SCORE: i32 = 0;
/// A useful result for the very arguments another tool failed on earlier in
/// the run: the call that saved the run, which an evaluator reading the
/// trajectory calls essential. Only runs with a failure earn it, so a
/// healthy primary's lead does not grow by it.
const RESCUE_SCORE: i32 = 3;

/// Scores every tool of a trajectory in [-3, 3] from the observed outcomes;
/// a tool called several times gets the clamped sum of its calls.
fn evaluate(view: &EvalView) -> BTreeMap<String, i32> {
    let answer_step = view.answer.as_deref().and_then(|a| answer_step(&view.steps, a));
    let mut sums: BTreeMap<String, i32> = BTreeMap::new();
    for (i, step) in view.steps.iter().enumerate() {
        let delta = if !is_useful(&step.observation) || is_wrong_arithmetic(&step.arguments, &step.observation) {
            FAILURE_SCORE
        } else if view.steps[..i]
            .iter()
            .any(|h| h.tool != step.tool && h.arguments == step.arguments && !is_useful(&h.observation))
        {
            RESCUE_SCORE
        } else if Some(i) == answer_step {
            ANSWER_SCORE
        } else if feeds_later(result_of(step), &view.steps[i + 1..]) {
            USED_SCORE
        } else {
            UNUSED_SCORE
        };
        *sums.entry(step.tool.clone()).or_default() += delta;
    }
    sums.into_iter().map(|(tool, sum)| (tool, sum.clamp(-3, 3))).collect()
}

/// The step whose result the answer gives: the last useful step with a
/// value the answer contains; failing that, the last useful step, unless
/// the answer gives up.
fn answer_step(steps: &[HistoryEntry], answer: &str) -> Option<usize> {
    let useful: Vec<usize> = (0..steps.len()).filter(|&i| is_useful(&steps[i].observation)).collect();
    let found = useful.iter().rev().find(|&&i| {
        let mut values = Vec::new();
        scalars(result_of(&steps[i]), &mut values);
        values.iter().any(|v| !v.is_empty() && answer_matches(answer, v))
    });
    if let Some(&i) = found {
        return Some(i);
    }
    let gave_up = answer.trim().is_empty() || answer == GIVE_UP || answer == UNREADABLE_PROMPT;
    if gave_up { None } else { useful.last().copied() }
}

fn scalars(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => m.values().for_each(|x| scalars(x, out)),
        Value::Array(a) if a.iter().all(|x| !x.is_object() && !x.is_array()) => out.push(value_text(v)),
        Value::Array(a) => a.iter().for_each(|x| scalars(x, out)),
        Value::Null => {}
        other => out.push(value_text(other)),
    }
}

/// Whether a value of this result reappears in a later call's arguments
/// (an ID, a currency code, a country name passed on).
fn feeds_later(result: &Value, later: &[HistoryEntry]) -> bool {
    let mut mine = Vec::new();
    scalars(result, &mut mine);
    let mine: Vec<String> = mine.into_iter().filter(|s| s.chars().count() >= 2).map(|s| s.to_lowercase()).collect();
    later.iter().any(|h| {
        let mut theirs = Vec::new();
        scalars(&h.arguments, &mut theirs);
        theirs.iter().any(|t| mine.contains(&t.to_lowercase()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extracts_task_parts() {
        let (dates, rest) = extract_dates("From 2024-01-15 to 2024-03-01, add 30 days.");
        assert_eq!(dates, ["2024-01-15", "2024-03-01"]);
        assert_eq!(extract_numbers(&rest), [30.0]);
        assert_eq!(extract_numbers("Convert -40 celsius, 1,250 and 3.5 but not C0042 or 10x"), [-40.0, 1250.0, 3.5]);
        let (quoted, rest) = extract_quoted("Define 'don't panic' and the city \"Lyon\", it's ‘x’");
        let texts: Vec<&str> = quoted.iter().map(|q| q.text.as_str()).collect();
        assert_eq!(texts, ["don't panic", "Lyon", "x"]);
        assert_eq!(quoted[1].label.as_deref(), Some("city"));
        assert!(!rest.contains("Lyon"));
        let country = json!({"type": "string", "description": "The country's name"});
        assert!(!label_fits(&quoted[1], "country", &country));
        assert!(label_fits(&quoted[1], "city_name", &json!({"type": "string"})));
        assert!(label_fits(&quoted[0], "country", &country));
        assert_eq!(extract_proper("What is the capital of New Zealand? Ask USD about Peru."), ["New Zealand", "Peru"]);
        assert_eq!(extract_id("Stats for city C0042 please"), Some("C0042".into()));
        assert_eq!(extract_expression("What is (12 + 3) * 4?", &[]), Some("(12 + 3) * 4".into()));
        assert_eq!(extract_expression("Compute 2^10 - 24.", &[]), Some("2^10 - 24".into()));
        let (q, _) = extract_quoted("Evaluate '7 % 3' now");
        assert_eq!(extract_expression("Evaluate '7 % 3' now", &q), Some("7 % 3".into()));
        assert_eq!(extract_expression("No arithmetic in 2024", &[]), None);
    }

    #[test]
    fn enum_mentions_in_order_and_case() {
        let units = ["mile", "nautical_mile", "kilometer", "kilometer_per_hour"];
        assert_eq!(enum_mentions("Convert 3 nautical miles to kilometers", &units), ["nautical_mile", "kilometer"]);
        assert_eq!(enum_mentions("100 kilometer_per_hour in mile", &units), ["kilometer_per_hour", "mile"]);
        let codes = ["USD", "TRY", "JPY"];
        assert_eq!(enum_mentions("try to convert 5 USD to JPY", &codes), ["USD", "JPY"]);
    }

    #[test]
    fn answers_pick_the_asked_field() {
        let geo = json!({"name": "France", "capital": "Paris", "population": 68170000, "currency_code": "EUR"});
        assert_eq!(answer_from("What is the capital of 'France'?", &geo), "Paris");
        assert_eq!(answer_from("Which currency code does 'France' use?", &geo), "EUR");
        assert_eq!(answer_from("How many people live in 'France'? Give the population.", &geo), "68170000");
        assert_eq!(answer_from("Compute it", &json!({"result": 14.0})), "14");
        assert_eq!(answer_from("x", &json!({"factors": [2, 2, 3]})), "2, 2, 3");
        assert_eq!(answer_from("population of city", &json!({"city_id": "C1", "population": 5})), "5");
    }

    #[test]
    fn garbage_and_nothing_are_not_useful() {
        assert!(!is_useful(&Observation::Result(json!("Nothing Found"))));
        assert!(!is_useful(&Observation::Result(json!("#$%&'()*+,-./:;<=>?@[]^_`{|}~!#$%&"))));
        assert!(!is_useful(&Observation::Error("boom".into())));
        assert!(is_useful(&Observation::Result(json!({"capital": "Paris"}))));
        assert!(is_useful(&Observation::Result(json!("A sentence that says something."))));
    }
}
