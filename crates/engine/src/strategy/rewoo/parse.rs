//! The ReWOO plan as a model writes it:
//!
//! ```text
//! Plan: find the country's currency code.
//! #E1 = geo_lookup[Japan]
//! Plan: convert with both converters of one category, concurrently.
//! #E2 = currency_convert[{"amount": 100, "to": "#E1"}]; currency_convert_backup[100 USD to #E1]
//! ```
//!
//! Models drift from the few-shot format (fences, bullets, case, missing
//! `Plan:` lines, prose around the plan), so the parser accepts those and
//! rejects only what cannot be run. Its errors are written for the model:
//! the strategy shows them on the retry.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};

// The plan's steps are events' data too, so their types live with the events.
pub use crate::engine::event::{RewooCall, RewooStep};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RewooPlan {
    pub steps: Vec<RewooStep>,
}

/// Why a plan cannot be run. Lines are 1-based lines of the model's text.
#[derive(thiserror::Error, Debug, Clone, PartialEq)]
pub enum RewooPlanError {
    #[error("the plan has no steps; write each step as a line `Plan: <why>` followed by a line `#E1 = Tool[input]`")]
    Empty,
    #[error("line {line}: unknown tool `{tool}`; use only these tools: {}", known_list(.known))]
    UnknownTool { line: usize, tool: String, known: Vec<String> },
    #[error(
        "line {line}: {why} in `{text}`; write steps as `#E1 = Tool[input]`, several tools of one category separated by `;`"
    )]
    BadLine { line: usize, text: String, why: String },
    #[error("line {line}: #E{evidence} is defined twice; give every step its own number")]
    DuplicateEvidence { evidence: u32, line: usize },
    #[error(
        "step #E{evidence} uses #E{refers_to}, which is not produced before it; a step may only cite evidence of earlier steps"
    )]
    ForwardReference { evidence: u32, refers_to: u32 },
    #[error("step #E{evidence} uses #E{refers_to}, but no step produces #E{refers_to}")]
    MissingReference { evidence: u32, refers_to: u32 },
}

/// A library may hold thousands of tools; the retry prompt needs a hint,
/// not the whole catalogue.
fn known_list(known: &[String]) -> String {
    const SHOWN: usize = 30;
    let mut s = known.iter().take(SHOWN).map(String::as_str).collect::<Vec<_>>().join(", ");
    if known.len() > SHOWN {
        s.push_str(&format!(" (and {} more)", known.len() - SHOWN));
    }
    s
}

