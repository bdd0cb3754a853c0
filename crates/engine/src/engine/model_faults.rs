//! Model faults in the engine: injected into a role or a model by name,
//! cleared, and drawn before every model call; and the one reader of a
//! `--fault` spec, for a tool or a model.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::conductor::Engine;
use super::control::Control;
use super::error::EngineError;
use super::event::EventKind;
use super::models::Models;
use crate::model::Role;
use crate::model::fault::{ModelFault, ModelFaultMode, ModelFaultParseError, parse_model_fault};
use crate::tool::fault::{Fault, FaultParseError};

/// Keeps a model fault's draws apart from every other use of a call's seed.
const DRAW_SALT: u64 = 0x006d_6f64_656c_f417;

#[derive(thiserror::Error, Debug, PartialEq)]
pub enum FaultSpecError {
    #[error("{0}")]
    Tool(FaultParseError),
    #[error("{0}")]
    Model(#[from] ModelFaultParseError),
}

/// The control a `--fault` spec asks for: `model:TARGET:MODE[:SCOPE]`
/// breaks a model, anything else `TOOL:MODE[:SCOPE]` a tool.
pub fn fault_control(spec: &str) -> Result<Control, FaultSpecError> {
    if spec.starts_with("model:") {
        let (target, fault) = parse_model_fault(spec)?;
        return Ok(Control::InjectModelFault { target, fault });
    }
    match Fault::parse_spec(spec) {
        Ok((tool, fault)) => Ok(Control::InjectFault { tool, fault }),
        Err(mut e) => {
            if spec.split(':').next().and_then(Role::parse).is_some() {
                e.why.push_str("; to break a role's model write model:ROLE:MODE");
            }
            Err(FaultSpecError::Tool(e))
        }
    }
}

/// Whether a model fault can aim at `target`: a role, or one of `models`
/// by name; if not, why not.
pub fn check_model_target(models: &Models, target: &str) -> Result<(), String> {
    if Role::parse(target).is_some() || models.available().any(|s| s.model.info().name == target) {
        return Ok(());
    }
    let roles: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
    let names: Vec<String> = models.available().map(|s| s.model.info().name).collect();
    Err(format!("no role or model named '{target}' (roles: {}; models: {})", roles.join(", "), names.join(", ")))
}

impl Engine {
    pub(super) fn inject_model_fault(&mut self, target: String, fault: ModelFault) -> Result<(), EngineError> {
        if let Err(why) = check_model_target(&self.models, &target) {
            return self.reject("inject model fault", why);
        }
        self.model_faults.inject(&target, fault);
        self.emit(EventKind::ModelFaultInjected { target, fault })
    }

    pub(super) fn clear_model_fault(&mut self, target: Option<String>) -> Result<(), EngineError> {
        self.model_faults.clear(target.as_deref());
        self.emit(EventKind::ModelFaultCleared { target })
    }

    /// The fault that hits model call `call` of `role` (played by `model`):
    /// the role's faults first, then the model's. The draw's generator comes
    /// from the call's seed, so a model fault never shifts the engine's own
    /// draws, and with none in force nothing is drawn at all. The use spent
    /// is the oldest sure fault's, the role's before the model's, when it is
    /// of the mode that hit: a rule the fold can follow from the mode alone.
    pub(super) fn draw_model_fault(&mut self, role: Role, model: &str, call: u64) -> Option<ModelFaultMode> {
        if self.model_faults.is_empty() {
            return None;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(self.call_seed(call) ^ DRAW_SALT);
        let hit =
            self.model_faults.roll(role.as_str(), &mut rng).or_else(|| self.model_faults.roll(model, &mut rng))?;
        if !self.model_faults.spend(role.as_str(), hit) {
            self.model_faults.spend(model, hit);
        }
        Some(hit)
    }
}
