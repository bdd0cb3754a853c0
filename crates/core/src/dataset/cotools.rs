//! The CoTools / ToolkenGPT format, shared by SimpleToolQuestions, KAMEL,
//! FuncQA, GSM8K-XL and VirtualHome: a `tool.json` pool, question files
//! (`{"question", "tool", "result"}` per line) and annotated text files
//! (`{"text", "start_str_idx", "tool_calling"}` per line).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

/// A file that cannot be read as the format says, naming where.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {reason}")]
    Format { path: PathBuf, reason: String },
    #[error("{path}:{line}: {reason}")]
    Line { path: PathBuf, line: usize, reason: String },
}

/// One tool of a pool: its id without angle brackets (`P65`,
/// `people/person/place_of_birth`) and its description.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDoc {
    pub id: String,
    pub description: String,
}

impl ToolDoc {
    /// The text a retriever indexes: the id's words (`people person place
    /// of birth`) then the description. An id that is only a code (`P65`)
    /// adds nothing and is left out.
    pub fn text(&self) -> String {
        let words = self.id.replace(['/', '_', '.', '-'], " ");
        let informative = words.split_whitespace().any(|w| w.chars().filter(|c| c.is_alphabetic()).count() > 1);
        match (informative, self.description.is_empty()) {
            (true, false) => format!("{}: {}", words.trim(), self.description),
            (true, true) => words.trim().to_owned(),
            (false, _) => self.description.clone(),
        }
    }

    /// The first segment of a path id (`people` of
    /// `people/person/place_of_birth`); None for an id that is not a path.
    pub fn domain(&self) -> Option<&str> {
        let (domain, rest) = self.id.split_once('/')?;
        (!domain.is_empty() && !rest.is_empty()).then_some(domain)
    }

    /// The text a retriever indexes, with a path id read as what it asks:
    /// `people/person/place_of_birth` is "place of birth of a person
    /// (people)", `location/location/people_born_here` "people born here of
    /// a location", so the subject's type stands beside the relation rather
    /// than among the domain's words. Other ids are as [`Self::text`].
    pub fn phrase(&self) -> String {
        let words = |s: &str| s.replace(['_', '.', '-'], " ").split_whitespace().collect::<Vec<_>>().join(" ");
        let parts: Vec<String> = self.id.split('/').map(words).filter(|p| !p.is_empty()).collect();
        let [.., subject, relation] = parts.as_slice() else {
            return self.text();
        };
        let article = if subject.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
        let mut out = format!("{relation} of {article} {subject}");
        let domains: Vec<&String> = parts[..parts.len() - 2].iter().filter(|d| *d != subject).collect();
        if !domains.is_empty() {
            let joined: Vec<&str> = domains.iter().map(|d| d.as_str()).collect();
            out += &format!(" ({})", joined.join(", "));
        }
        if !self.description.is_empty() {
            out += ": ";
            out += &self.description;
        }
        out
    }
}

/// The tools of a `tool.json`, in the file's `tool_dict` order.
#[derive(Debug, Clone, Default)]
pub struct ToolPool {
    pub tools: Vec<ToolDoc>,
}

impl ToolPool {
    /// Reads `tool.json`: `tool_information` maps `<id>` to either
    /// `{"tool_name", "tool_description"}` or a description string; the
    /// order is `tool_dict`'s indices (the file's order when it has none).
    pub fn load(path: &Path) -> Result<Self, DataError> {
        let text = read(path)?;
        let doc: Value = serde_json::from_str(&text)
            .map_err(|e| DataError::Format { path: path.into(), reason: format!("not JSON: {e}") })?;
        let info = doc
            .get("tool_information")
            .and_then(Value::as_object)
            .ok_or_else(|| DataError::Format { path: path.into(), reason: "no `tool_information` object".into() })?;
        let mut tools = Vec::with_capacity(info.len());
        for (key, v) in info {
            let description = match v {
                Value::String(s) => s.clone(),
                Value::Object(o) => {
                    o.get("tool_description").and_then(Value::as_str).map(str::to_owned).ok_or_else(|| {
                        DataError::Format {
                            path: path.into(),
                            reason: format!("tool_information.{key}: no `tool_description` string"),
                        }
                    })?
                }
                _ => {
                    return Err(DataError::Format {
                        path: path.into(),
                        reason: format!("tool_information.{key}: neither a string nor an object"),
                    });
                }
            };
            tools.push(ToolDoc { id: bare(key).to_owned(), description });
        }
        if tools.is_empty() {
            return Err(DataError::Format { path: path.into(), reason: "`tool_information` is empty".into() });
        }
        if let Some(order) = doc.get("tool_dict").and_then(Value::as_object) {
            let rank: HashMap<&str, u64> = order.iter().filter_map(|(k, v)| Some((bare(k), v.as_u64()?))).collect();
            tools.sort_by_key(|t| rank.get(t.id.as_str()).copied().unwrap_or(u64::MAX));
        }
        Ok(ToolPool { tools })
    }

