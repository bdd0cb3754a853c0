//! ATC's prompts and replies: the planner writes a program from the tools'
//! protocols, rewrites it from an attributed failure, and writes probes.
//! Each prompt has a reader too, so the simulated model answers from the
//! text a real model is shown and nothing else.

use serde_json::Value;

use super::super::prompt::{ReplyError, first_json_object};
use crate::model::{ChatResponse, Message, ResponseSchema};
use crate::text::one_line;

const PROGRAM_SYSTEM: &str = "You are the planner of a tool-using agent. Solve the task by writing one program in Rhai \
(a small scripting language with JavaScript-like syntax: `let x = ...;`, `if`, `for x in list`, string interpolation \
with backticks) that calls the tools below in sequence. Each tool is a function that takes one map of arguments, \
`#{name: value}`, and returns its response as maps and arrays: read a field with `r.field` and an item with \
`r.items[0]`. Only the listed tool functions exist: there are no files, no network and no imports. `print(x)` logs a \
value. The program's last expression is the answer: make it the value the task asks for.\n\
Reply with one JSON object and nothing else: {\"program\": \"<the program>\"}.";

const PROBE_SYSTEM: &str = "You are probing a tool whose response is not documented, to learn what it returns. \
Invent a realistic question that the tool can answer, and write a Rhai program that answers it by calling the tool \
(each tool is a function taking one map of arguments, `#{name: value}`, and returning its response). When the tool \
needs an argument you cannot invent (an id), call the helper tools listed first and take it from their responses.\n\
Reply with one JSON object and nothing else: {\"question\": \"<the question>\", \"program\": \"<the program>\"}.";

/// A failed program as the planner is shown it for a rewrite.
#[derive(Clone, Debug, PartialEq)]
pub struct Failed {
    pub program: String,
    pub line: Option<u32>,
    pub snippet: String,
    /// The failure's kind, as `FailKind::as_str` names it.
    pub kind: String,
    pub error: String,
    pub tool: Option<String>,
    /// The attributed tool's protocol, rendered.
    pub protocol: Option<String>,
}

/// What the program writer is shown.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramInput {
    pub task: String,
    /// Each offered tool's protocol, rendered.
    pub protocols: Vec<String>,
    pub failed: Option<Failed>,
}

/// What a probe writer is shown.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeInput {
    /// The protocol of the tool to probe, rendered.
    pub target: String,
    pub helpers: Vec<String>,
    /// Why the last probe of this tool failed, if one did.
    pub last_error: Option<String>,
}

pub fn program_schema() -> ResponseSchema {
    ResponseSchema {
        name: "program".into(),
        schema: serde_json::json!({"type": "object", "properties": {"program": {"type": "string"}}, "required": ["program"]}),
    }
}

pub fn probe_schema() -> ResponseSchema {
    ResponseSchema {
        name: "probe".into(),
        schema: serde_json::json!({
            "type": "object",
            "properties": {"question": {"type": "string"}, "program": {"type": "string"}},
            "required": ["question", "program"]
        }),
    }
}

/// Where a program writer's or prober's reply has ended: at its prompt's
/// own headings.
pub const PROGRAM_STOP: &[&str] = &["\nTools:", "\nTask:", "\nIt failed"];
pub const PROBE_STOP: &[&str] = &["\nTool to probe:", "\nHelper tools", "\nThe last probe failed"];

const TOOLS: &str = "Tools:\n";
const TASK: &str = "\nTask: ";
const YOURS: &str = "\n\nYour program:\n```\n";
const FAILED_AT: &str = "```\nIt failed";
const ERROR: &str = "Error (";
const BLAME: &str = "The error is attributed to the tool `";
const REWRITE: &str = "Rewrite the whole program to fix it.";

