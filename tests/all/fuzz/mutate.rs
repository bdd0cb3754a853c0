//! Inputs for the parsers' fuzz tests: arbitrary bytes and text, and valid
//! seeds mutated byte by byte, line by line, or by their structure (JSON,
//! JSON Lines, TOML). Every mutation is data proptest generates, so a
//! failing input shrinks to the fewest and smallest edits of a seed.

use std::fmt;

use proptest::prelude::*;
use serde_json::{Map, Value};

/// An input, shown as text (with escapes) when a case fails.
#[derive(Clone)]
pub struct Input(pub Vec<u8>);

impl Input {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

impl fmt::Debug for Input {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match std::str::from_utf8(&self.0) {
            Ok(s) => write!(f, "{s:?}"),
            Err(_) => write!(f, "bytes {:?}", self.0),
        }
    }
}

/// How a seed may be mutated beyond bytes and lines.
#[derive(Clone, Copy, Debug)]
pub enum Format {
    Text,
    Json,
    Jsonl,
    Toml,
}

/// Text that has broken parsers before: quotes and brackets, escapes,
/// numbers no type holds, NaN-like words, nesting, control and odd
/// unicode characters, and the markers of the model-reply formats.
pub fn nasty(i: usize) -> String {
    const FIXED: &[&str] = &[
        "\"",
        "{",
        "}",
        "[",
        "]",
        "\n",
        "\r\n",
        "\0",
        "\\",
        "\\u0000",
        "\\ud800",
        "\\uDFFF",
        "1e999999",
        "-1e999999",
        "18446744073709551616",
        "-9223372036854775809",
        "NaN",
        "inf",
        "-inf",
        "Infinity",
        "-0",
        "0x10",
        "1_000",
        "null",
        "true",
        "é",
        "🦀",
        "\u{202e}",
        "\u{feff}",
        "İ",
        "ﬃ",
        "ß",
        "\u{0301}",
        "#E",
        "#E0",
        "#E1",
        "#E4294967296",
        "#E99999999999",
        "Plan:",
        "Action:",
        "Action Input:",
        "Final Answer:",
        "```",
        "```json\n",
        "=",
        "[[tool]]",
        "[tool.executor]",
        "[[task]]",
        "$ref",
        "#/components/schemas/",
        "~1",
        "~",
        "Answer:",
        "answer",
        "{{",
        "}}",
        ":",
        ",",
        "'''",
        "\"\"\"",
        "\t",
        "\u{7f}",
        "\u{85}",
        "\u{2028}",
        "%",
        "%00",
        "; ",
        "throw",
        "loop {}",
        "while true {}",
        "fn f() { f() }",
        "let x = ",
        "\"v\":1",
        "\"v\":99",
    ];
    match i % (FIXED.len() + 6) {
        n if n < FIXED.len() => FIXED[n].to_string(),
        n => match n - FIXED.len() {
            0 => format!("{}{}", "[".repeat(300), "]".repeat(300)),
            1 => format!("{}1{}", "{\"a\":".repeat(200), "}".repeat(200)),
            2 => "x".repeat(5000),
            3 => "é🦀".repeat(700),
            4 => "9".repeat(400),
            _ => "\n".repeat(200),
        },
    }
}

/// One edit of a seed's bytes. Positions are taken modulo the length.
#[derive(Clone, Debug)]
pub enum Edit {
    Flip {
        at: usize,
        bit: u8,
    },
    Truncate {
        at: usize,
    },
    Insert {
        at: usize,
        bytes: Vec<u8>,
    },
    Nasty {
        at: usize,
        which: usize,
    },
    Delete {
        at: usize,
        len: u8,
    },
    DupLine {
        line: usize,
    },
    DropLine {
        line: usize,
    },
    SwapLines {
        a: usize,
        b: usize,
    },
    /// The head of this input and the tail of another seed.
    Splice {
        other: usize,
        at: usize,
        from: usize,
    },
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Edit::Flip { at, bit }),
        any::<usize>().prop_map(|at| Edit::Truncate { at }),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..8)).prop_map(|(at, bytes)| Edit::Insert { at, bytes }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, which)| Edit::Nasty { at, which }),
        (any::<usize>(), any::<u8>()).prop_map(|(at, len)| Edit::Delete { at, len }),
        any::<usize>().prop_map(|line| Edit::DupLine { line }),
        any::<usize>().prop_map(|line| Edit::DropLine { line }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Edit::SwapLines { a, b }),
        (any::<usize>(), any::<usize>(), any::<usize>()).prop_map(|(other, at, from)| Edit::Splice { other, at, from }),
    ]
}

fn at(pos: usize, len: usize) -> usize {
    if len == 0 { 0 } else { pos % (len + 1) }
}

fn lines(b: &[u8]) -> Vec<Vec<u8>> {
    b.split_inclusive(|&c| c == b'\n').map(<[u8]>::to_vec).collect()
}

