//! `$ref` expansion within one JSON document (OpenAPI's `#/components/...`),
//! so a tool's schemas stand alone once taken out of the file.

use std::fmt::Write as _;

use serde_json::{Map, Value, json};

/// A `$ref` that could not be followed.
#[derive(Debug)]
pub(crate) struct BrokenRef {
    /// JSON pointer (`#/...`) of the `$ref` member.
    pub(crate) at: String,
    pub(crate) target: String,
    pub(crate) message: String,
}

/// Escapes one JSON-pointer token (RFC 6901).
pub(crate) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

fn unescape(token: &str) -> String {
    // ~1 first: "~01" is the token "~1", not "/".
    token.replace("~1", "/").replace("~0", "~")
}

/// Follows a `#/a/b` pointer from the document's root.
fn lookup<'a>(doc: &'a Value, target: &str) -> Result<&'a Value, String> {
    let Some(pointer) = target.strip_prefix('#') else {
        return Err("only references within the file ('#/...') are supported".into());
    };
    if pointer.is_empty() {
        return Ok(doc);
    }
    let Some(pointer) = pointer.strip_prefix('/') else {
        return Err("a JSON pointer starts with '#/'".into());
    };
    let mut at = doc;
    for raw in pointer.split('/') {
        let token = unescape(raw);
        at = match at {
            Value::Object(m) => m.get(&token),
            Value::Array(a) => token.parse::<usize>().ok().and_then(|i| a.get(i)),
            _ => None,
        }
        .ok_or_else(|| format!("nothing at '{token}'"))?;
    }
    Ok(at)
}

/// Returns `value` (found at pointer `at` of `doc`) with every `$ref`
/// replaced by what it points to. A reference met again while it is being
/// expanded (a recursive schema) becomes a schema that only says so, which
/// keeps the expansion finite.
pub(crate) fn expand(doc: &Value, value: &Value, at: &str) -> Result<Value, BrokenRef> {
    walk(doc, value, &mut at.to_string(), &mut Vec::new())
}

/// Appends one escaped token to the pointer `at`.
fn push_token(at: &mut String, token: &str) {
    at.push('/');
    for c in token.chars() {
        match c {
            '~' => at.push_str("~0"),
            '/' => at.push_str("~1"),
            c => at.push(c),
        }
    }
}

/// `at` is the pointer of `value`: one buffer, grown and cut back as the
/// walk goes, since a string per value made large documents slow.
fn walk(doc: &Value, value: &Value, at: &mut String, open: &mut Vec<String>) -> Result<Value, BrokenRef> {
    let len = at.len();
    let below = |at: &mut String, token: &str, v: &Value, open: &mut Vec<String>| {
        push_token(at, token);
        let out = walk(doc, v, at, open);
        at.truncate(len);
        out
    };
    match value {
        Value::Object(m) => {
            let Some(r) = m.get("$ref") else {
                let mut out = Map::with_capacity(m.len());
                for (k, v) in m {
                    out.insert(k.clone(), below(at, k, v, open)?);
                }
                return Ok(Value::Object(out));
            };
            let ref_at = || format!("{at}/$ref");
            let Some(target) = r.as_str() else {
                return Err(BrokenRef { at: ref_at(), target: r.to_string(), message: "must be a string".into() });
            };
            if open.iter().any(|t| t == target) {
                return Ok(json!({ "description": format!("(recursive: {target})") }));
            }
            let found = lookup(doc, target).map_err(|message| BrokenRef {
                at: ref_at(),
                target: target.to_string(),
                message,
            })?;
            open.push(target.to_string());
            let mut out = walk(doc, found, &mut target.to_string(), open);
            open.pop();
            // OpenAPI 3.1 lets siblings of `$ref` (a description, say) refine it.
            if let Ok(Value::Object(o)) = &mut out {
                for (k, v) in m.iter().filter(|(k, _)| *k != "$ref") {
                    o.insert(k.clone(), below(at, k, v, open)?);
                }
            }
            out
        }
        Value::Array(a) => a
            .iter()
            .enumerate()
            .map(|(i, v)| {
                let _ = write!(at, "/{i}");
                let out = walk(doc, v, at, open);
                at.truncate(len);
                out
            })
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_unescape_and_cycles_stop() {
        let doc = json!({
            "components": { "a/b": { "x~y": { "type": "string" } },
                            "node": { "type": "object", "properties": { "next": { "$ref": "#/components/node" } } } },
        });
        let v = expand(&doc, &json!({ "$ref": "#/components/a~1b/x~0y" }), "#").unwrap();
        assert_eq!(v, json!({ "type": "string" }));
        let v = expand(&doc, &json!({ "$ref": "#/components/node" }), "#").unwrap();
        assert_eq!(v["properties"]["next"]["description"], "(recursive: #/components/node)");
        let e = expand(&doc, &json!({ "p": [{ "$ref": "#/components/none" }] }), "#/x").unwrap_err();
        assert_eq!(e.at, "#/x/p/0/$ref");
    }
}