pub fn render_program(view: &ProgramInput) -> Vec<Message> {
    let mut u = String::from(TOOLS);
    for p in &view.protocols {
        u.push_str(p);
        u.push_str("\n\n");
    }
    u.push_str(TASK.trim_start_matches('\n'));
    u.push_str(&one_line(&view.task));
    if let Some(f) = &view.failed {
        u.push_str(YOURS);
        u.push_str(f.program.trim_end());
        u.push('\n');
        u.push_str(FAILED_AT);
        match f.line {
            Some(l) => u.push_str(&format!(" at line {l}:\n{}\n", f.snippet)),
            None => u.push_str(":\n"),
        }
        u.push_str(&format!("{ERROR}{}): {}\n", f.kind, one_line(&f.error)));
        if let Some(t) = &f.tool {
            u.push_str(&format!("{BLAME}{t}`, whose protocol is:\n{}\n", f.protocol.as_deref().unwrap_or("(none)")));
        }
        u.push_str(REWRITE);
    }
    vec![Message::system(PROGRAM_SYSTEM), Message::user(u)]
}

/// The view back from a program prompt (None: not one).
pub fn parse_program_prompt(messages: &[Message]) -> Option<ProgramInput> {
    let text = user_text(messages, PROGRAM_SYSTEM)?;
    let text = text.strip_prefix(TOOLS)?;
    let (tools, rest) = text.split_once("Task: ")?;
    let protocols = tools.split("\n\n").map(str::trim).filter(|p| !p.is_empty()).map(str::to_string).collect();
    let (task, failed) = match rest.split_once(YOURS) {
        None => (rest.trim().to_string(), None),
        Some((task, f)) => (task.trim().to_string(), Some(parse_failed(f)?)),
    };
    Some(ProgramInput { task, protocols, failed })
}

fn parse_failed(text: &str) -> Option<Failed> {
    let (program, rest) = text.split_once(FAILED_AT)?;
    let (line, rest) = match rest.strip_prefix(" at line ") {
        Some(r) => {
            let (n, r) = r.split_once(":\n")?;
            (n.trim().parse().ok(), r)
        }
        None => (None, rest.strip_prefix(":\n")?),
    };
    let (snippet, rest) = rest.split_once(ERROR)?;
    let (kind, rest) = rest.split_once("): ")?;
    let (error, rest) = rest.split_once('\n').unwrap_or((rest, ""));
    let (tool, protocol) = match rest.strip_prefix(BLAME) {
        Some(r) => {
            let (t, r) = r.split_once("`, whose protocol is:\n")?;
            let p = r.strip_suffix(REWRITE).unwrap_or(r).trim();
            (Some(t.to_string()), Some(p.to_string()))
        }
        None => (None, None),
    };
    Some(Failed {
        program: program.strip_suffix('\n').unwrap_or(program).to_string(),
        line,
        snippet: snippet.trim_end().to_string(),
        kind: kind.to_string(),
        error: error.to_string(),
        tool,
        protocol,
    })
}

const TARGET: &str = "Tool to probe:\n";
const HELPERS: &str = "\n\nHelper tools (already probed):\n";
const LAST: &str = "\n\nThe last probe failed: ";

pub fn render_probe(view: &ProbeInput) -> Vec<Message> {
    let mut u = format!("{TARGET}{}", view.target);
    if !view.helpers.is_empty() {
        u.push_str(HELPERS);
        u.push_str(&view.helpers.join("\n\n"));
    }
    if let Some(e) = &view.last_error {
        u.push_str(LAST);
        u.push_str(&one_line(e));
    }
    vec![Message::system(PROBE_SYSTEM), Message::user(u)]
}

pub fn parse_probe_prompt(messages: &[Message]) -> Option<ProbeInput> {
    let text = user_text(messages, PROBE_SYSTEM)?;
    let text = text.strip_prefix(TARGET)?;
    let (text, last_error) = match text.split_once(LAST) {
        Some((t, e)) => (t, Some(e.to_string())),
        None => (text, None),
    };
    let (target, helpers) = match text.split_once(HELPERS) {
        Some((t, h)) => (t, h.split("\n\n").map(str::trim).filter(|h| !h.is_empty()).map(str::to_string).collect()),
        None => (text, Vec::new()),
    };
    Some(ProbeInput { target: target.trim().to_string(), helpers, last_error })
}