pub fn apply(mut b: Vec<u8>, e: &Edit, seeds: &[Vec<u8>]) -> Vec<u8> {
    match e {
        Edit::Flip { at: p, bit } => {
            if !b.is_empty() {
                let i = p % b.len();
                b[i] ^= 1 << bit;
            }
        }
        Edit::Truncate { at: p } => b.truncate(at(*p, b.len())),
        Edit::Insert { at: p, bytes } => {
            let i = at(*p, b.len());
            b.splice(i..i, bytes.iter().copied());
        }
        Edit::Nasty { at: p, which } => {
            let i = at(*p, b.len());
            b.splice(i..i, nasty(*which).into_bytes());
        }
        Edit::Delete { at: p, len } => {
            let i = at(*p, b.len());
            let end = (i + *len as usize + 1).min(b.len());
            b.drain(i..end);
        }
        Edit::DupLine { line } | Edit::DropLine { line } | Edit::SwapLines { a: line, .. } => {
            let mut ls = lines(&b);
            if ls.is_empty() {
                return b;
            }
            let i = line % ls.len();
            match e {
                Edit::DupLine { .. } => {
                    let l = ls[i].clone();
                    ls.insert(i, l);
                }
                Edit::DropLine { .. } => {
                    ls.remove(i);
                }
                Edit::SwapLines { b: other, .. } => {
                    let j = other % ls.len();
                    ls.swap(i, j);
                }
                _ => unreachable!(),
            }
            b = ls.concat();
        }
        Edit::Splice { other, at: p, from } => {
            let o = &seeds[other % seeds.len()];
            b.truncate(at(*p, b.len()));
            b.extend_from_slice(&o[at(*from, o.len())..]);
        }
    }
    b
}

/// One structural edit of a JSON value: the node is the n-th in preorder.
#[derive(Clone, Debug)]
pub enum JsonEdit {
    Replace { node: usize, with: u8, n: usize },
    DeleteKey { node: usize, key: usize },
    AddKey { node: usize, which: usize, with: u8 },
    Wrap { node: usize },
    DupItem { node: usize },
}

fn json_edit() -> impl Strategy<Value = JsonEdit> {
    prop_oneof![
        3 => (any::<usize>(), any::<u8>(), any::<usize>()).prop_map(|(node, with, n)| JsonEdit::Replace { node, with, n }),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(node, key)| JsonEdit::DeleteKey { node, key }),
        1 => (any::<usize>(), any::<usize>(), any::<u8>()).prop_map(|(node, which, with)| JsonEdit::AddKey { node, which, with }),
        1 => any::<usize>().prop_map(|node| JsonEdit::Wrap { node }),
        1 => any::<usize>().prop_map(|node| JsonEdit::DupItem { node }),
    ]
}

/// Stands for a number no `Value` holds; replaced in the written text.
const HUGE: &str = "\u{1}huge\u{1}";
const HUGE_TEXT: [&str; 4] = ["1e999999", "-1e999999", "184467440737095516160000", "-0.0000000000000000000000001e-400"];

fn replacement(with: u8, n: usize) -> Value {
    match with % 16 {
        0 => Value::Null,
        1 => Value::Bool(n % 2 == 0),
        2 => Value::from(n as i64),
        3 => Value::from(i64::MIN),
        4 => Value::from(u64::MAX),
        5 => Value::from(-0.0f64),
        6 => Value::from(f64::MAX),
        7 => Value::String(nasty(n)),
        8 => Value::String(["NaN", "Infinity", "-inf", "1e309", "", " ", "0", "-1", "true"][n % 9].into()),
        9 => Value::Array(Vec::new()),
        10 => Value::Object(Map::new()),
        11 => {
            let mut v = Value::from(1);
            for _ in 0..(n % 200) {
                v = Value::Array(vec![v]);
            }
            v
        }
        12 => Value::String("a".repeat(n % 20_000)),
        13 => Value::String(format!("{HUGE}{}", n % HUGE_TEXT.len())),
        14 => Value::from(n as f64 / 7.0),
        _ => Value::String("\u{0}\u{1f}\u{7f}\u{fffd}\u{10ffff}".into()),
    }
}

fn count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(count).sum(),
        Value::Object(m) => m.values().map(count).sum(),
        _ => 0,
    }
}

fn nth<'a>(v: &'a mut Value, n: &mut usize) -> Option<&'a mut Value> {
    if *n == 0 {
        return Some(v);
    }
    *n -= 1;
    match v {
        Value::Array(a) => a.iter_mut().find_map(|c| nth(c, n)),
        Value::Object(m) => m.values_mut().find_map(|c| nth(c, n)),
        _ => None,
    }
}

fn node_mut(v: &mut Value, node: usize) -> &mut Value {
    let mut n = node % count(v);
    nth(v, &mut n).expect("the node index is below the count")
}

