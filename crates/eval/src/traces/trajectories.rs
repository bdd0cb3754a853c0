//! A trace's successful runs as ToolNet trajectories (the task and the
//! tools it used, in order), the file the static graph is built from: so
//! an outside agent's runs, or any strategy's, make the 2-gram graph of
//! the next session (`trace to-trajectories`, then `graph build`).

use crate::engine::event::{RunOutcome, ToolOutcome};
use crate::engine::{Event, EventKind};
use crate::graph::Trajectory;

/// The trajectory of each run that answered, was not judged wrong, called
/// at least one tool and had none fail; and, for every other finished run,
/// why it was left out.
pub fn trajectories_from_events(events: &[Event]) -> (Vec<Trajectory>, Vec<(u32, String)>) {
    let (mut kept, mut left) = (Vec::new(), Vec::new());
    let mut task = String::new();
    let mut tools: Vec<String> = Vec::new();
    let mut failed: Option<String> = None;
    for ev in events {
        match &ev.kind {
            EventKind::RunStarted { task: t, .. } => {
                task = t.clone();
                tools.clear();
                failed = None;
            }
            EventKind::ToolCall { tool, .. } => tools.push(tool.clone()),
            EventKind::ToolResult { tool, outcome: ToolOutcome::Err { .. }, .. } => {
                failed.get_or_insert_with(|| tool.clone());
            }
            EventKind::RunFinished { outcome, success, .. } => {
                let why = match (outcome, success, &failed) {
                    (RunOutcome::Answered, Some(false), _) => Some("its answer was judged wrong".to_string()),
                    (RunOutcome::Answered, _, Some(tool)) => Some(format!("a call of '{tool}' failed")),
                    (RunOutcome::Answered, _, None) if tools.is_empty() => Some("it called no tool".to_string()),
                    (RunOutcome::Answered, _, None) => None,
                    _ => Some("it did not finish with an answer".to_string()),
                };
                match why {
                    None => kept.push(Trajectory { query: task.clone(), tools: std::mem::take(&mut tools) }),
                    Some(why) => left.push((ev.run, why)),
                }
            }
            _ => {}
        }
    }
    (kept, left)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run as its trace has it: started, the calls (tool, ok?), finished.
    fn run(n: u32, task: &str, calls: &[(&str, bool)], finished: &str) -> Vec<Event> {
        let mut lines = vec![format!(
            r#"{{"v":3,"run":{n},"step":0,"t":0,"type":"RunStarted","task_id":"t{n}","task":"{task}","index":{n},"total":9}}"#
        )];
        for (i, (tool, ok)) in calls.iter().enumerate() {
            lines.push(format!(
                r#"{{"v":3,"run":{n},"step":1,"t":0,"type":"ToolCall","call":{i},"tool":"{tool}","args":{{}}}}"#
            ));
            let outcome = if *ok {
                r#""status":"ok","value":1"#.to_string()
            } else {
                r#""status":"err","error":{"kind":"failed","message":"down"}"#.to_string()
            };
            lines.push(format!(
                r#"{{"v":3,"run":{n},"step":1,"t":0,"type":"ToolResult","call":{i},"tool":"{tool}",{outcome},"latency_ms":0,"cost":1.0}}"#
            ));
        }
        lines.push(format!(
            r#"{{"v":3,"run":{n},"step":2,"t":0,"type":"RunFinished",{finished},"cost":1.0,"usage":{{"prompt_tokens":0,"completion_tokens":0}},"steps":2,"tool_calls":1}}"#
        ));
        lines.iter().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}"))).collect()
    }

    #[test]
    fn only_answered_runs_whose_calls_all_succeeded_are_trajectories() {
        let answered = r#""outcome":"answered","answer":"Paris""#;
        let events: Vec<Event> = [
            run(1, "capital", &[("geo_lookup", true), ("calculator", true)], answered),
            run(2, "capital", &[("geo_lookup", false), ("geo_lookup_mirror", true)], answered),
            run(3, "capital", &[("geo_lookup", true)], r#""outcome":"max_steps""#),
            run(4, "hello", &[], answered),
            run(5, "capital", &[("geo_lookup", true)], &format!(r#"{answered},"success":false"#)),
        ]
        .concat();
        let (kept, left) = trajectories_from_events(&events);
        assert_eq!(
            kept,
            [Trajectory { query: "capital".into(), tools: vec!["geo_lookup".into(), "calculator".into()] }]
        );
        let why: Vec<(u32, &str)> = left.iter().map(|(r, w)| (*r, w.as_str())).collect();
        assert_eq!(
            why,
            [
                (2, "a call of 'geo_lookup' failed"),
                (3, "it did not finish with an answer"),
                (4, "it called no tool"),
                (5, "its answer was judged wrong")
            ]
        );
    }
}
