//! The text protocol between the strategies and any model: how a step's
//! situation is rendered into messages, and how replies are read back.
//!
//! Every role's prompt has a parser too, because the simulated model must read
//! the same text a real model is shown (docs/src/models.md), never a side
//! channel.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::model::{ChatResponse, Message, ResponseSchema, Speaker};

/// The pseudo-tool a model names to answer.
pub const FINISH: &str = "finish";

/// Observations longer than this are cut in prompts, so one chatty tool
/// cannot blow the context.
const MAX_OBSERVATION_CHARS: usize = 2000;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Observation {
    Result(Value),
    Error(String),
    Refused(String),
}

impl Observation {
    fn render(&self) -> String {
        match self {
            Observation::Result(v) => format!("result: {}", cut(&compact(v))),
            Observation::Error(e) => format!("error: {}", cut(&one_line(e))),
            Observation::Refused(e) => format!("refused: {}", cut(&one_line(e))),
        }
    }

    fn parse(s: &str) -> Option<Observation> {
        if let Some(r) = s.strip_prefix("result: ") {
            // A cut observation is no longer JSON; keep it as text.
            let v = serde_json::from_str(r).unwrap_or_else(|_| Value::String(r.to_string()));
            Some(Observation::Result(v))
        } else if let Some(e) = s.strip_prefix("error: ") {
            Some(Observation::Error(e.to_string()))
        } else {
            s.strip_prefix("refused: ").map(|e| Observation::Refused(e.to_string()))
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryEntry {
    pub tool: String,
    pub arguments: Value,
    pub observation: Observation,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CandidateInput {
    pub name: String,
    /// The weight as shown to the model, in the run's weight format.
    pub weight: Option<String>,
    pub description: String,
    pub parameters: Value,
}

/// What the actor is shown at one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActorInput {
    pub task: String,
    pub history: Vec<HistoryEntry>,
    pub candidates: Vec<CandidateInput>,
    /// Things the model must be told: refusals, forbidden tools.
    pub notes: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ActorAction {
    Call { tool: String, arguments: Value },
    Finish { answer: String },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalInput {
    pub task: String,
    pub steps: Vec<HistoryEntry>,
    pub answer: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JudgeInput {
    pub task: String,
    pub tool: String,
    pub arguments: Value,
    pub observation: Observation,
}

#[derive(thiserror::Error, Debug, Clone, PartialEq)]
#[error("could not read the model's reply as {what}: {why}")]
pub struct ReplyError {
    pub what: &'static str,
    pub why: String,
}

const ACTOR_SYSTEM: &str = "You are the actor of a tool-using agent. Solve the task by calling tools one at a time, \
choosing only among the candidates listed. A candidate's weight says how often it led to success after the previous step; \
higher is better. When the results so far answer the task, choose `finish` with the answer.\n\
Reply with one JSON object and nothing else:\n\
{\"tool\": \"<candidate name>\", \"arguments\": {...}} to call a tool, or\n\
{\"tool\": \"finish\", \"answer\": \"<the answer>\"} to answer.";

const EVAL_SYSTEM: &str = "You are the evaluator of a tool-using agent. Read the whole trajectory and give every tool used \
an integer score from -3 (harmful: failed, useless or misleading) to 3 (essential to the answer).\n\
Reply with one JSON object and nothing else: {\"scores\": {\"<tool>\": <score>, ...}}";

const JUDGE_SYSTEM: &str = "You judge tool results. Decide whether the result helps to solve the task.\n\
Reply with one JSON object and nothing else: {\"helpful\": true} or {\"helpful\": false}";

/// Where an actor's reply has ended: a ReAct-style reply going on to
/// imagine its tool's result, or any reply going on to write the next
/// prompt (the stop sequences of [`crate::model::ChatRequest::stop`]).
pub const ACTOR_STOP: &[&str] = &["\nObservation:", "\nTask:", "\nHistory:", "\nCandidates:"];
/// Where an evaluator's reply has ended: at its prompt's own headings.
pub const EVAL_STOP: &[&str] = &["\nTask:", "\nTrajectory:", "\nAnswer:"];
/// Where a judge's reply has ended: at its prompt's own headings.
pub const JUDGE_STOP: &[&str] = &["\nTask:", "\nTool:", "\nObservation:"];

pub fn render_actor(view: &ActorInput) -> Vec<Message> {
    let lines: Vec<CandidateLine> = view.candidates.iter().map(CandidateLine::from).collect();
    render_actor_prompt(&view.task, &view.history, &lines, &view.notes, Layout::CandidatesLast)
}

/// Where the candidates go in the actor's prompt. A server's prompt cache
/// serves the longest start a prompt shares with the one before it, so
/// what stays the same from step to step goes first: the system text, then
/// the task and the history (which only grows), then what changes. The
/// candidates come first when they are the same at every step (react's
/// retrieved top K: the same for every task with K = all). When each step
/// offers others (ToolNet's out-neighbours), every tool offered so far in
/// the task is described once under `Tools:`, in the order first offered,
/// before the task, and only a last line names the step's candidates and
/// weights: a step re-reads its new tools, the task, the history and that
/// line, not every candidate's description.
#[derive(Clone, Copy, Debug)]
pub enum Layout<'a> {
    CandidatesFirst,
    /// Every candidate described after the history: one step's prompt
    /// alone, as [`render_actor`] writes a view.
    CandidatesLast,
    /// The tools offered so far (their weights are the last line's).
    ToolsSoFar(&'a [CandidateLine<'a>]),
}

/// The line of a [`Layout::ToolsSoFar`] prompt that names the step's candidates.
const CANDIDATES_NOW: &str = "Candidates now: ";

/// A candidate as the actor's prompt lists it, borrowed from the library:
/// the loop renders a prompt every step, and owning its candidates cost a
/// copy of every offered tool's JSON schema each time.
#[derive(Clone, Copy, Debug)]
pub struct CandidateLine<'a> {
    pub name: &'a str,
    pub weight: Option<&'a str>,
    pub description: &'a str,
    pub parameters: &'a Value,
}

impl<'a> From<&'a CandidateInput> for CandidateLine<'a> {
    fn from(c: &'a CandidateInput) -> Self {
        CandidateLine {
            name: &c.name,
            weight: c.weight.as_deref(),
            description: &c.description,
            parameters: &c.parameters,
        }
    }
}

impl<'a> CandidateLine<'a> {
    /// `finish`, listed with the tools (its parameters are not shown).
    pub fn finish(weight: Option<&'a str>) -> Self {
        CandidateLine { name: FINISH, weight, description: FINISH_DESCRIPTION, parameters: &Value::Null }
    }
}

/// [`render_actor`] from borrowed parts: the same prompt, byte for byte.
pub fn render_actor_prompt(
    task: &str,
    history: &[HistoryEntry],
    candidates: &[CandidateLine],
    notes: &[String],
    layout: Layout,
) -> Vec<Message> {
    let mut u = String::with_capacity(256 + 160 * candidates.len());
    if let Layout::CandidatesFirst = layout {
        u.push_str("Candidates:\n");
        push_candidates(&mut u, candidates);
        u.push('\n');
    }
    if let Layout::ToolsSoFar(described) = layout {
        u.push_str("Tools:\n");
        push_candidates(&mut u, described);
        u.push('\n');
    }
    u.push_str("Task: ");
    push_one_line(&mut u, task);
    u.push_str("\n\nHistory:\n");
    render_history(&mut u, history);
    if !notes.is_empty() {
        u.push_str("\nNotes:\n");
        for n in notes {
            u.push_str("- ");
            push_one_line(&mut u, n);
            u.push('\n');
        }
    }
    match layout {
        Layout::CandidatesLast => {
            u.push_str("\nCandidates:\n");
            push_candidates(&mut u, candidates);
        }
        Layout::ToolsSoFar(_) => {
            use std::fmt::Write as _;
            u.push('\n');
            u.push_str(CANDIDATES_NOW);
            for (i, c) in candidates.iter().enumerate() {
                if i > 0 {
                    u.push_str("; ");
                }
                u.push_str(c.name);
                if let Some(w) = c.weight {
                    let _ = write!(u, " [weight {w}]");
                }
            }
            u.push('\n');
        }
        Layout::CandidatesFirst => {}
    }
    vec![Message::system(ACTOR_SYSTEM), Message::user(u)]
}

fn push_candidates(u: &mut String, candidates: &[CandidateLine]) {
    use std::fmt::Write as _;
    for c in candidates {
        u.push_str("- ");
        u.push_str(c.name);
        if let Some(w) = c.weight {
            let _ = write!(u, " [weight {w}]");
        }
        u.push_str(": ");
        push_one_line(u, c.description);
        u.push('\n');
        if c.name != FINISH {
            // Value's Display is its compact JSON, as `compact` writes it.
            let _ = writeln!(u, "  parameters: {}", c.parameters);
        }
    }
}

/// `s` on one line (as [`one_line`]), appended without a copy of its own.
fn push_one_line(out: &mut String, s: &str) {
    let mut rest = s;
    while let Some(i) = rest.find(['\n', '\r']) {
        out.push_str(&rest[..i]);
        out.push(' ');
        rest = &rest[i + 1..];
    }
    out.push_str(rest);
}

const FINISH_DESCRIPTION: &str = "answer the task with the results so far";

/// The candidate a model names to answer, listed with the tools.
pub fn finish_candidate(weight: Option<String>) -> CandidateInput {
    CandidateInput {
        name: FINISH.to_string(),
        weight,
        description: FINISH_DESCRIPTION.to_string(),
        parameters: json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}),
    }
}

