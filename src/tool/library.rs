//! The tools of a run, looked up by name.

use std::collections::HashMap;
use std::sync::Arc;

use super::manifest_error::ManifestError;
use super::spec::ToolSpec;

/// All tools known to a run, by name, in load order.
#[derive(Clone, Debug, Default)]
pub struct ToolLibrary {
    tools: Vec<Arc<ToolSpec>>,
    by_name: HashMap<String, usize>,
}

impl ToolLibrary {
    /// Builds a library; refuses duplicate names.
    pub fn new(tools: Vec<ToolSpec>) -> Result<Self, ManifestError> {
        let mut lib =
            ToolLibrary { tools: Vec::with_capacity(tools.len()), by_name: HashMap::with_capacity(tools.len()) };
        for t in tools {
            lib.insert(t)?;
        }
        Ok(lib)
    }

    pub fn insert(&mut self, tool: ToolSpec) -> Result<(), ManifestError> {
        if let Some(&i) = self.by_name.get(&tool.name) {
            return Err(ManifestError::Duplicate {
                name: tool.name.clone(),
                first: self.tools[i].source.clone().unwrap_or_default(),
                second: tool.source.clone().unwrap_or_default(),
            });
        }
        self.by_name.insert(tool.name.clone(), self.tools.len());
        self.tools.push(Arc::new(tool));
        Ok(())
    }

    pub fn get(&self, name: &str) -> Option<&Arc<ToolSpec>> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    pub fn tools(&self) -> &[Arc<ToolSpec>] {
        &self.tools
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}
