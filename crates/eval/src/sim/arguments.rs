//! Filling a tool's arguments from the task and the history, parameter by
//! parameter, with the values `extract` reads out of the task.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::answer::value_text;
use super::extract::{
    Quoted, enum_mentions, extract_dates, extract_expression, extract_id, extract_numbers, extract_proper,
    extract_quoted,
};
use super::observation::{is_useful, result_of};
use super::relevance::words_match;
use crate::retrieve::tokenize;
use crate::strategy::prompt::{self, HistoryEntry};

pub(super) fn required(schema: &Value) -> Vec<String> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default()
}

/// Fills a tool's arguments from the task and the history, by parameter
/// schema. Returns the arguments and whether every required one was found.
///
/// - a name ending in `_id`: the most recent result with that field, else an
///   ID-like token of the task ("C0042");
/// - a name that is a field of the last useful result: that value (a chain);
/// - an enum: the allowed values mentioned in the task, then in the
///   results, in order of mention (so `from_*` gets the first, `to_*` the next);
/// - `format: date`: the task's YYYY-MM-DD dates in order;
/// - a name containing `expression`: the arithmetic expression in the task;
/// - numbers: the task's numbers in order (an array of numbers takes all);
/// - other strings: quoted phrases in order, else proper nouns, else (for a
///   free-text parameter such as `query`) the task itself.
pub(super) fn fill_arguments(task: &str, history: &[HistoryEntry], schema: &Value) -> (Value, bool) {
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return (json!({}), true);
    };
    let required = required(schema);
    let pools = Pools::new(task);
    let mut used = Used::default();
    let last = history.iter().rev().find(|h| is_useful(&h.observation)).map(result_of);
    let mut order: Vec<(usize, &String, &Value)> = props.iter().enumerate().map(|(i, (k, v))| (i, k, v)).collect();
    order.sort_by_key(|(i, name, _)| (position_rank(name), *i));
    let mut args = Map::new();
    let mut complete = true;
    for (_, name, p) in order {
        let value = fill_one(name, p, task, history, last, &pools, &mut used);
        match value {
            Some(v) => {
                args.insert(name.clone(), v);
            }
            None if required.contains(name) => complete = false,
            None => {}
        }
    }
    (Value::Object(args), complete)
}

/// `from`/`start` parameters take the first mention, `to`/`end` the next,
/// whatever order the schema lists them in.
fn position_rank(name: &str) -> u8 {
    let parts: Vec<&str> = name.split('_').collect();
    let has = |words: &[&str]| parts.iter().any(|p| words.contains(p));
    if has(&["from", "start", "begin", "first", "source", "origin"]) {
        0
    } else if has(&["to", "end", "until", "last", "target", "destination"]) {
        2
    } else {
        1
    }
}

#[derive(Default)]
struct Used {
    dates: usize,
    numbers: usize,
    quoted: Vec<bool>,
    proper: usize,
    /// Per enum (its values joined), how many mentions were taken.
    enums: BTreeMap<String, usize>,
}

struct Pools {
    dates: Vec<String>,
    numbers: Vec<f64>,
    quoted: Vec<Quoted>,
    proper: Vec<String>,
}

impl Pools {
    fn new(task: &str) -> Self {
        let (dates, without_dates) = extract_dates(task);
        let (quoted, unquoted) = extract_quoted(task);
        Pools { dates, numbers: extract_numbers(&without_dates), quoted, proper: extract_proper(&unquoted) }
    }
}