pub fn render_eval(view: &EvalInput) -> Vec<Message> {
    let mut u = format!("Task: {}\n\nTrajectory:\n", one_line(&view.task));
    render_history(&mut u, &view.steps);
    u.push_str(&format!("\nAnswer: {}\n", view.answer.as_deref().map(one_line).unwrap_or_else(|| "(none)".into())));
    vec![Message::system(EVAL_SYSTEM), Message::user(u)]
}

pub fn render_judge(view: &JudgeInput) -> Vec<Message> {
    let u = format!(
        "Task: {}\n\nTool: {}\nArguments: {}\nObservation: {}\n",
        one_line(&view.task),
        view.tool,
        compact(&view.arguments),
        view.observation.render()
    );
    vec![Message::system(JUDGE_SYSTEM), Message::user(u)]
}

fn render_history(out: &mut String, history: &[HistoryEntry]) {
    if history.is_empty() {
        out.push_str("(none)\n");
    }
    for (i, h) in history.iter().enumerate() {
        out.push_str(&format!("{}. {} {}\n   -> {}\n", i + 1, h.tool, compact(&h.arguments), h.observation.render()));
    }
}

/// The last user message of a prompt whose system message is `system`.
pub(crate) fn user_text<'a>(messages: &'a [Message], system: &str) -> Option<&'a str> {
    let sys = messages.iter().find(|m| m.role == Speaker::System)?;
    if sys.content != system {
        return None;
    }
    messages.iter().rev().find(|m| m.role == Speaker::User).map(|m| m.content.as_str())
}

