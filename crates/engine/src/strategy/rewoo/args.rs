//! A planned call's input (the text between `Tool[` and `]`) made into the
//! tool's JSON arguments, with `#EN` references replaced by evidence.
//!
//! Planners write inputs as JSON, as bare text (`Japan`, `#E1`), or as
//! `key=value` pairs, and cite a whole tool result where the tool wants one
//! field of it (`{"city_id": "#E1"}` after a search that returned a list of
//! cities). ReWOO pastes the evidence text in verbatim, which breaks both
//! the JSON and the field; here a reference under key K takes the
//! evidence's field K when there is one, and the value is typed by the
//! schema so `"#E1"` can become a number.

use std::borrow::Cow;

use serde_json::{Map, Number, Value};

use super::parse::references;

/// A finished step's evidence: one entry per lane, None when the lane was filtered to null.
pub type Evidence = std::collections::BTreeMap<u32, Vec<Option<Value>>>;

static NULL: Value = Value::Null;

/// The arguments for `input` (the text between the brackets of `tool[input]`) given the tool's JSON-schema
/// `parameters`. Never panics; an input that cannot be made into arguments is an Err whose message is written for a
/// person and names the tool's parameters.
pub fn resolve(input: &str, parameters: &Value, evidence: &Evidence) -> Result<Value, String> {
    let r = Resolver { parameters, evidence };
    let input = input.trim();
    if input.is_empty() {
        let required = required(parameters);
        if required.is_empty() {
            return Ok(Value::Object(Map::new()));
        }
        return Err(format!("the input is empty, but the tool needs {}; {}", required.join(", "), r.takes()));
    }
    if input.starts_with('{') {
        let json_err = match parse_json(input) {
            Ok(v) => return Ok(r.walk(v, "", parameters)),
            Err(e) => e,
        };
        // `{city_id: #E1}`: JSON with bare keys reads as pairs.
        if let Some(args) = input.strip_prefix('{').and_then(|s| s.strip_suffix('}')).and_then(|s| r.pairs(s)) {
            return args;
        }
        return Err(format!("input `{}` is not a valid JSON object ({json_err}); {}", shorten(input), r.takes()));
    }
    if let Some(args) = r.pairs(input) {
        return args;
    }
    if let Some(name) = single_param(parameters) {
        let value = r.text_arg(input, name, property(parameters, name))?;
        return Ok(Value::Object(Map::from_iter([(name.to_string(), value)])));
    }
    Err(format!("input `{}` is not a JSON object of arguments; {}", shorten(input), r.takes()))
}

struct Resolver<'a> {
    parameters: &'a Value,
    evidence: &'a Evidence,
}

