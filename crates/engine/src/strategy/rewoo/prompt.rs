//! The text protocol of rewoo's three roles: the tool classifier, the
//! planner and the solver. Each prompt has a parser too, because the
//! simulated model reads the same text a real model is shown.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::model::{ChatResponse, Message, ResponseSchema, Speaker};
use crate::strategy::prompt::{ReplyError, compact, cut, first_json_object, one_line, user_text};

/// A category the classifier may give, with what it is for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Category {
    pub name: String,
    #[serde(default)]
    pub description: String,
}

/// The paper's two categories (the concurrent-calls paper, Figure 1).
pub fn default_categories() -> Vec<Category> {
    vec![
        Category {
            name: "Information Retrieval".into(),
            description: "finds, looks up or searches for information (facts, records, search results)".into(),
        },
        Category {
            name: "Task Completion".into(),
            description: "computes, converts, transforms or acts on given inputs".into(),
        },
    ]
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClassifierInput {
    pub categories: Vec<Category>,
    /// (name, description)
    pub tools: Vec<(String, String)>,
}

/// A tool as the planner is shown it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannerTool {
    pub name: String,
    pub category: Option<String>,
    pub description: String,
    pub parameters: Value,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannerInput {
    pub task: String,
    pub tools: Vec<PlannerTool>,
    /// Things the planner must be told (budget limits).
    pub notes: Vec<String>,
}

/// One call of a step as the solver sees it: the arguments it was made
/// with and its result, `None` when filtered to null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolverCall {
    pub tool: String,
    pub args: String,
    pub result: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolverStep {
    pub evidence: u32,
    pub thought: String,
    pub calls: Vec<SolverCall>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SolverInput {
    pub task: String,
    pub steps: Vec<SolverStep>,
}

const CLASSIFIER_SYSTEM: &str = "You are a tool classifier. Put every tool into exactly one of the categories listed, \
by its purpose; tools with the same purpose share a category, so a planner can call them together.\n\
Reply with one JSON object and nothing else: {\"categories\": {\"<tool>\": \"<category>\", ...}}\n\
Example: {\"categories\": {\"wiki_search\": \"Information Retrieval\", \"google_search\": \"Information Retrieval\", \
\"calculator\": \"Task Completion\"}}";

const PLANNER_SYSTEM: &str = "You are the planner of a tool-using agent. Write the whole plan before any tool runs. \
For each step write a line `Plan: <why>` and then a line `#E<n> = <tool>[<input>]`, numbering the evidence \
#E1, #E2, ... in order. The input is a JSON object of the tool's arguments. A later input may cite the evidence of an \
earlier step as \"#E<n>\"; the worker puts that step's result in its place. Tools carry a category in brackets: a \
step may call several tools of ONE category together, separated by `;` (they run at the same time and all their \
results become the step's evidence, so one failing tool does not lose the step). Use only the tools listed. \
Write the plan and nothing else. When a JSON reply is required, give the same plan as \
{\"steps\": [{\"thought\": \"<why>\", \"calls\": [{\"tool\": \"<tool>\", \"input\": {<arguments>}}]}]}, \
step N being #EN.\n\
Example:\n\
Plan: Look the city up with both search tools at once.\n\
#E1 = wiki_search[{\"query\": \"Lyon\"}]; google_search[{\"query\": \"Lyon\"}]\n\
Plan: Get the population from the city record found.\n\
#E2 = city_record[{\"city_id\": \"#E1\"}]";

/// What the retry message begins with (the simulated planner reads it).
pub const RETRY_PREFIX: &str = "Your plan could not be read:";

const SOLVER_SYSTEM: &str = "You are the solver of a tool-using agent. A planner made the plan below and a worker ran \
it; each step's evidence is listed under it. Evidence `null` means that tool failed or found nothing: ignore it. \
Solve the task with the evidence. Reply with one line: `Answer: <the answer>`.";

/// Where each role's reply has ended: at its prompt's own headings, or
/// (the planner) at an answer, which is the solver's to write.
pub const CLASSIFIER_STOP: &[&str] = &["\nCategories:", "\nTools:"];
pub const PLANNER_STOP: &[&str] = &["\nTask:", "\nTools:", "\nNotes:", "\nAnswer:"];
pub const SOLVER_STOP: &[&str] = &["\nTask:", "\nPlan and evidence:"];

/// The classifier's reply constrained to one listed category per tool.
pub fn classifier_schema(view: &ClassifierInput) -> ResponseSchema {
    let names: Vec<&str> = view.categories.iter().map(|c| c.name.as_str()).collect();
    let tools: Vec<&str> = view.tools.iter().map(|(t, _)| t.as_str()).collect();
    let props: serde_json::Map<String, Value> =
        tools.iter().map(|t| (t.to_string(), serde_json::json!({"type": "string", "enum": names}))).collect();
    ResponseSchema {
        name: "tool_categories".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {"categories": {"type": "object", "properties": props, "required": tools}},
            "required": ["categories"]
        }),
    }
}