    pub fn position(&self, id: &str) -> Option<usize> {
        let id = bare(id);
        self.tools.iter().position(|t| t.id == id)
    }
}

/// A test question with its gold tool (when the file has one) and answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    /// `case_idx`, else the line number.
    pub id: String,
    pub question: String,
    pub tool: Option<String>,
    pub answer: Value,
}

impl Question {
    /// Reads a question file; `question` is required on every line.
    pub fn load(path: &Path) -> Result<Vec<Question>, DataError> {
        let mut out = Vec::new();
        for (line, v) in lines(path)? {
            let field = |name: &str| v.get(name);
            let question = field("question").and_then(Value::as_str).ok_or_else(|| DataError::Line {
                path: path.into(),
                line,
                reason: "missing field `question` (a string)".into(),
            })?;
            let tool = match field("tool") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(bare(s).to_owned()),
                Some(_) => {
                    return Err(DataError::Line {
                        path: path.into(),
                        line,
                        reason: "field `tool` is not a string".into(),
                    });
                }
            };
            let id = match field("case_idx") {
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::String(s)) => s.clone(),
                _ => line.to_string(),
            };
            out.push(Question {
                id,
                question: question.to_owned(),
                tool,
                answer: field("result").cloned().unwrap_or(Value::Null),
            });
        }
        Ok(out)
    }

    /// Reads a file that must give every question its gold tool (retrieval
    /// evaluation); a line without one is an error naming it. An annotated
    /// text file (a training or dev split) is read as its (query, tool)
    /// pairs, so a split's own questions can measure a setting too.
    pub fn load_with_tools(path: &Path) -> Result<Vec<Question>, DataError> {
        let annotated =
            lines(path)?.first().is_some_and(|(_, v)| v.get("question").is_none() && v.get("text").is_some());
        if annotated {
            return Ok(CallText::load(path)?
                .iter()
                .flat_map(CallText::pairs)
                .enumerate()
                .map(|(i, (question, tool))| Question {
                    id: (i + 1).to_string(),
                    question,
                    tool: Some(tool),
                    answer: Value::Null,
                })
                .collect());
        }
        let qs = Self::load(path)?;
        if let Some(i) = qs.iter().position(|q| q.tool.is_none()) {
            return Err(DataError::Line {
                path: path.into(),
                line: i + 1,
                reason: "missing field `tool` (the gold tool); retrieval needs it on every line".into(),
            });
        }
        Ok(qs)
    }
}

/// One annotated text: where in it each tool was called.
#[derive(Debug, Clone, PartialEq)]
pub struct CallText {
    pub text: String,
    /// (character offset in `text`, tool id) per call, in order.
    pub calls: Vec<(usize, String)>,
    /// What each call of `calls` was given and gave back.
    pub details: Vec<CallDetail>,
}

/// A call's `call_param` and `return` as the file writes them (numbers
/// as their text); empty where the file leaves them out.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CallDetail {
    pub params: Vec<String>,
    pub returns: Vec<String>,
}

