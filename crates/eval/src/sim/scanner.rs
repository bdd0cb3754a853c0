//! The scanner: names a failed run's failure from its transcript, and a
//! group of failures from their phrases (`scan`). It reads the transcript
//! lines the prompt shows (`E12 step 3: …`) as a careful reader would: a
//! model that kept failing, a call made again and again, a run that ran out,
//! a refusal, an error answered over, else a wrong answer and what it rested on.

use serde_json::json;

use crate::model::Message;
use crate::scan::prompt::{NAME_FAILURE, NAME_GROUP, group_phrases};

pub(super) fn scanner_reply(messages: &[Message]) -> String {
    let system = messages.first().map(|m| m.content.as_str()).unwrap_or("");
    let user = messages.last().map(|m| m.content.as_str()).unwrap_or("");
    if system.starts_with(NAME_GROUP) {
        // The list comes most common first: its head names the group.
        let name = group_phrases(user).into_iter().next().unwrap_or_else(|| "unnamed failures".into());
        return json!({ "name": name }).to_string();
    }
    if !system.starts_with(NAME_FAILURE) {
        return json!({ "failure": "not a transcript", "event": 0 }).to_string();
    }
    let (phrase, event) = read_run(user);
    json!({ "failure": phrase, "event": event }).to_string()
}

struct Line<'a> {
    event: usize,
    text: &'a str,
}

fn lines(transcript: &str) -> Vec<Line<'_>> {
    transcript
        .lines()
        .filter_map(|l| {
            let rest = l.strip_prefix('E')?;
            let (n, rest) = rest.split_once(' ')?;
            let (_, text) = rest.split_once(": ")?;
            Some(Line { event: n.parse().ok()?, text })
        })
        .collect()
}

fn read_run(transcript: &str) -> (&'static str, usize) {
    let lines = lines(transcript);
    let last = lines.last().map_or(0, |l| l.event);
    let end = lines.iter().rev().find(|l| is_end(l.text));
    let ended = |word: &str| end.is_some_and(|l| l.text.starts_with(word));
    if let Some(l) = lines.iter().rev().find(|l| l.text.contains(" failed: ") && l.text.contains(" ← ")) {
        return ("the model's calls kept failing", l.event);
    }
    // A call made three times with the same arguments, refusals included.
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for l in lines.iter().filter(|l| is_call(l.text) || l.text.contains("refused (repeated call)")) {
        let key = if is_call(l.text) { l.text } else { l.text.split(' ').next().unwrap_or("") };
        match seen.iter_mut().find(|(k, _)| *k == key || key.starts_with(&format!("{k}("))) {
            Some((_, n)) => {
                *n += 1;
                if *n == 3 {
                    return ("kept repeating the same tool call", l.event);
                }
            }
            None => seen.push((key, 1)),
        }
    }
    if ended("max_steps") {
        return ("ran out of steps", end.map_or(last, |l| l.event));
    }
    if ended("out_of_budget") {
        return ("ran out of budget", end.map_or(last, |l| l.event));
    }
    if let Some(l) =
        lines.iter().find(|l| l.text.contains("refused (over budget)") || l.text.contains("refused (allowance spent)"))
    {
        return ("the budget refused a needed call", l.event);
    }
    if ended("failed") || ended("bad_plan") {
        return ("the run stopped on an error", end.map_or(last, |l| l.event));
    }
    let errors: Vec<&Line> = lines.iter().filter(|l| l.text.contains(" → error ")).collect();
    let answered_after_error =
        errors.last().is_some_and(|e| !lines.iter().any(|l| l.event > e.event && l.text.contains(" → ok ")));
    if let Some(e) = errors.last().filter(|_| answered_after_error) {
        return ("answered despite an unanswered tool error", e.event);
    }
    let gave_up = end.is_some_and(|l| {
        let t = l.text.to_lowercase();
        t.contains("could not") || t.contains("cannot") || t.contains("unable") || t.starts_with("answered;")
    });
    if gave_up {
        return ("gave up without an answer", end.map_or(last, |l| l.event));
    }
    let empty = lines.iter().rev().find(|l| {
        let t = l.text.to_lowercase();
        l.text.contains(" → ok ") && (t.contains("nothing") || t.contains("no result") || t.contains("not found"))
    });
    if let Some(l) = empty {
        return ("trusted a result that found nothing", l.event);
    }
    if let Some(e) = errors.first() {
        return ("wrong answer after a tool error", e.event);
    }
    ("wrong answer from the tools' results", end.map_or(last, |l| l.event))
}

fn is_end(text: &str) -> bool {
    ["answered", "max_steps", "out_of_budget", "failed", "bad_plan", "stopped"]
        .iter()
        .any(|w| text.strip_prefix(w).is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', ';', ','])))
        && text.contains(" steps, ")
}

/// A tool call's line: `tool({...})`, maybe with its lane.
fn is_call(text: &str) -> bool {
    let Some((name, _)) = text.split_once('(') else { return false };
    !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || "_-.:".contains(c)) && !text.contains(" → ")
}