/// The program in a reply: `{"program": ...}`, else the first fenced
/// block, else the whole reply.
pub fn parse_program_reply(resp: &ChatResponse) -> Result<String, ReplyError> {
    let text = resp.text.trim();
    if let Some(obj) = first_json_object(text)
        && let Some(Value::String(p)) = obj.get("program")
        && !p.trim().is_empty()
    {
        return Ok(unfence(p));
    }
    let program = unfence(text);
    if program.trim().is_empty() {
        return Err(ReplyError { what: "a program", why: "the reply is empty".into() });
    }
    Ok(program)
}

/// The question and program of a probe reply.
pub fn parse_probe_reply(resp: &ChatResponse) -> Result<(String, String), ReplyError> {
    let text = resp.text.trim();
    let obj = first_json_object(text);
    let question = obj.as_ref().and_then(|o| o.get("question")).and_then(Value::as_str).unwrap_or("").to_string();
    let program = parse_program_reply(resp)?;
    Ok((question, program))
}

/// The code inside a ``` fence (with or without a language tag), else the text.
fn unfence(text: &str) -> String {
    let Some(start) = text.find("```") else { return text.trim().to_string() };
    let body = &text[start + 3..];
    let body = match body.split_once('\n') {
        Some((tag, rest)) if !tag.contains(' ') && !tag.contains('(') => rest,
        _ => body,
    };
    let body = body.split("```").next().unwrap_or(body);
    body.trim().to_string()
}

/// The user message of a prompt whose system message is `system`.
fn user_text<'a>(messages: &'a [Message], system: &str) -> Option<&'a str> {
    if messages.first()?.content != system {
        return None;
    }
    messages.get(1).map(|m| m.content.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_program_prompt_reads_back() {
        let view = ProgramInput {
            task: "Who directed Alien?".into(),
            protocols: vec![
                "search(#{query: str (required)}) -> {\"id\":\"int\"}\n  Finds.".into(),
                "b(#{}) -> x".into(),
            ],
            failed: Some(Failed {
                program: "let r = search(#{query: \"Alien\"});\nr.director".into(),
                line: Some(2),
                snippet: ">  2 | r.director".into(),
                kind: "missing field".into(),
                error: "the map has no field 'director'".into(),
                tool: Some("search".into()),
                protocol: Some("search(#{query: str (required)}) -> {\"id\":\"int\"}".into()),
            }),
        };
        assert_eq!(parse_program_prompt(&render_program(&view)), Some(view.clone()));
        let first = ProgramInput { failed: None, ..view };
        assert_eq!(parse_program_prompt(&render_program(&first)), Some(first));
    }

    #[test]
    fn a_probe_prompt_reads_back() {
        let view = ProbeInput {
            target: "credits(#{movie_id: int (required)}) -> (response not documented)".into(),
            helpers: vec!["search(#{}) -> {}".into()],
            last_error: Some("tool error: 404".into()),
        };
        assert_eq!(parse_probe_prompt(&render_probe(&view)), Some(view));
    }

    #[test]
    fn programs_are_read_from_json_fences_or_text() {
        let r = |t: &str| parse_program_reply(&ChatResponse::new(t, vec![], Default::default()));
        assert_eq!(r("{\"program\": \"let x = 1;\\nx\"}").unwrap(), "let x = 1;\nx");
        assert_eq!(r("Here:\n```rhai\nlet x = 1;\nx\n```\nDone").unwrap(), "let x = 1;\nx");
        assert_eq!(r("let x = 2;\nx").unwrap(), "let x = 2;\nx");
        assert!(r("  ").is_err());
    }
}
