//! The simulated planner's ATC roles: it writes a program from the tools'
//! protocols (the calls the rewoo planner would plan, in sequence, each id
//! read from the earlier response along the path its schema shows), fixes
//! a program from the failure it is shown, and writes probe programs.
//!
//! Its seeded mistakes are a weak model's: with probability `noise` it
//! reads a field by the argument's name without looking at the response's
//! schema (a missing-field error, which reflection fixes when the blamed
//! tool's protocol shows the schema), and the planner's own wrong choices.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

use super::answer::UNREADABLE_PROMPT;
use super::arguments::{fill_arguments, required};
use super::planner::{PlannedCall, plan_calls};
use super::relevance::{relevance, task_words, words_match};
use crate::model::Message;
use crate::retrieve::tokenize;
use crate::strategy::atc::prompt::{self, Failed, ProbeInput, ProgramInput};
use crate::strategy::rewoo::prompt::PlannerTool;

/// A program longer than this is one a weak model loses its way in (the
/// rewoo planner's limit too).
const MAX_CALLS: usize = 4;

/// A protocol read back from its rendering.
#[derive(Clone, Debug)]
struct Tool {
    function: String,
    description: String,
    parameters: Value,
    /// The response shape in ATC's rendering, when documented or probed.
    response: Option<Value>,
    /// The arguments of the protocol's example call, as written.
    example: Option<String>,
}

pub(super) fn is_atc(messages: &[Message]) -> bool {
    prompt::parse_program_prompt(messages).is_some() || prompt::parse_probe_prompt(messages).is_some()
}

pub(super) fn atc_reply(messages: &[Message], noise: f64, rng: &mut ChaCha8Rng) -> String {
    if let Some(view) = prompt::parse_program_prompt(messages) {
        let program = match &view.failed {
            None => write(&view, &[], noise, rng),
            Some(f) => reflect(&view, f, rng),
        };
        return json!({ "program": program }).to_string();
    }
    if let Some(view) = prompt::parse_probe_prompt(messages) {
        let (question, program) = probe(&view, noise, rng);
        return json!({ "question": question, "program": program }).to_string();
    }
    UNREADABLE_PROMPT.into()
}

/// The program for the task: one `let eN = tool(#{...});` per planned call,
/// then the answer read from the last response.
fn write(view: &ProgramInput, without: &[String], noise: f64, rng: &mut ChaCha8Rng) -> String {
    let tools: Vec<Tool> =
        view.protocols.iter().filter_map(|p| parse_protocol(p)).filter(|t| !without.contains(&t.function)).collect();
    let planner: Vec<PlannerTool> = tools
        .iter()
        .map(|t| PlannerTool {
            name: t.function.clone(),
            category: None,
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        })
        .collect();
    let mut calls = plan_calls(&view.task, &planner, noise, rng);
    extend_by_schema(&view.task, &tools, &mut calls);
    if calls.is_empty() {
        return "\"I could not find a tool for this task.\"".into();
    }
    render(&view.task, &tools, &calls, noise, rng)
}

fn render(task: &str, tools: &[Tool], calls: &[PlannedCall], noise: f64, rng: &mut ChaCha8Rng) -> String {
    let mut out = String::new();
    for (k, c) in calls.iter().enumerate() {
        let tool = &tools[c.tool];
        let mut fields: Vec<String> = c.args.iter().map(|(name, v)| format!("{}: {}", key(name), literal(v))).collect();
        for (param, from) in &c.cites {
            let earlier = calls.get(*from as usize - 1).map(|e| &tools[e.tool]);
            let shape = earlier.and_then(|t| t.response.as_ref());
            // A weak model's slip: the argument's name taken for the field's.
            let careless = rng.random_bool(noise);
            let path = match shape.filter(|_| !careless).and_then(|s| path_to(s, param)) {
                Some(p) => p,
                None => field(param),
            };
            fields.push(format!("{}: e{from}{path}", key(param)));
        }
        out.push_str(&format!("let e{} = {}(#{{{}}});\n", k + 1, tool.function, fields.join(", ")));
    }
    let last = calls.len();
    let answer = tools[calls[last - 1].tool].response.as_ref().and_then(|s| answer_path(task, s));
    out.push_str(&format!("e{last}{}", answer.unwrap_or_default()));
    out
}

