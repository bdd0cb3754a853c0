//! Response schemas for ATC's black-box probing ("Chain of Tools" §4.1): a
//! tool's JSON response becomes a general shape by recording each field's
//! type, and shapes from several samples merge into one.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A general schema of a JSON value, as ATC documents a tool's response.
///
/// Nullability is not tracked: a null sample only proves the field exists, so
/// `Null` merged with any shape gives that shape, and `Null` survives only
/// where every sample was null (ATC's "NoneType").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape {
    Null,
    Bool,
    Int,
    Float,
    Str,
    /// The shape every item fits; `List(Any)` for a list only ever seen empty.
    List(Box<Shape>),
    /// Fields in first-seen order, names unique.
    Object(Vec<(String, Shape)>),
    /// Nothing known yet (an empty list's items, an unreadable schema): merged
    /// with another shape it gives that shape.
    Any,
    /// Samples disagreed: one alternative per kind (bool, number, str, list,
    /// object) in that order, so no field seen under any of them is lost.
    OneOf(Vec<Shape>),
}

/// Walks a JSON value into its shape.
pub fn infer(value: &Value) -> Shape {
    match value {
        Value::Null => Shape::Null,
        Value::Bool(_) => Shape::Bool,
        Value::Number(n) if n.is_f64() => Shape::Float,
        Value::Number(_) => Shape::Int,
        Value::String(_) => Shape::Str,
        Value::Array(items) => Shape::List(Box::new(items.iter().fold(Shape::Any, |acc, v| merge(&acc, &infer(v))))),
        Value::Object(fields) => Shape::Object(fields.iter().map(|(k, v)| (k.clone(), infer(v))).collect()),
    }
}

/// The union of two samples' shapes: objects merge field by field (a field in
/// only one sample is kept), lists merge their item shapes, `Null` and `Any`
/// give way to the other side, Int with Float gives Float, and other kinds
/// that disagree become a [`Shape::OneOf`].
pub fn merge(a: &Shape, b: &Shape) -> Shape {
    match (a, b) {
        (Shape::Any, x) | (x, Shape::Any) | (Shape::Null, x) | (x, Shape::Null) => x.clone(),
        (Shape::Int, Shape::Float) | (Shape::Float, Shape::Int) => Shape::Float,
        (Shape::List(x), Shape::List(y)) => Shape::List(Box::new(merge(x, y))),
        (Shape::Object(x), Shape::Object(y)) => Shape::Object(merge_fields(x, y)),
        _ if a.kind() == b.kind() && a.kind() < Kind::List => a.clone(),
        _ => union(a, b),
    }
}

/// The merge of several samples; None when there are none.
pub fn infer_all<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<Shape> {
    values.into_iter().map(infer).reduce(|acc, s| merge(&acc, &s))
}

/// Field recall of `probed` against `reference`: how many of the reference's
/// field paths `probed` also has, and how many the reference has.
pub fn field_recall(probed: &Shape, reference: &Shape) -> (usize, usize) {
    let have = probed.field_paths();
    let want = reference.field_paths();
    (want.iter().filter(|p| have.contains(*p)).count(), want.len())
}

/// What must agree for two shapes to merge without a union; the order is the
/// order of a union's alternatives.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Null,
    Bool,
    Number,
    Str,
    List,
    Object,
    Any,
    OneOf,
}

impl Shape {
    fn kind(&self) -> Kind {
        match self {
            Shape::Null => Kind::Null,
            Shape::Bool => Kind::Bool,
            Shape::Int | Shape::Float => Kind::Number,
            Shape::Str => Kind::Str,
            Shape::List(_) => Kind::List,
            Shape::Object(_) => Kind::Object,
            Shape::Any => Kind::Any,
            Shape::OneOf(_) => Kind::OneOf,
        }
    }

    /// Compact one-line rendering for a prompt, in ATC's style, e.g.
    /// `{"id": "int", "keywords": [{"id": "int", "name": "str"}]}`.
    pub fn render(&self) -> String {
        let mut out = String::new();
        write_value(&self.to_value(), &mut out);
        out
    }

