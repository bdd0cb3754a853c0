//! The simulated model: determinism, candidate discipline, argument filling,
//! chains, finishing, the evaluator, the judge, token counts, and the rewoo
//! roles (classifier, planner, solver).

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};
use switchyard::model::{ChatModel, ChatRequest, ChatResponse, Message, ModelKind, Role, ToolDef};
use switchyard::sim::{SimConfig, SimModel};
use switchyard::strategy::prompt::{
    self, ActorAction, ActorInput, CandidateInput, EvalInput, HistoryEntry, JudgeInput, Observation, finish_candidate,
};
use switchyard::strategy::rewoo::parse::{RewooPlan, RewooPlanError, parse_plan};
use switchyard::strategy::rewoo::prompt::{
    self as rp, Category, ClassifierInput, PlannerInput, PlannerTool, SolverCall, SolverInput, SolverStep,
};
use switchyard::task::{Task, embedded_sample_dir, load_tasks};
use switchyard::tool::{ToolLibrary, manifest};

fn sim(seed: u64, noise: f64) -> SimModel {
    SimModel::new(SimConfig { name: "sim".into(), seed, noise })
}

fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
}

fn chat(model: &SimModel, req: &ChatRequest) -> ChatResponse {
    block(model.chat(req)).unwrap()
}

fn candidate(name: &str, weight: Option<&str>, description: &str, parameters: Value) -> CandidateInput {
    CandidateInput {
        name: name.into(),
        weight: weight.map(str::to_string),
        description: description.into(),
        parameters,
    }
}

fn string_param(name: &str, description: &str) -> Value {
    json!({"type": "object", "required": [name], "properties": {name: {"type": "string", "description": description}}})
}

const GEO_DESC: &str = "Country facts lookup: given a country name, returns its capital, population, area in km2, currency code, continent and official languages.";
const MIRROR_DESC: &str = "Country facts lookup (mirror): given a country name, returns its capital, population, area in km2, currency code, continent and official languages.";

fn geo(name: &str, weight: Option<&str>) -> CandidateInput {
    let desc = if name.contains("mirror") { MIRROR_DESC } else { GEO_DESC };
    candidate(name, weight, desc, string_param("country", "The country's name in English."))
}

fn actor_request(view: &ActorInput) -> ChatRequest {
    ChatRequest::new(Role::Actor, prompt::render_actor(view))
}

fn act_with(model: &SimModel, view: &ActorInput) -> ActorAction {
    prompt::parse_actor_reply(&chat(model, &actor_request(view))).unwrap()
}

fn act(view: &ActorInput) -> ActorAction {
    act_with(&sim(1, 0.0), view)
}

fn view(task: &str, history: Vec<HistoryEntry>, mut candidates: Vec<CandidateInput>) -> ActorInput {
    candidates.push(finish_candidate(None));
    ActorInput { task: task.into(), history, candidates, notes: vec![] }
}

fn called(action: &ActorAction) -> (&str, &Value) {
    match action {
        ActorAction::Call { tool, arguments } => (tool, arguments),
        other => panic!("expected a call, got {other:?}"),
    }
}

fn answer(action: &ActorAction) -> &str {
    match action {
        ActorAction::Finish { answer } => answer,
        other => panic!("expected a finish, got {other:?}"),
    }
}

fn step(tool: &str, arguments: Value, observation: Observation) -> HistoryEntry {
    HistoryEntry { tool: tool.into(), arguments, observation }
}

#[test]
fn info_says_simulated() {
    let info = sim(0, 0.1).info();
    assert_eq!((info.name.as_str(), info.kind, info.simulated), ("sim", ModelKind::Sim, true));
    let cfg: SimConfig = serde_json::from_value(json!({"seed": 5})).unwrap();
    assert_eq!(cfg, SimConfig { name: "sim".into(), seed: 5, noise: 0.1 });
    assert_eq!(SimModel::new(SimConfig { noise: 7.0, ..cfg }).config().noise, 1.0);
}

#[test]
fn same_seed_and_request_give_the_same_reply_whatever_the_order() {
    let views: Vec<ActorInput> = (0..20)
        .map(|i| {
            view(
                &format!("What is the capital of the country 'Country{i}'?"),
                vec![],
                vec![geo("geo_lookup", Some("60")), geo("geo_lookup_mirror", Some("40"))],
            )
        })
        .collect();
    let (a, b) = (sim(11, 0.5), sim(11, 0.5));
    let forward: Vec<String> = views.iter().map(|v| chat(&a, &actor_request(v)).text).collect();
    let backward: Vec<String> = views.iter().rev().map(|v| chat(&b, &actor_request(v)).text).collect();
    assert_eq!(forward, backward.into_iter().rev().collect::<Vec<_>>());
    // Asking again changes nothing either.
    assert_eq!(forward[3], chat(&a, &actor_request(&views[3])).text);
    // Another seed chooses differently somewhere.
    let c = sim(12, 0.5);
    assert!(views.iter().zip(&forward).any(|(v, f)| &chat(&c, &actor_request(v)).text != f));
}