impl CallText {
    /// Reads an annotated text file (`text`, `start_str_idx`, `tool_calling`
    /// with `call_tool` per call). Offsets count characters, as in Python.
    pub fn load(path: &Path) -> Result<Vec<CallText>, DataError> {
        let mut out = Vec::new();
        for (line, v) in lines(path)? {
            let err = |reason: String| DataError::Line { path: path.into(), line, reason };
            let text = v.get("text").and_then(Value::as_str).ok_or_else(|| err("missing field `text`".into()))?;
            let starts = v
                .get("start_str_idx")
                .and_then(Value::as_array)
                .ok_or_else(|| err("missing field `start_str_idx`".into()))?;
            let calls = v
                .get("tool_calling")
                .and_then(Value::as_array)
                .ok_or_else(|| err("missing field `tool_calling`".into()))?;
            if starts.len() != calls.len() {
                return Err(err(format!("{} offsets in `start_str_idx` but {} calls", starts.len(), calls.len())));
            }
            let chars = text.chars().count();
            let mut pairs = Vec::with_capacity(calls.len());
            let mut details = Vec::with_capacity(calls.len());
            for (i, (s, c)) in starts.iter().zip(calls).enumerate() {
                let at = s.as_u64().map(|n| n as usize).filter(|&n| n <= chars).ok_or_else(|| {
                    err(format!("start_str_idx[{i}] is not an offset within the text ({chars} characters)"))
                })?;
                let tool = c
                    .get("call_tool")
                    .and_then(Value::as_str)
                    .ok_or_else(|| err(format!("tool_calling[{i}]: missing `call_tool`")))?;
                pairs.push((at, bare(tool).to_owned()));
                let texts = |field: &str| -> Result<Vec<String>, DataError> {
                    let Some(v) = c.get(field) else { return Ok(Vec::new()) };
                    let items = v.as_array().ok_or_else(|| err(format!("tool_calling[{i}].{field} is not a list")))?;
                    items
                        .iter()
                        .enumerate()
                        .map(|(j, x)| match x {
                            Value::String(s) => Ok(s.clone()),
                            Value::Number(n) => Ok(n.to_string()),
                            _ => Err(err(format!("tool_calling[{i}].{field}[{j}] is neither a string nor a number"))),
                        })
                        .collect()
                };
                details.push(CallDetail { params: texts("call_param")?, returns: texts("return")? });
            }
            out.push(CallText { text: text.to_owned(), calls: pairs, details });
        }
        Ok(out)
    }

    /// The text before character `at`.
    pub fn prefix(&self, at: usize) -> &str {
        let end = self.text.char_indices().nth(at).map_or(self.text.len(), |(b, _)| b);
        &self.text[..end]
    }

    /// The question the text answers: the text before its first call,
    /// without a `Q:`/`Question:` framing and without the worked solution
    /// GSM8K-XL appends after "Let's think step by step."; None for a text
    /// with no call.
    pub fn question(&self) -> Option<String> {
        let (at, _) = self.calls.first()?;
        let q = query_of(self.prefix(*at));
        let q = q.split_once(STEP_BY_STEP).map_or(q.as_str(), |(before, _)| before).trim();
        Some(q.to_owned())
    }

    /// (query, tool) pairs for training a retriever: the query is the text
    /// before each call; a `Question: … Answer: …` framing keeps the
    /// question alone, as a test question reads.
    pub fn pairs(&self) -> Vec<(String, String)> {
        self.calls.iter().map(|(at, tool)| (query_of(self.prefix(*at)), tool.clone())).collect()
    }
}

/// Where GSM8K-XL's question ends and its worked solution starts.
const STEP_BY_STEP: &str = "Let's think step by step.";

fn query_of(prefix: &str) -> String {
    let p = prefix.trim();
    for (q, a) in [("Question:", "\nAnswer:"), ("Q:", "\nA:")] {
        if let Some(rest) = p.strip_prefix(q) {
            if let Some(end) = rest.find(a) {
                return rest[..end].trim().to_owned();
            }
            return rest.trim().to_owned();
        }
    }
    p.to_owned()
}

fn bare(id: &str) -> &str {
    id.strip_prefix('<').and_then(|s| s.strip_suffix('>')).unwrap_or(id)
}