/// The planner's reply as JSON steps whose tools are exactly the offered ones.
pub fn planner_schema(tools: &[String]) -> ResponseSchema {
    ResponseSchema {
        name: "plan".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {"steps": {"type": "array", "minItems": 1, "items": {
                "type": "object",
                "properties": {
                    "thought": {"type": "string"},
                    "calls": {"type": "array", "minItems": 1, "items": {
                        "type": "object",
                        "properties": {"tool": {"type": "string", "enum": tools}, "input": {"type": "object"}},
                        "required": ["tool", "input"]
                    }}
                },
                "required": ["thought", "calls"]
            }}},
            "required": ["steps"]
        }),
    }
}

/// The solver's reply as `{"answer": ...}`.
pub fn solver_schema() -> ResponseSchema {
    ResponseSchema {
        name: "answer".into(),
        schema: serde_json::json!({"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}),
    }
}

pub fn render_classifier(view: &ClassifierInput) -> Vec<Message> {
    let mut u = String::from("Categories:\n");
    for c in &view.categories {
        if c.description.is_empty() {
            u.push_str(&format!("- {}\n", one_line(&c.name)));
        } else {
            u.push_str(&format!("- {}: {}\n", one_line(&c.name), one_line(&c.description)));
        }
    }
    u.push_str("\nTools:\n");
    for (name, description) in &view.tools {
        u.push_str(&format!("- {}: {}\n", name, one_line(description)));
    }
    vec![Message::system(CLASSIFIER_SYSTEM), Message::user(u)]
}

pub fn parse_classifier_prompt(messages: &[Message]) -> Option<ClassifierInput> {
    let text = user_text(messages, CLASSIFIER_SYSTEM)?;
    let (mut categories, mut tools) = (Vec::new(), Vec::new());
    let mut section = "";
    for line in text.lines() {
        match line {
            "Categories:" | "Tools:" => section = line,
            _ => {
                let Some(item) = line.strip_prefix("- ") else { continue };
                if section == "Categories:" {
                    let (name, description) = item.split_once(": ").unwrap_or((item, ""));
                    categories.push(Category { name: name.to_string(), description: description.to_string() });
                } else if section == "Tools:" {
                    let (name, description) = item.split_once(": ").unwrap_or((item, ""));
                    tools.push((name.to_string(), description.to_string()));
                }
            }
        }
    }
    Some(ClassifierInput { categories, tools })
}

pub fn render_classifier_reply(labels: &BTreeMap<String, String>) -> String {
    compact(&serde_json::json!({ "categories": labels }))
}

/// The labels in a classifier's reply: a JSON object `{"categories": {tool: category}}`
/// (or the map itself), else lines `tool: category`.
pub fn parse_classifier_reply(resp: &ChatResponse) -> Result<BTreeMap<String, String>, ReplyError> {
    let text = resp.text.as_str();
    if let Some(obj) = first_json_object(text) {
        let map = match obj.get("categories") {
            Some(Value::Object(m)) => m.clone(),
            _ => obj,
        };
        let labels: BTreeMap<String, String> =
            map.into_iter().filter_map(|(k, v)| v.as_str().map(|s| (k, s.trim().to_string()))).collect();
        // A JSON reply is read as JSON only: its lines are no `tool: category` pairs.
        return if labels.is_empty() {
            Err(ReplyError { what: "tool categories", why: "the JSON reply names no tool's category".into() })
        } else {
            Ok(labels)
        };
    }
    let labels: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| {
            let l = l.trim().trim_start_matches(['-', '*', ' ']);
            let (tool, cat) = l.split_once(':')?;
            let (tool, cat) = (tool.trim().trim_matches('`'), cat.trim().trim_matches(['"', '`', ',']));
            (!tool.is_empty() && !cat.is_empty() && !tool.contains(' ')).then(|| (tool.to_string(), cat.to_string()))
        })
        .collect();
    if labels.is_empty() {
        Err(ReplyError { what: "tool categories", why: "no `tool: category` pairs in the reply".into() })
    } else {
        Ok(labels)
    }
}

pub fn render_planner(view: &PlannerInput) -> Vec<Message> {
    let mut u = format!("Task: {}\n\nTools:\n", one_line(&view.task));
    for t in &view.tools {
        match &t.category {
            Some(c) => u.push_str(&format!("- {} [{}]: {}\n", t.name, one_line(c), one_line(&t.description))),
            None => u.push_str(&format!("- {}: {}\n", t.name, one_line(&t.description))),
        }
        u.push_str(&format!("  parameters: {}\n", compact(&t.parameters)));
    }
    if !view.notes.is_empty() {
        u.push_str("\nNotes:\n");
        for n in &view.notes {
            u.push_str(&format!("- {}\n", one_line(n)));
        }
    }
    vec![Message::system(PLANNER_SYSTEM), Message::user(u)]
}

/// The retry: the first prompt, the unreadable plan, and why it was unreadable.
pub fn render_planner_retry(view: &PlannerInput, previous: &str, error: &str) -> Vec<Message> {
    let mut m = render_planner(view);
    m.push(Message::assistant(previous));
    m.push(Message::user(format!("{RETRY_PREFIX} {}. Write the whole plan again.", one_line(error))));
    m
}

/// The planner's view, and the parse error it is asked to fix on a retry.
pub fn parse_planner_prompt(messages: &[Message]) -> Option<(PlannerInput, Option<String>)> {
    let sys = messages.iter().find(|m| m.role == Speaker::System)?;
    if sys.content != PLANNER_SYSTEM {
        return None;
    }
    let first = messages.iter().find(|m| m.role == Speaker::User)?;
    let retry = messages
        .iter()
        .rev()
        .find(|m| m.role == Speaker::User)
        .and_then(|m| m.content.strip_prefix(RETRY_PREFIX))
        .map(|e| e.trim().trim_end_matches("Write the whole plan again.").trim().to_string());
    let mut task = None;
    let (mut tools, mut notes): (Vec<PlannerTool>, Vec<String>) = (Vec::new(), Vec::new());
    let mut section = "";
    for line in first.content.lines() {
        if let Some(t) = line.strip_prefix("Task: ") {
            task = Some(t.to_string());
        } else if line == "Tools:" || line == "Notes:" {
            section = line;
        } else if let Some(p) = line.strip_prefix("  parameters: ") {
            if let Some(t) = tools.last_mut() {
                t.parameters = serde_json::from_str(p).unwrap_or(Value::Null);
            }
        } else if let Some(item) = line.strip_prefix("- ") {
            if section == "Notes:" {
                notes.push(item.to_string());
            } else if section == "Tools:" {
                let (head, description) = item.split_once(": ").unwrap_or((item, ""));
                let (name, category) = match head.split_once(" [") {
                    Some((n, c)) => (n, Some(c.trim_end_matches(']').to_string())),
                    None => (head, None),
                };
                tools.push(PlannerTool {
                    name: name.to_string(),
                    category,
                    description: description.to_string(),
                    parameters: Value::Null,
                });
            }
        }
    }
    Some((PlannerInput { task: task?, tools, notes }, retry))
}

pub fn render_solver(view: &SolverInput) -> Vec<Message> {
    let mut u = format!("Task: {}\n\nPlan and evidence:\n", one_line(&view.task));
    for s in &view.steps {
        u.push_str(&format!("Plan: {}\n", one_line(&s.thought)));
        let calls: Vec<String> = s.calls.iter().map(|c| format!("{}[{}]", c.tool, one_line(&c.args))).collect();
        u.push_str(&format!("#E{} = {}\n", s.evidence, calls.join("; ")));
        for c in &s.calls {
            let r = c.result.as_deref().map(|r| cut(&one_line(r))).unwrap_or_else(|| "null".into());
            u.push_str(&format!("  #E{} {}: {}\n", s.evidence, c.tool, r));
        }
    }
    vec![Message::system(SOLVER_SYSTEM), Message::user(u)]
}

pub fn parse_solver_prompt(messages: &[Message]) -> Option<SolverInput> {
    let text = user_text(messages, SOLVER_SYSTEM)?;
    let mut task = None;
    let mut steps: Vec<SolverStep> = Vec::new();
    let mut thought = String::new();
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("Task: ") {
            task = Some(t.to_string());
        } else if let Some(t) = line.strip_prefix("Plan: ") {
            thought = t.to_string();
        } else if let Some(rest) = line.strip_prefix("  #E") {
            // `  #E1 tool: result`
            let Some((n, rest)) = rest.split_once(' ') else { continue };
            let Some((tool, result)) = rest.split_once(": ") else { continue };
            let Ok(n) = n.parse::<u32>() else { continue };
            let Some(step) = steps.iter_mut().rev().find(|s| s.evidence == n) else { continue };
            if let Some(c) = step.calls.iter_mut().find(|c| c.tool == tool && c.result.is_none()) {
                c.result = (result != "null").then(|| result.to_string());
            }
        } else if let Some(rest) = line.strip_prefix("#E") {
            let Some((n, calls)) = rest.split_once(" = ") else { continue };
            let Ok(evidence) = n.parse::<u32>() else { continue };
            let calls =
                split_calls(calls).into_iter().map(|(tool, args)| SolverCall { tool, args, result: None }).collect();
            steps.push(SolverStep { evidence, thought: std::mem::take(&mut thought), calls });
        }
    }
    Some(SolverInput { task: task?, steps })
}

