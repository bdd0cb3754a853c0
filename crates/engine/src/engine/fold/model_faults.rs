//! The model faults in force, as a fold over events, for the models pane
//! and the fault dialog.

use crate::engine::event::EventKind;
use crate::model::Role;
use crate::model::fault::{ModelFault, ModelFaultMode};
use crate::tool::fault::FaultScope;

/// A model fault the events say is in force.
#[derive(Clone, Debug, PartialEq)]
pub struct ActiveModelFault {
    /// A role's name or a model's.
    pub target: String,
    pub fault: ModelFault,
    /// Calls left for `Once` / `Times`.
    pub left: Option<u32>,
}

impl ActiveModelFault {
    /// The fault as a short tag: `http-500 (times=3, 2 left)`.
    pub fn describe(&self) -> String {
        match self.left {
            Some(left) => format!("{} ({}, {left} left)", self.fault.mode, self.fault.scope),
            None => format!("{} ({})", self.fault.mode, self.fault.scope),
        }
    }
}

/// Applies one event to the faults in force; returns a line for the
/// transcript when the event is about model faults.
pub fn apply(faults: &mut Vec<ActiveModelFault>, kind: &EventKind) -> Option<String> {
    match kind {
        EventKind::ModelFaultInjected { target, fault } => {
            let left = match fault.scope {
                FaultScope::Once => Some(1),
                FaultScope::Times { n } => Some(n),
                _ => None,
            };
            faults.push(ActiveModelFault { target: target.clone(), fault: *fault, left });
            Some(format!("model fault injected: {target} {} ({})", fault.mode, fault.scope))
        }
        EventKind::ModelFaultCleared { target } => {
            match target {
                Some(t) => faults.retain(|f| &f.target != t),
                None => faults.clear(),
            }
            Some(format!("model faults cleared: {}", target.as_deref().unwrap_or("all roles and models")))
        }
        EventKind::ModelReply { role, model, fault: Some(mode), .. }
        | EventKind::ModelFailed { role, model, fault: Some(mode), .. } => {
            spend(faults, *role, model, *mode);
            Some(format!("model fault hit {role} ({model}): {mode}"))
        }
        _ => None,
    }
}

/// A fault fired: the oldest sure fault (not a probability) aimed at the
/// role, else at the model, loses a use when it is of the mode that hit,
/// as the engine's table spends them.
fn spend(faults: &mut Vec<ActiveModelFault>, role: Role, model: &str, mode: ModelFaultMode) {
    let sure = |target: &str| {
        faults.iter().position(|f| f.target == target && !matches!(f.fault.scope, FaultScope::Probability { .. }))
    };
    let Some(i) = sure(role.as_str()).or_else(|| sure(model)) else { return };
    if faults[i].fault.mode != mode {
        return;
    }
    if let Some(l) = faults[i].left.as_mut() {
        *l = l.saturating_sub(1);
        if *l == 0 {
            faults.remove(i);
        }
    }
}

/// The faults in force on `role` or on `model`, the role's first.
pub fn on<'a>(
    faults: &'a [ActiveModelFault],
    role: Role,
    model: &'a str,
) -> impl Iterator<Item = &'a ActiveModelFault> {
    let by_role = faults.iter().filter(move |f| f.target == role.as_str());
    by_role.chain(faults.iter().filter(move |f| f.target == model))
}