fn read(path: &Path) -> Result<String, DataError> {
    std::fs::read_to_string(path).map_err(|source| DataError::Io { path: path.into(), source })
}

/// Non-blank lines as JSON values, numbered from 1.
fn lines(path: &Path) -> Result<Vec<(usize, Value)>, DataError> {
    let text = read(path)?;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(l).map_err(|e| DataError::Line {
            path: path.into(),
            line: i + 1,
            reason: format!("not JSON: {e}"),
        })?;
        if !v.is_object() {
            return Err(DataError::Line { path: path.into(), line: i + 1, reason: "not a JSON object".into() });
        }
        out.push((i + 1, v));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_of_a_framed_text_is_its_question() {
        assert_eq!(query_of("Question: Who founded X?\nAnswer: The answer is"), "Who founded X?");
        assert_eq!(query_of("Where was Peter Costigan born?"), "Where was Peter Costigan born?");
        assert_eq!(query_of("Q: 2 plus 3?\nA: It is 2+3="), "2 plus 3?");
    }

    #[test]
    fn prefixes_count_characters_not_bytes() {
        let t = CallText { text: "Tüpraş owns X".into(), calls: vec![(7, "P1".into())], details: Vec::new() };
        assert_eq!(t.prefix(7), "Tüpraş ");
    }

    #[test]
    fn a_text_gives_its_question_and_each_call_its_params_and_return() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dev.jsonl");
        let text = "Dan licks 58 and 63 times. How many? Let's think step by step. 58+63 = 121\n#### 121";
        let line = serde_json::json!({"text": text, "start_str_idx": [71],
            "tool_calling": [{"call_tool": "<add>", "call_param": ["58", 63], "return": ["121"]}]});
        std::fs::write(&path, format!("{line}\n")).unwrap();
        let t = &CallText::load(&path).unwrap()[0];
        assert_eq!(t.question().as_deref(), Some("Dan licks 58 and 63 times. How many?"));
        assert_eq!(t.details[0], CallDetail { params: vec!["58".into(), "63".into()], returns: vec!["121".into()] });
        let framed =
            CallText { text: "Q: 2 plus 3?\nA: 2+3=5".into(), calls: vec![(19, "add".into())], details: vec![] };
        assert_eq!(framed.question().as_deref(), Some("2 plus 3?"));
        assert_eq!(CallText { calls: vec![], ..framed }.question(), None);

        let bad = serde_json::json!({"text": "x", "start_str_idx": [0],
            "tool_calling": [{"call_tool": "<add>", "call_param": [["1"]]}]});
        std::fs::write(&path, format!("{line}\n{bad}\n")).unwrap();
        let e = CallText::load(&path).unwrap_err().to_string();
        assert!(e.ends_with("dev.jsonl:2: tool_calling[0].call_param[0] is neither a string nor a number"), "{e}");
    }

    #[test]
    fn a_code_id_is_left_out_of_the_text_and_a_path_id_is_spelt_out() {
        let code = ToolDoc { id: "P65".into(), description: "discoverer(x): who found x".into() };
        assert_eq!(code.text(), "discoverer(x): who found x");
        let path = ToolDoc { id: "people/person/place_of_birth".into(), description: "place of birth.".into() };
        assert_eq!(path.text(), "people person place of birth: place of birth.");
    }

    #[test]
    fn a_path_id_reads_as_its_relation_of_its_subject() {
        let doc = |id: &str| ToolDoc { id: id.into(), description: "d".into() };
        assert_eq!(doc("people/person/place_of_birth").phrase(), "place of birth of a person (people): d");
        assert_eq!(doc("location/location/people_born_here").phrase(), "people born here of a location: d");
        assert_eq!(doc("music/artist/track").phrase(), "track of an artist (music): d");
        assert_eq!(doc("music/release/track").phrase(), "track of a release (music): d");
        // Not a path: as `text`.
        assert_eq!(doc("geo_lookup").phrase(), doc("geo_lookup").text());
        assert_eq!(doc("P65").phrase(), "d");
    }
}