#[test]
fn a_reply_ends_before_its_first_stop_sequence_as_a_server_s_does() {
    let v = view("What is the capital of the country 'France'?", vec![], vec![geo("geo_lookup", Some("50"))]);
    let whole = chat(&sim(1, 0.1), &actor_request(&v));
    let at = whole.text.find("\"arguments\"").expect("the reply names its arguments");
    let cut = chat(&sim(1, 0.1), &actor_request(&v).stopping_at(&["\"no such text\"", "\"arguments\""]));
    assert_eq!(cut.text, whole.text[..at]);
    assert!(cut.usage.completion_tokens < whole.usage.completion_tokens);
    // The stop sequences are not part of the draw: the same reply up to the cut.
    let none = chat(&sim(1, 0.1), &actor_request(&v).stopping_at(switchyard::strategy::prompt::ACTOR_STOP));
    assert_eq!(none.text, whole.text);
}

#[test]
fn usage_is_the_real_bpe_count_of_the_texts() {
    let bpe = tiktoken_rs::cl100k_base().unwrap();
    let count = |s: &str| bpe.encode_ordinary(s).len() as u64;
    let v = view("What is the capital of the country 'France'?", vec![], vec![geo("geo_lookup", Some("50"))]);
    let mut req = actor_request(&v);
    let r = chat(&sim(1, 0.1), &req);
    let prompt: u64 = req.messages.iter().map(|m| 4 + count(&m.content)).sum::<u64>() + 3;
    assert_eq!(r.usage.prompt_tokens, prompt);
    assert_eq!(r.usage.completion_tokens, count(&r.text));
    // Offered tool definitions are part of the prompt.
    req.tools = vec![ToolDef {
        name: "geo_lookup".into(),
        description: GEO_DESC.into(),
        parameters: string_param("country", ""),
    }];
    let with_tools = chat(&sim(1, 0.1), &req);
    assert_eq!(with_tools.usage.prompt_tokens, prompt + count(&serde_json::to_string(&req.tools).unwrap()));
}

#[test]
fn fills_each_kind_of_parameter() {
    // Dates in order, whatever order the schema lists them in.
    let days = candidate(
        "days_between",
        None,
        "Count the number of days between two calendar dates.",
        json!({"type": "object", "required": ["end_date", "start_date"], "properties": {
            "end_date": {"type": "string", "format": "date"}, "start_date": {"type": "string", "format": "date"}}}),
    );
    let a = act(&view("How many days are there between 2024-01-01 and 2024-12-25?", vec![], vec![days]));
    assert_eq!(called(&a).1, &json!({"start_date": "2024-01-01", "end_date": "2024-12-25"}));

    // Numbers (dates' digits excluded), an integer, and enums by mention order.
    let add = candidate(
        "date_add_days",
        None,
        "Add a number of days to a calendar date.",
        json!({"type": "object", "required": ["date", "days"], "properties": {
            "date": {"type": "string", "format": "date"}, "days": {"type": "integer"}}}),
    );
    let a = act(&view("Add -30 days to the date 2024-03-01: what date is it?", vec![], vec![add]));
    assert_eq!(called(&a).1, &json!({"date": "2024-03-01", "days": -30}));
    let units = json!(["kilometer", "mile", "celsius", "fahrenheit"]);
    let conv = candidate(
        "unit_convert",
        None,
        "Convert a measurement between units.",
        json!({"type": "object", "required": ["value", "from_unit", "to_unit"], "properties": {
            "to_unit": {"type": "string", "enum": units}, "value": {"type": "number"}, "from_unit": {"type": "string", "enum": units}}}),
    );
    let a = act(&view("Convert 98.6 fahrenheit to celsius.", vec![], vec![conv]));
    assert_eq!(called(&a).1, &json!({"value": 98.6, "from_unit": "fahrenheit", "to_unit": "celsius"}));

    // An expression.
    let calc = candidate(
        "calculator",
        None,
        "Evaluate an arithmetic expression.",
        string_param("expression", "The expression."),
    );
    let a = act(&view("Calculate (17 + 5) * 3 - 4.", vec![], vec![calc]));
    assert_eq!(called(&a).1, &json!({"expression": "(17 + 5) * 3 - 4"}));

    // Quoted phrases, proper nouns, and an array of numbers.
    let a = act(&view("What is the capital of the country 'New Zealand'?", vec![], vec![geo("geo_lookup", None)]));
    assert_eq!(called(&a).1, &json!({"country": "New Zealand"}));
    let a = act(&view("What is the capital of the country of South Africa?", vec![], vec![geo("geo_lookup", None)]));
    assert_eq!(called(&a).1, &json!({"country": "South Africa"}));
    let stats = candidate(
        "number_stats",
        None,
        "Mean, median and more of a list of numbers.",
        json!({"type": "object", "required": ["numbers"], "properties": {"numbers": {"type": "array", "items": {"type": "number"}}}}),
    );
    let a = act(&view("What is the median of the numbers 12, 7, 3.5 and 1,200?", vec![], vec![stats]));
    assert_eq!(called(&a).1, &json!({"numbers": [12, 7, 3.5, 1200]}));
}

