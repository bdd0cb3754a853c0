//! The tool classifier (role `classifier`, once per session): every tool
//! gets a category, so the planner may call tools of one category together.
//! A manifest's category wins, then the cache for this library and model,
//! then the model; the engine keeps the labels and the user may edit them.

use std::collections::BTreeMap;

use super::prompt::{self as proto, Category, ClassifierInput};
use crate::engine::event::{EventKind, LabelSource, ToolLabel};
use crate::engine::label_cache;
use crate::engine::{Halt, Host, Labels};
use crate::model::{ChatRequest, Role};
use crate::strategy::stepwise::refuse_malformed;

/// Labels every tool and tells the engine.
pub async fn classify(host: &mut dyn Host, categories: &[Category]) -> Result<(), Halt> {
    let names: Vec<String> = categories.iter().map(|c| c.name.clone()).collect();
    let mut labels = Labels::new();
    let mut open: Vec<(String, String)> = Vec::new();
    for t in host.library().tools() {
        match &t.category {
            Some(c) => {
                labels.insert(t.name.clone(), (c.clone(), LabelSource::Manifest));
            }
            None => open.push((t.name.clone(), t.description.clone())),
        }
    }
    let mut model = None;
    let mut cache_key = None;
    if !open.is_empty() {
        let name = host.model_name(Role::Classifier);
        model = Some(name.clone());
        let key = label_cache::key(&open, &names, &name);
        cache_key = Some((key.clone(), name.clone()));
        let cached = match host.label_cache() {
            Some(path) => label_cache::load(path, &key).map_err(|e| Halt::Engine(e.into()))?,
            None => None,
        };
        let (given, source) = match cached.filter(|c| open.iter().all(|(t, _)| c.contains_key(t))) {
            Some(c) => (c, LabelSource::Cache),
            None => (ask_classifier(host, categories, &open).await?, LabelSource::Model),
        };
        let mut kept = BTreeMap::new();
        for (tool, _) in &open {
            // A cached label may be a category the user added.
            let found = given.get(tool).and_then(|c| {
                canonical(c, &names)
                    .or_else(|| (source == LabelSource::Cache && !c.trim().is_empty()).then(|| c.trim().into()))
            });
            match found {
                Some(c) => {
                    kept.insert(tool.clone(), c.clone());
                    labels.insert(tool.clone(), (c, source));
                }
                None => {
                    labels.insert(tool.clone(), (names[0].clone(), LabelSource::Default));
                }
            }
        }
        if source == LabelSource::Model
            && kept.len() == open.len()
            && let Some(path) = host.label_cache()
        {
            label_cache::store(path, &key, &name, &kept).map_err(|e| Halt::Engine(e.into()))?;
        }
    }
    let list = host
        .library()
        .tools()
        .iter()
        .filter_map(|t| {
            labels.get(&t.name).map(|(c, s)| ToolLabel { tool: t.name.clone(), category: c.clone(), source: *s })
        })
        .collect();
    let mut shown = names;
    for (c, _) in labels.values() {
        if !shown.contains(c) {
            shown.push(c.clone());
        }
    }
    host.set_labels(labels, cache_key);
    host.emit(EventKind::ToolsClassified { categories: shown, labels: list, model })?;
    Ok(())
}

/// The classifier's answer; an unreadable reply or a failed model leaves
/// every tool to the default category rather than failing the run.
async fn ask_classifier(
    host: &mut dyn Host,
    categories: &[Category],
    tools: &[(String, String)],
) -> Result<BTreeMap<String, String>, Halt> {
    let view = ClassifierInput { categories: categories.to_vec(), tools: tools.to_vec() };
    let req =
        ChatRequest::constrained(Role::Classifier, proto::render_classifier(&view), proto::classifier_schema(&view))
            .stopping_at(proto::CLASSIFIER_STOP);
    let reply = match host.model(req).await {
        Ok(r) => r,
        Err(Halt::ModelFailed(_)) => return Ok(BTreeMap::new()),
        Err(other) => return Err(other),
    };
    match proto::parse_classifier_reply(&reply) {
        Ok(l) => Ok(l),
        Err(e) => {
            refuse_malformed(host, &e)?;
            Ok(BTreeMap::new())
        }
    }
}

/// A category as the configured list spells it (models vary the case).
fn canonical(given: &str, categories: &[String]) -> Option<String> {
    let g = given.trim().trim_matches(['"', '[', ']']).to_lowercase();
    categories.iter().find(|c| c.to_lowercase() == g).cloned()
}
