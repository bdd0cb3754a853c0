//! The planner × solver study's parts that need no terminal: the `[rewoo]`
//! config section, the cheap and strong simulated models with their prices,
//! the model matrix and the rows computed from a session.

use std::path::Path;

use switchyard::config::{Config, ConfigError, ModelConfig};
use switchyard::engine::StrategyKind;
use switchyard::engine::event::EventKind;
use switchyard::engine::trace::read_trace;
use switchyard::eval::metrics::{MatrixRow, matrix_table};
use switchyard::model::Role;
use switchyard::session::{self, GraphSource, SessionOptions, TaskSource};
use switchyard::strategy::rewoo::prompt::{Category, default_categories};

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("/cfg/switchyard.toml"))
}

/// The error's text, which must name the file.
fn parse_err(text: &str) -> String {
    let e = parse(text).expect_err("the config should be refused").to_string();
    assert!(e.contains("switchyard.toml"), "the error names the file: {e}");
    e
}

fn smoke() -> std::path::PathBuf {
    switchyard::config::sample_dir().join("tasks/smoke.toml")
}

fn run(config: &Config, opts: &SessionOptions) -> switchyard::engine::SessionOutcome {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(session::run(session::prepare(config, opts).unwrap())).unwrap()
}

fn cat(name: &str, description: &str) -> Category {
    Category { name: name.into(), description: description.into() }
}

#[test]
fn without_a_rewoo_section_the_papers_categories_are_used() {
    assert_eq!(Config::default().rewoo.categories, default_categories());
    assert_eq!(parse("seed = 1\n").unwrap().rewoo.categories, default_categories());
    assert_eq!(parse("[rewoo]\n").unwrap().rewoo.categories, default_categories());
}

#[test]
fn categories_are_names_or_tables() {
    let c = parse(
        r#"
[rewoo]
categories = [
  "Geography",
  { name = "Math", description = "computes numbers" },
  { name = "  Dates  " },
]
"#,
    )
    .unwrap();
    assert_eq!(c.rewoo.categories, [cat("Geography", ""), cat("Math", "computes numbers"), cat("Dates", "")]);
}

#[test]
fn a_bad_category_is_named_by_its_place() {
    let e = parse_err("[rewoo]\ncategories = [\"A\", \"B\", { name = \"C\", desc = \"x\" }]\n");
    assert!(e.contains("rewoo.categories[2]") && e.contains("'desc'"), "{e}");
    let e = parse_err("[rewoo]\ncategories = [\"A\", \"  \"]\n");
    assert!(e.contains("rewoo.categories[1]") && e.contains("empty"), "{e}");
    let e = parse_err("[rewoo]\ncategories = [{ name = \"\" }]\n");
    assert!(e.contains("rewoo.categories[0]") && e.contains("empty"), "{e}");
    let e = parse_err("[rewoo]\ncategories = [{ description = \"no name\" }]\n");
    assert!(e.contains("rewoo.categories[0]") && e.contains("'name'"), "{e}");
    let e = parse_err("[rewoo]\ncategories = [{ name = 3 }]\n");
    assert!(e.contains("rewoo.categories[0]") && e.contains("'name' must be a string"), "{e}");
    let e = parse_err("[rewoo]\ncategories = [\"A\", 7]\n");
    assert!(e.contains("rewoo.categories[1]") && e.contains("a name or a table"), "{e}");
    let e = parse_err("[rewoo]\ncategories = [\"A\", \"A\"]\n");
    assert!(e.contains("rewoo.categories[1]") && e.contains("twice"), "{e}");
    let e = parse_err("[rewoo]\ncategories = []\n");
    assert!(e.contains("rewoo.categories") && e.contains("no category"), "{e}");
    // A misspelt key of the section itself is named, with its line.
    let e = parse_err("[rewoo]\ncategries = [\"A\"]\n");
    assert!(e.contains("categries") && e.contains("line 2"), "{e}");
}

#[test]
fn rewoo_is_a_strategy_the_config_accepts() {
    assert_eq!(parse("strategy = \"rewoo\"\n").unwrap().strategy, StrategyKind::Rewoo);
    let e = parse_err("strategy = \"rewo\"\n");
    assert!(e.contains("strategy") && e.contains("rewoo"), "the error lists the strategies: {e}");
}