/// Parses a plan leniently; see the module documentation. `tools` are the
/// names the plan may use; matching ignores case and the returned calls
/// carry the canonical spelling.
pub fn parse_plan(text: &str, tools: &[String]) -> Result<RewooPlan, RewooPlanError> {
    let lookup = ToolLookup::new(tools);
    let raw: Vec<&str> = text.lines().collect();
    let mut steps: Vec<RewooStep> = Vec::new();
    let mut defined: HashMap<u32, usize> = HashMap::new();
    let mut thought: Option<String> = None;
    // A thought may wrap onto the following lines; prose after a blank line
    // is not part of it.
    let mut thought_open = false;
    let mut i = 0;
    while i < raw.len() {
        let line_no = i + 1;
        let line = clean(raw[i]);
        i += 1;
        if line.is_empty() || is_fence(line) {
            thought_open = false;
            continue;
        }
        let step_text = if let Some(rest) = strip_plan_prefix(line) {
            let (t, step) = match find_step_start(rest) {
                Some(p) => (&rest[..p], Some(&rest[p..])),
                None => (rest, None),
            };
            let t = t.trim();
            thought = Some(match thought.take() {
                Some(prev) if !prev.is_empty() && !t.is_empty() => format!("{prev} {t}"),
                Some(prev) if t.is_empty() => prev,
                _ => t.to_string(),
            });
            thought_open = true;
            step
        } else if evidence_prefix(line).is_some() {
            Some(line)
        } else {
            if thought_open && let Some(t) = thought.as_mut() {
                if !t.is_empty() {
                    t.push(' ');
                }
                t.push_str(line);
            }
            None
        };
        let Some(step_text) = step_text else { continue };
        thought_open = false;

        // An input may span lines (pretty-printed JSON): pull in following
        // lines until its brackets close or a new step begins.
        let mut joined = step_text.to_string();
        let parsed = loop {
            match parse_step(&joined, &lookup) {
                Err(StepError::Unclosed) if i < raw.len() && !starts_new_item(clean(raw[i])) => {
                    joined.push('\n');
                    joined.push_str(raw[i]);
                    i += 1;
                }
                other => break other,
            }
        };
        let (evidence, calls) = parsed.map_err(|e| match e {
            StepError::Unclosed => RewooPlanError::BadLine {
                line: line_no,
                text: line.to_string(),
                why: "unbalanced brackets: a `[` is never closed".into(),
            },
            StepError::Bad(why) => RewooPlanError::BadLine { line: line_no, text: line.to_string(), why },
            StepError::UnknownTool(tool) => RewooPlanError::UnknownTool { line: line_no, tool, known: tools.to_vec() },
        })?;
        if defined.insert(evidence, line_no).is_some() {
            return Err(RewooPlanError::DuplicateEvidence { evidence, line: line_no });
        }
        let mut depends_on: Vec<u32> = calls.iter().flat_map(|c| references(&c.input).map(|r| r.2)).collect();
        depends_on.sort_unstable();
        depends_on.dedup();
        steps.push(RewooStep { evidence, thought: thought.take().unwrap_or_default(), calls, depends_on });
    }
    if steps.is_empty() {
        return Err(RewooPlanError::Empty);
    }
    for (idx, step) in steps.iter().enumerate() {
        for &r in &step.depends_on {
            if steps[..idx].iter().any(|s| s.evidence == r) {
                continue;
            }
            return Err(if defined.contains_key(&r) {
                RewooPlanError::ForwardReference { evidence: step.evidence, refers_to: r }
            } else {
                RewooPlanError::MissingReference { evidence: step.evidence, refers_to: r }
            });
        }
    }
    Ok(RewooPlan { steps })
}

