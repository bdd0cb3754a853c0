//! Which model plays which role, at what price.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::price::Price;
use crate::model::{ChatModel, Role};

#[derive(Clone)]
pub struct ModelSlot {
    pub model: Arc<dyn ChatModel>,
    pub price: Price,
}

/// Role → model. A role with no model of its own falls back to the actor's.
#[derive(Clone)]
pub struct Models {
    actor: ModelSlot,
    others: BTreeMap<Role, ModelSlot>,
}

impl Models {
    /// One model in every role.
    pub fn single(model: Arc<dyn ChatModel>, price: Price) -> Self {
        Models { actor: ModelSlot { model, price }, others: BTreeMap::new() }
    }

    pub fn set(&mut self, role: Role, slot: ModelSlot) {
        if role == Role::Actor {
            self.actor = slot;
        } else {
            self.others.insert(role, slot);
        }
    }

    pub fn get(&self, role: Role) -> &ModelSlot {
        self.others.get(&role).unwrap_or(&self.actor)
    }

    /// Every role with the model that plays it.
    pub fn assignments(&self) -> impl Iterator<Item = (Role, &ModelSlot)> {
        Role::ALL.into_iter().map(|r| (r, self.get(r)))
    }
}