#[test]
fn a_phrase_labelled_as_something_else_is_not_used() {
    // 'Lyon' is a city: the actor does not pass it as a country, and
    // prefers the tool it can fill.
    let search = candidate(
        "city_search",
        Some("10"),
        "Find a city by its name and return its city_id.",
        string_param("city_name", "The city's name."),
    );
    let v = view(
        "What is the currency code of the country where the city 'Lyon' is located?",
        vec![],
        vec![geo("geo_lookup", Some("20")), search],
    );
    let a = act(&v);
    assert_eq!(called(&a), ("city_search", &json!({"city_name": "Lyon"})));
    // Then the country comes from the result.
    let history = vec![step(
        "city_search",
        json!({"city_name": "Lyon"}),
        Observation::Result(json!({"city_id": "C0002", "name": "Lyon", "country": "France"})),
    )];
    let v = ActorInput { history, ..v };
    assert_eq!(called(&act(&v)), ("geo_lookup", &json!({"country": "France"})));
}

#[test]
fn a_chain_continues_with_the_id_just_returned() {
    let stats = candidate(
        "city_stats",
        Some("5"),
        "Statistics of a city given its city_id: city population, elevation in metres.",
        json!({"type": "object", "required": ["city_id"], "properties": {"city_id": {"type": "string"}}}),
    );
    let search = candidate(
        "city_search",
        Some("50"),
        "Find a city by its name and return its city_id.",
        string_param("city_name", "The city's name."),
    );
    let history = vec![step(
        "city_search",
        json!({"city_name": "Denver"}),
        Observation::Result(json!({"city_id": "C0016", "name": "Denver"})),
    )];
    let a = act(&view(
        "What is the elevation in metres of the city 'Denver'?",
        history.clone(),
        vec![search.clone(), stats.clone()],
    ));
    assert_eq!(called(&a), ("city_stats", &json!({"city_id": "C0016"})));
    // And finishes with the field the task asks about.
    let mut h = history;
    h.push(step(
        "city_stats",
        json!({"city_id": "C0016"}),
        Observation::Result(json!({"name": "Denver", "population": 717000, "elevation_m": 1609})),
    ));
    let a = act(&view("What is the elevation in metres of the city 'Denver'?", h, vec![search, stats]));
    assert_eq!(answer(&a), "1609");
}

#[test]
fn finishes_when_the_result_answers_and_reads_the_asked_field() {
    let h = vec![step(
        "geo_lookup",
        json!({"country": "France"}),
        Observation::Result(json!({"name": "France", "capital": "Paris", "currency_code": "EUR"})),
    )];
    let v = view(
        "What is the capital of the country 'France'?",
        h,
        vec![geo("geo_lookup", Some("30")), geo("geo_lookup_mirror", Some("20"))],
    );
    assert_eq!(answer(&act(&v)), "Paris");
    let v = ActorInput { task: "Which currency code does the country 'France' use?".into(), ..v };
    assert_eq!(answer(&act(&v)), "EUR");
}

#[test]
fn a_failed_tool_is_not_tried_again_and_the_twin_takes_over() {
    let h = vec![step("geo_lookup", json!({"country": "France"}), Observation::Error("injected fault: error".into()))];
    for seed in 0..50 {
        let v = view(
            "What is the capital of the country 'France'?",
            h.clone(),
            vec![geo("geo_lookup", Some("90")), geo("geo_lookup_mirror", Some("10"))],
        );
        assert_eq!(called(&act_with(&sim(seed, 0.0), &v)).0, "geo_lookup_mirror", "seed {seed}");
    }
    // Repeated failures: it gives up.
    let fail = |t: &str| step(t, json!({"country": "France"}), Observation::Error("boom".into()));
    let v = view(
        "What is the capital of the country 'France'?",
        vec![
            fail("geo_lookup"),
            fail("geo_lookup_mirror"),
            step("web_search", json!({"query": "France"}), Observation::Result(json!("Nothing Found"))),
        ],
        vec![geo("geo_lookup", Some("50"))],
    );
    assert!(answer(&act(&v)).contains("could not find"));
}