/// Splits a prompt into its `Heading:` sections.
fn sections(text: &str) -> BTreeMap<&str, Vec<&str>> {
    let mut out: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut current = "";
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Task: ") {
            out.entry("Task").or_default().push(rest);
            current = "";
        } else if let Some(rest) = line.strip_prefix("Answer: ") {
            out.entry("Answer").or_default().push(rest);
            current = "";
        } else if let Some(rest) = line.strip_prefix(CANDIDATES_NOW) {
            out.entry("Candidates now").or_default().push(rest);
            current = "";
        } else if !line.starts_with(' ') && !line.starts_with('-') && line.ends_with(':') && !line.contains(' ') {
            current = &line[..line.len() - 1];
            out.entry(current).or_default();
        } else if !current.is_empty() && !line.is_empty() {
            out.entry(current).or_default().push(line);
        }
    }
    out
}

fn parse_history(lines: &[&str]) -> Vec<HistoryEntry> {
    let mut out = Vec::new();
    let mut pending: Option<(String, Value)> = None;
    for line in lines {
        if let Some(obs) = line.strip_prefix("   -> ") {
            if let (Some((tool, arguments)), Some(observation)) = (pending.take(), Observation::parse(obs)) {
                out.push(HistoryEntry { tool, arguments, observation });
            }
        } else if let Some((num, rest)) = line.split_once(". ")
            && num.chars().all(|c| c.is_ascii_digit())
        {
            let (tool, args) = rest.split_once(' ').unwrap_or((rest, "{}"));
            pending = Some((tool.to_string(), serde_json::from_str(args).unwrap_or(Value::Null)));
        }
    }
    out
}

