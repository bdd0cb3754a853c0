//! The simulated model as an outside agent's model (the `agent` role): a
//! native tool call for the user's latest question when a tool fits it,
//! then an answer from the tool's result. Enough for an agent's tool loop
//! to run end to end offline, deterministically. A message that asks
//! several questions, each fitting a tool, gets one call per question in
//! the same reply (parallel tool calls), and an answer from all results.

use serde_json::Value;

use super::arguments::fill_arguments;
use super::relevance::{relevance, task_words};
use crate::model::{Message, Speaker, ToolCallRequest, ToolDef};

/// The reply's text and the tool calls it asks for.
pub(super) fn agent_reply(messages: &[Message], tools: &[ToolDef]) -> (String, Vec<ToolCallRequest>) {
    let last_user = messages.iter().rposition(|m| m.role == Speaker::User);
    let question = last_user.map(|i| messages[i].content.as_str()).unwrap_or_default();
    let results: Vec<&str> = match last_user {
        Some(i) => messages[i + 1..].iter().filter(|m| m.role == Speaker::Tool).map(|m| m.content.as_str()).collect(),
        None => Vec::new(),
    };
    if !results.is_empty() {
        let answers: Vec<&str> = results.iter().map(|r| r.trim()).collect();
        return (format!("The answer is {}.", answers.join(" and ")), Vec::new());
    }
    if let Some(calls) = one_call_per_question(question, tools) {
        return (String::new(), calls);
    }
    if let Some(call) = best_call(question, tools) {
        return (String::new(), vec![call]);
    }
    let words = task_words(question);
    (format!("I have no tool for that; you asked about {}.", words.join(" ")), Vec::new())
}

/// A call for each of the message's questions (its sentences ending in
/// `?`), when there are several and every one of them fits a tool; the
/// same call asked twice is asked once.
fn one_call_per_question(message: &str, tools: &[ToolDef]) -> Option<Vec<ToolCallRequest>> {
    let questions: Vec<&str> = message.split_inclusive('?').map(str::trim).filter(|q| q.ends_with('?')).collect();
    if questions.len() < 2 {
        return None;
    }
    let mut calls: Vec<ToolCallRequest> = Vec::new();
    for q in questions {
        let call = best_call(q, tools)?;
        if !calls.iter().any(|c| c.name == call.name && c.arguments == call.arguments) {
            calls.push(call);
        }
    }
    (calls.len() >= 2).then_some(calls)
}

/// The offered tool whose words fit the question best, with its arguments
/// filled from the question; none when no tool's word is in the question or
/// its required arguments cannot all be found.
fn best_call(question: &str, tools: &[ToolDef]) -> Option<ToolCallRequest> {
    let docs: Vec<String> = tools.iter().map(|t| format!("{} {}", t.name, t.description)).collect();
    let scores = relevance(&task_words(&with_operator_words(question)), &docs);
    let (best, score) = scores.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))?;
    // A question with numbers and a tool of numbers only fits without a
    // shared word ("What is 2 + 3?" and add(a, b)).
    let fits = *score > 0.0 || (tools.len() == 1 && numeric_only(&tools[best].parameters));
    if !fits {
        return None;
    }
    let (arguments, complete) = fill_arguments(question, &[], &tools[best].parameters);
    complete.then(|| ToolCallRequest { name: tools[best].name.clone(), arguments })
}

/// An arithmetic sign read as the words a tool for it is named by
/// ("2 + 3" asks to add).
fn with_operator_words(question: &str) -> String {
    let mut out = question.to_string();
    for (sign, words) in [
        (" + ", "add plus sum"),
        (" * ", "multiply times product"),
        (" x ", "multiply times product"),
        (" - ", "subtract minus difference"),
        (" / ", "divide quotient"),
    ] {
        if question.contains(sign) {
            out.push(' ');
            out.push_str(words);
        }
    }
    out
}

fn numeric_only(schema: &Value) -> bool {
    schema.get("properties").and_then(Value::as_object).is_some_and(|p| {
        !p.is_empty() && p.values().all(|v| matches!(v.get("type").and_then(Value::as_str), Some("number" | "integer")))
    })
}