#[test]
fn twins_are_chosen_in_proportion_to_their_weights() {
    let share = |wp: &str, wm: &str| {
        let v = view(
            "What is the capital of the country 'Chile'?",
            vec![],
            vec![geo("geo_lookup", Some(wp)), geo("geo_lookup_mirror", Some(wm))],
        );
        let n = 400;
        let primary = (0..n).filter(|&seed| called(&act_with(&sim(seed, 0.0), &v)).0 == "geo_lookup").count();
        primary as f64 / n as f64
    };
    let s = share("75", "25");
    assert!((0.65..0.85).contains(&s), "{s}");
    let s = share("20", "80");
    assert!((0.1..0.3).contains(&s), "{s}");
    // Decimal weights are read the same way.
    let s = share("0.5", "0.5");
    assert!((0.4..0.6).contains(&s), "{s}");
}

#[test]
fn unreadable_prompts_get_plain_answers() {
    let model = sim(3, 0.1);
    let r = chat(&model, &ChatRequest::new(Role::Actor, vec![Message::user("hello")]));
    assert!(answer(&prompt::parse_actor_reply(&r).unwrap()).contains("could not read"));
    // No labels and no plan that the engine could mistake for real ones.
    let r = chat(&model, &ChatRequest::new(Role::Classifier, vec![Message::user("plan this")]));
    assert!(rp::parse_classifier_reply(&r).is_err(), "{}", r.text);
    let r = chat(&model, &ChatRequest::new(Role::Planner, vec![Message::user("plan this")]));
    assert_eq!(parse_plan(&r.text, &["geo_lookup".to_string()]), Err(RewooPlanError::Empty));
    let r = chat(&model, &ChatRequest::new(Role::Solver, vec![Message::user("plan this")]));
    assert!(rp::parse_solver_reply(&r).unwrap().contains("could not read"));
}

fn scores(view: &EvalInput) -> BTreeMap<String, i32> {
    let r = chat(&sim(9, 0.1), &ChatRequest::new(Role::Evaluator, prompt::render_eval(view)));
    prompt::parse_eval_reply(&r).unwrap()
}