pub fn parse_actor_prompt(messages: &[Message]) -> Option<ActorInput> {
    let text = user_text(messages, ACTOR_SYSTEM)?;
    let s = sections(text);
    let task = s.get("Task")?.first()?.to_string();
    let history = parse_history(s.get("History").map(Vec::as_slice).unwrap_or(&[]));
    let notes = s
        .get("Notes")
        .map(|v| v.iter().filter_map(|l| l.strip_prefix("- ")).map(str::to_string).collect())
        .unwrap_or_default();
    let mut candidates = parse_candidates(s.get("Candidates").map(Vec::as_slice).unwrap_or(&[]))?;
    if let Some(now) = s.get("Candidates now").and_then(|v| v.first()) {
        let described = parse_candidates(s.get("Tools").map(Vec::as_slice).unwrap_or(&[]))?;
        candidates = now
            .split("; ")
            .map(|item| {
                let (name, weight) = name_and_weight(item);
                let mut c = described.iter().find(|c| c.name == name)?.clone();
                c.weight = weight;
                Some(c)
            })
            .collect::<Option<Vec<_>>>()?;
    }
    Some(ActorInput { task, history, candidates, notes })
}

/// `name [weight w]` as the name and the weight shown.
fn name_and_weight(head: &str) -> (&str, Option<String>) {
    match head.split_once(" [weight ") {
        Some((n, w)) => (n, Some(w.trim_end_matches(']').to_string())),
        None => (head, None),
    }
}

/// A `Candidates:` or `Tools:` section's tools.
fn parse_candidates(lines: &[&str]) -> Option<Vec<CandidateInput>> {
    let mut candidates: Vec<CandidateInput> = Vec::new();
    for line in lines {
        if let Some(p) = line.strip_prefix("  parameters: ") {
            if let Some(c) = candidates.last_mut() {
                c.parameters = serde_json::from_str(p).unwrap_or(Value::Null);
            }
        } else if let Some(rest) = line.strip_prefix("- ") {
            let (head, description) = rest.split_once(": ")?;
            let (name, weight) = name_and_weight(head);
            let parameters = if name == FINISH { finish_candidate(None).parameters } else { Value::Null };
            candidates.push(CandidateInput {
                name: name.to_string(),
                weight,
                description: description.to_string(),
                parameters,
            });
        }
    }
    Some(candidates)
}

pub fn parse_eval_prompt(messages: &[Message]) -> Option<EvalInput> {
    let text = user_text(messages, EVAL_SYSTEM)?;
    let s = sections(text);
    let task = s.get("Task")?.first()?.to_string();
    let steps = parse_history(s.get("Trajectory").map(Vec::as_slice).unwrap_or(&[]));
    let answer = s.get("Answer").and_then(|v| v.first()).filter(|a| **a != "(none)").map(|a| a.to_string());
    Some(EvalInput { task, steps, answer })
}

pub fn parse_judge_prompt(messages: &[Message]) -> Option<JudgeInput> {
    let text = user_text(messages, JUDGE_SYSTEM)?;
    let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name));
    Some(JudgeInput {
        task: field("Task: ")?.to_string(),
        tool: field("Tool: ")?.to_string(),
        arguments: serde_json::from_str(field("Arguments: ")?).unwrap_or(Value::Null),
        observation: Observation::parse(field("Observation: ")?)?,
    })
}

pub fn render_actor_reply(action: &ActorAction) -> String {
    match action {
        ActorAction::Call { tool, arguments } => compact(&json!({"tool": tool, "arguments": arguments})),
        ActorAction::Finish { answer } => compact(&json!({"tool": FINISH, "answer": answer})),
    }
}

