//! Texts as bags of stemmed words, and how alike two texts are by them. BM25
//! ranks with the same tokens the simulated model and budget planning
//! compare tasks with, so all three agree on what a word is.

use std::collections::HashMap;

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "been", "by", "can", "could", "do", "does", "for", "from", "i",
    "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "please", "should", "that", "the", "their", "them",
    "then", "there", "these", "this", "those", "to", "was", "we", "were", "will", "with", "would", "you", "your",
];

/// Lowercased, stemmed words of `text`, stop words dropped.
///
/// Words are runs of letters, digits and `_`. A snake_case or camelCase word
/// also yields its parts (`get_weather` and `getWeather` both give `get`,
/// `weather` and `getweather`), so a tool name matches a query that spells
/// it either way or only names its parts.
pub fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in text.split(|c: char| !(c.is_alphanumeric() || c == '_')).filter(|w| !w.is_empty()) {
        let parts = split_word(word);
        for part in &parts {
            if !STOP_WORDS.contains(&part.as_str()) {
                tokens.push(stem(part));
            }
        }
        if parts.len() > 1 {
            tokens.push(stem(&parts.concat()));
        }
    }
    tokens
}

/// Splits on `_` and camelCase boundaries (`HTTPServer` -> `http`, `server`),
/// lowercasing the parts.
fn split_word(word: &str) -> Vec<String> {
    let mut parts = Vec::new();
    for chunk in word.split('_').filter(|c| !c.is_empty()) {
        let chars: Vec<char> = chunk.chars().collect();
        let mut current = String::new();
        for (i, &c) in chars.iter().enumerate() {
            let boundary = i > 0 && c.is_uppercase() && {
                let prev = chars[i - 1];
                let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
                prev.is_lowercase() || prev.is_numeric() || (prev.is_uppercase() && next_lower)
            };
            if boundary && !current.is_empty() {
                parts.push(std::mem::take(&mut current));
            }
            current.extend(c.to_lowercase());
        }
        if !current.is_empty() {
            parts.push(current);
        }
    }
    parts
}

/// Light suffix stripping: one of `ing`, `ed`, `es` (after s, x, z, ch, sh)
/// or `s` (not `ss`), then a final `e`, each only if at least three
/// characters remain. `create`, `creates`, `created` and `creating` all give
/// `creat`.
fn stem(word: &str) -> String {
    let long_enough = |rest: &str| rest.chars().count() >= 3;
    let mut w = word;
    if let Some(rest) = w.strip_suffix("ing").filter(|r| long_enough(r)) {
        w = rest;
    } else if let Some(rest) = w.strip_suffix("ed").filter(|r| long_enough(r)) {
        w = rest;
    } else if let Some(rest) =
        w.strip_suffix("es").filter(|r| long_enough(r) && ["s", "x", "z", "ch", "sh"].iter().any(|s| r.ends_with(s)))
    {
        w = rest;
    } else if let Some(rest) = w.strip_suffix('s').filter(|r| long_enough(r) && !r.ends_with('s')) {
        w = rest;
    }
    if let Some(rest) = w.strip_suffix('e').filter(|r| long_enough(r)) {
        w = rest;
    }
    w.to_owned()
}

/// Cosine similarity of the token counts of two texts, in [0, 1]: 1 for texts
/// with the same tokens in the same proportions, 0 when they share none (or
/// one has no tokens).
pub fn similarity(a: &str, b: &str) -> f64 {
    let (a, b) = (counts(a), counts(b));
    if a.is_empty() || b.is_empty() {
        return 0.0;
    }
    if a == b {
        return 1.0;
    }
    let dot: f64 = a.iter().filter_map(|(t, &x)| b.get(t).map(|&y| x * y)).sum();
    let norm = |m: &HashMap<String, f64>| m.values().map(|v| v * v).sum::<f64>().sqrt();
    (dot / (norm(&a) * norm(&b))).clamp(0.0, 1.0)
}

fn counts(text: &str) -> HashMap<String, f64> {
    let mut map = HashMap::new();
    for token in tokenize(text) {
        *map.entry(token).or_insert(0.0) += 1.0;
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_with_acronyms_splits_into_words() {
        assert_eq!(split_word("HTTPServerV2"), ["http", "server", "v2"]);
        assert_eq!(split_word("get_weatherNow"), ["get", "weather", "now"]);
    }

    #[test]
    fn stemming_keeps_three_characters() {
        assert_eq!(stem("searches"), "search");
        assert_eq!(stem("boxes"), "box");
        assert_eq!(stem("files"), stem("file"));
        assert_eq!(stem("created"), stem("creating"));
        assert_eq!(stem("class"), "class");
        // "uses" -> "use" ("es" is not after s/x/z/ch/sh; "us" would be too short).
        assert_eq!(stem("uses"), "use");
        assert_eq!(stem("bed"), "bed");
    }
}
