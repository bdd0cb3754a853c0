//! Task files: TOML (`[[task]]` tables) or JSON Lines (`.jsonl`, one object a
//! line), the comparison of an answer with a gold answer, and a session's
//! task list.

mod expect;
mod judge;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use expect::{ArgsExpect, Broken, Expect, ExpectVerdict};
pub use judge::{Match, answer_matches, numeric_match};

/// One task: a query, optionally with a gold answer and a gold tool sequence.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub query: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
    /// The tools this task may be offered (a benchmark's candidate set, as
    /// ATC's 20 per task); empty: the whole library.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<String>,
    /// How the answer is judged against `answer` (the file's `match`).
    #[serde(default, rename = "match", skip_serializing_if = "Match::is_exact")]
    pub matching: Match,
    /// The call the task is answered by, arguments and all (API-Bank's
    /// gold); scored by `eval::apibank`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_call: Option<GoldCall>,
    /// What its run should do: tools, arguments, at most N calls or C of cost.
    #[serde(default, skip_serializing_if = "Expect::is_empty")]
    pub expect: Expect,
}

/// A gold tool call: the tool and the arguments it must be given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GoldCall {
    pub tool: String,
    #[serde(default)]
    pub args: serde_json::Value,
}

impl Task {
    /// Whether `answer` gives the gold answer under the task's rule; false
    /// when the task has no gold answer.
    pub fn judge(&self, answer: &str) -> bool {
        self.answer.as_deref().is_some_and(|gold| numeric_match(answer, gold, self.matching))
    }
}

#[derive(thiserror::Error, Debug)]
pub enum TaskError {
    #[error("cannot read task file {}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("task file {}: {message}", path.display())]
    Toml { path: PathBuf, message: String },
    #[error("task file {}, line {line}: {message}", path.display())]
    Json { path: PathBuf, line: usize, message: String },
    #[error("task file {}, {at}: field '{field}' {message}", path.display())]
    Invalid { path: PathBuf, at: String, field: &'static str, message: String },
    #[error("task file {}: duplicate task id '{id}' ({first} and {second})", path.display())]
    Duplicate { path: PathBuf, id: String, first: String, second: String },
    #[error("task file {} holds no task", path.display())]
    Empty { path: PathBuf },
}

/// A gold answer written as a bare TOML/JSON number or boolean is read as
/// its text, so `answer = 42` and `answer = "42"` mean the same.
#[derive(Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Scalar {
    fn into_string(self) -> String {
        match self {
            Scalar::Text(s) => s,
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    id: Scalar,
    query: String,
    #[serde(default)]
    answer: Option<Scalar>,
    #[serde(default)]
    tools: Vec<String>,
    #[serde(default)]
    candidates: Vec<String>,
    #[serde(default, rename = "match")]
    matching: Option<String>,
    #[serde(default)]
    gold_call: Option<GoldCall>,
    #[serde(default)]
    expect: Expect,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    #[serde(default)]
    task: Vec<RawTask>,
}

/// Reads a task file: JSON Lines when the name ends in `.jsonl`, else TOML.
/// Refuses empty queries and ids, and duplicate ids.
pub fn load_tasks(path: &Path) -> Result<Vec<Task>, TaskError> {
    let text = std::fs::read_to_string(path).map_err(|source| TaskError::Io { path: path.to_path_buf(), source })?;
    parse_tasks(&text, path)
}

/// As `load_tasks`, from text already read; `path` names the source in errors
/// and chooses the format.
pub fn parse_tasks(text: &str, path: &Path) -> Result<Vec<Task>, TaskError> {
    let jsonl = path.extension().is_some_and(|e| e.eq_ignore_ascii_case("jsonl"));
    let raw: Vec<(String, RawTask)> = if jsonl {
        let mut out = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let t: RawTask = serde_json::from_str(line).map_err(|e| TaskError::Json {
                path: path.to_path_buf(),
                line: i + 1,
                message: e.to_string(),
            })?;
            out.push((format!("line {}", i + 1), t));
        }
        out
    } else {
        let file: TomlFile =
            toml::from_str(text).map_err(|e| TaskError::Toml { path: path.to_path_buf(), message: e.to_string() })?;
        file.task.into_iter().enumerate().map(|(i, t)| (format!("task {}", i + 1), t)).collect()
    };
    if raw.is_empty() {
        return Err(TaskError::Empty { path: path.to_path_buf() });
    }
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut tasks = Vec::with_capacity(raw.len());
    for (at, r) in raw {
        let invalid = |field, message: &str| TaskError::Invalid {
            path: path.to_path_buf(),
            at: at.clone(),
            field,
            message: message.to_string(),
        };
        let id = r.id.into_string();
        if id.trim().is_empty() {
            return Err(invalid("id", "is empty"));
        }
        if r.query.trim().is_empty() {
            return Err(invalid("query", "is empty"));
        }
        if r.tools.iter().any(|t| t.trim().is_empty()) {
            return Err(invalid("tools", "names an empty tool"));
        }
        if r.candidates.iter().any(|t| t.trim().is_empty()) {
            return Err(invalid("candidates", "names an empty tool"));
        }
        let matching = match r.matching.as_deref().map(str::parse::<Match>) {
            None => Match::Exact,
            Some(Ok(m)) => m,
            Some(Err(why)) => return Err(invalid("match", &why)),
        };
        if let Some(g) = &r.gold_call {
            if g.tool.trim().is_empty() {
                return Err(invalid("gold_call", "names an empty tool"));
            }
            if !(g.args.is_object() || g.args.is_null()) {
                return Err(invalid("gold_call", "has 'args' that are not an object"));
            }
        }
        if let Err((field, why)) = r.expect.check() {
            return Err(invalid(field, &why));
        }
        if let Some(first) = seen.get(&id) {
            return Err(TaskError::Duplicate { path: path.to_path_buf(), id, first: first.clone(), second: at });
        }
        seen.insert(id.clone(), at.clone());
        tasks.push(Task {
            id,
            query: r.query,
            answer: r.answer.map(Scalar::into_string),
            tools: r.tools,
            candidates: r.candidates,
            matching,
            gold_call: r.gold_call,
            expect: r.expect,
        });
    }
    Ok(tasks)
}

/// The sample tools and task sets that ship with the source tree (at its
/// root, two folders above this crate).
pub fn embedded_sample_dir() -> PathBuf {
    let crate_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    crate_dir.ancestors().nth(2).unwrap_or(crate_dir).join("sample-tools")
}

/// A session's task list. `--count N` runs a file's tasks round and round
/// until N have run; holding N copies made a long headless session's memory
/// grow with N, so the list keeps one round and the positions edited since.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TaskList {
    /// One round of the tasks: position i runs `cycle[i % cycle.len()]`.
    cycle: Vec<Task>,
    len: usize,
    /// Positions whose task was edited: an edit belongs to that run alone.
    edited: BTreeMap<usize, Task>,
}