pub fn render_eval_reply(scores: &BTreeMap<String, i32>) -> String {
    compact(&json!({ "scores": scores }))
}

pub fn render_judge_reply(helpful: bool) -> String {
    compact(&json!({ "helpful": helpful }))
}

/// The schema that constrains an actor's reply to the offered names, for
/// endpoints with JSON-schema response formats.
pub fn actor_schema(offered: &[String]) -> ResponseSchema {
    let mut names: Vec<&str> = offered.iter().map(String::as_str).collect();
    if !names.contains(&FINISH) {
        names.push(FINISH);
    }
    ResponseSchema {
        name: "tool_choice".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "tool": {"type": "string", "enum": names},
                "arguments": {"type": "object"},
                "answer": {"type": "string"}
            },
            "required": ["tool"]
        }),
    }
}

/// The evaluator's reply constrained to a score in [-3, 3] for each tool used.
pub fn eval_schema(tools: &[String]) -> ResponseSchema {
    let props: Map<String, Value> =
        tools.iter().map(|t| (t.clone(), json!({"type": "integer", "minimum": -3, "maximum": 3}))).collect();
    ResponseSchema {
        name: "tool_scores".into(),
        schema: json!({
            "type": "object",
            "properties": {"scores": {"type": "object", "properties": props, "required": tools}},
            "required": ["scores"]
        }),
    }
}

/// The judge's reply constrained to a verdict.
pub fn judge_schema() -> ResponseSchema {
    ResponseSchema {
        name: "verdict".into(),
        schema: json!({"type": "object", "properties": {"helpful": {"type": "boolean"}}, "required": ["helpful"]}),
    }
}

/// Reads an actor reply leniently: a native tool call, a JSON object in the
/// text (fenced or not, under several customary key names), or ReAct text.
pub fn parse_actor_reply(resp: &ChatResponse) -> Result<ActorAction, ReplyError> {
    let err = |why: String| ReplyError { what: "a tool choice", why };
    if let Some(call) = resp.tool_calls.first() {
        if call.name == FINISH {
            return Ok(ActorAction::Finish { answer: answer_of(&call.arguments) });
        }
        return Ok(ActorAction::Call { tool: call.name.clone(), arguments: object_or_empty(&call.arguments) });
    }
    if let Some(obj) = first_json_object(&resp.text) {
        let tool = ["tool", "name", "action", "function"].iter().find_map(|k| obj.get(*k).and_then(Value::as_str));
        let final_answer = ["answer", "final_answer"].iter().find_map(|k| obj.get(*k));
        match tool {
            Some(t) if t.eq_ignore_ascii_case(FINISH) || t.eq_ignore_ascii_case("final answer") => {
                return Ok(ActorAction::Finish { answer: final_answer.map(value_text).unwrap_or_default() });
            }
            Some(t) => {
                let args = ["arguments", "args", "action_input", "parameters", "input"]
                    .iter()
                    .find_map(|k| obj.get(*k))
                    .map(|a| match a {
                        Value::String(s) => serde_json::from_str(s).unwrap_or(Value::Object(Map::new())),
                        other => object_or_empty(other),
                    })
                    .unwrap_or(Value::Object(Map::new()));
                return Ok(ActorAction::Call { tool: t.to_string(), arguments: args });
            }
            None => {
                if let Some(a) = final_answer {
                    return Ok(ActorAction::Finish { answer: value_text(a) });
                }
            }
        }
    }
    // ReAct text: "Action: tool" + "Action Input: {...}", or "Final Answer: ...".
    let text = resp.text.as_str();
    if let Some(idx) = text.find("Final Answer:") {
        return Ok(ActorAction::Finish { answer: text[idx + "Final Answer:".len()..].trim().to_string() });
    }
    if let Some(line) = text.lines().find_map(|l| l.trim().strip_prefix("Action:")) {
        let line = line.trim();
        let (tool, inline_args) = match line.find('{') {
            Some(i) => (line[..i].trim(), Some(&line[i..])),
            None => (line, None),
        };
        let tool = tool.trim_matches(|c: char| c == '`' || c == '"' || c == '\'' || c == '[' || c == ']');
        if tool.is_empty() {
            return Err(err("an `Action:` line names no tool".into()));
        }
        if tool.eq_ignore_ascii_case(FINISH) {
            let answer = text.lines().find_map(|l| l.trim().strip_prefix("Action Input:")).unwrap_or("").trim();
            return Ok(ActorAction::Finish { answer: answer.to_string() });
        }
        let args = inline_args
            .or_else(|| text.lines().find_map(|l| l.trim().strip_prefix("Action Input:")))
            .and_then(|a| first_json_object(a).map(Value::Object))
            .unwrap_or(Value::Object(Map::new()));
        return Ok(ActorAction::Call { tool: tool.to_string(), arguments: args });
    }
    Err(err(format!("no tool call, JSON object or ReAct action in: {}", crate::text::ellipsis(&one_line(text), 200))))
}