    /// The rendering as a JSON value: leaves are the type names int, float,
    /// str, bool, null and any; a list holds its item shape (`[]` when only
    /// ever seen empty); scalar unions read "int|str", others `{"anyOf": [..]}`.
    pub fn to_value(&self) -> Value {
        match self {
            Shape::Null => "null".into(),
            Shape::Bool => "bool".into(),
            Shape::Int => "int".into(),
            Shape::Float => "float".into(),
            Shape::Str => "str".into(),
            Shape::Any => "any".into(),
            Shape::List(item) if **item == Shape::Any => Value::Array(Vec::new()),
            Shape::List(item) => Value::Array(vec![item.to_value()]),
            Shape::Object(fields) => Value::Object(fields.iter().map(|(k, s)| (k.clone(), s.to_value())).collect()),
            Shape::OneOf(alts) => {
                let values: Vec<Value> = alts.iter().map(Shape::to_value).collect();
                let names: Option<Vec<&str>> = values.iter().map(Value::as_str).collect();
                match names {
                    Some(names) => names.join("|").into(),
                    None => Value::Object(Map::from_iter([("anyOf".to_string(), Value::Array(values))])),
                }
            }
        }
    }

    /// Every field path the schema holds: `"id"`, `"keywords"`,
    /// `"keywords[].id"`; `[]` marks a list level, so a top-level list of
    /// objects gives `"[].x"`. Object fields are listed as well as leaves.
    pub fn field_paths(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        self.collect_paths("", &mut out);
        out
    }

    fn collect_paths(&self, prefix: &str, out: &mut BTreeSet<String>) {
        match self {
            Shape::List(item) => item.collect_paths(&format!("{prefix}[]"), out),
            Shape::Object(fields) => {
                for (name, shape) in fields {
                    let path = if prefix.is_empty() { name.clone() } else { format!("{prefix}.{name}") };
                    shape.collect_paths(&path, out);
                    out.insert(path);
                }
            }
            Shape::OneOf(alts) => alts.iter().for_each(|s| s.collect_paths(prefix, out)),
            _ => {}
        }
    }

    /// A JSON Schema (draft 2020-12 subset: type, properties, items, anyOf)
    /// of the shape, so a probed shape can stand in a tool's `response` field.
    pub fn to_json_schema(&self) -> Value {
        let typed = |name: &str| Value::Object(Map::from_iter([("type".to_string(), Value::from(name))]));
        match self {
            Shape::Null => typed("null"),
            Shape::Bool => typed("boolean"),
            Shape::Int => typed("integer"),
            Shape::Float => typed("number"),
            Shape::Str => typed("string"),
            Shape::Any => Value::Object(Map::new()),
            Shape::List(item) => {
                let mut schema = Map::from_iter([("type".to_string(), Value::from("array"))]);
                schema.insert("items".into(), item.to_json_schema());
                Value::Object(schema)
            }
            Shape::Object(fields) => {
                let props = fields.iter().map(|(k, s)| (k.clone(), s.to_json_schema())).collect();
                let mut schema = Map::from_iter([("type".to_string(), Value::from("object"))]);
                schema.insert("properties".into(), Value::Object(props));
                Value::Object(schema)
            }
            Shape::OneOf(alts) => Value::Object(Map::from_iter([(
                "anyOf".to_string(),
                Value::Array(alts.iter().map(Shape::to_json_schema).collect()),
            )])),
        }
    }

    /// Reads a documented response schema (JSON Schema or OpenAPI's dialect):
    /// `type` (a name or a list of names), `properties`, `items`,
    /// `anyOf`/`oneOf`/`allOf` (alternatives merged, so a null branch gives
    /// way to the other), `nullable`; anything else is `Any`.
    pub fn from_json_schema(schema: &Value) -> Shape {
        let Some(obj) = schema.as_object() else { return Shape::Any };
        let by_name = |name: &str| match name {
            "null" => Shape::Null,
            "boolean" => Shape::Bool,
            "integer" => Shape::Int,
            "number" => Shape::Float,
            "string" => Shape::Str,
            "array" => Shape::List(Box::new(obj.get("items").map_or(Shape::Any, Shape::from_json_schema))),
            "object" => Shape::Object(match obj.get("properties") {
                Some(Value::Object(props)) => {
                    props.iter().map(|(k, v)| (k.clone(), Shape::from_json_schema(v))).collect()
                }
                _ => Vec::new(),
            }),
            _ => Shape::Any,
        };
        match obj.get("type") {
            Some(Value::String(name)) => return by_name(name),
            Some(Value::Array(names)) => {
                return names.iter().filter_map(Value::as_str).map(by_name).fold(Shape::Any, |acc, s| merge(&acc, &s));
            }
            _ => {}
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(alts)) = obj.get(key) {
                return alts.iter().map(Shape::from_json_schema).fold(Shape::Any, |acc, s| merge(&acc, &s));
            }
        }
        if obj.contains_key("properties") {
            by_name("object")
        } else if obj.contains_key("items") {
            by_name("array")
        } else if obj.get("nullable") == Some(&Value::Bool(true)) {
            Shape::Null
        } else {
            Shape::Any
        }
    }

    /// Reads ATC's own rendering (the `_responses_json` strings of its probed
    /// TMDB spec): JSON whose leaves are Python type names ("int", "str",
    /// "float", "bool", "NoneType", "list", "dict") and whose lists hold one
    /// item shape or none. This module's own names ("null", "any", "int|str")
    /// are read too. The error names the path that could not be read.
    pub fn parse_atc(text: &str) -> Result<Shape, String> {
        let value: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        atc_shape(&value, "")
    }
}

