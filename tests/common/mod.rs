//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{Value, json};

use switchyard::model::{ChatModel, ChatRequest, ChatResponse, ModelError, ModelInfo, ModelKind, Role, Usage};
use switchyard::tool::{ExecutorSpec, ToolLibrary, ToolSpec};

/// A model that answers from a script: actor replies in order, a fixed
/// evaluator reply. It records every request it saw.
pub struct Scripted {
    actor: Mutex<VecDeque<String>>,
    evaluator: String,
    pub seen: Mutex<Vec<ChatRequest>>,
}

impl Scripted {
    pub fn new(actor: &[&str], evaluator: &str) -> Arc<Self> {
        Arc::new(Scripted {
            actor: Mutex::new(actor.iter().map(|s| s.to_string()).collect()),
            evaluator: evaluator.to_string(),
            seen: Mutex::new(Vec::new()),
        })
    }
}

#[async_trait]
impl ChatModel for Scripted {
    fn info(&self) -> ModelInfo {
        ModelInfo { name: "scripted".into(), kind: ModelKind::Sim, simulated: true }
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, ModelError> {
        self.seen.lock().unwrap().push(req.clone());
        let text = match req.role {
            Role::Evaluator => self.evaluator.clone(),
            _ => self
                .actor
                .lock()
                .unwrap()
                .pop_front()
                .unwrap_or_else(|| r#"{"tool": "finish", "answer": "out of script"}"#.to_string()),
        };
        Ok(ChatResponse { text, tool_calls: vec![], usage: Usage { prompt_tokens: 10, completion_tokens: 2 } })
    }
}

pub fn builtin(name: &str, function: &str, description: &str, param: &str) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        category: None,
        cost: 1.0,
        parameters: json!({"type": "object", "required": [param], "properties": {param: {"type": "string"}}}),
        response: None,
        executor: ExecutorSpec::Builtin { function: function.into() },
        source: None,
    }
}

/// calculator, geo_lookup and its mirror, a search that finds nothing.
pub fn small_library() -> Arc<ToolLibrary> {
    Arc::new(
        ToolLibrary::new(vec![
            builtin("calculator", "calculator", "Evaluate an arithmetic expression", "expression"),
            builtin("geo_lookup", "geo_lookup", "Country facts lookup: capital, population, currency", "country"),
            builtin(
                "geo_lookup_mirror",
                "geo_lookup",
                "Country facts lookup (mirror): capital, population, currency",
                "country",
            ),
            builtin("web_search", "web_search", "Search the web for anything", "query"),
        ])
        .unwrap(),
    )
}

pub fn call(tool: &str, args: Value) -> String {
    json!({"tool": tool, "arguments": args}).to_string()
}

pub fn finish(answer: &str) -> String {
    json!({"tool": "finish", "answer": answer}).to_string()
}

/// The events of a fixture trace in `tests/fixtures/`.
pub fn fixture(name: &str) -> Vec<switchyard::engine::Event> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name);
    switchyard::engine::trace::read_trace(&path).unwrap()
}

/// The state after the first `n` events of a fixture (all of them with None).
pub fn fixture_state(name: &str, n: Option<usize>) -> switchyard::engine::SessionState {
    let events = fixture(name);
    let n = n.unwrap_or(events.len()).min(events.len());
    switchyard::engine::SessionState::from_events(&events[..n])
}

/// Renders with a TestBackend of `width` × `height` and returns the buffer.
pub fn render(width: u16, height: u16, draw: impl FnOnce(&mut ratatui::Frame)) -> ratatui::buffer::Buffer {
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(width, height)).unwrap();
    terminal.draw(draw).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing spaces kept (for snapshots).
pub fn buffer_text(buf: &ratatui::buffer::Buffer) -> String {
    let area = buf.area;
    let mut out = String::new();
    for y in 0..area.height {
        for x in 0..area.width {
            out.push_str(buf[(x, y)].symbol());
        }
        out.push('\n');
    }
    out
}

/// (x, y) of the first cell of `needle` on screen, stepping over the blank
/// second cell of wide symbols.
pub fn find(buf: &ratatui::buffer::Buffer, needle: &str) -> Option<(u16, u16)> {
    let want: Vec<String> = needle.chars().map(String::from).collect();
    let area = buf.area;
    for y in 0..area.height {
        let mut cells: Vec<(u16, &str)> = Vec::new();
        let mut x = 0;
        while x < area.width {
            let sym = buf[(x, y)].symbol();
            cells.push((x, sym));
            x += ratatui::text::Span::raw(sym).width().max(1) as u16;
        }
        for start in 0..cells.len() {
            if want.iter().enumerate().all(|(k, w)| cells.get(start + k).is_some_and(|c| c.1 == w)) {
                return Some((cells[start].0, y));
            }
        }
    }
    None
}

/// The foreground colour where `needle` starts on screen.
pub fn fg_at(buf: &ratatui::buffer::Buffer, needle: &str) -> ratatui::style::Color {
    let (x, y) = find(buf, needle).unwrap_or_else(|| panic!("'{needle}' not on screen:\n{}", buffer_text(buf)));
    buf[(x, y)].fg
}