/// Reads an evaluator reply: scores per tool, clamped to [-3, 3].
pub fn parse_eval_reply(resp: &ChatResponse) -> Result<BTreeMap<String, i32>, ReplyError> {
    let err = |why: String| ReplyError { what: "tool scores", why };
    let obj = first_json_object(&resp.text).ok_or_else(|| err("no JSON object".into()))?;
    let scores = obj.get("scores").and_then(Value::as_object).unwrap_or(&obj);
    let mut out = BTreeMap::new();
    for (tool, v) in scores {
        let n = v
            .as_f64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .ok_or_else(|| err(format!("score of '{tool}' is not a number")))?;
        out.insert(tool.clone(), (n.round() as i64).clamp(-3, 3) as i32);
    }
    Ok(out)
}

pub fn parse_judge_reply(resp: &ChatResponse) -> Result<bool, ReplyError> {
    if let Some(obj) = first_json_object(&resp.text)
        && let Some(h) = obj.get("helpful")
    {
        return match h {
            Value::Bool(b) => Ok(*b),
            Value::String(s) => Ok(matches!(s.to_ascii_lowercase().as_str(), "true" | "yes" | "helpful")),
            _ => Err(ReplyError { what: "a helpfulness verdict", why: format!("'helpful' is {h}") }),
        };
    }
    let t = resp.text.to_ascii_lowercase();
    if t.contains("unhelpful") || t.contains("not helpful") || t.contains("false") {
        Ok(false)
    } else if t.contains("helpful") || t.contains("true") {
        Ok(true)
    } else {
        Err(ReplyError { what: "a helpfulness verdict", why: "no verdict in the reply".into() })
    }
}

/// The first balanced JSON object in a text (code fences and prose around it ignored).
pub fn first_json_object(text: &str) -> Option<Map<String, Value>> {
    let bytes = text.as_bytes();
    let mut start = 0;
    while let Some(off) = text[start..].find('{') {
        let begin = start + off;
        let (mut depth, mut in_str, mut esc) = (0i32, false, false);
        for (i, &b) in bytes.iter().enumerate().skip(begin) {
            if in_str {
                match b {
                    _ if esc => esc = false,
                    b'\\' => esc = true,
                    b'"' => in_str = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_str = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(Value::Object(m)) = serde_json::from_str(&text[begin..=i]) {
                            return Some(m);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
        start = begin + 1;
    }
    None
}

fn answer_of(args: &Value) -> String {
    match args {
        Value::Object(m) => m.get("answer").map(value_text).unwrap_or_else(|| compact(args)),
        Value::String(s) => serde_json::from_str::<Value>(s).map(|v| answer_of(&v)).unwrap_or_else(|_| s.clone()),
        other => value_text(other),
    }
}

fn object_or_empty(v: &Value) -> Value {
    match v {
        Value::Object(_) => v.clone(),
        Value::String(s) => serde_json::from_str::<Value>(s).ok().filter(Value::is_object).unwrap_or(json!({})),
        _ => json!({}),
    }
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => compact(other),
    }
}

pub fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

pub(crate) fn one_line(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_one_line(&mut out, s);
    out
}

pub(crate) fn cut(s: &str) -> String {
    crate::text::ellipsis(s, MAX_OBSERVATION_CHARS)
}