/// What schemas add to a plan: a tool whose ids the last response's schema
/// holds (`results[0].id` for a `movie_id`), and that speaks of what the
/// task asks and no called tool does, is the chain's next link.
fn extend_by_schema(task: &str, tools: &[Tool], calls: &mut Vec<PlannedCall>) {
    while calls.len() < MAX_CALLS {
        let Some(last) = calls.last() else { return };
        let Some(shape) = tools[last.tool].response.as_ref() else { return };
        let called: Vec<usize> = calls.iter().map(|c| c.tool).collect();
        let covered: Vec<String> =
            called.iter().flat_map(|&i| tokenize(&format!("{} {}", tools[i].function, tools[i].description))).collect();
        let open: Vec<String> =
            task_words(task).into_iter().filter(|w| !covered.iter().any(|c| words_match(w, c))).collect();
        if open.is_empty() {
            return;
        }
        let docs: Vec<String> =
            tools.iter().map(|t| format!("{} {}", t.function.replace('_', " "), t.description)).collect();
        let rel = relevance(&open, &docs);
        let from = calls.len() as u32;
        let next = (0..tools.len())
            .filter(|i| !called.contains(i) && rel[*i] > 0.0)
            .filter_map(|i| {
                let (args, _) = fill_arguments(task, &[], &tools[i].parameters);
                let Value::Object(args) = args else { return None };
                let mut cites = Vec::new();
                for p in required(&tools[i].parameters) {
                    if p.ends_with("_id") || p == "id" {
                        // An id comes from the response, never from the task's words.
                        path_score(shape, &p).filter(|(s, _)| *s >= 2)?;
                        cites.push((p, from));
                    } else if !args.contains_key(&p) {
                        return None;
                    }
                }
                let args = args.into_iter().filter(|(k, _)| !cites.iter().any(|(c, _)| c == k)).collect();
                (!cites.is_empty()).then_some((i, args, cites))
            })
            .max_by(|a, b| rel[a.0].total_cmp(&rel[b.0]).then(b.0.cmp(&a.0)));
        match next {
            Some((tool, args, cites)) => calls.push(PlannedCall { tool, args, cites }),
            None => return,
        }
    }
}

/// A rewrite from the failure shown: a field the response lacks is read
/// along the path the blamed tool's schema shows; a tool that failed is
/// planned around; anything else is planned again, carefully.
fn reflect(view: &ProgramInput, f: &Failed, rng: &mut ChaCha8Rng) -> String {
    if f.kind == "missing field"
        && let Some(fixed) = fix_field(f)
    {
        return fixed;
    }
    let without: Vec<String> = match f.kind.as_str() {
        "tool error" | "unknown function" => f.tool.iter().cloned().collect(),
        _ => Vec::new(),
    };
    // A tool error may be passing: with no other tool, the same program again.
    let tools_left = view.protocols.len().saturating_sub(without.len());
    write(view, if tools_left > 0 { &without } else { &[] }, 0.0, rng)
}

/// The failing line with the missing field's access replaced by the path
/// the blamed tool's response schema gives for it.
fn fix_field(f: &Failed) -> Option<String> {
    let missing = f.error.split('\'').nth(1)?;
    let shape = f.protocol.as_deref().and_then(parse_protocol)?.response?;
    let path = path_to(&shape, missing)?;
    let n = f.line? as usize;
    let mut lines: Vec<String> = f.program.lines().map(str::to_string).collect();
    let line = lines.get_mut(n.checked_sub(1)?)?;
    let bad = format!(".{missing}");
    let at = line.find(&bad)?;
    // The variable the field was read from: `e1` in `e1.movie_id`.
    let var_start = line[..at].rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
    let end = at + bad.len();
    let fixed = format!("{}{}{path}{}", &line[..var_start], &line[var_start..at], &line[end..]);
    if fixed == *line {
        return None;
    }
    *line = fixed;
    Some(lines.join("\n"))
}

