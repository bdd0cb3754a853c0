//! The prompt protocol: what is rendered can be read back (the simulated
//! model depends on it), and replies are read leniently.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::json;

use switchyard::model::{ChatResponse, ToolCallRequest, Usage};
use switchyard::strategy::prompt::*;

fn reply(text: &str) -> ChatResponse {
    ChatResponse::new(text, vec![], Usage::default())
}

fn view() -> ActorInput {
    ActorInput {
        task: "What is the capital of 'France'?".into(),
        history: vec![
            HistoryEntry {
                tool: "geo_lookup".into(),
                arguments: json!({"country": "France"}),
                observation: Observation::Error("injected fault: error".into()),
            },
            HistoryEntry {
                tool: "web_search".into(),
                arguments: json!({"query": "x"}),
                observation: Observation::Refused("'web_search' is not among the candidates".into()),
            },
            HistoryEntry {
                tool: "geo_lookup_mirror".into(),
                arguments: json!({"country": "France"}),
                observation: Observation::Result(json!({"capital": "Paris"})),
            },
        ],
        candidates: vec![
            CandidateInput {
                name: "calculator".into(),
                weight: Some("37".into()),
                description: "Evaluate: an expression".into(),
                parameters: json!({"type": "object"}),
            },
            finish_candidate(Some("12".into())),
        ],
        notes: vec!["Your last reply could not be read.".into()],
    }
}

#[test]
fn actor_prompt_round_trips() {
    let v = view();
    let parsed = parse_actor_prompt(&render_actor(&v)).unwrap();
    assert_eq!(parsed, v);
}

/// The actor's prompt at steps 1..=n of a task over `v`'s candidates: the
/// history grows by one entry a step, as a run's does.
fn steps(v: &ActorInput, layout: Layout) -> Vec<String> {
    let lines: Vec<CandidateLine> = v.candidates.iter().map(CandidateLine::from).collect();
    (0..=v.history.len())
        .map(|k| {
            let m = render_actor_prompt(&v.task, &v.history[..k], &lines, &[], layout);
            m.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n")
        })
        .collect()
}

#[test]
fn steady_candidates_go_first_so_each_step_s_prompt_starts_with_the_last_one() {
    let v = ActorInput { notes: vec![], ..view() };
    let first = steps(&v, Layout::CandidatesFirst);
    // After the first step (whose history reads "(none)"), every prompt is
    // the one before it with one more history entry: a prompt cache serves
    // all of it.
    for w in first[1..].windows(2) {
        assert!(w[1].starts_with(&w[0]), "not a prefix:\n{}\n---\n{}", w[0], w[1]);
    }
    assert!(first[0].find("Candidates:").unwrap() < first[0].find("Task:").unwrap());
    // Changing candidates go last: the shared start ends where they begin.
    let last = steps(&v, Layout::CandidatesLast);
    assert!(last[0].find("Candidates:").unwrap() > last[0].find("History:").unwrap());
    // Either way the simulated model reads the same view.
    let lines: Vec<CandidateLine> = v.candidates.iter().map(CandidateLine::from).collect();
    let first = render_actor_prompt(&v.task, &v.history, &lines, &v.notes, Layout::CandidatesFirst);
    assert_eq!(parse_actor_prompt(&first).unwrap(), v);
}

#[test]
fn changing_candidates_are_described_once_and_named_on_the_last_line() {
    let v = ActorInput { notes: vec!["Mind the budget.".into()], ..view() };
    let lines: Vec<CandidateLine> = v.candidates.iter().map(CandidateLine::from).collect();
    // Step 1 offers the first candidate and finish; step 2 adds the others.
    let at = |offered: &[CandidateLine], described: &[CandidateLine], k: usize| {
        let m = render_actor_prompt(&v.task, &v.history[..k], offered, &[], Layout::ToolsSoFar(described));
        m.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n")
    };
    fn plain<'a>(c: &CandidateLine<'a>) -> CandidateLine<'a> {
        CandidateLine { weight: None, ..*c }
    }
    let first: Vec<CandidateLine> = [lines[0], *lines.last().unwrap()].into_iter().collect();
    let so_far_1: Vec<CandidateLine> = first.iter().map(plain).collect();
    let so_far_2: Vec<CandidateLine> = lines.iter().map(plain).collect();
    let step1 = at(&first, &so_far_1, 0);
    let step2 = at(&lines, &so_far_2, 1);
    // What step 1 described comes first at step 2 too: only the new tools,
    // the task, the history and the last line are read again.
    let tools_1 = &step1[..step1.find("Task:").unwrap()];
    let shared = tools_1.trim_end_matches('\n');
    assert!(step2.starts_with(shared), "{step1}\n---\n{step2}");
    assert!(step2.find("Tools:").unwrap() < step2.find("Task:").unwrap());
    let last = step2.lines().last().unwrap();
    assert!(last.starts_with("Candidates now: ") && !last.contains("parameters"), "{last}");
    // The simulated model reads the step's candidates with their weights.
    let m = render_actor_prompt(&v.task, &v.history, &lines, &v.notes, Layout::ToolsSoFar(&so_far_2));
    assert_eq!(parse_actor_prompt(&m).unwrap(), v);
    let m = render_actor_prompt(&v.task, &v.history, &first, &v.notes, Layout::ToolsSoFar(&so_far_2));
    let read = parse_actor_prompt(&m).unwrap();
    assert_eq!(read.candidates, [v.candidates[0].clone(), v.candidates.last().unwrap().clone()]);
}