#[test]
fn the_default_config_has_a_cheap_and_a_strong_simulated_model() {
    let c = Config::default();
    let sim = |name: &str| match &c.models[name] {
        ModelConfig::Sim { noise, price, .. } => (*noise, *price),
        other => panic!("{name} is not simulated: {other:?}"),
    };
    let (weak_noise, weak) = sim("sim-weak");
    let (strong_noise, strong) = sim("sim-strong");
    assert!(weak_noise > strong_noise, "the weak model is the noisier one");
    assert!(weak.input_per_mtok > 0.0 && weak.output_per_mtok > 0.0);
    assert!(strong.input_per_mtok > weak.input_per_mtok && strong.output_per_mtok > weak.output_per_mtok);
    // Every role keeps the plain `sim`.
    assert!(c.roles.values().all(|m| m == "sim"), "{:?}", c.roles);
    // Both may be switched to in a session.
    let models = c.build_models(1).unwrap();
    let mut offered: Vec<String> = models.available().map(|s| s.model.info().name).collect();
    offered.sort();
    assert_eq!(offered, ["sim", "sim-strong", "sim-weak"]);
}

#[test]
fn the_example_config_parses_and_defines_both_models() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("config.example.toml");
    let c = Config::load(&path).unwrap();
    let noise = |name: &str| match &c.models[name] {
        ModelConfig::Sim { noise, .. } => *noise,
        other => panic!("{name} is not simulated: {other:?}"),
    };
    assert_eq!((noise("sim-weak"), noise("sim-strong")), (0.35, 0.03));
    assert_eq!(
        c.rewoo.categories.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["Information Retrieval", "Task Completion"]
    );
}

#[test]
fn a_models_price_is_charged_to_the_role_it_plays() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config { data_dir: Some(dir.path().to_path_buf()), ..Config::default() };
    cfg.roles.insert(Role::Actor, "sim-strong".into());
    let opts = SessionOptions {
        strategy: Some(StrategyKind::React),
        tasks: TaskSource::File(smoke()),
        logical_clock: true,
        ..Default::default()
    };
    let state = run(&cfg, &opts).state;
    let ModelConfig::Sim { price, .. } = cfg.models["sim-strong"] else { unreachable!() };
    let account = &state.accounts[&(Role::Actor, "sim-strong".to_string())];
    assert!(account.usage.prompt_tokens > 0);
    let expected = price.cost(account.usage);
    assert!((account.cost - expected).abs() < 1e-12, "{} against {expected}", account.cost);
    assert!(account.cost > 0.0);
}

#[test]
fn the_matrix_is_every_combination_in_order() {
    let cfg = Config::default();
    let two = || vec!["sim-weak".to_string(), "sim-strong".to_string()];
    let cells = session::model_matrix(&cfg, &[(Role::Planner, two()), (Role::Solver, two())]).unwrap();
    let pairs: Vec<(&str, &str)> = cells
        .iter()
        .map(|c| (c.config.roles[&Role::Planner].as_str(), c.config.roles[&Role::Solver].as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("sim-weak", "sim-weak"),
            ("sim-weak", "sim-strong"),
            ("sim-strong", "sim-weak"),
            ("sim-strong", "sim-strong")
        ]
    );
    for c in &cells {
        // The roles not varied keep the config's model.
        assert_eq!(c.config.roles[&Role::Classifier], "sim");
        assert_eq!(c.roles.iter().map(|(r, _)| *r).collect::<Vec<_>>(), [Role::Planner, Role::Solver]);
    }
}

#[test]
fn a_bad_matrix_is_refused_with_the_reason() {
    let cfg = Config::default();
    let e =
        session::model_matrix(&cfg, &[(Role::Planner, vec!["sim".into(), "gpt-9".into()])]).unwrap_err().to_string();
    assert!(e.contains("no model named 'gpt-9'") && e.contains("known: sim, sim-strong, sim-weak"), "{e}");
    let e = session::model_matrix(&cfg, &[(Role::Solver, vec!["sim".into()]), (Role::Solver, vec!["sim".into()])])
        .unwrap_err()
        .to_string();
    assert!(e.contains("'solver' is given twice"), "{e}");
    let e = session::model_matrix(&cfg, &[(Role::Solver, vec!["sim".into(), "sim".into()])]).unwrap_err().to_string();
    assert!(e.contains("listed twice"), "{e}");
    assert!(session::model_matrix(&cfg, &[]).is_err());
}