/// A planner's reply: the text format, or the same plan as JSON
/// (`{"steps": [{"thought", "calls": [{"tool", "input"}]}]}`, what a
/// schema-constrained endpoint returns), step N being `#EN`. The JSON is
/// written out as text and parsed, so both forms are checked alike.
pub fn parse_plan_reply(text: &str, tools: &[String]) -> Result<RewooPlan, RewooPlanError> {
    let steps = crate::strategy::prompt::first_json_object(text)
        .and_then(|o| o.get("steps").and_then(serde_json::Value::as_array).cloned());
    let Some(steps) = steps else { return parse_plan(text, tools) };
    let mut out = String::new();
    for (i, step) in steps.iter().enumerate() {
        let thought = step.get("thought").and_then(serde_json::Value::as_str).unwrap_or("");
        let calls: Vec<String> = step
            .get("calls")
            .and_then(serde_json::Value::as_array)
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| {
                        let tool = c.get("tool").and_then(serde_json::Value::as_str).unwrap_or("");
                        let input = match c.get("input") {
                            Some(serde_json::Value::String(s)) => s.clone(),
                            Some(v) => v.to_string(),
                            None => String::new(),
                        };
                        format!("{tool}[{input}]")
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.push_str(&format!("Plan: {}\n#E{} = {}\n", thought.replace(['\n', '\r'], " "), i + 1, calls.join("; ")));
    }
    parse_plan(&out, tools)
}

/// Steps grouped into layers that may run one after another: every step's
/// dependencies lie in earlier layers. Within a layer steps keep plan order.
/// References to steps the plan lacks are ignored rather than panicking,
/// since a `Plan` can be built by hand.
pub fn layers(plan: &RewooPlan) -> Vec<Vec<u32>> {
    let n = plan.steps.len();
    let mut depth = vec![0usize; n];
    // Relaxation converges in at most n passes on an acyclic plan; the cap
    // keeps a hand-made cyclic plan from looping forever.
    for _ in 0..n {
        let mut changed = false;
        for (idx, step) in plan.steps.iter().enumerate() {
            let d = step
                .depends_on
                .iter()
                .flat_map(|r| plan.steps.iter().enumerate().filter(move |(_, s)| s.evidence == *r))
                .map(|(j, _)| depth[j] + 1)
                .max()
                .unwrap_or(0);
            if d > depth[idx] {
                depth[idx] = d;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); depth.iter().max().map_or(0, |m| m + 1)];
    for (idx, step) in plan.steps.iter().enumerate() {
        out[depth[idx]].push(step.evidence);
    }
    out.retain(|l| !l.is_empty());
    out
}

/// Replaces `#EN` references in `input` with the evidence text; `None`
/// evidence (a filtered failure) becomes `null`. References are read as
/// whole numbers, so `#E1` never matches inside `#E10`. A reference with no
/// entry in `evidence` is left as written.
pub fn substitute(input: &str, evidence: &BTreeMap<u32, Option<String>>) -> String {
    let mut out = String::with_capacity(input.len());
    let mut last = 0;
    for (start, end, n) in references(input) {
        if let Some(e) = evidence.get(&n) {
            out.push_str(&input[last..start]);
            out.push_str(e.as_deref().unwrap_or("null"));
            last = end;
        }
    }
    out.push_str(&input[last..]);
    out
}

/// `(start, end, N)` of every `#EN` (either case) in `s`, digits read
/// greedily. Numbers that overflow `u32` are not references.
pub(crate) fn references(s: &str) -> impl Iterator<Item = (usize, usize, u32)> + '_ {
    let b = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            if b[i] == b'#' && i + 1 < b.len() && b[i + 1].eq_ignore_ascii_case(&b'e') {
                let digits_start = i + 2;
                let mut j = digits_start;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if j > digits_start
                    && let Ok(n) = s[digits_start..j].parse::<u32>()
                {
                    let start = i;
                    i = j;
                    return Some((start, j, n));
                }
            }
            i += 1;
        }
        None
    })
}

struct ToolLookup<'a> {
    exact: HashMap<&'a str, &'a str>,
    folded: HashMap<String, &'a str>,
}

impl<'a> ToolLookup<'a> {
    fn new(tools: &'a [String]) -> Self {
        let mut exact = HashMap::new();
        let mut folded = HashMap::new();
        for t in tools {
            exact.entry(t.as_str()).or_insert(t.as_str());
            folded.entry(t.to_lowercase()).or_insert(t.as_str());
        }
        Self { exact, folded }
    }

    fn get(&self, name: &str) -> Option<&'a str> {
        self.exact.get(name).copied().or_else(|| self.folded.get(&name.to_lowercase()).copied())
    }
}

enum StepError {
    /// A `[` without its `]`; the caller may retry with the next line.
    Unclosed,
    Bad(String),
    UnknownTool(String),
}

/// Parses `#EN = Tool[input] (sep Tool[input])*`.
fn parse_step(text: &str, tools: &ToolLookup) -> Result<(u32, Vec<RewooCall>), StepError> {
    let (evidence, rest) = match evidence_prefix(text) {
        Some((Ok(n), rest)) => (n, rest),
        Some((Err(()), _)) => return Err(StepError::Bad("the evidence number is too large".into())),
        None => return Err(StepError::Bad("a step must start with `#E<number>`".into())),
    };
    let Some(mut rest) = rest.trim_start().strip_prefix('=') else {
        return Err(StepError::Bad(format!("no `=` after #E{evidence}")));
    };
    let mut calls = Vec::new();
    loop {
        let Some(open) = rest.find('[') else {
            if calls.is_empty() {
                return Err(StepError::Bad("expected `Tool[input]` after `=`".into()));
            }
            break; // trailing remark after the last call
        };
        let written = strip_markup(&rest[..open]);
        let tool = match tools.get(written) {
            Some(t) => t,
            None if written.is_empty() => return Err(StepError::Bad("no tool name before `[`".into())),
            // After the first call, several unknown words before a `[` read
            // as a remark ("then see [1]"), a single word as a tool name.
            None if !calls.is_empty() && written.contains(char::is_whitespace) => break,
            None => return Err(StepError::UnknownTool(written.to_string())),
        };
        let close = matching_bracket(rest, open, true)
            .or_else(|| matching_bracket(rest, open, false))
            .ok_or(StepError::Unclosed)?;
        calls.push(RewooCall { tool: tool.to_string(), input: rest[open + 1..close].trim().to_string() });
        let after = rest[close + 1..].trim_start();
        if after.starts_with(']') {
            return Err(StepError::Bad("unbalanced brackets: a `]` has no `[`".into()));
        }
        rest = strip_separator(after);
    }
    Ok((evidence, calls))
}