/// A probe: the tool called with its example arguments; in a chain round,
/// a helper first, its response giving the id the tool needs.
fn probe(view: &ProbeInput, noise: f64, rng: &mut ChaCha8Rng) -> (String, String) {
    let Some(target) = parse_protocol(&view.target) else {
        return (String::new(), UNREADABLE_PROMPT.into());
    };
    let helpers: Vec<Tool> = view.helpers.iter().filter_map(|h| parse_protocol(h)).collect();
    let args = target.example.clone().unwrap_or_else(|| "#{}".into());
    let ids: Vec<String> =
        required(&target.parameters).into_iter().filter(|p| p.ends_with("_id") || p == "id").collect();
    // A chain round: an id from a helper whose response holds one.
    if let Some(id) = ids.first()
        && let Some((h, path)) = helpers.iter().find_map(|h| Some((h, path_to(h.response.as_ref()?, id)?)))
    {
        let hargs = h.example.clone().unwrap_or_else(|| "#{}".into());
        let program =
            format!("let h = {}({hargs});\nlet r = {}(#{{{}: h{path}}});\nr", h.function, target.function, key(id));
        return (format!("What does {} return for the {id} that {} gives?", target.function, h.function), program);
    }
    // A weak model sometimes forgets the arguments altogether.
    let args = if rng.random_bool(noise / 2.0) { "#{}".to_string() } else { args };
    (format!("What does {} return for {args}?", target.function), format!("let r = {}({args});\nr", target.function))
}

/// The path to the field that best stands for `want` in a response shape:
/// the field itself, else (for an id) an `id` inside the first result,
/// else a field sharing a word with it. Lists are read at their first item.
fn path_to(shape: &Value, want: &str) -> Option<String> {
    path_score(shape, want).map(|(_, p)| p)
}

/// The path [`path_to`] picks, with how well it fits: 3 the field itself,
/// 2 an `id` standing for an `X_id`, 1 a shared word.
fn path_score(shape: &Value, want: &str) -> Option<(u32, String)> {
    let want_parts: Vec<String> = want.split('_').flat_map(tokenize).filter(|w| w != "id").collect();
    let mut best: Option<(u32, usize, String)> = None;
    let mut stack: Vec<(&Value, String, usize)> = vec![(shape, String::new(), 0)];
    while let Some((v, path, depth)) = stack.pop() {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    let here = format!("{path}{}", field(k));
                    let score = if k == want {
                        3
                    } else if want.ends_with("_id") && k == "id" {
                        2
                    } else if k.split('_').flat_map(tokenize).any(|p| want_parts.iter().any(|w| words_match(w, &p))) {
                        1
                    } else {
                        0
                    };
                    let leaf = !(child.is_object() || child.is_array());
                    if score > 0
                        && (leaf || score == 3)
                        && best.as_ref().is_none_or(|(s, d, _)| score > *s || (score == *s && depth < *d))
                    {
                        best = Some((score, depth, here.clone()));
                    }
                    stack.push((child, here, depth + 1));
                }
            }
            Value::Array(items) => {
                if let Some(first) = items.first() {
                    stack.push((first, format!("{path}[0]"), depth + 1));
                }
            }
            _ => {}
        }
    }
    best.map(|(s, _, p)| (s, p))
}

/// The field of the last response the task asks about, if its schema
/// names one (`population` for "what is the population of ...").
fn answer_path(task: &str, shape: &Value) -> Option<String> {
    let words = tokenize(task);
    let Value::Object(m) = shape else { return None };
    m.iter()
        .filter(|(k, v)| !(v.is_object() || v.is_array() || k.ends_with("_id")))
        .map(|(k, _)| {
            let parts: Vec<String> = k.split('_').flat_map(tokenize).collect();
            let hit = parts.iter().filter(|p| words.iter().any(|w| words_match(w, p))).count();
            (hit as f64 / parts.len().max(1) as f64, k)
        })
        .filter(|(s, _)| *s > 0.0)
        .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
        .map(|(_, k)| field(k))
}