impl Resolver<'_> {
    /// Step N's evidence: its first lane that was not filtered.
    fn lookup(&self, n: u32) -> Value {
        self.evidence.get(&n).and_then(|lanes| lanes.iter().flatten().next()).cloned().unwrap_or(Value::Null)
    }

    /// A reference that is a whole value under `key`.
    fn reference(&self, n: u32, key: &str, schema: &Value) -> Value {
        typed(extract(self.lookup(n), key, type_of(schema) == Some("array")), schema)
    }

    /// `text` with every reference replaced by its value's text.
    fn inline(&self, text: &str, key: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for (start, end, n) in references(text) {
            out.push_str(&text[last..start]);
            out.push_str(&text_of(&extract(self.lookup(n), key, false)));
            last = end;
        }
        out.push_str(&text[last..]);
        out
    }

    /// Substitutes references in a parsed JSON value; `key` is the object
    /// key the value sits under, `schema` its part of the parameters.
    fn walk(&self, v: Value, key: &str, schema: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.into_iter()
                    .map(|(k, x)| {
                        let x = self.walk(x, &k, property(schema, &k));
                        (k, x)
                    })
                    .collect(),
            ),
            Value::Array(a) => {
                let items = schema.get("items").unwrap_or(&NULL);
                Value::Array(a.into_iter().map(|x| self.walk(x, key, items)).collect())
            }
            Value::String(s) => match whole_ref(&s) {
                Some(n) => self.reference(n, key, schema),
                None if references(&s).next().is_some() => Value::String(self.inline(&s, key)),
                None => Value::String(s),
            },
            v => v,
        }
    }

    /// One argument written as text, typed by its schema.
    fn text_arg(&self, text: &str, key: &str, schema: &Value) -> Result<Value, String> {
        let text = unquote(text.trim());
        if let Some(n) = whole_ref(&text) {
            return Ok(self.reference(n, key, schema));
        }
        match type_of(schema) {
            Some(t @ ("array" | "object")) => parse_json(&text)
                .map(|v| self.walk(v, key, schema))
                .map_err(|_| format!("`{}` is not a JSON {t} for `{key}`; {}", shorten(&text), self.takes())),
            Some(t @ ("number" | "integer" | "boolean")) => {
                let s = self.inline(&text, key);
                match typed(Value::String(s), schema) {
                    Value::String(s) => Err(format!("`{}` is not {} for `{key}`; {}", shorten(&s), a(t), self.takes())),
                    v => Ok(v),
                }
            }
            _ => Ok(Value::String(self.inline(&text, key))),
        }
    }

    /// `key=value, key2: value2` when every key is a schema property (any
    /// case). A piece without a known key continues the previous value, so
    /// `query=Tokyo, Japan` keeps its comma. `None` when the text does not
    /// start with a known key.
    fn pairs(&self, text: &str) -> Option<Result<Value, String>> {
        let props = self.parameters.get("properties")?.as_object()?;
        let mut found: Vec<(&str, String)> = Vec::new();
        for piece in split_top_level(text) {
            let pair = piece.find([':', '=']).and_then(|p| {
                let written = piece[..p].trim().trim_matches(['"', '\'']);
                let name = props.keys().find(|k| k.eq_ignore_ascii_case(written))?;
                Some((name.as_str(), &piece[p + 1..]))
            });
            match (pair, found.last_mut()) {
                (Some((k, v)), _) => found.push((k, v.to_string())),
                (None, Some((_, v))) => {
                    v.push(',');
                    v.push_str(piece);
                }
                (None, None) => return None,
            }
        }
        let mut args = Map::new();
        for (k, v) in found {
            match self.text_arg(&v, k, props.get(k).unwrap_or(&NULL)) {
                Ok(x) => args.insert(k.to_string(), x),
                Err(e) => return Some(Err(e)),
            };
        }
        Some(Ok(Value::Object(args)))
    }

    /// "the tool takes {city_id: string, limit?: integer}", for errors.
    fn takes(&self) -> String {
        let required = required(self.parameters);
        let props = self.parameters.get("properties").and_then(Value::as_object);
        match props {
            Some(p) if !p.is_empty() => {
                let fields: Vec<String> = p
                    .iter()
                    .map(|(k, s)| {
                        let opt = if required.contains(&k.as_str()) { "" } else { "?" };
                        format!("{k}{opt}: {}", type_of(s).unwrap_or("any"))
                    })
                    .collect();
                format!("the tool takes {{{}}}", fields.join(", "))
            }
            _ => "the tool takes no arguments".into(),
        }
    }
}

/// The part of `v` a reference under `key` stands for; see the module
/// documentation. `want_array` keeps a list whole for an array parameter.
fn extract(v: Value, key: &str, want_array: bool) -> Value {
    match v {
        Value::Object(mut m) => {
            if let Some(x) = m.remove(key) {
                return x;
            }
            if m.len() == 1 {
                let only = m.into_iter().next().map_or(Value::Null, |(_, v)| v);
                return extract(only, key, want_array);
            }
            if let Some(x) = m.values().find_map(|x| find_key(x, key)) {
                return x.clone();
            }
            match kin_field(&m, key) {
                Some(k) => m.remove(&k).unwrap_or(Value::Null),
                None => Value::Object(m),
            }
        }
        Value::Array(a) if !want_array && !a.is_empty() => {
            extract(a.into_iter().next().unwrap_or(Value::Null), key, want_array)
        }
        v => v,
    }
}