/// Index of the `]` closing the `[` at `open`. Quote-aware scanning keeps
/// brackets inside JSON strings from counting; the caller falls back to the
/// plain count for free text with a stray `"`.
fn matching_bracket(s: &str, open: usize, quote_aware: bool) -> Option<usize> {
    let mut depth = 0usize;
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in s[open..].char_indices() {
        if in_str {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' if quote_aware => in_str = true,
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn strip_separator(s: &str) -> &str {
    for sep in ["&&", ";", "|", ",", "&"] {
        if let Some(r) = s.strip_prefix(sep) {
            return r.trim_start();
        }
    }
    if s.len() > 3
        && s.is_char_boundary(3)
        && s[..3].eq_ignore_ascii_case("and")
        && s[3..].starts_with(char::is_whitespace)
    {
        return s[3..].trim_start();
    }
    s
}

/// Markdown emphasis and code marks around a tool name.
fn strip_markup(s: &str) -> &str {
    s.trim().trim_matches(|c| c == '`' || c == '*' || c == '_').trim()
}

/// Trims and removes one bullet or list-number marker.
fn clean(line: &str) -> &str {
    let t = line.trim();
    for bullet in ["- ", "* ", "+ ", "• "] {
        if let Some(r) = t.strip_prefix(bullet) {
            return r.trim_start();
        }
    }
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let r = &t[digits..];
        if let Some(r) = r.strip_prefix(". ").or_else(|| r.strip_prefix(") ")) {
            return r.trim_start();
        }
    }
    t
}

fn is_fence(line: &str) -> bool {
    line.starts_with("```") || line.starts_with("~~~")
}

fn starts_new_item(line: &str) -> bool {
    is_fence(line) || strip_plan_prefix(line).is_some() || evidence_prefix(line).is_some()
}

/// The text after `Plan:` (also `plan:`, `**Plan:**`, `Plan 2:`).
fn strip_plan_prefix(line: &str) -> Option<&str> {
    let t = line.trim_start_matches('*');
    if t.len() < 4 || !t.is_char_boundary(4) || !t[..4].eq_ignore_ascii_case("plan") {
        return None;
    }
    let r = t[4..].trim_start().trim_start_matches(|c: char| c.is_ascii_digit()).trim_start();
    let r = r.strip_prefix(':')?;
    Some(r.trim_start_matches('*').trim())
}

/// `#EN` at the start of `s`: the number (or `Err` on overflow) and the rest.
fn evidence_prefix(s: &str) -> Option<(Result<u32, ()>, &str)> {
    let b = s.as_bytes();
    if b.len() < 3 || b[0] != b'#' || !b[1].eq_ignore_ascii_case(&b'e') {
        return None;
    }
    let digits = b[2..].iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    Some((s[2..2 + digits].parse().map_err(|_| ()), &s[2 + digits..]))
}

/// Where `#EN =` starts inside a `Plan:` line that carries its step too.
fn find_step_start(s: &str) -> Option<usize> {
    references(s)
        .map(|r| r.0)
        .find(|&start| evidence_prefix(&s[start..]).is_some_and(|(_, rest)| rest.trim_start().starts_with('=')))
}
