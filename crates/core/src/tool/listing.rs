//! The library as `tools list` shows it: a line per tool (name, executor,
//! category, cost, source file, and the description's first line cut to the
//! room left), or each tool as JSON.

use std::path::Path;

use serde_json::{Value, json};

use super::{ExecutorSpec, ToolSpec};

/// The executor's kind and its key detail: the builtin function, argv[0],
/// METHOD url or the cassette file.
fn executor_line(e: &ExecutorSpec, cwd: Option<&Path>) -> String {
    match e {
        ExecutorSpec::Builtin { function } => format!("builtin {function}"),
        ExecutorSpec::Command { argv, .. } => format!("command {}", argv.first().map_or("", String::as_str)),
        ExecutorSpec::Http { method, url, .. } => format!("http {method} {url}"),
        ExecutorSpec::Recorded { cassette } => format!("recorded {}", shown_path(cassette, cwd)),
        ExecutorSpec::Synthesized => "synthesized".into(),
        ExecutorSpec::Mcp { server, tool, .. } => format!("mcp {server}/{tool}"),
    }
}

/// A path relative to `cwd` when it lies below it.
fn shown_path(p: &Path, cwd: Option<&Path>) -> String {
    cwd.and_then(|cwd| p.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| p.to_path_buf())
        .display()
        .to_string()
}

/// A cost without a fraction shown as a whole number.
fn cost(c: f64) -> String {
    if c.fract() == 0.0 { format!("{c:.0}") } else { format!("{c}") }
}

/// The first line of `text`, cut to `width` characters with an ellipsis.
fn cut(text: &str, width: usize) -> String {
    let line = text.lines().next().unwrap_or("");
    if line.chars().count() <= width {
        return line.to_string();
    }
    let kept: String = line.chars().take(width.saturating_sub(1)).collect();
    format!("{kept}…")
}

/// A tool as `tools list --json` shows it, its source relative to `cwd`.
pub fn tool_json(t: &ToolSpec, cwd: Option<&Path>) -> Value {
    json!({
        "name": t.name,
        "executor": t.executor,
        "category": t.category,
        "cost": t.cost,
        "source": t.source.as_deref().map(|p| shown_path(p, cwd)),
        "description": t.description,
        "parameters": t.parameters,
    })
}

/// The tools a line each, the description cut so a line fits `width`
/// (but keeps 20 characters), then the count.
pub fn table(tools: &[std::sync::Arc<ToolSpec>], width: usize, cwd: Option<&Path>) -> String {
    let mut out = String::new();
    let rows: Vec<[String; 5]> = tools
        .iter()
        .map(|t| {
            [
                t.name.clone(),
                executor_line(&t.executor, cwd),
                t.category.clone().unwrap_or_else(|| "-".into()),
                cost(t.cost),
                t.source.as_deref().map(|p| shown_path(p, cwd)).unwrap_or_else(|| "-".into()),
            ]
        })
        .collect();
    let mut widths = [0usize; 5];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let used: usize = widths.iter().map(|w| w + 2).sum();
    let room = width.saturating_sub(used).max(20);
    for (row, t) in rows.iter().zip(tools) {
        let [name, exec, category, cost, source] = row;
        let [wn, we, wc, wk, ws] = widths;
        out += &format!(
            "{name:<wn$}  {exec:<we$}  {category:<wc$}  {cost:>wk$}  {source:<ws$}  {}\n",
            cut(&t.description, room)
        );
    }
    let n = tools.len();
    out += &format!("{n} tool{}\n", if n == 1 { "" } else { "s" });
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use super::*;

    fn spec(name: &str, executor: ExecutorSpec, cost: f64, source: Option<&str>, description: &str) -> Arc<ToolSpec> {
        Arc::new(ToolSpec {
            name: name.into(),
            description: description.into(),
            category: None,
            cost,
            parameters: json!({"type": "object"}),
            response: None,
            executor,
            source: source.map(PathBuf::from),
        })
    }

    #[test]
    fn descriptions_are_cut_to_one_line_and_the_width() {
        assert_eq!(cut("short\nsecond", 10), "short");
        assert_eq!(cut("abcdefghijkl", 5), "abcd…");
    }

    #[test]
    fn a_line_per_tool_with_its_executor_cost_and_source_below_the_cwd() {
        let tools = [
            spec("calculator", ExecutorSpec::Builtin { function: "calc".into() }, 1.0, None, "Adds.\nMore."),
            spec(
                "weather",
                ExecutorSpec::Recorded { cassette: "/w/tapes/weather.jsonl".into() },
                0.5,
                Some("/w/tools.toml"),
                &"x".repeat(200),
            ),
        ];
        let text = table(&tools, 100, Some(Path::new("/w")));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("calculator  builtin calc") && lines[0].ends_with("  Adds."), "{text}");
        assert!(lines[1].contains("recorded tapes/weather.jsonl") && lines[1].contains(" 0.5  tools.toml  "), "{text}");
        assert_eq!(lines[1].chars().count(), 100, "the description is cut to the width: {text}");
        assert_eq!(lines[2], "2 tools");
        assert_eq!(tool_json(&tools[1], Some(Path::new("/w")))["source"], "tools.toml");
        assert_eq!(tool_json(&tools[1], None)["source"], "/w/tools.toml");
    }
}