/// The field whose name shares the most words with `key`: `to_currency`
/// takes a result's `currency_code`, as a person would read it. Words such
/// as "to" or "id" say nothing of what the value is.
fn kin_field(m: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    const EMPTY: &[&str] = &["to", "from", "of", "in", "the", "a", "id", "name", "value", "new", "old"];
    let words = |s: &str| -> Vec<String> {
        s.split(['_', '-', ' ']).map(str::to_ascii_lowercase).filter(|w| !EMPTY.contains(&w.as_str())).collect()
    };
    let wanted = words(key);
    m.keys()
        .map(|k| (words(k).iter().filter(|w| wanted.contains(w)).count(), k))
        .filter(|(n, _)| *n > 0)
        .max_by_key(|(n, _)| *n)
        .map(|(_, k)| k.clone())
}

/// The first value under `key` anywhere inside `v`, shallowest object first
/// along each path.
fn find_key<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    match v {
        Value::Object(m) => m.get(key).or_else(|| m.values().find_map(|x| find_key(x, key))),
        Value::Array(a) => a.iter().find_map(|x| find_key(x, key)),
        _ => None,
    }
}

/// Converts scalars where the schema's type asks for another; anything it
/// cannot convert is left for the executor's validation to report.
fn typed(v: Value, schema: &Value) -> Value {
    match (type_of(schema), v) {
        (Some("string"), v @ (Value::Number(_) | Value::Bool(_) | Value::Array(_) | Value::Object(_))) => {
            Value::String(text_of(&v))
        }
        (Some(t @ ("number" | "integer")), Value::String(s)) => {
            number(s.trim(), t == "integer").unwrap_or(Value::String(s))
        }
        (Some("integer"), Value::Number(n)) => number(&n.to_string(), true).unwrap_or(Value::Number(n)),
        (Some("boolean"), Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => Value::String(s),
        },
        (_, v) => v,
    }
}

fn number(s: &str, integer: bool) -> Option<Value> {
    let n: Number = s.parse().ok()?;
    if !integer || n.is_i64() || n.is_u64() {
        return Some(Value::Number(n));
    }
    // `42.0` is an integer; beyond 2^53 a float no longer says which one.
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() < 9.0e15).then(|| Value::from(f as i64))
}

/// How a value reads inside a longer string.
fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The N when `s` is exactly one reference (surrounding spaces allowed).
fn whole_ref(s: &str) -> Option<u32> {
    let t = s.trim();
    match references(t).next() {
        Some((0, end, n)) if end == t.len() => Some(n),
        _ => None,
    }
}

/// Parses JSON in which references may stand bare where a value goes
/// (`{"id": #E1}`); they are quoted first.
fn parse_json(text: &str) -> Result<Value, serde_json::Error> {
    let mut out = String::with_capacity(text.len() + 8);
    let (mut last, mut scanned) = (0, 0);
    let (mut in_str, mut escaped) = (false, false);
    for (start, end, _) in references(text) {
        // Scanning bytes is safe: `"` and `\` never occur inside a multi-byte
        // UTF-8 sequence, and a reference's own bytes change no state.
        for &b in &text.as_bytes()[scanned..start] {
            match b {
                _ if escaped => escaped = false,
                b'\\' if in_str => escaped = true,
                b'"' => in_str = !in_str,
                _ => {}
            }
        }
        scanned = end;
        if !in_str {
            out.push_str(&text[last..start]);
            out.push('"');
            out.push_str(&text[start..end]);
            out.push('"');
            last = end;
        }
    }
    out.push_str(&text[last..]);
    serde_json::from_str(&out)
}

/// Splits on commas outside quotes and brackets.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let (mut depth, mut in_str, mut start) = (0usize, false, 0);
    for (i, c) in text.char_indices() {
        match c {
            '"' => in_str = !in_str,
            '[' | '{' | '(' if !in_str => depth += 1,
            ']' | '}' | ')' if !in_str => depth = depth.saturating_sub(1),
            ',' if !in_str && depth == 0 => {
                pieces.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    pieces.push(&text[start..]);
    pieces
}

/// `"Japan"` (a JSON string, escapes decoded) or `'Japan'` → `Japan`.
fn unquote(t: &str) -> Cow<'_, str> {
    if t.starts_with('"')
        && let Ok(s) = serde_json::from_str::<String>(t)
    {
        return Cow::Owned(s);
    }
    for q in ['"', '\''] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            return Cow::Borrowed(&t[1..t.len() - 1]);
        }
    }
    Cow::Borrowed(t)
}

