//! The `rewoo` strategy (DESIGN §3.5): the classifier labels the library
//! once, the planner writes the whole plan, the worker runs each step's
//! calls concurrently as lanes (each behind its own gate), and the solver
//! answers from the evidence.

use super::event::{EventKind, LabelSource};
use super::{Engine, EngineError};

impl Engine {
    /// The user gives a tool another category.
    pub(super) fn set_category(&mut self, tool: String, category: String) -> Result<(), EngineError> {
        if self.library.get(&tool).is_none() {
            return self.reject("set category", format!("no tool named '{tool}'"));
        }
        let category = category.trim().to_string();
        if category.is_empty() {
            return self.reject("set category", "the category is empty");
        }
        self.labels.insert(tool.clone(), (category.clone(), LabelSource::User));
        self.emit(EventKind::CategoryEdited { tool, category })
    }
}
