//! The tools of a run, looked up by name.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use serde::{Deserialize, Serialize};

use super::manifest_error::ManifestError;
use super::spec::ToolSpec;

/// All tools known to a run, by name, in load order.
///
/// Clones share one copy until one of them is changed: every engine of a
/// session (and every task of a concurrent eval) gets a clone, and at the
/// papers' scale a library holds 16,000 tools.
#[derive(Clone, Debug, Default)]
pub struct ToolLibrary {
    inner: Arc<Inner>,
}

#[derive(Clone, Debug, Default)]
struct Inner {
    tools: Vec<Arc<ToolSpec>>,
    by_name: HashMap<String, usize>,
    /// What a session's first event says of each tool, built once per
    /// library instead of once per session.
    briefs: OnceLock<Arc<[ToolBrief]>>,
    /// Names these contents: a new value at every change.
    generation: u64,
}

/// A tool as a trace tells it: what the workbench shows of a tool without
/// its executor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolBrief {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    pub cost: f64,
    /// The MCP server the tool comes from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

impl ToolLibrary {
    /// Builds a library; refuses duplicate names.
    pub fn new(tools: Vec<ToolSpec>) -> Result<Self, ManifestError> {
        let mut lib = ToolLibrary {
            inner: Arc::new(Inner {
                tools: Vec::with_capacity(tools.len()),
                by_name: HashMap::with_capacity(tools.len()),
                briefs: OnceLock::new(),
                generation: next_generation(),
            }),
        };
        for t in tools {
            lib.insert(t)?;
        }
        Ok(lib)
    }

    pub fn insert(&mut self, tool: ToolSpec) -> Result<(), ManifestError> {
        if let Some(&i) = self.inner.by_name.get(&tool.name) {
            return Err(ManifestError::Duplicate {
                name: tool.name.clone(),
                first: self.inner.tools[i].source.clone().unwrap_or_default(),
                second: tool.source.clone().unwrap_or_default(),
            });
        }
        let inner = Arc::make_mut(&mut self.inner);
        inner.by_name.insert(tool.name.clone(), inner.tools.len());
        inner.tools.push(Arc::new(tool));
        inner.briefs = OnceLock::new();
        inner.generation = next_generation();
        Ok(())
    }

    /// A value that names the library's contents: its clones share it, and
    /// no other contents in this process have it (see
    /// [`crate::graph::ToolGraph::take_tools`]).
    pub fn generation(&self) -> u64 {
        self.inner.generation
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolSpec>> {
        self.inner.by_name.get(name).map(|&i| &self.inner.tools[i])
    }

    pub fn tools(&self) -> &[Arc<ToolSpec>] {
        &self.inner.tools
    }

    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.inner.tools.iter().map(|t| t.name.as_str())
    }

    pub fn len(&self) -> usize {
        self.inner.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.inner.tools.is_empty()
    }

    /// Every tool's brief, in load order; built on the first call and shared
    /// by every clone of the library that has not been changed.
    pub fn briefs(&self) -> Arc<[ToolBrief]> {
        self.inner
            .briefs
            .get_or_init(|| {
                self.inner
                    .tools
                    .iter()
                    .map(|t| ToolBrief {
                        name: t.name.clone(),
                        description: t.description.clone(),
                        category: t.category.clone(),
                        cost: t.cost,
                        server: t.server().map(str::to_string),
                    })
                    .collect()
            })
            .clone()
    }
}

/// A generation no library of this process has had; 0 is the empty
/// library's, [`ToolLibrary::default`].
fn next_generation() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::ExecutorSpec;

    fn tool(name: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: format!("does {name}"),
            category: None,
            cost: 1.0,
            parameters: serde_json::json!({"type": "object"}),
            response: None,
            executor: ExecutorSpec::Builtin { function: name.into() },
            source: None,
        }
    }

    #[test]
    fn clones_share_the_briefs_until_one_of_them_changes() {
        let mut a = ToolLibrary::new(vec![tool("echo"), tool("add")]).unwrap();
        let b = a.clone();
        let names = |l: &ToolLibrary| l.briefs().iter().map(|t| t.name.clone()).collect::<Vec<_>>();
        assert_eq!(names(&a), ["echo", "add"]);
        assert!(Arc::ptr_eq(&a.briefs(), &b.briefs()), "built once, shared by the clone");
        a.insert(tool("sub")).unwrap();
        assert_eq!(names(&a), ["echo", "add", "sub"], "a change rebuilds the briefs");
        assert_eq!(names(&b), ["echo", "add"], "the clone keeps its tools");
        assert!(b.get("sub").is_none());
        assert_eq!(a.get("sub").map(|t| t.description.as_str()), Some("does sub"));
        assert!(a.insert(tool("add")).is_err(), "duplicates are still refused");
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn a_generation_names_the_contents_and_its_clones() {
        let mut a = ToolLibrary::new(vec![tool("echo")]).unwrap();
        let b = a.clone();
        assert_eq!(a.generation(), b.generation(), "a clone holds the same tools");
        let same_tools = ToolLibrary::new(vec![tool("echo")]).unwrap();
        assert_ne!(same_tools.generation(), a.generation(), "built apart: not taken for the same");
        a.insert(tool("add")).unwrap();
        assert_ne!(a.generation(), b.generation(), "a change makes other contents");
        assert_ne!(ToolLibrary::default().generation(), a.generation());
    }
}