/// Needs the rewoo engine (crates/engine/src/engine/rewoo.rs): the planner and the solver
/// are called, and the row reads their models and tokens from the session.
#[test]
fn a_matrix_row_shows_the_models_that_played_and_their_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = Config { data_dir: Some(dir.path().to_path_buf()), ..Config::default() };
    let two = || vec!["sim-weak".to_string(), "sim-strong".to_string()];
    let cells = session::model_matrix(&cfg, &[(Role::Planner, two()), (Role::Solver, two())]).unwrap();
    let cell = &cells[1];
    let opts = SessionOptions {
        strategy: Some(StrategyKind::Rewoo),
        tasks: TaskSource::File(smoke()),
        graph: GraphSource::Fresh,
        logical_clock: true,
        fresh_categories: true,
        ..Default::default()
    };
    let state = run(&cell.config, &opts).state;
    let row = MatrixRow::from_state(&[Role::Planner, Role::Solver], &state);
    assert_eq!((row.planner.as_str(), row.solver.as_str()), ("sim-weak", "sim-strong"));
    assert_eq!(row.tasks, 8);
    assert!(row.role_tokens(Role::Planner) > 0.0 && row.role_tokens(Role::Solver) > 0.0, "{row:?}");
    // Each role is charged at its own model's price.
    for share in &row.roles {
        let ModelConfig::Sim { price, .. } = cfg.models[&share.model] else { unreachable!() };
        let expected = (share.prompt_tokens_per_task * price.input_per_mtok
            + share.completion_tokens_per_task * price.output_per_mtok)
            / 1e6;
        assert!((share.cost_per_task - expected).abs() < 1e-9, "{share:?}");
    }
    let planner = row.roles.iter().find(|s| s.role == Role::Planner).unwrap();
    assert!(planner.cost_per_task > 0.0, "sim-weak is not free: {planner:?}");
    let table = matrix_table(&[row], "credits");
    assert!(
        table.contains("sim-weak") && table.contains("sim-strong") && table.contains("costs in credits"),
        "{table}"
    );
}

/// Needs the rewoo engine: the classifier is offered the configured
/// categories, and labels are cached in the data directory unless fresh.
#[test]
fn the_configured_categories_reach_the_classifier_and_its_cache() {
    let opts = |trace: Option<std::path::PathBuf>| SessionOptions {
        strategy: Some(StrategyKind::Rewoo),
        tasks: TaskSource::File(smoke()),
        count: Some(1),
        logical_clock: true,
        trace,
        ..Default::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = Config { data_dir: Some(dir.path().to_path_buf()), ..Config::default() };
    cfg.rewoo.categories = vec![cat("Lookup", "finds facts"), cat("Compute", "calculates")];
    let trace = dir.path().join("t.jsonl");
    run(&cfg, &opts(Some(trace.clone())));
    let events = read_trace(&trace).unwrap();
    let classified = events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::ToolsClassified { categories, .. } => Some(categories.clone()),
            _ => None,
        })
        .expect("the tools were classified");
    // Categories fixed in manifests may come on top; the configured ones replace the paper's.
    assert!(classified.iter().any(|c| c == "Lookup") && classified.iter().any(|c| c == "Compute"), "{classified:?}");
    assert!(!classified.iter().any(|c| c == "Information Retrieval"), "{classified:?}");

    // With the paper's categories the classifier's labels are kept for the next session...
    let cached = tempfile::tempdir().unwrap();
    run(&Config { data_dir: Some(cached.path().to_path_buf()), ..Config::default() }, &opts(None));
    assert!(cached.path().join("categories.json").exists(), "the labels were cached");
    // ... but not by an experiment's session.
    let fresh = tempfile::tempdir().unwrap();
    run(
        &Config { data_dir: Some(fresh.path().to_path_buf()), ..Config::default() },
        &SessionOptions { fresh_categories: true, ..opts(None) },
    );
    assert!(!fresh.path().join("categories.json").exists(), "an experiment leaves the cache alone");
}
