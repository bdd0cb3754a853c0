//! placeholder until the schema module lands (replaced wholesale)
use std::collections::BTreeMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shape { Null, Bool, Int, Float, Str, List(Box<Shape>), Object(BTreeMap<String, Shape>), Any }
impl Shape {
    pub fn render(&self) -> String { self.to_value().to_string() }
    pub fn to_value(&self) -> Value {
        match self {
            Shape::Null => "null".into(), Shape::Bool => "bool".into(), Shape::Int => "int".into(), Shape::Float => "float".into(), Shape::Str => "str".into(), Shape::Any => "any".into(),
            Shape::List(i) => Value::Array(vec![i.to_value()]),
            Shape::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_value())).collect()),
        }
    }
    pub fn from_json_schema(s: &Value) -> Shape {
        match s.get("type").and_then(Value::as_str) {
            Some("object") => Shape::Object(s.get("properties").and_then(Value::as_object).map(|p| p.iter().map(|(k, v)| (k.clone(), Shape::from_json_schema(v))).collect()).unwrap_or_default()),
            Some("array") => Shape::List(Box::new(s.get("items").map(Shape::from_json_schema).unwrap_or(Shape::Any))),
            Some("integer") => Shape::Int, Some("number") => Shape::Float, Some("string") => Shape::Str, Some("boolean") => Shape::Bool,
            _ => Shape::Any,
        }
    }
}
pub fn infer(v: &Value) -> Shape {
    match v { Value::Null => Shape::Null, Value::Bool(_) => Shape::Bool, Value::Number(n) => if n.is_f64() { Shape::Float } else { Shape::Int }, Value::String(_) => Shape::Str,
        Value::Array(a) => Shape::List(Box::new(a.first().map(infer).unwrap_or(Shape::Any))), Value::Object(m) => Shape::Object(m.iter().map(|(k, v)| (k.clone(), infer(v))).collect()) }
}
pub fn merge(a: &Shape, _b: &Shape) -> Shape { a.clone() }
pub fn infer_all<'a>(values: impl IntoIterator<Item = &'a Value>) -> Option<Shape> { values.into_iter().map(infer).reduce(|a, b| merge(&a, &b)) }