pub fn apply_json(v: &mut Value, e: &JsonEdit) {
    const KEYS: &[&str] = &[
        "type",
        "name",
        "v",
        "tool",
        "arguments",
        "args",
        "result",
        "error",
        "steps",
        "calls",
        "input",
        "answer",
        "content",
        "text",
        "choices",
        "message",
        "tool_calls",
        "function",
        "$ref",
        "paths",
        "parameters",
        "x-switchyard",
        "executor",
        "kind",
        "response",
        "request",
        "key",
        "model",
        "latency_ms",
        "graph",
        "",
        "🦀",
    ];
    match e {
        JsonEdit::Replace { node, with, n } => *node_mut(v, *node) = replacement(*with, *n),
        JsonEdit::DeleteKey { node, key } => {
            if let Value::Object(m) = node_mut(v, *node)
                && !m.is_empty()
            {
                let k = m.keys().nth(key % m.len()).cloned().unwrap_or_default();
                m.shift_remove(&k);
            }
        }
        JsonEdit::AddKey { node, which, with } => {
            if let Value::Object(m) = node_mut(v, *node) {
                m.insert(KEYS[which % KEYS.len()].to_string(), replacement(*with, *which));
            }
        }
        JsonEdit::Wrap { node } => {
            let n = node_mut(v, *node);
            *n = Value::Array(vec![n.take()]);
        }
        JsonEdit::DupItem { node } => {
            if let Value::Array(a) = node_mut(v, *node)
                && let Some(first) = a.first().cloned()
            {
                a.push(first);
            }
        }
    }
}

fn write_json(v: &Value) -> String {
    let mut s = v.to_string();
    for (i, t) in HUGE_TEXT.iter().enumerate() {
        s = s.replace(&format!("\"{}{i}\"", HUGE.replace('\u{1}', "\\u0001")), t);
    }
    s
}

/// The seed with its JSON structure edited (each line of JSON Lines is a
/// document; the line is the edit's `line`). Seeds that do not parse stay.
fn structured(seed: &[u8], format: Format, line: usize, edits: &[JsonEdit]) -> Vec<u8> {
    let text = String::from_utf8_lossy(seed);
    match format {
        Format::Text => seed.to_vec(),
        Format::Json => match serde_json::from_str::<Value>(&text) {
            Ok(mut v) => {
                edits.iter().for_each(|e| apply_json(&mut v, e));
                write_json(&v).into_bytes()
            }
            Err(_) => seed.to_vec(),
        },
        Format::Jsonl => {
            let mut ls: Vec<String> = text.lines().map(str::to_string).collect();
            if ls.is_empty() {
                return seed.to_vec();
            }
            let i = line % ls.len();
            if let Ok(mut v) = serde_json::from_str::<Value>(&ls[i]) {
                edits.iter().for_each(|e| apply_json(&mut v, e));
                ls[i] = write_json(&v);
            }
            (ls.join("\n") + "\n").into_bytes()
        }
        Format::Toml => {
            let Ok(table) = toml::from_str::<toml::Table>(&text) else { return seed.to_vec() };
            let Ok(mut v) = serde_json::to_value(&table) else { return seed.to_vec() };
            edits.iter().for_each(|e| apply_json(&mut v, e));
            // TOML has no null and no huge numbers: such an edit leaves the seed.
            match toml::to_string(&v) {
                Ok(s) => s.into_bytes(),
                Err(_) => seed.to_vec(),
            }
        }
    }
}

/// The fuzz inputs of one parser: arbitrary bytes, arbitrary text, the
/// seeds as they are, and the seeds under byte, line and structure edits.
pub fn inputs(seeds: Vec<Vec<u8>>, format: Format) -> BoxedStrategy<Input> {
    assert!(!seeds.is_empty());
    let n = seeds.len();
    let s1 = seeds.clone();
    let s2 = seeds.clone();
    let s3 = seeds.clone();
    let bytes_edits = (0..n, prop::collection::vec(edit(), 1..6))
        .prop_map(move |(i, edits)| Input(edits.iter().fold(s1[i].clone(), |b, e| apply(b, e, &s1))));
    let structure =
        (0..n, any::<usize>(), prop::collection::vec(json_edit(), 1..5), prop::collection::vec(edit(), 0..2)).prop_map(
            move |(i, line, jedits, edits)| {
                let b = structured(&s2[i], format, line, &jedits);
                Input(edits.iter().fold(b, |b, e| apply(b, e, &s2)))
            },
        );
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..512).prop_map(Input),
        1 => any::<String>().prop_map(|s| Input(s.into_bytes())),
        1 => (0..n).prop_map(move |i| Input(s3[i].clone())),
        4 => bytes_edits,
        4 => structure,
    ]
    .boxed()
}