/// Reads a rendered protocol: `f(#{a: int (required), b: "x"|"y"}) -> shape`,
/// the description, `- arg: description` lines and the example call.
fn parse_protocol(text: &str) -> Option<Tool> {
    let mut lines = text.lines();
    let head = lines.next()?;
    let open = head.find("(#{")?;
    let function = head[..open].trim().to_string();
    let close = head.find("}) -> ")?;
    let sig = &head[open + 3..close];
    let response_text = head[close + 6..].trim_end_matches("  (probed)").trim();
    let response = serde_json::from_str::<Value>(response_text).ok().filter(|v| v.is_object() || v.is_array());
    let mut props = Map::new();
    let mut required = Vec::new();
    for field in split_fields(sig) {
        let Some((name, ty)) = field.split_once(": ") else { continue };
        let (ty, req) = match ty.strip_suffix(" (required)") {
            Some(t) => (t, true),
            None => (ty, false),
        };
        if req {
            required.push(Value::String(name.to_string()));
        }
        props.insert(name.to_string(), arg_schema(ty));
    }
    let mut description = String::new();
    let mut example = None;
    for line in lines {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("- ") {
            if let Some((name, d)) = rest.split_once(": ")
                && let Some(Value::Object(p)) = props.get_mut(name)
            {
                p.insert("description".into(), Value::String(d.to_string()));
            }
        } else if let Some(rest) = l.strip_prefix("e.g. let r = ") {
            example = rest.find('(').and_then(|i| rest[i + 1..].strip_suffix(");")).map(str::to_string);
        } else if l.starts_with("example for ") {
            // A probed tool's example is a whole program: its call's arguments.
            example = example.or_else(|| call_args(l, &function));
        } else if description.is_empty() {
            description = l.to_string();
        }
    }
    Some(Tool {
        function,
        description,
        parameters: json!({"type": "object", "properties": props, "required": required}),
        response,
        example,
    })
}

/// The arguments of the first call of `function` in `text`: what lies
/// between its parentheses.
fn call_args(text: &str, function: &str) -> Option<String> {
    let start = text.find(&format!("{function}("))? + function.len() + 1;
    let mut depth = 1;
    for (i, c) in text[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(text[start..start + i].to_string());
                }
            }
            _ => {}
        }
    }
    None
}

/// The fields of a signature, split at the commas between them (not those
/// inside an enum's quoted values).
fn split_fields(sig: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let (mut start, mut quoted) = (0, false);
    for (i, c) in sig.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ',' if !quoted && sig[i..].starts_with(", ") => {
                out.push(sig[start..i].trim());
                start = i + 2;
            }
            _ => {}
        }
    }
    if start < sig.len() {
        out.push(sig[start..].trim());
    }
    out.into_iter().filter(|f| !f.is_empty()).collect()
}

fn arg_schema(ty: &str) -> Value {
    if ty.starts_with('"') {
        let values: Vec<Value> = ty.split('|').filter_map(|v| serde_json::from_str(v).ok()).collect();
        return json!({"type": "string", "enum": values});
    }
    match ty {
        "int" => json!({"type": "integer"}),
        "float" => json!({"type": "number"}),
        "bool" => json!({"type": "boolean"}),
        "date" => json!({"type": "string", "format": "date"}),
        t if t.starts_with('[') => {
            json!({"type": "array", "items": arg_schema(t.trim_start_matches('[').trim_end_matches(']').trim_matches('"'))})
        }
        _ => json!({"type": "string"}),
    }
}

/// A map key or field as rhai reads it: bare when an identifier.
fn key(k: &str) -> String {
    let ident = !k.is_empty()
        && !k.starts_with(|c: char| c.is_ascii_digit())
        && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ident { k.to_string() } else { Value::String(k.to_string()).to_string() }
}

/// Reading a field: `.name`, or `["odd-name"]`.
fn field(k: &str) -> String {
    let k2 = key(k);
    if k2 == k { format!(".{k}") } else { format!("[{k2}]") }
}

/// A JSON value as a rhai literal.
fn literal(v: &Value) -> String {
    match v {
        Value::Null => "()".into(),
        Value::Array(a) => format!("[{}]", a.iter().map(literal).collect::<Vec<_>>().join(", ")),
        Value::Object(m) => format!(
            "#{{{}}}",
            m.iter().map(|(k, v)| format!("{}: {}", key(k), literal(v))).collect::<Vec<_>>().join(", ")
        ),
        other => other.to_string(),
    }
}