/// `a[x]; b[y]` into (tool, input) pairs, brackets inside inputs respected.
fn split_calls(s: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while let Some(open) = rest.find('[') {
        let tool = rest[..open].trim().trim_start_matches(';').trim().to_string();
        let mut depth = 0;
        let mut end = None;
        for (i, ch) in rest[open..].char_indices() {
            match ch {
                '[' => depth += 1,
                ']' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(open + i);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        out.push((tool, rest[open + 1..end].to_string()));
        rest = rest[end + 1..].trim();
    }
    out
}

pub fn render_solver_reply(answer: &str) -> String {
    format!("Answer: {}", one_line(answer))
}

/// The answer in a solver's reply: the last `Answer:` line, else a JSON
/// `{"answer": ...}`, else the whole reply.
pub fn parse_solver_reply(resp: &ChatResponse) -> Result<String, ReplyError> {
    let text = resp.text.trim();
    let from_line = text.lines().rev().find_map(|l| {
        let l = l.trim().trim_start_matches(['*', '#', ' ']);
        let lower = l.to_lowercase();
        lower.starts_with("answer").then(|| l[6..].trim_start_matches(['*', ':', ' ']).trim().to_string())
    });
    if let Some(a) = from_line.filter(|a| !a.is_empty()) {
        return Ok(a);
    }
    if let Some(obj) = first_json_object(text)
        && let Some(a) = obj.get("answer")
    {
        return Ok(match a {
            Value::String(s) => s.clone(),
            other => compact(other),
        });
    }
    if text.is_empty() {
        Err(ReplyError { what: "an answer", why: "the reply is empty".into() })
    } else {
        Ok(text.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resp(text: &str) -> ChatResponse {
        ChatResponse::new(text, Vec::new(), Default::default())
    }

    #[test]
    fn classifier_prompt_round_trips() {
        let v = ClassifierInput {
            categories: default_categories(),
            tools: vec![("geo_lookup".into(), "Looks up a country".into())],
        };
        assert_eq!(parse_classifier_prompt(&render_classifier(&v)), Some(v));
    }

    #[test]
    fn classifier_replies_read_leniently() {
        let r = parse_classifier_reply(&resp("```json\n{\"categories\": {\"a\": \"Task Completion\"}}\n```")).unwrap();
        assert_eq!(r["a"], "Task Completion");
        let r = parse_classifier_reply(&resp("- a: Information Retrieval\n- b: Task Completion")).unwrap();
        assert_eq!(r.len(), 2);
        assert!(parse_classifier_reply(&resp("no idea")).is_err());
        assert!(parse_classifier_reply(&resp("{\"categories\":{}}")).is_err());
    }

    #[test]
    fn planner_prompt_round_trips_with_retry() {
        let v = PlannerInput {
            task: "Capital of Japan?".into(),
            tools: vec![PlannerTool {
                name: "geo_lookup".into(),
                category: Some("Information Retrieval".into()),
                description: "Looks up a country".into(),
                parameters: json!({"type": "object"}),
            }],
            notes: vec!["budget is tight".into()],
        };
        assert_eq!(parse_planner_prompt(&render_planner(&v)), Some((v.clone(), None)));
        let (back, err) = parse_planner_prompt(&render_planner_retry(&v, "garbage", "line 1: bad")).unwrap();
        assert_eq!(back, v);
        assert_eq!(err.as_deref(), Some("line 1: bad."));
    }

    #[test]
    fn solver_prompt_round_trips() {
        let v = SolverInput {
            task: "Population of Lyon?".into(),
            steps: vec![
                SolverStep {
                    evidence: 1,
                    thought: "find it".into(),
                    calls: vec![
                        SolverCall {
                            tool: "a".into(),
                            args: "{\"q\":\"[x]\"}".into(),
                            result: Some("{\"id\":1}".into()),
                        },
                        SolverCall { tool: "b".into(), args: "{}".into(), result: None },
                    ],
                },
                SolverStep {
                    evidence: 10,
                    thought: "stats".into(),
                    calls: vec![SolverCall { tool: "c".into(), args: "{\"id\":1}".into(), result: Some("5".into()) }],
                },
            ],
        };
        assert_eq!(parse_solver_prompt(&render_solver(&v)), Some(v));
    }

    #[test]
    fn solver_answers_read_leniently() {
        assert_eq!(parse_solver_reply(&resp("Thinking...\nAnswer: Tokyo")).unwrap(), "Tokyo");
        assert_eq!(parse_solver_reply(&resp("**Answer:** 42")).unwrap(), "42");
        assert_eq!(parse_solver_reply(&resp("{\"answer\": 7}")).unwrap(), "7");
        assert_eq!(parse_solver_reply(&resp("Tokyo")).unwrap(), "Tokyo");
        assert!(parse_solver_reply(&resp("  ")).is_err());
    }
}
