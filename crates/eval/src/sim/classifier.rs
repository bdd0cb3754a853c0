//! The rewoo tool classifier (docs/src/papers/rewoo.md): files every tool under
//! one of the categories shown, by the words of the categories' names and of
//! the tool.

use std::collections::BTreeMap;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::answer::UNREADABLE_PROMPT;
use super::relevance::{dedup, relevance};
use crate::model::Message;
use crate::retrieve::tokenize;
use crate::strategy::rewoo::prompt::{self as rp, Category, ClassifierInput};

/// Words that say a tool (or a category named like the defaults) finds
/// information rather than acting on its inputs.
const RETRIEVAL_WORDS: &[&str] = &[
    "lookup",
    "look",
    "search",
    "find",
    "get",
    "fetch",
    "retrieve",
    "retrieval",
    "query",
    "information",
    "fact",
    "record",
    "browse",
    "knowledge",
    "wiki",
    "encyclopedia",
    "database",
    "definition",
];

/// Words that say a tool computes, converts or acts on given inputs.
const COMPLETION_WORDS: &[&str] = &[
    "compute",
    "calculate",
    "calculation",
    "calculator",
    "convert",
    "conversion",
    "transform",
    "count",
    "format",
    "evaluate",
    "add",
    "subtract",
    "multiply",
    "divide",
    "translate",
    "generate",
    "create",
    "send",
    "write",
    "solve",
    "sort",
    "encode",
    "decode",
    "summarize",
    "summarise",
    "factor",
    "act",
    "action",
    "execute",
    "task",
    "completion",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Retrieval,
    Completion,
}

/// The two vocabularies, stemmed once per call: stems are compared for
/// equality, because the prefix rule of `words_match` would read "count"
/// into "country".
struct Vocab {
    retrieval: Vec<String>,
    completion: Vec<String>,
}

impl Vocab {
    fn new() -> Self {
        let stems = |words: &[&str]| words.iter().flat_map(|w| tokenize(w)).collect();
        Vocab { retrieval: stems(RETRIEVAL_WORDS), completion: stems(COMPLETION_WORDS) }
    }

    fn hits(&self, tokens: &[String]) -> (usize, usize) {
        let count = |vocab: &[String]| tokens.iter().filter(|t| vocab.contains(t)).count();
        (count(&self.retrieval), count(&self.completion))
    }

    /// A tool that does not speak of finding things acts on its inputs:
    /// the paper's "Task Completion" is the catch-all.
    fn tool_kind(&self, tokens: &[String]) -> Kind {
        let (r, c) = self.hits(tokens);
        if r > c { Kind::Retrieval } else { Kind::Completion }
    }

    /// Only a category *named* like a default has a kind; "Geography" is a
    /// domain, whatever its description says.
    fn category_kind(&self, name: &str) -> Option<Kind> {
        let (r, c) = self.hits(&tokenize(name));
        match r.cmp(&c) {
            std::cmp::Ordering::Greater => Some(Kind::Retrieval),
            std::cmp::Ordering::Less => Some(Kind::Completion),
            std::cmp::Ordering::Equal => None,
        }
    }
}

pub(super) fn classifier_reply(messages: &[Message], noise: f64, rng: &mut ChaCha8Rng) -> String {
    let Some(view) = rp::parse_classifier_prompt(messages) else { return UNREADABLE_PROMPT.into() };
    if view.categories.is_empty() {
        // Nothing to choose from: an honest reply the engine cannot mistake for labels.
        return "There are no categories to choose from.".into();
    }
    rp::render_classifier_reply(&classify(&view, noise, rng))
}

fn classify(view: &ClassifierInput, noise: f64, rng: &mut ChaCha8Rng) -> BTreeMap<String, String> {
    let vocab = Vocab::new();
    let kinds: Vec<Option<Kind>> = view.categories.iter().map(|c| vocab.category_kind(&c.name)).collect();
    let mut labels = BTreeMap::new();
    for (name, description) in &view.tools {
        let mut pick = label(&format!("{name} {description}"), &view.categories, &kinds, &vocab);
        let n = view.categories.len();
        // A noisy model sometimes files a tool under the wrong heading.
        if n > 1 && rng.random_bool(noise / 2.0) {
            let k = rng.random_range(0..n - 1);
            pick = if k >= pick { k + 1 } else { k };
        }
        labels.insert(name.clone(), view.categories[pick].name.clone());
    }
    labels
}

/// The category of one tool: a domain category whose words the tool uses
/// wins (the user defined it on purpose); else the default-like category
/// of the tool's kind; else the lexically closest; else the first.
fn label(doc: &str, categories: &[Category], kinds: &[Option<Kind>], vocab: &Vocab) -> usize {
    let tokens = dedup(tokenize(doc));
    let docs: Vec<String> = categories.iter().map(|c| format!("{} {}", c.name, c.description)).collect();
    let rel = relevance(&tokens, &docs);
    // Ties go to the category listed first, as a reader would.
    let best_of = |keep: &dyn Fn(usize) -> bool| {
        (0..categories.len()).filter(|&i| keep(i)).max_by(|&a, &b| rel[a].total_cmp(&rel[b]).then(b.cmp(&a)))
    };
    let kind = vocab.tool_kind(&tokens);
    best_of(&|i| kinds[i].is_none() && rel[i] > 0.0)
        .or_else(|| best_of(&|i| kinds[i] == Some(kind)))
        .or_else(|| best_of(&|_| true))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_kinds_come_from_names() {
        let v = Vocab::new();
        assert_eq!(v.category_kind("Information Retrieval"), Some(Kind::Retrieval));
        assert_eq!(v.category_kind("Task Completion"), Some(Kind::Completion));
        assert_eq!(v.category_kind("Geography"), None);
        // "count" is not read into "country".
        assert_eq!(v.tool_kind(&tokenize("Country facts lookup")), Kind::Retrieval);
    }
}
