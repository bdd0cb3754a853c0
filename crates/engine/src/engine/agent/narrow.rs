//! Narrowing the tools a bridged agent's model sees: the request's tools
//! ranked by ToolNet's weights from the agent's current node (its last
//! tool), by the session's retriever on the task and the latest message,
//! or both, and only the top K sent upstream. A tool the request carries
//! that is no tool of the library ranks after those that are.

use std::collections::HashSet;

use serde_json::Value;

use crate::engine::conductor::Engine;
use crate::engine::error::EngineError;
use crate::engine::event::EventKind;
use crate::engine::params::Narrowing;
use crate::graph::START;
use crate::model::wire::{Dialect, WireRequest};
use crate::model::{ChatRequest, Speaker};

/// The name of one entry of a request's `tools`, in its dialect; None for
/// a tool that is not a function (a hosted tool such as web search).
fn tool_name(dialect: Dialect, tool: &Value) -> Option<&str> {
    match dialect {
        Dialect::Chat => tool.pointer("/function/name"),
        Dialect::Responses => tool.get("name").filter(|_| tool.get("type").and_then(Value::as_str) == Some("function")),
        Dialect::Anthropic => tool.get("name").filter(|_| tool.get("input_schema").is_some()),
    }
    .and_then(Value::as_str)
}

/// The function tools of a request, in its order.
pub fn wire_tools(wire: &WireRequest) -> Vec<String> {
    let tools = wire.body.get("tools").and_then(Value::as_array);
    tools.into_iter().flatten().filter_map(|t| tool_name(wire.dialect, t)).map(str::to_string).collect()
}

/// Keeps the function tools named in `kept` (and every other kind of tool).
fn keep_only(wire: &mut WireRequest, kept: &[String]) {
    let dialect = wire.dialect;
    if let Some(Value::Array(tools)) = wire.body.get_mut("tools") {
        tools.retain(|t| tool_name(dialect, t).is_none_or(|n| kept.iter().any(|k| k == n)));
    }
}