impl TaskList {
    /// `len` positions cycling through `tasks` (none when `tasks` is empty).
    pub fn cycling(mut tasks: Vec<Task>, len: usize) -> Self {
        let len = if tasks.is_empty() { 0 } else { len };
        // A list shorter than one round keeps only what it runs.
        tasks.truncate(len);
        TaskList { cycle: tasks, len, edited: BTreeMap::new() }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The task at position `i` (from 0).
    pub fn get(&self, i: usize) -> Option<&Task> {
        if i >= self.len {
            return None;
        }
        self.edited.get(&i).or_else(|| self.cycle.get(i % self.cycle.len()))
    }

    /// One round of the tasks as they were given, edits aside: the whole
    /// list when it does not wrap.
    pub fn cycle(&self) -> &[Task] {
        &self.cycle
    }

    /// Replaces the task at position `i`, for that position only; false
    /// when there is none.
    pub fn set(&mut self, i: usize, task: Task) -> bool {
        if i >= self.len {
            return false;
        }
        self.edited.insert(i, task);
        true
    }

    /// Every position's task, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Task> {
        (0..self.len).filter_map(|i| self.get(i))
    }
}

impl From<Vec<Task>> for TaskList {
    fn from(tasks: Vec<Task>) -> Self {
        let len = tasks.len();
        TaskList::cycling(tasks, len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str, name: &str) -> Result<Vec<Task>, TaskError> {
        parse_tasks(text, Path::new(name))
    }

    #[test]
    fn reads_toml_and_jsonl() {
        let t = parse(
            "[[task]]\nid = \"a\"\nquery = \"q1\"\nanswer = 42\ntools = [\"calculator\"]\n\n[[task]]\nid = 7\nquery = \"q2\"\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(t[0].answer.as_deref(), Some("42"));
        assert_eq!(t[0].tools, ["calculator"]);
        assert_eq!((t[1].id.as_str(), t[1].answer.as_ref(), t[1].tools.len()), ("7", None, 0));

        let j =
            parse("{\"id\":\"x\",\"query\":\"q\",\"answer\":\"Paris\"}\n\n{\"id\":\"y\",\"query\":\"r\"}\n", "t.jsonl")
                .unwrap();
        assert_eq!(j.len(), 2);
        assert_eq!(j[0].answer.as_deref(), Some("Paris"));
    }

    #[test]
    fn a_gold_call_reads_from_toml_and_jsonl_and_round_trips() {
        let t = parse(
            "[[task]]\nid = \"a\"\nquery = \"q\"\n[task.gold_call]\ntool = \"AddAlarm\"\nargs = { time = \"13:50\", n = 2 }\n",
            "t.toml",
        )
        .unwrap();
        let g = t[0].gold_call.as_ref().unwrap();
        assert_eq!((g.tool.as_str(), &g.args), ("AddAlarm", &serde_json::json!({"time": "13:50", "n": 2})));
        let line = serde_json::to_string(&t[0]).unwrap();
        assert_eq!(parse(&line, "t.jsonl").unwrap(), t);
        let plain = serde_json::to_string(&Task { id: "b".into(), query: "q".into(), ..Task::default() }).unwrap();
        assert!(!plain.contains("gold_call"), "{plain}");
        let e =
            parse("{\"id\":\"x\",\"query\":\"q\",\"gold_call\":{\"tool\":\"T\",\"arg\":{}}}", "f.jsonl").unwrap_err();
        assert!(e.to_string().contains("line 1"), "{e}");
        let e =
            parse("{\"id\":\"x\",\"query\":\"q\",\"gold_call\":{\"tool\":\"T\",\"args\":[1]}}", "f.jsonl").unwrap_err();
        assert!(e.to_string().contains("gold_call"), "{e}");
    }

    #[test]
    fn errors_name_the_place() {
        let e = parse("{\"id\":\"x\",\"query\":\"q\"}\n{\"id\":\"y\",\"qury\":\"r\"}\n", "f.jsonl").unwrap_err();
        assert!(matches!(e, TaskError::Json { line: 2, .. }), "{e}");
        assert!(e.to_string().contains("f.jsonl, line 2"), "{e}");

        let e =
            parse("[[task]]\nid = \"a\"\nquery = \"q\"\n[[task]]\nid = \"b\"\nquery = \"  \"\n", "f.toml").unwrap_err();
        assert_eq!(e.to_string(), "task file f.toml, task 2: field 'query' is empty");

        let e =
            parse("[[task]]\nid = \"a\"\nquery = \"q\"\n[[task]]\nid = \"a\"\nquery = \"r\"\n", "f.toml").unwrap_err();
        assert_eq!(e.to_string(), "task file f.toml: duplicate task id 'a' (task 1 and task 2)");

        let e = parse("[[task]]\nid = \"a\"\n", "f.toml").unwrap_err();
        assert!(e.to_string().contains("query"), "{e}");
        assert!(matches!(parse("", "f.toml").unwrap_err(), TaskError::Empty { .. }));
        assert!(matches!(load_tasks(Path::new("/nonexistent/t.toml")).unwrap_err(), TaskError::Io { .. }));
    }

    #[test]
    fn a_task_names_its_match_rule() {
        let j = parse(
            "{\"id\":1,\"query\":\"q\",\"answer\":0.3936,\"match\":\"round2\"}\n{\"id\":2,\"query\":\"r\",\"answer\":\"5\"}\n",
            "t.jsonl",
        )
        .unwrap();
        assert_eq!((j[0].matching, j[1].matching), (Match::Round2, Match::Exact));
        assert!(j[0].judge("The answer is 0.39364."));
        assert!(!j[1].judge("5.004"));
        let t =
            parse("[[task]]\nid = \"a\"\nquery = \"q\"\nanswer = 1000\nmatch = \"approx:0.01\"\n", "t.toml").unwrap();
        assert_eq!(t[0].matching, Match::Approx(0.01));
        assert!(t[0].judge("990"));
        assert!(!Task { answer: None, ..t[0].clone() }.judge("990"));
        let e = parse("{\"id\":1,\"query\":\"q\",\"match\":\"fuzzy\"}\n", "f.jsonl").unwrap_err();
        assert!(e.to_string().starts_with("task file f.jsonl, line 1: field 'match' unknown rule 'fuzzy'"), "{e}");
        // A task written back keeps its rule, and an exact one stays unwritten.
        let back = serde_json::to_string(&j[0]).unwrap();
        assert!(back.contains("\"match\":\"round2\""), "{back}");
        assert!(!serde_json::to_string(&j[1]).unwrap().contains("match"));
        assert_eq!(serde_json::from_str::<Task>(&back).unwrap(), j[0]);
    }
}

#[cfg(test)]
mod task_list_tests {
    use super::*;

    fn task(id: &str) -> Task {
        Task { id: id.into(), query: format!("query {id}"), ..Task::default() }
    }

    #[test]
    fn positions_cycle_through_the_tasks() {
        let list = TaskList::cycling(vec![task("a"), task("b"), task("c")], 7);
        let ids: Vec<&str> = list.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "c", "a", "b", "c", "a"]);
        assert_eq!(list.len(), 7);
        assert_eq!(list.cycle().len(), 3);
        assert!(list.get(7).is_none());
    }

    #[test]
    fn a_short_list_keeps_only_what_it_runs() {
        let list = TaskList::cycling(vec![task("a"), task("b"), task("c")], 2);
        assert_eq!(list.cycle().len(), 2);
        assert_eq!(list.iter().count(), 2);
        assert!(TaskList::cycling(vec![], 5).is_empty());
    }

    #[test]
    fn an_edit_changes_one_position_only() {
        let mut list = TaskList::cycling(vec![task("a"), task("b")], 5);
        assert!(list.set(2, task("edited")));
        assert!(!list.set(5, task("past the end")));
        let ids: Vec<&str> = list.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(ids, ["a", "b", "edited", "b", "a"]);
        assert_eq!(list.cycle()[0].id, "a");
    }
}