fn atc_shape(value: &Value, path: &str) -> Result<Shape, String> {
    let at = if path.is_empty() { "the top" } else { path };
    match value {
        Value::Null => Ok(Shape::Null),
        Value::String(names) => names.split('|').try_fold(Shape::Any, |acc, name| {
            let shape = match name.trim() {
                "int" | "integer" => Shape::Int,
                "float" | "number" => Shape::Float,
                "str" | "string" => Shape::Str,
                "bool" | "boolean" => Shape::Bool,
                "NoneType" | "None" | "null" => Shape::Null,
                "list" | "tuple" | "array" => Shape::List(Box::new(Shape::Any)),
                "dict" | "object" => Shape::Object(Vec::new()),
                "any" | "Any" => Shape::Any,
                other => return Err(format!("at {at}: unknown type name {other:?}")),
            };
            Ok(merge(&acc, &shape))
        }),
        Value::Array(items) => {
            let item_path = format!("{path}[]");
            let item =
                items.iter().try_fold(Shape::Any, |acc, v| Ok::<_, String>(merge(&acc, &atc_shape(v, &item_path)?)))?;
            Ok(Shape::List(Box::new(item)))
        }
        Value::Object(fields) => fields
            .iter()
            .map(|(k, v)| {
                let field_path = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
                Ok((k.clone(), atc_shape(v, &field_path)?))
            })
            .collect::<Result<Vec<_>, String>>()
            .map(Shape::Object),
        other => Err(format!("at {at}: expected a type name, found {other}")),
    }
}

fn merge_fields(a: &[(String, Shape)], b: &[(String, Shape)]) -> Vec<(String, Shape)> {
    let mut out: Vec<(String, Shape)> = a.to_vec();
    for (name, shape) in b {
        match out.iter_mut().find(|(n, _)| n == name) {
            Some((_, have)) => *have = merge(have, shape),
            None => out.push((name.clone(), shape.clone())),
        }
    }
    out
}

/// Pools the alternatives of two shapes of different kinds, one per kind.
fn union(a: &Shape, b: &Shape) -> Shape {
    let mut alts: Vec<Shape> = Vec::new();
    add_alternative(&mut alts, a);
    add_alternative(&mut alts, b);
    alts.sort_by_key(Shape::kind);
    match alts.len() {
        0 => Shape::Any,
        1 => alts.pop().unwrap_or(Shape::Any),
        _ => Shape::OneOf(alts),
    }
}

fn add_alternative(alts: &mut Vec<Shape>, shape: &Shape) {
    match shape {
        // A nested union only comes from a hand-written file; Null and Any add
        // nothing to a union.
        Shape::OneOf(inner) => inner.iter().for_each(|s| add_alternative(alts, s)),
        Shape::Null | Shape::Any => {}
        _ => match alts.iter_mut().find(|alt| alt.kind() == shape.kind()) {
            Some(alt) => *alt = merge(alt, shape),
            None => alts.push(shape.clone()),
        },
    }
}