/// Alternates two rankings, each name once: the first of each, then the
/// second of each, and so on.
fn alternate(a: Vec<String>, b: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(a.len());
    let (mut a, mut b) = (a.into_iter(), b.into_iter());
    loop {
        let (x, y) = (a.next(), b.next());
        if x.is_none() && y.is_none() {
            return out;
        }
        for n in [x, y].into_iter().flatten() {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
}

impl Engine {
    /// Narrows a bridged request's tools when `narrow` is on and it
    /// carries more than `narrow_k`, and says what was kept and dropped.
    pub(in crate::engine) fn narrow_tools(&mut self, call: u64, req: &mut ChatRequest) -> Result<(), EngineError> {
        let (mode, k) = (self.params.narrow, self.params.narrow_k);
        let Some(wire) = req.wire.as_mut().filter(|_| mode != Narrowing::Off) else {
            return Ok(());
        };
        let offered = wire_tools(wire);
        if offered.len() <= k {
            return Ok(());
        }
        let ranked = match mode {
            Narrowing::Off => return Ok(()),
            Narrowing::Graph => self.by_graph(&offered),
            Narrowing::Retrieval => self.by_retrieval(&offered, &req.messages, k)?,
            Narrowing::Both => {
                let graph = self.by_graph(&offered);
                alternate(graph, self.by_retrieval(&offered, &req.messages, k)?)
            }
        };
        let kept: Vec<String> = ranked.into_iter().take(k).collect();
        let dropped: Vec<String> = offered.iter().filter(|n| !kept.contains(n)).cloned().collect();
        if let Some(wire) = req.wire.as_mut() {
            keep_only(wire, &kept);
        }
        req.tools.retain(|t| !dropped.contains(&t.name));
        self.emit(EventKind::ToolsNarrowed { call, mode, kept, dropped })
    }

    /// The library's tools narrowing keeps, best first, for the MCP
    /// gateway's tool list; None when narrowing is off or keeps them all.
    pub(in crate::engine) fn narrowed_library(&mut self) -> Result<Option<Vec<String>>, EngineError> {
        let (mode, k) = (self.params.narrow, self.params.narrow_k);
        if mode == Narrowing::Off || self.library.len() <= k {
            return Ok(None);
        }
        let all: Vec<String> = self.library.names().map(str::to_string).collect();
        let ranked = match mode {
            Narrowing::Off => return Ok(None),
            Narrowing::Graph => self.by_graph(&all),
            Narrowing::Retrieval => self.by_retrieval(&all, &[], k)?,
            Narrowing::Both => {
                let graph = self.by_graph(&all);
                alternate(graph, self.by_retrieval(&all, &[], k)?)
            }
        };
        Ok(Some(ranked.into_iter().take(k).collect()))
    }

    /// By the weight of the edge from the agent's last tool (from start
    /// before its first), the heaviest first; ties and tools off the graph
    /// keep the request's order.
    fn by_graph(&self, offered: &[String]) -> Vec<String> {
        let node = self.state.current.as_ref().and_then(|r| r.path.last()).map_or(START, String::as_str);
        let weight = |n: &str| self.graph.as_ref().and_then(|g| g.weight(node, n)).unwrap_or(-1.0);
        let mut ranked: Vec<(f64, &String)> = offered.iter().map(|n| (weight(n), n)).collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        ranked.into_iter().map(|(_, n)| n.clone()).collect()
    }

    /// By the session's retriever on the task and the latest user message:
    /// its best `k` among the offered tools first, then the rest in the
    /// request's order. Only those `k` are shown as the `Retrieved` event:
    /// this runs on every narrowed model call, and a library may hold
    /// 16,000 tools.
    fn by_retrieval(
        &mut self,
        offered: &[String],
        messages: &[crate::model::Message],
        k: usize,
    ) -> Result<Vec<String>, EngineError> {
        let task = self.state.current.as_ref().map(|r| r.task.clone()).unwrap_or_default();
        let latest = messages.iter().rev().find(|m| m.role == Speaker::User).map(|m| m.content.as_str());
        let query = match latest {
            Some(l) if l != task => format!("{task}\n{l}"),
            _ => task,
        };
        if query.trim().is_empty() {
            // Before a task (the MCP list at the start), nothing to rank by.
            return Ok(offered.to_vec());
        }
        let wanted: HashSet<&str> = offered.iter().map(String::as_str).collect();
        let size = self.library.len();
        // Deepened only when the offered tools are a small part of the
        // library and the first depth holds fewer than k of them.
        let mut depth = (4 * k).max(32).min(size);
        let hits = loop {
            let mut hits = match self.retriever.search(&query, depth) {
                Ok(hits) => hits,
                Err(e) => {
                    self.fall_back_to_lexical(&e)?;
                    self.retriever.search_lexical(&query, depth)
                }
            };
            let exhausted = depth >= size || hits.len() < depth;
            hits.retain(|h| wanted.contains(h.name.as_str()));
            if hits.len() >= k || exhausted {
                hits.truncate(k);
                break hits;
            }
            depth = (depth * 4).min(size);
        };
        self.emit(EventKind::Retrieved { query, source: self.retriever.source(), hits: hits.clone() })?;
        let mut out: Vec<String> = hits.into_iter().map(|h| h.name).collect();
        let rest: Vec<String> = offered.iter().filter(|n| !out.contains(n)).cloned().collect();
        out.extend(rest);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn each_dialect_names_its_function_tools_and_keeps_the_others() {
        let chat = json!({"tools": [{"type": "function", "function": {"name": "a"}},
            {"type": "function", "function": {"name": "b"}}]});
        let mut w = WireRequest { dialect: Dialect::Chat, body: chat };
        assert_eq!(wire_tools(&w), ["a", "b"]);
        keep_only(&mut w, &["b".to_string()]);
        assert_eq!(wire_tools(&w), ["b"]);
        let responses = json!({"tools": [{"type": "web_search"}, {"type": "function", "name": "a"}]});
        let mut w = WireRequest { dialect: Dialect::Responses, body: responses };
        assert_eq!(wire_tools(&w), ["a"]);
        keep_only(&mut w, &[]);
        assert_eq!(w.body["tools"], json!([{"type": "web_search"}]), "a hosted tool is not narrowed");
        let anthropic =
            json!({"tools": [{"name": "a", "input_schema": {}}, {"type": "bash_20250124", "name": "bash"}]});
        assert_eq!(wire_tools(&WireRequest { dialect: Dialect::Anthropic, body: anthropic }), ["a"]);
    }

    #[test]
    fn both_rankings_alternate() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(alternate(s(&["a", "b", "c"]), s(&["c", "a", "d"])), s(&["a", "c", "b", "d"]));
    }
}
