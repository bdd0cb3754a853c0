//! Values generated from a tool's response schema: the `synthesized`
//! executor, which lets a strategy run against a tool nobody can call here.
//! The same schema and seed give the same value, so a seeded session stays
//! reproducible.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};

const WORDS: [&str; 12] =
    ["alpha", "harbor", "maple", "quartz", "river", "summit", "cobalt", "meadow", "falcon", "ember", "lumen", "tundra"];
/// Deeper schemas are cut off with null rather than recursing without end.
const MAX_DEPTH: usize = 8;

/// A value that fits `schema`: objects with all their properties, arrays
/// of 1 to 3 items, strings from `enum`, an example, a `format` or a seeded
/// word, numbers within `minimum`/`maximum`.
pub fn synthesize(schema: &Value, seed: u64) -> Value {
    value(schema, &mut ChaCha8Rng::seed_from_u64(seed), 0)
}

fn value(schema: &Value, rng: &mut ChaCha8Rng, depth: usize) -> Value {
    if depth > MAX_DEPTH {
        return Value::Null;
    }
    let Some(s) = schema.as_object() else {
        return Value::String(word(rng));
    };
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(options) = s.get("enum").and_then(Value::as_array).filter(|a| !a.is_empty()) {
        return options[rng.random_range(0..options.len())].clone();
    }
    if let Some(example) = s.get("example").or_else(|| s.get("examples").and_then(|e| e.get(0))) {
        return example.clone();
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        // ["string", "null"]: the first real type, so optional values are present.
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ if s.contains_key("items") => "array",
        _ => "string",
    };
    match ty {
        "object" => {
            let mut out = Map::new();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (name, prop) in props {
                    out.insert(name.clone(), value(prop, rng, depth + 1));
                }
            }
            Value::Object(out)
        }
        "array" => {
            let items = s.get("items").cloned().unwrap_or_else(|| json!({ "type": "string" }));
            let lo = s.get("minItems").and_then(Value::as_u64).unwrap_or(1).clamp(1, 3);
            let hi = s.get("maxItems").and_then(Value::as_u64).unwrap_or(3).clamp(lo, 3);
            let n = rng.random_range(lo..=hi);
            Value::Array((0..n).map(|_| value(&items, rng, depth + 1)).collect())
        }
        "integer" => {
            let lo = s.get("minimum").and_then(Value::as_f64).map_or(0, |m| m.ceil() as i64);
            let hi = s.get("maximum").and_then(Value::as_f64).map_or(lo.saturating_add(100), |m| m.floor() as i64);
            json!(if hi >= lo { rng.random_range(lo..=hi) } else { lo })
        }
        "number" => {
            let lo = s.get("minimum").and_then(Value::as_f64).unwrap_or(0.0);
            let hi = s.get("maximum").and_then(Value::as_f64).unwrap_or(lo + 100.0);
            let x = if hi > lo { rng.random_range(lo..=hi) } else { lo };
            // Two decimals read like a measurement; the clamp keeps the rounding within bounds.
            json!(((x * 100.0).round() / 100.0).clamp(lo.min(hi), hi.max(lo)))
        }
        "boolean" => Value::Bool(rng.random_bool(0.5)),
        "null" => Value::Null,
        _ => Value::String(string(s, rng)),
    }
}

fn word(rng: &mut ChaCha8Rng) -> String {
    WORDS[rng.random_range(0..WORDS.len())].to_string()
}

fn string(s: &Map<String, Value>, rng: &mut ChaCha8Rng) -> String {
    let day = rng.random_range(1..=28);
    let month = rng.random_range(1..=12);
    match s.get("format").and_then(Value::as_str) {
        Some("date") => format!("2024-{month:02}-{day:02}"),
        Some("date-time") => format!("2024-{month:02}-{day:02}T{:02}:00:00Z", rng.random_range(0..24)),
        Some("email") => format!("{}@example.com", word(rng)),
        Some("uri" | "url") => format!("https://example.com/{}", word(rng)),
        Some("uuid") => {
            let n: u128 = rng.random();
            let h = format!("{n:032x}");
            format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
        }
        _ => format!("{}-{}", word(rng), rng.random_range(1..1000)),
    }
}
