//! The ReWOO plan parser: formats models really write, and the errors a
//! model is shown on retry.

use std::collections::BTreeMap;

use proptest::prelude::*;
use switchyard::strategy::rewoo::parse::{
    RewooCall, RewooPlan, RewooPlanError, RewooStep, layers, parse_plan, substitute,
};

const TOOLS: &[&str] =
    &["geo_lookup", "Wikipedia", "google_search", "calculator", "currency_convert", "currency_convert_backup"];

fn tools() -> Vec<String> {
    TOOLS.iter().map(|s| s.to_string()).collect()
}

fn parse(text: &str) -> Result<RewooPlan, RewooPlanError> {
    parse_plan(text, &tools())
}

fn call(tool: &str, input: &str) -> RewooCall {
    RewooCall { tool: tool.into(), input: input.into() }
}

fn calls_of(plan: &RewooPlan, evidence: u32) -> Vec<RewooCall> {
    plan.steps.iter().find(|s| s.evidence == evidence).expect("step present").calls.clone()
}

#[test]
fn the_briefs_example_parses() {
    let text = r##"Plan: find the country's currency code.
#E1 = geo_lookup[Japan]
Plan: convert with both converters of one category, concurrently.
#E2 = currency_convert[{"amount": 100, "from_currency": "USD", "to_currency": "#E1"}]; currency_convert_backup[100 USD to #E1]
Plan: combine.
#E10 = calculator[#E2 * #E1]"##;
    let plan = parse(text).unwrap();
    assert_eq!(
        plan.steps,
        vec![
            RewooStep {
                evidence: 1,
                thought: "find the country's currency code.".into(),
                calls: vec![call("geo_lookup", "Japan")],
                depends_on: vec![],
            },
            RewooStep {
                evidence: 2,
                thought: "convert with both converters of one category, concurrently.".into(),
                calls: vec![
                    call("currency_convert", r##"{"amount": 100, "from_currency": "USD", "to_currency": "#E1"}"##),
                    call("currency_convert_backup", "100 USD to #E1"),
                ],
                depends_on: vec![1],
            },
            RewooStep {
                evidence: 10,
                thought: "combine.".into(),
                calls: vec![call("calculator", "#E2 * #E1")],
                depends_on: vec![1, 2],
            },
        ]
    );
}

#[test]
fn every_separator_splits_a_multi_tool_step() {
    for sep in ["; ", ";", " | ", "|", " and ", " AND ", ", ", ",", " && ", " "] {
        let text = format!("#E1 = Wikipedia[Paris, France [city]]{sep}google_search[Paris, population (2020)]");
        let plan = parse(&text).unwrap_or_else(|e| panic!("separator {sep:?}: {e}"));
        assert_eq!(
            calls_of(&plan, 1),
            vec![call("Wikipedia", "Paris, France [city]"), call("google_search", "Paris, population (2020)")],
            "separator {sep:?}"
        );
    }
}

#[test]
fn three_calls_and_commas_inside_json_inputs() {
    let text = r#"#E1 = currency_convert[{"amounts": [1, 2], "note": "a, b] c"}], currency_convert_backup[1, 2 | 3]; calculator[1 and 2]"#;
    let plan = parse(text).unwrap();
    assert_eq!(
        calls_of(&plan, 1),
        vec![
            call("currency_convert", r#"{"amounts": [1, 2], "note": "a, b] c"}"#),
            call("currency_convert_backup", "1, 2 | 3"),
            call("calculator", "1 and 2"),
        ]
    );
}

#[test]
fn evidence_ten_and_beyond_is_not_confused_with_evidence_one() {
    let mut text = String::new();
    for n in 1..=11 {
        text.push_str(&format!("Plan: step {n}\n#E{n} = calculator[{n}]\n"));
    }
    text.push_str("#E12 = calculator[#E1 + #E10 + #E11]\n");
    let plan = parse(&text).unwrap();
    assert_eq!(plan.steps.len(), 12);
    assert_eq!(plan.steps[11].depends_on, vec![1, 10, 11]);

    let evidence: BTreeMap<u32, Option<String>> =
        [(1, Some("one".to_string())), (10, Some("ten".to_string()))].into_iter().collect();
    assert_eq!(substitute("#E1 + #E10 + #E11 + #e10", &evidence), "one + ten + #E11 + ten");
    assert_eq!(substitute("#E10#E1", &evidence), "tenone");
}

#[test]
fn substitute_turns_filtered_evidence_into_null() {
    let evidence: BTreeMap<u32, Option<String>> = [(1, None), (2, Some("JPY".to_string()))].into_iter().collect();
    assert_eq!(substitute(r##"{"a": #E1, "to": "#E2"}"##, &evidence), r#"{"a": null, "to": "JPY"}"#);
    assert_eq!(substitute("no references, # E1, #E, #Ex", &evidence), "no references, # E1, #E, #Ex");
    // A number too large for u32 is not a reference and must not panic.
    assert_eq!(substitute("#E99999999999", &evidence), "#E99999999999");
}

#[test]
fn nested_references_count_as_dependencies() {
    let text = r##"#E1 = geo_lookup[Japan]
#E2 = Wikipedia[Tokyo]
#E3 = currency_convert[{"amount": 5, "route": {"from": "USD", "to": ["#E1", {"via": "#E2"}]}}]
#E4 = calculator[max([#E3, min([#E1])])]"##;
    let plan = parse(text).unwrap();
    assert_eq!(plan.steps[2].depends_on, vec![1, 2]);
    assert_eq!(plan.steps[3].depends_on, vec![1, 3]);
    assert_eq!(calls_of(&plan, 4), vec![call("calculator", "max([#E3, min([#E1])])")]);
}

#[test]
fn lenient_formats_are_accepted() {
    let text = r#"Sure! Here is how I would solve it.

```text
1. **Plan:** Look up the country
   of the city.
- #e1=GEO_LOOKUP[ Kyoto ]
* plan: search the web
  #E3   =   `Google_Search`[currency of #E1]
2) #E5 = wikipedia[#E1] | Google_search[{
     "q": "currency of #E1",
     "limit": [1, 2]
   }]
PLAN 4: compute. #E7 = calculator[#E3 * 2]
```

That should answer the question. Plan: none needed.
"#;
    let plan = parse(text).unwrap();
    assert_eq!(
        plan.steps,
        vec![
            RewooStep {
                evidence: 1,
                thought: "Look up the country of the city.".into(),
                calls: vec![call("geo_lookup", "Kyoto")],
                depends_on: vec![],
            },
            RewooStep {
                evidence: 3,
                thought: "search the web".into(),
                calls: vec![call("google_search", "currency of #E1")],
                depends_on: vec![1],
            },
            RewooStep {
                evidence: 5,
                thought: String::new(),
                calls: vec![
                    call("Wikipedia", "#E1"),
                    call("google_search", "{\n     \"q\": \"currency of #E1\",\n     \"limit\": [1, 2]\n   }"),
                ],
                depends_on: vec![1],
            },
            RewooStep {
                evidence: 7,
                thought: "compute.".into(),
                calls: vec![call("calculator", "#E3 * 2")],
                depends_on: vec![3],
            },
        ]
    );
}

#[test]
fn trailing_remarks_on_a_step_line_are_ignored() {
    let plan =
        parse("#E1 = Wikipedia[Kyoto], which gives the country\n#E2 = calculator[1] then see [the notes]").unwrap();
    assert_eq!(calls_of(&plan, 1), vec![call("Wikipedia", "Kyoto")]);
    assert_eq!(calls_of(&plan, 2), vec![call("calculator", "1")]);
}

#[test]
fn an_unbalanced_quote_in_free_text_still_parses() {
    let plan = parse(r#"#E1 = google_search[5" screen phones]; Wikipedia[screen]"#).unwrap();
    assert_eq!(calls_of(&plan, 1), vec![call("google_search", r#"5" screen phones"#), call("Wikipedia", "screen")]);
}

#[test]
fn empty_plans_are_rejected() {
    for text in ["", "   \n\n", "I cannot help with that.", "```\n```", "Plan: think hard.\nPlan: then answer."] {
        assert_eq!(parse(text), Err(RewooPlanError::Empty), "{text:?}");
    }
    assert!(RewooPlanError::Empty.to_string().contains("#E1 = Tool[input]"));
}

#[test]
fn a_step_without_equals_is_a_bad_line() {
    let err = parse("Plan: look up.\n#E1 = geo_lookup[Japan]\n#E2 Wikipedia[Tokyo]").unwrap_err();
    match &err {
        RewooPlanError::BadLine { line, text, why } => {
            assert_eq!(*line, 3);
            assert_eq!(text, "#E2 Wikipedia[Tokyo]");
            assert!(why.contains('='), "{why}");
        }
        other => panic!("expected BadLine, got {other:?}"),
    }
    assert!(err.to_string().starts_with("line 3:"), "{err}");
}

#[test]
fn a_step_without_a_call_is_a_bad_line() {
    assert!(matches!(parse("#E1 = geo_lookup"), Err(RewooPlanError::BadLine { line: 1, .. })));
    assert!(matches!(parse("#E1 = [Japan]"), Err(RewooPlanError::BadLine { line: 1, .. })));
}

#[test]
fn unbalanced_brackets_are_a_bad_line() {
    let err = parse("#E1 = geo_lookup[Japan]\n#E2 = Wikipedia[Tokyo [city]\n#E3 = calculator[1]").unwrap_err();
    match &err {
        RewooPlanError::BadLine { line, why, .. } => {
            assert_eq!(*line, 2);
            assert!(why.contains("unbalanced"), "{why}");
        }
        other => panic!("expected BadLine, got {other:?}"),
    }
    assert!(matches!(parse("#E1 = geo_lookup[Japan]]"), Err(RewooPlanError::BadLine { line: 1, .. })));
    assert!(matches!(parse("#E1 = geo_lookup[{\"a\": [1, 2}"), Err(RewooPlanError::BadLine { line: 1, .. })));
}

#[test]
fn an_unknown_tool_names_its_line_and_the_known_tools() {
    let err = parse("#E1 = geo_lookup[Japan]\n\n#E2 = bing_search[Tokyo]").unwrap_err();
    assert_eq!(err, RewooPlanError::UnknownTool { line: 3, tool: "bing_search".into(), known: tools() });
    let msg = err.to_string();
    assert!(msg.contains("line 3") && msg.contains("bing_search"), "{msg}");
    for t in TOOLS {
        assert!(msg.contains(t), "{msg} lacks {t}");
    }
    // The second call of a step is checked too.
    assert!(matches!(
        parse("#E1 = geo_lookup[Japan]; bing[Japan]"),
        Err(RewooPlanError::UnknownTool { line: 1, ref tool, .. }) if tool == "bing"
    ));
}

#[test]
fn a_huge_library_is_summarised_in_the_message() {
    let many: Vec<String> = (0..500).map(|i| format!("tool_{i}")).collect();
    let err = parse_plan("#E1 = nope[x]", &many).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("tool_0") && msg.contains("470 more") && !msg.contains("tool_499"), "{msg}");
}

#[test]
fn duplicate_evidence_is_rejected() {
    let err = parse("#E1 = geo_lookup[Japan]\n#E2 = Wikipedia[#E1]\n#E1 = calculator[1]").unwrap_err();
    assert_eq!(err, RewooPlanError::DuplicateEvidence { evidence: 1, line: 3 });
    assert!(err.to_string().contains("#E1"), "{err}");
}

#[test]
fn forward_and_self_references_are_rejected() {
    let err = parse("#E1 = geo_lookup[#E2]\n#E2 = Wikipedia[Tokyo]").unwrap_err();
    assert_eq!(err, RewooPlanError::ForwardReference { evidence: 1, refers_to: 2 });
    assert!(err.to_string().contains("#E2"), "{err}");
    assert_eq!(parse("#E1 = calculator[#E1 + 1]"), Err(RewooPlanError::ForwardReference { evidence: 1, refers_to: 1 }));
}

#[test]
fn references_to_missing_steps_are_rejected() {
    let err = parse("#E1 = geo_lookup[Japan]\n#E3 = calculator[{\"x\": [\"#E2\"]}]").unwrap_err();
    assert_eq!(err, RewooPlanError::MissingReference { evidence: 3, refers_to: 2 });
    assert!(err.to_string().contains("no step produces #E2"), "{err}");
}

#[test]
fn layers_of_a_diamond() {
    let text = "#E1 = geo_lookup[Japan]
#E2 = Wikipedia[#E1]
#E3 = google_search[#E1]; Wikipedia[x]
#E9 = calculator[1 + 1]
#E4 = calculator[#E2 + #E3]
#E5 = calculator[#E4 + #E9]";
    let plan = parse(text).unwrap();
    assert_eq!(layers(&plan), vec![vec![1, 9], vec![2, 3], vec![4], vec![5]]);
}

#[test]
fn layers_tolerate_hand_made_plans() {
    let step = |evidence, depends_on: Vec<u32>| RewooStep {
        evidence,
        thought: String::new(),
        calls: vec![call("calculator", "1")],
        depends_on,
    };
    // A reference to a missing step is ignored; a cycle must not hang.
    let plan = RewooPlan { steps: vec![step(1, vec![7]), step(2, vec![3]), step(3, vec![2])] };
    let got = layers(&plan);
    assert_eq!(got.iter().map(Vec::len).sum::<usize>(), 3);
    assert_eq!(got[0], vec![1]);
    assert!(layers(&RewooPlan { steps: vec![] }).is_empty());
}

#[derive(Debug, Clone)]
struct GenCall {
    tool: usize,
    shout: bool,
    text: String,
    json: bool,
    refs: Vec<prop::sample::Index>,
}

#[derive(Debug, Clone)]
struct GenStep {
    gap: u32,
    thought: Option<String>,
    calls: Vec<GenCall>,
    sep: usize,
    spaces: usize,
}

fn gen_call() -> impl Strategy<Value = GenCall> {
    (
        0..TOOLS.len(),
        any::<bool>(),
        "[a-zA-Z0-9 ,.()]{0,20}",
        any::<bool>(),
        prop::collection::vec(any::<prop::sample::Index>(), 0..3),
    )
        .prop_map(|(tool, shout, text, json, refs)| GenCall { tool, shout, text, json, refs })
}

fn gen_step() -> impl Strategy<Value = GenStep> {
    (
        1u32..5,
        prop::option::of("[a-z]{1,8}( [a-z]{1,8}){0,5}"),
        prop::collection::vec(gen_call(), 1..4),
        0usize..5,
        0usize..3,
    )
        .prop_map(|(gap, thought, calls, sep, spaces)| GenStep { gap, thought, calls, sep, spaces })
}

/// Renders generated steps as a model might write them, and builds the plan
/// the parser should return.
fn render(steps: &[GenStep], fenced: bool) -> (String, RewooPlan) {
    const SEPS: [&str; 5] = ["; ", " | ", " and ", ", ", ";"];
    let mut text = String::from("Here is the plan.\n\n");
    if fenced {
        text.push_str("```\n");
    }
    let mut evidence = 0;
    let mut expected = Vec::new();
    for s in steps {
        evidence += s.gap;
        let earlier: Vec<u32> = expected.iter().map(|p: &RewooStep| p.evidence).collect();
        let mut rendered = Vec::new();
        let mut calls = Vec::new();
        let mut deps = Vec::new();
        for c in &s.calls {
            let refs: Vec<u32> =
                if earlier.is_empty() { vec![] } else { c.refs.iter().map(|i| *i.get(&earlier)).collect() };
            deps.extend(&refs);
            let cites: Vec<String> = refs.iter().map(|r| format!("#E{r}")).collect();
            let input = if c.json {
                format!(
                    r#"{{"q": "{}", "refs": [{}], "nested": [[1, 2], {{"k": "{}"}}]}}"#,
                    c.text,
                    cites.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(", "),
                    cites.first().map_or("", String::as_str)
                )
            } else {
                format!("{} [{}]", c.text, cites.join(", ")).trim().to_string()
            };
            let canonical = TOOLS[c.tool];
            let written = if c.shout { canonical.to_uppercase() } else { canonical.to_string() };
            rendered.push(format!("{written}[{input}]"));
            calls.push(call(canonical, &input));
        }
        deps.sort_unstable();
        deps.dedup();
        if let Some(t) = &s.thought {
            text.push_str(&format!("Plan: {t}\n"));
        }
        let pad = " ".repeat(s.spaces);
        text.push_str(&format!("#E{evidence}{pad}={pad}{}\n", rendered.join(SEPS[s.sep])));
        expected.push(RewooStep { evidence, thought: s.thought.clone().unwrap_or_default(), calls, depends_on: deps });
    }
    if fenced {
        text.push_str("```\n");
    }
    text.push_str("\nThe solver will combine the evidence.\n");
    (text, RewooPlan { steps: expected })
}

proptest! {
    #[test]
    fn well_formed_plans_round_trip(steps in prop::collection::vec(gen_step(), 1..12), fenced in any::<bool>()) {
        let (text, expected) = render(&steps, fenced);
        let got = parse(&text);
        prop_assert_eq!(got.as_ref(), Ok(&expected), "text:\n{}", text);
        // Every layer only depends on earlier layers, and all steps appear once.
        let plan = got.unwrap();
        let order = layers(&plan);
        let mut seen = std::collections::BTreeSet::new();
        for layer in &order {
            for e in layer {
                let step = plan.steps.iter().find(|s| s.evidence == *e).unwrap();
                prop_assert!(step.depends_on.iter().all(|d| seen.contains(d)));
            }
            seen.extend(layer.iter().copied());
        }
        prop_assert_eq!(seen.len(), plan.steps.len());
    }

    #[test]
    fn arbitrary_text_never_panics(text in r"(\PC|\n|#[eE][0-9]{0,3}|[\[\]{}\x22;|,=]|Plan:| and ){0,80}") {
        let _ = parse(&text);
        let _ = substitute(&text, &BTreeMap::from([(1, Some("x".to_string())), (2, None)]));
    }
}

#[test]
fn a_json_plan_from_a_constrained_endpoint_reads_as_the_text_form() {
    let tools = vec!["geo_lookup".to_string(), "geo_lookup_mirror".to_string(), "calculator".to_string()];
    let json = r##"```json
{"steps": [
  {"thought": "look it up", "calls": [{"tool": "geo_lookup", "input": {"country": "Japan"}},
                                     {"tool": "geo_lookup_mirror", "input": {"country": "Japan"}}]},
  {"thought": "double it", "calls": [{"tool": "calculator", "input": {"expression": "#E1 * 2"}}]}
]}
```"##;
    let plan = switchyard::strategy::rewoo::parse::parse_plan_reply(json, &tools).unwrap();
    assert_eq!(plan.steps.len(), 2);
    assert_eq!(plan.steps[0].calls.len(), 2);
    assert_eq!(plan.steps[1].evidence, 2);
    assert_eq!(plan.steps[1].depends_on, vec![1]);
    let bad = r#"{"steps": [{"thought": "x", "calls": [{"tool": "nope", "input": {}}]}]}"#;
    let e = switchyard::strategy::rewoo::parse::parse_plan_reply(bad, &tools).unwrap_err().to_string();
    assert!(e.contains("unknown tool `nope`"), "{e}");
}