#[test]
fn eval_and_judge_prompts_round_trip() {
    let e = EvalInput { task: "t".into(), steps: view().history, answer: Some("Paris".into()) };
    assert_eq!(parse_eval_prompt(&render_eval(&e)).unwrap(), e);
    let e = EvalInput { answer: None, ..e };
    assert_eq!(parse_eval_prompt(&render_eval(&e)).unwrap(), e);
    let j = JudgeInput {
        task: "t".into(),
        tool: "geo".into(),
        arguments: json!({"a": 1}),
        observation: Observation::Result(json!("Nothing Found")),
    };
    assert_eq!(parse_judge_prompt(&render_judge(&j)).unwrap(), j);
    // A prompt of one role is not read as another's.
    assert!(parse_actor_prompt(&render_judge(&j)).is_none());
}

#[test]
fn replies_are_read_leniently() {
    let call = |t: &str, a| ActorAction::Call { tool: t.into(), arguments: a };
    assert_eq!(
        parse_actor_reply(&reply(r#"{"tool": "calc", "arguments": {"x": 1}}"#)).unwrap(),
        call("calc", json!({"x": 1}))
    );
    assert_eq!(
        parse_actor_reply(&reply("Sure!\n```json\n{\"name\": \"calc\", \"arguments\": \"{\\\"x\\\": 2}\"}\n```"))
            .unwrap(),
        call("calc", json!({"x": 2}))
    );
    assert_eq!(
        parse_actor_reply(&reply("Thought: use it\nAction: calc\nAction Input: {\"x\": 3}")).unwrap(),
        call("calc", json!({"x": 3}))
    );
    assert_eq!(parse_actor_reply(&reply("Action: calc {\"x\": 4}")).unwrap(), call("calc", json!({"x": 4})));
    assert_eq!(
        parse_actor_reply(&reply("Thought: done\nFinal Answer: Paris")).unwrap(),
        ActorAction::Finish { answer: "Paris".into() }
    );
    assert_eq!(
        parse_actor_reply(&reply(r#"{"tool": "finish", "answer": 42}"#)).unwrap(),
        ActorAction::Finish { answer: "42".into() }
    );
    let native = ChatResponse {
        text: String::new(),
        tool_calls: vec![ToolCallRequest { name: "calc".into(), arguments: json!({"x": 5}) }],
        usage: Usage::default(),
        capped: false,
        wire: None,
    };
    assert_eq!(parse_actor_reply(&native).unwrap(), call("calc", json!({"x": 5})));
    let err = parse_actor_reply(&reply("I am not sure what to do.")).unwrap_err();
    assert!(err.to_string().contains("I am not sure"));
}

#[test]
fn evaluator_scores_are_clamped_and_checked() {
    let s = parse_eval_reply(&reply(r#"Scores: {"scores": {"a": 5, "b": -9, "c": "2"}}"#)).unwrap();
    assert_eq!(s, BTreeMap::from([("a".to_string(), 3), ("b".to_string(), -3), ("c".to_string(), 2)]));
    assert!(parse_eval_reply(&reply(r#"{"scores": {"a": "high"}}"#)).is_err());
    assert!(!parse_judge_reply(&reply(r#"{"helpful": false}"#)).unwrap());
    assert!(parse_judge_reply(&reply("This was helpful.")).unwrap());
}

#[test]
fn the_actor_schema_allows_exactly_the_offered_names() {
    let s = actor_schema(&["a".to_string(), "b".to_string()]);
    assert_eq!(s.schema["properties"]["tool"]["enum"], json!(["a", "b", "finish"]));
}

proptest! {
    // Whatever the task, notes and observations hold, the sim reads back
    // what the strategy rendered.
    #[test]
    fn any_actor_view_round_trips(task in "[a-zA-Z0-9 ?'.,:-]{1,60}", note in "[a-zA-Z ]{0,30}", obs in "[a-zA-Z0-9 :]{0,40}", w in 0u32..1000) {
        let task = task.trim().to_string();
        prop_assume!(!task.is_empty());
        let v = ActorInput {
            task,
            history: vec![HistoryEntry { tool: "t1".into(), arguments: json!({"q": obs.clone()}), observation: Observation::Result(json!({"text": obs})) }],
            candidates: vec![CandidateInput { name: "t2".into(), weight: Some(w.to_string()), description: "does things".into(), parameters: json!({"type": "object", "properties": {}}) }, finish_candidate(None)],
            notes: if note.trim().is_empty() { vec![] } else { vec![note.trim().to_string()] },
        };
        prop_assert_eq!(parse_actor_prompt(&render_actor(&v)).unwrap(), v);
    }
}