/// The schema's type; of a union like `["string", "null"]`, the first that is not null.
fn type_of(schema: &Value) -> Option<&str> {
    match schema.get("type")? {
        Value::String(s) => Some(s),
        Value::Array(a) => a.iter().filter_map(Value::as_str).find(|t| *t != "null"),
        _ => None,
    }
}

fn property<'a>(schema: &'a Value, name: &str) -> &'a Value {
    schema.get("properties").and_then(|p| p.get(name)).unwrap_or(&NULL)
}

fn required(parameters: &Value) -> Vec<&str> {
    parameters
        .get("required")
        .and_then(Value::as_array)
        .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect())
}

/// The parameter bare text stands for: the only required one, else the only one.
fn single_param(parameters: &Value) -> Option<&str> {
    match required(parameters)[..] {
        [only] => Some(only),
        _ => match parameters.get("properties")?.as_object()? {
            p if p.len() == 1 => p.keys().next().map(String::as_str),
            _ => None,
        },
    }
}

fn a(t: &str) -> String {
    if t.starts_with(['a', 'e', 'i', 'o', 'u']) { format!("an {t}") } else { format!("a {t}") }
}

fn shorten(s: &str) -> String {
    const MAX: usize = 80;
    match s.char_indices().nth(MAX) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn city_stats() -> Value {
        json!({"type": "object", "properties": {"city_id": {"type": "string"}}, "required": ["city_id"]})
    }

    fn ev(entries: &[(u32, Value)]) -> Evidence {
        entries.iter().map(|(n, v)| (*n, vec![Some(v.clone())])).collect()
    }

    fn ok(input: &str, params: &Value, evidence: &Evidence) -> Value {
        resolve(input, params, evidence).unwrap_or_else(|e| panic!("{input}: {e}"))
    }

    #[test]
    fn json_object_is_the_arguments() {
        assert_eq!(ok(r##"{"city_id": "C1"}"##, &city_stats(), &Evidence::new()), json!({"city_id": "C1"}));
    }

    #[test]
    fn quoted_and_bare_references_take_the_field_under_their_key() {
        let e = ev(&[(1, json!({"city_id": "C7", "name": "Kyoto"}))]);
        assert_eq!(ok(r##"{"city_id": "#E1"}"##, &city_stats(), &e), json!({"city_id": "C7"}));
        assert_eq!(ok(r##"{"city_id": #e1}"##, &city_stats(), &e), json!({"city_id": "C7"}));
    }

    #[test]
    fn bare_keys_in_braces_read_as_pairs() {
        let e = ev(&[(1, json!({"city_id": "C7"}))]);
        assert_eq!(ok("{city_id: #E1}", &city_stats(), &e), json!({"city_id": "C7"}));
    }

    #[test]
    fn plain_text_goes_to_the_single_parameter() {
        let e = Evidence::new();
        assert_eq!(ok("Japan", &city_stats(), &e), json!({"city_id": "Japan"}));
        assert_eq!(ok("\"Japan\"", &city_stats(), &e), json!({"city_id": "Japan"}));
        assert_eq!(ok("'Japan'", &city_stats(), &e), json!({"city_id": "Japan"}));
        let calc = json!({"properties": {"expression": {"type": "string"}}});
        assert_eq!(ok("2+3*4", &calc, &e), json!({"expression": "2+3*4"}));
    }

    #[test]
    fn plain_text_is_typed_by_the_schema() {
        let p = json!({"properties": {"n": {"type": "integer"}, "verbose": {"type": "boolean"}}, "required": ["n"]});
        assert_eq!(ok(" 42 ", &p, &Evidence::new()), json!({"n": 42}));
        let err = resolve("forty", &p, &Evidence::new()).unwrap_err();
        assert!(
            err.contains("`forty` is not an integer for `n`") && err.contains("n: integer, verbose?: boolean"),
            "{err}"
        );
    }

    #[test]
    fn whole_text_reference_is_extracted_under_the_parameter_name() {
        let e = ev(&[(1, json!({"results": [{"city_id": "C1", "name": "Tokyo"}], "count": 1}))]);
        assert_eq!(ok("#E1", &city_stats(), &e), json!({"city_id": "C1"}));
    }

    #[test]
    fn pairs_with_equals_or_colon() {
        let p = json!({"properties": {"amount": {"type": "number"}, "to": {"type": "string"}}});
        let e = ev(&[(1, json!("JPY"))]);
        assert_eq!(ok("amount=100, to=#E1", &p, &e), json!({"amount": 100, "to": "JPY"}));
        assert_eq!(ok("Amount: 2.5, to: 'EUR'", &p, &e), json!({"amount": 2.5, "to": "EUR"}));
    }

    #[test]
    fn a_piece_without_a_key_continues_the_previous_value() {
        let p = json!({"properties": {"query": {"type": "string"}, "limit": {"type": "integer"}}});
        assert_eq!(
            ok("query=Tokyo, Japan, limit=3", &p, &Evidence::new()),
            json!({"query": "Tokyo, Japan", "limit": 3})
        );
    }

    #[test]
    fn empty_input() {
        let none = json!({"properties": {"verbose": {"type": "boolean"}}});
        assert_eq!(ok("  ", &none, &Evidence::new()), json!({}));
        assert_eq!(ok("", &json!({}), &Evidence::new()), json!({}));
        let err = resolve("", &city_stats(), &Evidence::new()).unwrap_err();
        assert!(err.contains("needs city_id"), "{err}");
    }

    #[test]
    fn e1_never_matches_inside_e10() {
        let e = ev(&[(1, json!("one")), (10, json!("ten"))]);
        assert_eq!(ok(r##"{"city_id": "#E10 and #E1"}"##, &city_stats(), &e), json!({"city_id": "ten and one"}));
        assert_eq!(ok("#E10", &city_stats(), &e), json!({"city_id": "ten"}));
    }

    #[test]
    fn field_from_an_array_of_objects() {
        let e = ev(&[(1, json!([{"city_id": "C1"}, {"city_id": "C2"}]))]);
        assert_eq!(ok(r##"{"city_id": "#E1"}"##, &city_stats(), &e), json!({"city_id": "C1"}));
    }

    #[test]
    fn field_from_nested_results() {
        let e = ev(&[(1, json!({"query": "k", "results": [{"name": "Kyoto", "city_id": "C3"}]}))]);
        assert_eq!(ok(r##"{"city_id": "#E1"}"##, &city_stats(), &e), json!({"city_id": "C3"}));
    }

    #[test]
    fn an_object_with_one_field_gives_that_field() {
        let p = json!({"properties": {"x": {"type": "number"}}});
        let e = ev(&[(1, json!({"result": 14}))]);
        assert_eq!(ok(r##"{"x": "#E1"}"##, &p, &e), json!({"x": 14}));
    }

    #[test]
    fn without_the_field_the_whole_evidence_is_used() {
        let p = json!({"properties": {"data": {}}});
        let whole = json!({"a": 1, "b": 2});
        assert_eq!(ok(r##"{"data": "#E1"}"##, &p, &ev(&[(1, whole.clone())])), json!({"data": whole}));
        assert_eq!(ok(r##"{"data": "#E1"}"##, &p, &ev(&[(1, json!(3.5))])), json!({"data": 3.5}));
    }

    #[test]
    fn a_field_sharing_a_word_with_the_key_is_taken() {
        let p = json!({"properties": {"to_currency": {"type": "string"}, "amount": {"type": "number"}}});
        let e = ev(&[(1, json!({"name": "Japan", "capital": "Tokyo", "currency_code": "JPY"}))]);
        assert_eq!(ok(r##"{"to_currency": "#E1", "amount": 5}"##, &p, &e), json!({"to_currency": "JPY", "amount": 5}));
    }

    #[test]
    fn an_array_parameter_keeps_the_list_whole() {
        let p = json!({"properties": {"ids": {"type": "array", "items": {"type": "string"}}}});
        let e = ev(&[(1, json!({"ids": ["a", "b"]})), (2, json!(["c", "d"]))]);
        assert_eq!(ok(r##"{"ids": "#E1"}"##, &p, &e), json!({"ids": ["a", "b"]}));
        assert_eq!(ok("#E2", &p, &e), json!({"ids": ["c", "d"]}));
        assert_eq!(ok("[#E2, \"x\"]", &p, &e), json!({"ids": ["c", "x"]}));
    }

    #[test]
    fn null_lanes_give_way_to_the_first_non_null() {
        let e: Evidence = [(1, vec![None, Some(json!("C9")), Some(json!("C8"))])].into();
        assert_eq!(ok("#E1", &city_stats(), &e), json!({"city_id": "C9"}));
    }

    #[test]
    fn all_null_or_unknown_evidence_is_null() {
        let e: Evidence = [(1, vec![None, None])].into();
        assert_eq!(ok(r##"{"city_id": "#E1"}"##, &city_stats(), &e), json!({"city_id": null}));
        assert_eq!(ok(r##"{"city_id": #E4}"##, &city_stats(), &e), json!({"city_id": null}));
        assert_eq!(ok(r##"{"city_id": "near #E1"}"##, &city_stats(), &e), json!({"city_id": "near null"}));
    }

    #[test]
    fn numbers_and_strings_follow_the_schema_type() {
        let e = ev(&[(1, json!({"city_id": 42, "population": "1400"}))]);
        assert_eq!(ok(r##"{"city_id": "#E1"}"##, &city_stats(), &e), json!({"city_id": "42"}));
        let p = json!({"properties": {"population": {"type": "integer"}, "other": {}}});
        assert_eq!(ok(r##"{"population": "#E1", "other": 1}"##, &p, &e), json!({"population": 1400, "other": 1}));
        let p = json!({"properties": {"city_id": {"type": ["number", "null"]}}});
        assert_eq!(ok("#E1", &p, &e), json!({"city_id": 42}));
    }

    #[test]
    fn a_reference_inside_a_longer_string_becomes_text() {
        let p = json!({"properties": {"question": {"type": "string"}}});
        let e = ev(&[(1, json!("Tokyo")), (2, json!({"n": 7, "m": [1]}))]);
        assert_eq!(ok("population of #E1", &p, &e), json!({"question": "population of Tokyo"}));
        assert_eq!(ok(r##"{"question": "#E1 has #E2"}"##, &p, &e), json!({"question": r#"Tokyo has {"n":7,"m":[1]}"#}));
    }

    #[test]
    fn garbage_is_an_error_naming_the_parameters() {
        let p = json!({"properties": {"city_id": {"type": "string"}, "year": {"type": "integer"}}, "required": ["city_id", "year"]});
        let err = resolve("Tokyo please", &p, &Evidence::new()).unwrap_err();
        assert_eq!(
            err,
            "input `Tokyo please` is not a JSON object of arguments; the tool takes {city_id: string, year: integer}"
        );
        let err = resolve("{\"city_id\": ", &p, &Evidence::new()).unwrap_err();
        assert!(err.contains("not a valid JSON object") && err.contains("city_id: string"), "{err}");
        let err = resolve("x", &json!({}), &Evidence::new()).unwrap_err();
        assert!(err.ends_with("the tool takes no arguments"), "{err}");
    }

    proptest! {
        #[test]
        fn resolve_never_panics(
            input in prop_oneof![any::<String>(), "[#Ee0-9{}\\[\\]\"':,= a-z\\\\]{0,40}"],
            which in 0usize..4,
        ) {
            let params = [
                city_stats(),
                json!({"properties": {"n": {"type": "integer"}, "xs": {"type": "array"}, "o": {"type": "object"}}}),
                json!({"properties": {"b": {"type": "boolean"}, "q": {"type": ["string", "null"]}}, "required": ["b"]}),
                json!("not a schema"),
            ];
            let e: Evidence = [
                (1, vec![None, Some(json!([{"city_id": 1}]))]),
                (2, vec![Some(json!({"a": {"b": [null]}}))]),
                (3, vec![None]),
            ]
            .into();
            let _ = resolve(&input, &params[which], &e);
        }
    }
}