fn fill_one(
    name: &str,
    p: &Value,
    task: &str,
    history: &[HistoryEntry],
    last: Option<&Value>,
    pools: &Pools,
    used: &mut Used,
) -> Option<Value> {
    let ty = p.get("type").and_then(Value::as_str).unwrap_or("string");
    if name.ends_with("_id") {
        let from_history = history
            .iter()
            .rev()
            .filter(|h| is_useful(&h.observation))
            .find_map(|h| result_of(h).get(name).filter(|v| !v.is_null()));
        return match from_history {
            Some(Value::String(s)) => Some(json!(s)),
            Some(other) => Some(json!(value_text(other))),
            None => extract_id(task).map(Value::String),
        };
    }
    if let Some(v) = last.and_then(|l| l.get(name)).filter(|v| fits(v, ty)) {
        return Some(v.clone());
    }
    if let Some(values) = p.get("enum").and_then(Value::as_array) {
        let allowed: Vec<&str> = values.iter().filter_map(Value::as_str).collect();
        let mut texts = vec![task.to_string()];
        texts.extend(history.iter().filter(|h| is_useful(&h.observation)).map(|h| prompt::compact(result_of(h))));
        let mentions: Vec<&str> = texts.iter().flat_map(|t| enum_mentions(t, &allowed)).collect();
        let key = allowed.join("|");
        let k = used.enums.entry(key).or_default();
        let v = mentions.get(*k).map(|s| json!(s));
        *k += 1;
        return v;
    }
    match ty {
        "integer" | "number" => {
            let integer = ty == "integer";
            while used.numbers < pools.numbers.len() {
                let x = pools.numbers[used.numbers];
                used.numbers += 1;
                if !integer || x.fract() == 0.0 {
                    return Some(number_value(x));
                }
            }
            None
        }
        "array" => {
            let item_ty = p.pointer("/items/type").and_then(Value::as_str).unwrap_or("");
            if matches!(item_ty, "number" | "integer") && !pools.numbers.is_empty() {
                let rest = &pools.numbers[used.numbers.min(pools.numbers.len())..];
                used.numbers = pools.numbers.len();
                return Some(Value::Array(rest.iter().map(|x| number_value(*x)).collect()));
            }
            None
        }
        "boolean" => None,
        _ => {
            if p.get("format").and_then(Value::as_str) == Some("date") {
                let d = pools.dates.get(used.dates).cloned();
                used.dates += 1;
                return d.map(Value::String);
            }
            if name.contains("expression") {
                return extract_expression(task, &pools.quoted).map(Value::String);
            }
            used.quoted.resize(pools.quoted.len(), false);
            let fit = (0..pools.quoted.len()).find(|&i| !used.quoted[i] && label_fits(&pools.quoted[i], name, p));
            if let Some(i) = fit {
                used.quoted[i] = true;
                return Some(json!(pools.quoted[i].text));
            }
            if let Some(n) = pools.proper.get(used.proper) {
                used.proper += 1;
                return Some(json!(n));
            }
            // The whole task suits a free-text parameter only: a country
            // named by the task's full text is no argument at all.
            let free_text = name.split('_').any(|w| FREE_TEXT_NAMES.contains(&w));
            free_text.then(|| json!(task))
        }
    }
}

/// Parameter names (or parts of them) that take free text.
const FREE_TEXT_NAMES: &[&str] =
    &["query", "question", "text", "prompt", "input", "search", "q", "message", "content", "topic"];

fn fits(v: &Value, ty: &str) -> bool {
    match ty {
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        _ => !v.is_null(),
    }
}

fn number_value(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9.0e15 { json!(x as i64) } else { json!(x) }
}

/// Nouns that say what kind of thing a quoted phrase is. A phrase labelled
/// with one of them goes only to a parameter whose name or description
/// uses the same noun: 'Lyon' in "the city 'Lyon'" is no country.
const KIND_NOUNS: &[&str] = &[
    "city",
    "country",
    "term",
    "text",
    "word",
    "sentence",
    "numeral",
    "number",
    "currency",
    "unit",
    "date",
    "name",
    "phrase",
    "expression",
    "code",
    "query",
    "topic",
];

/// Whether a quoted phrase may fill a parameter (see `KIND_NOUNS`).
fn label_fits(q: &Quoted, name: &str, p: &Value) -> bool {
    let Some(label) = &q.label else { return true };
    let kind = KIND_NOUNS.iter().any(|k| tokenize(k).iter().any(|t| t == label));
    if !kind {
        return true;
    }
    let desc = p.get("description").and_then(Value::as_str).unwrap_or("");
    tokenize(&format!("{} {desc}", name.replace('_', " "))).iter().any(|t| words_match(t, label))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quoted_phrases_fit_by_their_label() {
        let (quoted, _) = extract_quoted("Define 'don't panic' and the city \"Lyon\", it's ‘x’");
        let country = json!({"type": "string", "description": "The country's name"});
        assert!(!label_fits(&quoted[1], "country", &country));
        assert!(label_fits(&quoted[1], "city_name", &json!({"type": "string"})));
        assert!(label_fits(&quoted[0], "country", &country));
    }
}
