//! Which model plays which role, at what price.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::model::price::Price;
use crate::model::{ChatModel, ReplyTokens, Role};

#[derive(Clone)]
pub struct ModelSlot {
    pub model: Arc<dyn ChatModel>,
    pub price: Price,
}

/// Role → model. A role with no model of its own falls back to the actor's.
/// The models a role may be switched to are kept by name.
#[derive(Clone)]
pub struct Models {
    actor: ModelSlot,
    others: BTreeMap<Role, ModelSlot>,
    available: BTreeMap<String, ModelSlot>,
    reply_tokens: ReplyTokens,
}

impl Models {
    /// One model in every role.
    pub fn single(model: Arc<dyn ChatModel>, price: Price) -> Self {
        let slot = ModelSlot { model, price };
        let available = BTreeMap::from([(slot.model.info().name, slot.clone())]);
        Models { actor: slot, others: BTreeMap::new(), available, reply_tokens: ReplyTokens::default() }
    }

    /// The most tokens each role's reply may take, when its request sets no limit.
    pub fn reply_tokens(&self) -> ReplyTokens {
        self.reply_tokens
    }

    pub fn set_reply_tokens(&mut self, caps: ReplyTokens) {
        self.reply_tokens = caps;
    }

    /// Makes a model available for switching (under its own name).
    pub fn offer(&mut self, slot: ModelSlot) {
        self.available.insert(slot.model.info().name, slot);
    }

    pub fn available(&self) -> impl Iterator<Item = &ModelSlot> {
        self.available.values()
    }

    /// Gives `role` the available model called `name`.
    pub fn switch(&mut self, role: Role, name: &str) -> Option<&ModelSlot> {
        let slot = self.available.get(name)?.clone();
        self.set(role, slot);
        Some(self.get(role))
    }

    pub fn set(&mut self, role: Role, slot: ModelSlot) {
        self.available.entry(slot.model.info().name).or_insert_with(|| slot.clone());
        if role == Role::Actor {
            self.actor = slot;
        } else {
            self.others.insert(role, slot);
        }
    }

    /// The available model called `name`.
    pub fn named(&self, name: &str) -> Option<&ModelSlot> {
        self.available.get(name)
    }

    pub fn get(&self, role: Role) -> &ModelSlot {
        self.others.get(&role).unwrap_or(&self.actor)
    }

    /// Every role with the model that plays it; the agent role only where
    /// a model was given it (a session with an outside agent).
    pub fn assignments(&self) -> impl Iterator<Item = (Role, &ModelSlot)> {
        let agent = self.others.contains_key(&Role::Agent).then_some(Role::Agent);
        Role::ALL.into_iter().chain(agent).map(|r| (r, self.get(r)))
    }
}
