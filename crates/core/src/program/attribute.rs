//! ATC's attributable reflection, the part that needs no model: which tool
//! a failure is put down to, the failing line as the model is shown it, and
//! the rewrite as a diff.
//!
//! A tool's own error is that tool's. Otherwise the failing line is read:
//! a tool function called on it, or a variable that holds (part of) a
//! tool's response, names the tool whose response the program misread (a
//! missing field is nearly always a wrong guess about a response). Failing
//! that, the last tool called before the failure.

use std::collections::BTreeMap;

use similar::TextDiff;

use super::sandbox::{Binding, Failure};

/// The tool a failure is attributed to, if any tool is involved.
pub fn attribute(
    source: &str,
    failure: &Failure,
    bindings: &[Binding],
    calls: &[(String, Option<u32>)],
) -> Option<String> {
    if let Some(t) = &failure.tool {
        return Some(t.clone());
    }
    let origins = origins(source, bindings);
    if let Some(text) = failure.line.and_then(|l| line_text(source, l)) {
        // The rightmost mention is the value being read when it failed.
        let mut best: Option<(usize, &str)> = None;
        for (at, word) in words(text) {
            let tool = bindings
                .iter()
                .find(|b| b.function == word)
                .map(|b| b.tool.as_str())
                .or_else(|| origins.get(word).map(String::as_str));
            if let Some(tool) = tool
                && best.is_none_or(|(b, _)| at >= b)
            {
                best = Some((at, tool));
            }
        }
        if let Some((_, tool)) = best {
            return Some(tool.to_string());
        }
    }
    calls.last().map(|(t, _)| t.clone())
}

/// Which tool each variable's value came from: `let x = TOOL(...)`, and
/// through assignments that read another such variable (`let r = x.results`).
fn origins(source: &str, bindings: &[Binding]) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for line in source.lines() {
        let Some((lhs, rhs)) = assignment(line) else { continue };
        let from = words(rhs).find_map(|(_, w)| {
            bindings.iter().find(|b| b.function == w).map(|b| b.tool.clone()).or_else(|| out.get(w).cloned())
        });
        match from {
            Some(tool) => {
                out.insert(lhs.to_string(), tool);
            }
            None => {
                out.remove(lhs);
            }
        }
    }
    out
}

/// `let x = rhs` or `x = rhs` (not `==`).
fn assignment(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let t = t.strip_prefix("let ").or_else(|| t.strip_prefix("const ")).unwrap_or(t).trim_start();
    let eq = t.find('=')?;
    let (lhs, rest) = (t[..eq].trim(), &t[eq + 1..]);
    if rest.starts_with('=') || lhs.is_empty() || !lhs.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return None;
    }
    Some((lhs, rest))
}

/// Identifiers of a line with their byte offsets, skipping string literals.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut out = Vec::new();
    let mut in_str: Option<char> = None;
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if let Some(q) = in_str {
            if c == q {
                in_str = None;
            }
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' {
            start.get_or_insert(i);
            continue;
        }
        if let Some(s) = start.take() {
            out.push((s, &text[s..i]));
        }
        if c == '"' || c == '`' || c == '\'' {
            in_str = Some(c);
        }
    }
    if let Some(s) = start {
        out.push((s, &text[s..]));
    }
    out.into_iter().filter(|(_, w)| !w.starts_with(|c: char| c.is_ascii_digit()))
}

/// The text of line `line` (1-based), if the program has it.
pub fn line_text(source: &str, line: u32) -> Option<&str> {
    source.lines().nth((line as usize).checked_sub(1)?)
}

/// The failing line with a line before and after, numbered, the way the
/// model is shown it (`>` marks the line).
pub fn snippet(source: &str, line: Option<u32>) -> String {
    let Some(line) = line else { return String::new() };
    let lines: Vec<&str> = source.lines().collect();
    let at = line as usize;
    let from = at.saturating_sub(1).max(1);
    let to = (at + 1).min(lines.len());
    (from..=to)
        .filter_map(|n| lines.get(n - 1).map(|l| format!("{}{n:>3} | {l}", if n == at { ">" } else { " " })))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A unified diff of a rewrite (empty when nothing changed).
pub fn diff(before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    // Programs rarely end in a newline; without one on both sides the diff
    // would say so on every rewrite.
    let (b, a) = (format!("{}\n", before.trim_end_matches('\n')), format!("{}\n", after.trim_end_matches('\n')));
    TextDiff::from_lines(&b, &a).unified_diff().context_radius(1).header("before", "after").to_string()
}
