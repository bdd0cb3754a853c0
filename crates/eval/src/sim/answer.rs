//! What the simulated model answers: the value a result gives for the task,
//! or one of its fixed admissions. The evaluator recognises those admissions
//! as no answer at all.

use serde_json::Value;

use super::relevance::words_match;
use crate::retrieve::tokenize;
use crate::strategy::prompt;

pub(super) const UNREADABLE_PROMPT: &str = "I could not read the prompt.";
pub(super) const GIVE_UP: &str = "I could not find the answer.";

/// The answer a result gives to the task: the field the task asks about,
/// else a `result`/`answer`/`value` field, else the only field, else the
/// whole result as compact JSON.
pub(super) fn answer_from(task: &str, v: &Value) -> String {
    let Value::Object(map) = v else { return value_text(v) };
    let task_tokens = tokenize(task);
    let wants_id = task_tokens.iter().any(|t| t == "id" || t == "identifier");
    let mut best: Option<(f64, &Value)> = None;
    for (key, value) in map {
        if key.ends_with("_id") && !wants_id {
            continue;
        }
        let parts: Vec<String> = key.split('_').flat_map(tokenize).collect();
        if parts.is_empty() {
            continue;
        }
        let hit = parts.iter().filter(|p| task_tokens.iter().any(|t| words_match(t, p))).count();
        let score = hit as f64 / parts.len() as f64;
        if hit > 0 && best.is_none_or(|(b, _)| score > b) {
            best = Some((score, value));
        }
    }
    if let Some((_, value)) = best {
        return value_text(value);
    }
    for key in ["result", "answer", "value"] {
        if let Some(value) = map.get(key) {
            return value_text(value);
        }
    }
    if map.len() == 1 {
        return map.values().next().map(value_text).unwrap_or_default();
    }
    prompt::compact(v)
}

pub(super) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.0e15 => format!("{}", f as i64),
            _ => n.to_string(),
        },
        Value::Bool(b) => b.to_string(),
        Value::Null => String::new(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(", "),
        Value::Object(_) => prompt::compact(v),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn answers_pick_the_asked_field() {
        let geo = json!({"name": "France", "capital": "Paris", "population": 68170000, "currency_code": "EUR"});
        assert_eq!(answer_from("What is the capital of 'France'?", &geo), "Paris");
        assert_eq!(answer_from("Which currency code does 'France' use?", &geo), "EUR");
        assert_eq!(answer_from("How many people live in 'France'? Give the population.", &geo), "68170000");
        assert_eq!(answer_from("Compute it", &json!({"result": 14.0})), "14");
        assert_eq!(answer_from("x", &json!({"factors": [2, 2, 3]})), "2, 2, 3");
        assert_eq!(answer_from("population of city", &json!({"city_id": "C1", "population": 5})), "5");
    }
}