/// Python's `json.dumps` layout on one line (", " and ": "), as ATC's prompts
/// show schemas.
fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(fields) => {
            out.push('{');
            for (i, (k, v)) in fields.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push_str(": ");
                write_value(v, out);
            }
            out.push('}');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn obj(fields: &[(&str, Shape)]) -> Shape {
        Shape::Object(fields.iter().map(|(k, s)| (k.to_string(), s.clone())).collect())
    }

    fn list(item: Shape) -> Shape {
        Shape::List(Box::new(item))
    }

    fn paths(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|p| p.to_string()).collect()
    }

    #[test]
    fn infer_walks_nested_objects_and_lists() {
        let v = json!({"id": 550, "score": 7.5, "tags": ["a"], "who": {"name": "x", "alive": true, "died": null}});
        let want = obj(&[
            ("id", Shape::Int),
            ("score", Shape::Float),
            ("tags", list(Shape::Str)),
            ("who", obj(&[("name", Shape::Str), ("alive", Shape::Bool), ("died", Shape::Null)])),
        ]);
        assert_eq!(infer(&v), want);
        assert_eq!(infer(&json!([])), list(Shape::Any));
    }

    #[test]
    fn merge_keeps_fields_of_either_sample() {
        let a = infer(&json!({"id": 1, "name": "x"}));
        let b = infer(&json!({"id": 2, "homepage": "y"}));
        assert_eq!(merge(&a, &b), obj(&[("id", Shape::Int), ("name", Shape::Str), ("homepage", Shape::Str)]));
    }

    #[test]
    fn lists_of_objects_merge_field_by_field() {
        let v = json!({"results": [{"id": 1, "title": "a"}, {"id": 2, "name": "b", "rating": 3}, {"rating": 4.5}]});
        let item = obj(&[("id", Shape::Int), ("title", Shape::Str), ("name", Shape::Str), ("rating", Shape::Float)]);
        assert_eq!(infer(&v), obj(&[("results", list(item))]));
    }

    #[test]
    fn null_int_and_float_merge() {
        assert_eq!(merge(&Shape::Null, &Shape::Int), Shape::Int);
        assert_eq!(merge(&Shape::Int, &Shape::Null), Shape::Int);
        assert_eq!(merge(&Shape::Int, &Shape::Float), Shape::Float);
        assert_eq!(merge(&Shape::Float, &Shape::Int), Shape::Float);
        assert_eq!(merge(&Shape::Null, &Shape::Null), Shape::Null);
    }

    #[test]
    fn empty_list_gives_way_to_a_list_of_objects() {
        let full = infer(&json!({"cast": [{"id": 1}]}));
        let empty = infer(&json!({"cast": []}));
        assert_eq!(merge(&empty, &full), full);
        assert_eq!(merge(&full, &empty), full);
    }

    #[test]
    fn disagreeing_kinds_become_a_union_that_keeps_fields() {
        let s = infer_all(&[json!({"a": "x"}), json!({"a": 1}), json!({"a": {"b": true}}), json!({"a": 2.5})]);
        let want = obj(&[("a", Shape::OneOf(vec![Shape::Float, Shape::Str, obj(&[("b", Shape::Bool)])]))]);
        assert_eq!(s, Some(want.clone()));
        assert_eq!(want.field_paths(), paths(&["a", "a.b"]));
        assert_eq!(merge(&Shape::Int, &Shape::Str).render(), r#""int|str""#);
        assert_eq!(infer_all(std::iter::empty()), None);
    }

    #[test]
    fn render_is_atc_style() {
        let s = infer(&json!({"id": 550, "keywords": [{"id": 825, "name": "support group"}], "x": [], "d": null}));
        assert_eq!(s.render(), r#"{"id": "int", "keywords": [{"id": "int", "name": "str"}], "x": [], "d": "null"}"#);
        assert_eq!(serde_json::from_str::<Value>(&s.render()).ok(), Some(s.to_value()));
    }

    #[test]
    fn field_paths_name_every_level() {
        let s = infer(&json!({"id": 1, "keywords": [{"id": 2, "name": "n"}], "who": {"name": "x"}, "m": [[{"z": 1}]]}));
        let want = paths(&["id", "keywords", "keywords[].id", "keywords[].name", "who", "who.name", "m", "m[][].z"]);
        assert_eq!(s.field_paths(), want);
        assert_eq!(infer(&json!([{"x": 1}])).field_paths(), paths(&["[].x"]));
    }

    #[test]
    fn json_schema_round_trips() {
        let s = infer(&json!({"id": 1, "r": [{"a": 1.5, "b": [true]}], "e": [], "n": null}));
        let schema = s.to_json_schema();
        assert_eq!(schema["properties"]["r"]["items"]["properties"]["a"], json!({"type": "number"}));
        assert_eq!(Shape::from_json_schema(&schema), s);
    }

    #[test]
    fn from_json_schema_reads_documented_dialects() {
        let schema = json!({"type": "object", "properties": {
            "a": {"type": "string", "nullable": true},
            "b": {"anyOf": [{"type": "null"}, {"type": "integer"}]},
            "c": {"type": ["number", "null"]},
            "d": {"$ref": "#/x"},
            "e": {"items": {"type": "boolean"}},
            "f": {"nullable": true}
        }});
        let want = obj(&[
            ("a", Shape::Str),
            ("b", Shape::Int),
            ("c", Shape::Float),
            ("d", Shape::Any),
            ("e", list(Shape::Bool)),
            ("f", Shape::Null),
        ]);
        assert_eq!(Shape::from_json_schema(&schema), want);
        assert_eq!(Shape::from_json_schema(&json!(true)), Shape::Any);
    }

    #[test]
    fn parse_atc_reads_python_type_names() {
        let text = r#"{"id": "int", "keywords": [{"id": "int", "name": "str"}], "d": "NoneType", "e": [], "l": "list", "m": "dict"}"#;
        let want = obj(&[
            ("id", Shape::Int),
            ("keywords", list(obj(&[("id", Shape::Int), ("name", Shape::Str)]))),
            ("d", Shape::Null),
            ("e", list(Shape::Any)),
            ("l", list(Shape::Any)),
            ("m", obj(&[])),
        ]);
        assert_eq!(Shape::parse_atc(text), Ok(want));
        let err = Shape::parse_atc(r#"{"a": [{"b": "complex"}]}"#).unwrap_err();
        assert!(err.contains("a[].b") && err.contains("complex"), "{err}");
        assert!(Shape::parse_atc(r#"{"a": 3}"#).is_err());
        assert!(Shape::parse_atc("{").is_err());
    }

    #[test]
    fn field_recall_counts_reference_paths() {
        let reference = infer(&json!({"id": 1, "results": [{"id": 1, "title": "t", "genre_ids": [1]}]}));
        let probed = infer(&json!({"id": 1, "results": [{"id": 1, "name": "n"}], "page": 1}));
        assert_eq!(field_recall(&probed, &reference), (3, 5));
        assert_eq!(field_recall(&reference, &reference), (5, 5));
        assert_eq!(field_recall(&probed, &Shape::Int), (0, 0));
    }

    /// Reads every probed response schema of ATC's TMDB spec and compares it
    /// with the documented one of the raw spec.
    #[test]
    fn parse_atc_reads_the_tmdb_spec() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data/atc-tmdb");
        let read =
            |name: &str| -> Option<Value> { serde_json::from_str(&std::fs::read_to_string(dir.join(name)).ok()?).ok() };
        let (Some(probed), Some(raw)) = (read("tmdb.spec.probed.v2.json"), read("tmdb.spec.raw.v2.json")) else {
            eprintln!("skipped: {} absent", dir.display());
            return;
        };
        let endpoints = probed["endpoints"].as_array().cloned().unwrap_or_default();
        assert_eq!(endpoints.len(), 54);
        let (mut hits, mut total) = (0, 0);
        for (e, r) in endpoints.iter().zip(raw["endpoints"].as_array().into_iter().flatten()) {
            let name = e["name"].as_str().unwrap_or("?");
            let text = e["_responses_json"].as_str().unwrap_or_default();
            let shape = Shape::parse_atc(text).unwrap_or_else(|err| panic!("{name}: {err}"));
            assert!(matches!(shape, Shape::Object(_)), "{name}");
            assert_eq!(r["name"], e["name"]);
            let documented = Shape::from_json_schema(&r["responses"]["content"]["application/json"]["schema"]);
            let (h, t) = field_recall(&shape, &documented);
            (hits, total) = (hits + h, total + t);
        }
        eprintln!("tmdb: 54 probed schemas read; they hold {hits} of {total} documented field paths");
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            (-1e6..1e6f64).prop_map(Value::from),
            "[a-z]{0,3}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::vec(("[a-c]", inner), 0..4).prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn merge_loses_no_field_and_commutes(v in json_value(), w in json_value()) {
            let (a, b) = (infer(&v), infer(&w));
            let ab = merge(&a, &b);
            prop_assert_eq!(ab.field_paths(), merge(&b, &a).field_paths());
            prop_assert!(a.field_paths().is_subset(&ab.field_paths()));
            prop_assert!(b.field_paths().is_subset(&ab.field_paths()));
            prop_assert_eq!(Shape::from_json_schema(&ab.to_json_schema()), ab.clone());
            let saved = serde_json::to_string(&ab).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(serde_json::from_str::<Shape>(&saved).ok(), Some(ab));
        }
    }
}