#[test]
fn the_evaluator_scores_observed_outcomes() {
    let steps = vec![
        step("geo_lookup", json!({"country": "Japan"}), Observation::Error("injected fault: error".into())),
        step("web_search", json!({"query": "Japan"}), Observation::Result(json!("Nothing Found"))),
        step(
            "geo_lookup_mirror",
            json!({"country": "Japan"}),
            Observation::Result(json!({"capital": "Tokyo", "currency_code": "JPY"})),
        ),
        step("glossary_lookup", json!({"term": "epoch"}), Observation::Result(json!({"definition": "One pass."}))),
        step(
            "currency_convert",
            json!({"amount": 100, "from_currency": "USD", "to_currency": "JPY"}),
            Observation::Result(json!({"result": 15000})),
        ),
    ];
    let v = EvalInput {
        task: "Convert 100 USD into the currency of the country 'Japan'.".into(),
        steps,
        answer: Some("15000".into()),
    };
    let s = scores(&v);
    let expect: BTreeMap<String, i32> = [
        ("geo_lookup", -3),       // failed
        ("web_search", -3),       // found nothing
        ("geo_lookup_mirror", 3), // worked on the arguments geo_lookup failed on: it saved the run
        ("glossary_lookup", 0),   // worked, but nothing used it
        ("currency_convert", 1),  // gave the answer
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(s, expect);

    // A calculator that claims a wrong result misleads; a garbage result is no result.
    let steps = vec![
        step("random_calculator", json!({"expression": "2 + 2"}), Observation::Result(json!({"result": 5}))),
        step("calculator", json!({"expression": "2 + 2"}), Observation::Result(json!({"result": 4}))),
        step("unit_convert", json!({}), Observation::Result(json!("%$#@!&*()_+{}|:<>?~`-=[]\\;',./%$#"))),
    ];
    let s = scores(&EvalInput { task: "Calculate 2 + 2.".into(), steps, answer: Some("4".into()) });
    assert_eq!((s["random_calculator"], s["calculator"], s["unit_convert"]), (-3, 1, -3));

    // A tool that failed and then worked is scored on both calls, clamped.
    let steps = vec![
        step("geo_lookup", json!({"country": "Peru"}), Observation::Error("boom".into())),
        step("geo_lookup", json!({"country": "Peru"}), Observation::Refused("not offered".into())),
        step("geo_lookup", json!({"country": "Peru"}), Observation::Result(json!({"capital": "Lima"}))),
    ];
    let s = scores(&EvalInput { task: "Capital of 'Peru'?".into(), steps, answer: Some("Lima".into()) });
    assert_eq!(s["geo_lookup"], -3);
}

#[test]
fn the_judge_calls_useful_results_helpful() {
    let judge = |obs: Observation, args: Value| {
        let v = JudgeInput {
            task: "Calculate 2 + 2.".into(),
            tool: "calculator".into(),
            arguments: args,
            observation: obs,
        };
        let r = chat(&sim(1, 0.1), &ChatRequest::new(Role::Judge, prompt::render_judge(&v)));
        prompt::parse_judge_reply(&r).unwrap()
    };
    assert!(judge(Observation::Result(json!({"result": 4})), json!({"expression": "2 + 2"})));
    assert!(!judge(Observation::Result(json!({"result": 5})), json!({"expression": "2 + 2"})));
    assert!(!judge(Observation::Result(json!("Nothing Found")), json!({})));
    assert!(!judge(Observation::Error("timed out".into()), json!({})));
}

fn arb_candidate() -> impl Strategy<Value = CandidateInput> {
    let names = prop::sample::select(vec![
        "geo_lookup",
        "geo_lookup_mirror",
        "calculator",
        "city_search",
        "city_stats",
        "web_search",
        "unit_convert",
        "tool_x",
    ]);
    let params = prop::sample::select(vec![
        string_param("country", "The country's name."),
        string_param("expression", "The arithmetic."),
        json!({"type": "object", "required": ["city_id"], "properties": {"city_id": {"type": "string"}}}),
        json!({"type": "object", "required": ["n"], "properties": {"n": {"type": "integer"}, "when": {"type": "string", "format": "date"}}}),
        json!({"type": "object", "properties": {}}),
        Value::Null,
    ]);
    let weight = prop::option::of(prop::sample::select(vec!["0", "1", "37", "0.5", "370", "x"]));
    (names, weight, "[a-zA-Z ,.]{0,60}", params).prop_map(|(n, w, d, p)| candidate(n, w, &d, p))
}

fn arb_observation() -> impl Strategy<Value = Observation> {
    prop_oneof![
        Just(Observation::Result(json!({"city_id": "C0001", "capital": "Paris"}))),
        Just(Observation::Result(json!("Nothing Found"))),
        Just(Observation::Result(json!({"result": 4}))),
        "[a-z ]{0,20}".prop_map(Observation::Error),
        "[a-z ]{0,20}".prop_map(Observation::Refused),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Whatever the prompt, the actor names a candidate or finishes.
    #[test]
    fn the_actor_only_names_offered_candidates(
        task in "[A-Za-z0-9 '?.+*()-]{1,80}",
        candidates in prop::collection::vec(arb_candidate(), 0..6),
        history in prop::collection::vec(("[a-z_]{1,12}", arb_observation()), 0..5),
        seed in any::<u64>(),
        noise in 0.0f64..=1.0,
        with_finish in any::<bool>(),
    ) {
        let mut candidates = candidates;
        if with_finish {
            candidates.push(finish_candidate(Some("5".into())));
        }
        let history = history.into_iter().map(|(t, o)| step(&t, json!({}), o)).collect();
        let v = ActorInput { task, history, candidates: candidates.clone(), notes: vec![] };
        let r = chat(&sim(seed, noise), &actor_request(&v));
        match prompt::parse_actor_reply(&r).unwrap() {
            ActorAction::Call { tool, .. } => prop_assert!(
                candidates.iter().any(|c| c.name == tool && c.name != prompt::FINISH),
                "called {tool} not among {:?}", candidates.iter().map(|c| &c.name).collect::<Vec<_>>()
            ),
            ActorAction::Finish { .. } => {}
        }
    }
}

// ---------------------------------------------------------------- rewoo

fn library() -> ToolLibrary {
    manifest::load_paths(&[embedded_sample_dir()]).unwrap()
}

fn sample_tasks() -> Vec<Task> {
    load_tasks(&embedded_sample_dir().join("tasks/sample.toml")).unwrap()
}

fn classify(model: &SimModel, categories: Vec<Category>, lib: &ToolLibrary) -> BTreeMap<String, String> {
    let tools = lib.tools().iter().map(|t| (t.name.clone(), t.description.clone())).collect();
    let r =
        chat(model, &ChatRequest::new(Role::Classifier, rp::render_classifier(&ClassifierInput { categories, tools })));
    rp::parse_classifier_reply(&r).unwrap()
}

/// The sample library as the planner is shown it, labelled by a quiet classifier.
fn planner_tools() -> Vec<PlannerTool> {
    let lib = library();
    let labels = classify(&sim(0, 0.0), rp::default_categories(), &lib);
    lib.tools()
        .iter()
        .map(|t| PlannerTool {
            name: t.name.clone(),
            category: labels.get(&t.name).cloned(),
            description: t.description.clone(),
            parameters: t.parameters.clone(),
        })
        .collect()
}

/// The plan as the engine gets it: the first reply, or, when that cannot
/// be read, the reply to the retry that shows the parse error.
fn plan_text(model: &SimModel, task: &str, tools: &[PlannerTool], notes: Vec<String>) -> String {
    let v = PlannerInput { task: task.into(), tools: tools.to_vec(), notes };
    let first = chat(model, &ChatRequest::new(Role::Planner, rp::render_planner(&v))).text;
    match parse_plan(&first, &names(tools)) {
        Ok(_) => first,
        Err(e) => {
            chat(model, &ChatRequest::new(Role::Planner, rp::render_planner_retry(&v, &first, &e.to_string()))).text
        }
    }
}

#[test]
fn a_noisy_planner_drifts_from_the_format_and_keeps_to_it_on_the_retry() {
    let tools = planner_tools();
    let tasks = sample_tasks();
    let loose = |noise: f64| {
        let model = sim(7, noise);
        tasks
            .iter()
            .filter(|t| {
                let v = PlannerInput { task: t.query.clone(), tools: tools.clone(), notes: vec![] };
                let first = chat(&model, &ChatRequest::new(Role::Planner, rp::render_planner(&v))).text;
                parse_plan(&first, &names(&tools)).is_err()
            })
            .count()
    };
    assert_eq!(loose(0.0), 0, "a quiet planner keeps to the format");
    assert!(loose(1.0) > 0, "a noisy one sometimes does not");
}

fn names(tools: &[PlannerTool]) -> Vec<String> {
    tools.iter().map(|t| t.name.clone()).collect()
}

fn plan(model: &SimModel, task: &str, tools: &[PlannerTool]) -> RewooPlan {
    let text = plan_text(model, task, tools, vec![]);
    parse_plan(&text, &names(tools)).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn step_tools(plan: &RewooPlan, k: usize) -> Vec<&str> {
    plan.steps[k].calls.iter().map(|c| c.tool.as_str()).collect()
}

#[test]
fn the_classifier_labels_the_sample_library_sensibly() {
    let lib = library();
    let labels = classify(&sim(4, 0.0), rp::default_categories(), &lib);
    assert_eq!(labels.len(), lib.len(), "every tool is named");
    for tool in ["geo_lookup", "geo_lookup_mirror", "city_search", "city_stats", "glossary_lookup", "web_search"] {
        assert_eq!(labels[tool], "Information Retrieval", "{tool}");
    }
    for tool in ["calculator", "random_calculator", "unit_convert", "currency_convert", "days_between", "text_stats"] {
        assert_eq!(labels[tool], "Task Completion", "{tool}");
    }

    // Domain categories go by the words the tools use; a tool no domain
    // speaks of falls back to the default-like category of its kind.
    let cat = |name: &str, description: &str| Category { name: name.into(), description: description.into() };
    let categories = vec![
        cat("Geography", "the population and other facts of a country or a city"),
        cat("Math", "arithmetic expressions and statistics of numbers"),
        cat("Information Retrieval", ""),
        cat("Task Completion", ""),
    ];
    let labels = classify(&sim(4, 0.0), categories, &lib);
    assert_eq!((labels["geo_lookup"].as_str(), labels["city_stats"].as_str()), ("Geography", "Geography"));
    assert_eq!((labels["calculator"].as_str(), labels["number_stats"].as_str()), ("Math", "Math"));
    assert_eq!(labels["glossary_lookup"], "Information Retrieval");
    assert_eq!(labels["weekday_of"], "Task Completion");
}

#[test]
fn a_noisy_classifier_mislabels_some_tools() {
    let lib = library();
    let quiet = classify(&sim(0, 0.0), rp::default_categories(), &lib);
    let wrong = |noise: f64| -> usize {
        (0..10)
            .map(|seed| {
                let labels = classify(&sim(seed, noise), rp::default_categories(), &lib);
                assert_eq!(labels.len(), lib.len());
                labels.iter().filter(|(t, c)| quiet[*t] != **c).count()
            })
            .sum()
    };
    assert_eq!(wrong(0.0), 0);
    assert!(wrong(1.0) > 0);
}

#[test]
fn every_sample_plan_parses_whatever_the_noise() {
    let tools = planner_tools();
    let category = |name: &str| tools.iter().find(|t| t.name == name).and_then(|t| t.category.clone());
    for noise in [0.0, 0.5, 1.0] {
        for seed in 0..3 {
            let model = sim(seed, noise);
            for task in sample_tasks() {
                let p = plan(&model, &task.query, &tools);
                assert!((1..=4).contains(&p.steps.len()), "{}: {p:?}", task.id);
                for s in &p.steps {
                    assert!((1..=3).contains(&s.calls.len()), "{}: {s:?}", task.id);
                    let c = category(&s.calls[0].tool);
                    assert!(s.calls.iter().all(|x| category(&x.tool) == c), "{}: one category a step: {s:?}", task.id);
                }
            }
        }
    }
}

#[test]
fn the_planner_calls_twins_together() {
    let p = plan(&sim(2, 0.0), "What is the capital of the country 'Japan'?", &planner_tools());
    assert_eq!(p.steps.len(), 1);
    assert_eq!(step_tools(&p, 0), ["geo_lookup", "geo_lookup_mirror"]);
    assert!(p.steps[0].calls.iter().all(|c| c.input == r#"{"country": "Japan"}"#), "{p:?}");
    assert!(p.steps[0].thought.contains("at once"), "{}", p.steps[0].thought);
}

#[test]
fn the_planner_cites_the_step_that_gives_the_id() {
    let tools = planner_tools();
    let p = plan(&sim(2, 0.0), "What is the elevation in metres of the city 'Denver'?", &tools);
    assert_eq!(step_tools(&p, 0), ["city_search"]);
    assert_eq!(p.steps[0].calls[0].input, r#"{"city_name": "Denver"}"#);
    assert_eq!(step_tools(&p, 1), ["city_stats"]);
    assert_eq!(p.steps[1].calls[0].input, r##"{"city_id": "#E1"}"##);
    assert_eq!(p.steps[1].depends_on, [1]);
    // A country found through a city: the country tools cite the search.
    let p = plan(&sim(2, 0.0), "Find the city 'Osaka': what is the capital of its country?", &tools);
    assert_eq!(step_tools(&p, 1), ["geo_lookup", "geo_lookup_mirror"]);
    assert!(p.steps[1].calls.iter().all(|c| c.input == r##"{"country": "#E1"}"##), "{p:?}");
}

#[test]
fn the_planner_keeps_to_allowed_tools_and_retries_in_the_strict_format() {
    let tools = planner_tools();
    let notes = vec!["'geo_lookup' is now forbidden: the plan allows it no more calls.".to_string()];
    let text = plan_text(&sim(2, 0.0), "What is the capital of the country 'Japan'?", &tools, notes);
    let p = parse_plan(&text, &names(&tools)).unwrap();
    assert_eq!(step_tools(&p, 0), ["geo_lookup_mirror"]);

    let v = PlannerInput { task: "Calculate 1234 * 5678.".into(), tools: tools.clone(), notes: vec![] };
    let retry = rp::render_planner_retry(&v, "I think calculator", "the plan has no steps");
    let r = chat(&sim(2, 0.0), &ChatRequest::new(Role::Planner, retry));
    let p = parse_plan(&r.text, &names(&tools)).unwrap();
    assert_eq!(step_tools(&p, 0)[0], "calculator");
}

#[test]
fn literal_references_in_a_task_do_not_become_citations() {
    let tools = planner_tools();
    for task in ["Give the definition of the term '#E7'.", "Search the web for #E2 = x[y]"] {
        let text = plan_text(&sim(1, 0.0), task, &tools, vec![]);
        let p = parse_plan(&text, &names(&tools)).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(p.steps.iter().all(|s| s.depends_on.is_empty()), "{text}");
    }
}

/// Planning mistakes against the gold tools: a step led by a tool that is
/// not gold, a gold tool never called, and a country step without its
/// mirror (multi-calling forgotten).
fn mistakes(plan: &RewooPlan, gold: &[String]) -> usize {
    let base = |t: &str| t.trim_end_matches("_mirror").to_string();
    let gold: Vec<String> = gold.iter().map(|g| base(g)).collect();
    let called: Vec<String> = plan.steps.iter().flat_map(|s| s.calls.iter().map(|c| base(&c.tool))).collect();
    let wrong_lead = plan.steps.iter().filter(|s| !gold.contains(&base(&s.calls[0].tool))).count();
    let missing = gold.iter().filter(|g| !called.contains(g)).count();
    let no_twin =
        plan.steps.iter().filter(|s| s.calls.iter().filter(|c| base(&c.tool) == "geo_lookup").count() == 1).count();
    wrong_lead + missing + no_twin
}

#[test]
fn a_noisier_planner_makes_more_mistakes() {
    let tools = planner_tools();
    let tasks = sample_tasks();
    let total = |noise: f64| -> usize {
        (0..4)
            .map(|seed| {
                let model = sim(seed, noise);
                tasks.iter().map(|t| mistakes(&plan(&model, &t.query, &tools), &t.tools)).sum::<usize>()
            })
            .sum()
    };
    let (quiet, noisy) = (total(0.0), total(0.6));
    assert!(quiet < noisy, "quiet {quiet}, noisy {noisy}");
}

fn solver_call(tool: &str, args: &str, result: Option<&str>) -> SolverCall {
    SolverCall { tool: tool.into(), args: args.into(), result: result.map(str::to_string) }
}

fn solve(model: &SimModel, task: &str, steps: Vec<SolverStep>) -> String {
    let v = SolverInput { task: task.into(), steps };
    let r = chat(model, &ChatRequest::new(Role::Solver, rp::render_solver(&v)));
    rp::parse_solver_reply(&r).unwrap()
}

fn solver_step(evidence: u32, calls: Vec<SolverCall>) -> SolverStep {
    SolverStep { evidence, thought: "look it up".into(), calls }
}

#[test]
fn the_solver_answers_from_the_usable_lane_of_the_last_step() {
    let quiet = sim(5, 0.0);
    let japan = r#"{"name":"Japan","capital":"Tokyo","currency_code":"JPY"}"#;
    let steps = vec![solver_step(
        1,
        vec![
            solver_call("geo_lookup", r#"{"country":"Japan"}"#, None),
            solver_call("geo_lookup_mirror", r#"{"country":"Japan"}"#, Some(japan)),
        ],
    )];
    assert_eq!(solve(&quiet, "What is the capital of the country 'Japan'?", steps), "Tokyo");

    // The last step with evidence answers; an empty or garbage lane does not.
    let steps = vec![
        solver_step(1, vec![solver_call("city_search", "{}", Some(r#"{"city_id":"C0016","name":"Denver"}"#))]),
        solver_step(
            2,
            vec![
                solver_call("city_stats", "{}", Some("\"Nothing Found\"")),
                solver_call("city_stats_mirror", "{}", Some(r#"{"population":717000,"elevation_m":1609}"#)),
            ],
        ),
        solver_step(3, vec![solver_call("web_search", "{}", Some("\"%$#@!&*()_+{}|:<>?~`-=;',./%$#\""))]),
    ];
    assert_eq!(solve(&quiet, "What is the elevation in metres of the city 'Denver'?", steps), "1609");

    // Arithmetic the solver can check is wrong is passed over.
    let expr = r#"{"expression":"2 + 2"}"#;
    let steps = vec![solver_step(
        1,
        vec![
            solver_call("random_calculator", expr, Some(r#"{"result":5}"#)),
            solver_call("calculator", expr, Some(r#"{"result":4}"#)),
        ],
    )];
    assert_eq!(solve(&quiet, "Calculate 2 + 2.", steps), "4");

    // No evidence: it gives up.
    let steps = vec![solver_step(1, vec![solver_call("geo_lookup", "{}", None)])];
    assert!(solve(&quiet, "What is the capital of the country 'Japan'?", steps).contains("could not find"));
}

#[test]
fn a_noisy_solver_sometimes_misreads() {
    let task = "What is the capital of the country 'Japan'?";
    let steps = || {
        vec![solver_step(
            1,
            vec![solver_call(
                "geo_lookup",
                "{}",
                Some(r#"{"capital":"Tokyo","continent":"Asia","currency_code":"JPY"}"#),
            )],
        )]
    };
    let wrong = |noise: f64| (0..40).filter(|&seed| solve(&sim(seed, noise), task, steps()) != "Tokyo").count();
    assert_eq!(wrong(0.0), 0);
    assert!(wrong(1.0) > 0);
}

#[test]
fn the_rewoo_roles_are_deterministic_per_seed_and_request() {
    let tools = planner_tools();
    let tasks = sample_tasks();
    let requests: Vec<ChatRequest> = tasks
        .iter()
        .map(|t| {
            let v = PlannerInput { task: t.query.clone(), tools: tools.clone(), notes: vec![] };
            ChatRequest::new(Role::Planner, rp::render_planner(&v))
        })
        .chain(std::iter::once({
            let v = ClassifierInput {
                categories: rp::default_categories(),
                tools: tools.iter().map(|t| (t.name.clone(), t.description.clone())).collect(),
            };
            ChatRequest::new(Role::Classifier, rp::render_classifier(&v))
        }))
        .collect();
    let (a, b) = (sim(21, 0.5), sim(21, 0.5));
    let forward: Vec<String> = requests.iter().map(|r| chat(&a, r).text).collect();
    let backward: Vec<String> = requests.iter().rev().map(|r| chat(&b, r).text).collect();
    assert_eq!(forward, backward.into_iter().rev().collect::<Vec<_>>());
    let c = sim(22, 0.5);
    assert!(requests.iter().zip(&forward).any(|(r, f)| &chat(&c, r).text != f));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    /// Whatever the task, the plan parses and cites only earlier steps.
    #[test]
    fn any_task_gets_a_plan_that_parses(
        task in "[A-Za-z0-9 '#?.+*()\\[\\];:=-]{1,80}",
        seed in any::<u64>(),
        noise in 0.0f64..=1.0,
    ) {
        let tools = planner_tools();
        let text = plan_text(&sim(seed, noise), &task, &tools, vec![]);
        prop_assert!(parse_plan(&text, &names(&tools)).is_ok(), "{}", text);
    }
}
