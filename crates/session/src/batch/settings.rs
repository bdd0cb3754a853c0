//! What an eval compares: its settings, each a strategy (maybe with a swept
//! parameter's value) or one combination of models in rewoo's roles, with
//! the config and the session options it runs with. Every setting starts
//! from the same experience and a fresh graph, and leaves the saved graph,
//! experience and tool labels alone.

use crate::budget::experience::Experience;
use crate::config::Config;
use crate::engine::{ParamChange, StrategyKind};
use crate::eval::results::Sweep;
use crate::model::Role;
use crate::session::{self, ExperienceSource, GraphSource, SessionOptions, SetupError};

/// The parameters a sweep may vary.
pub const SWEEPABLE: [&str; 7] = ["tau", "budget", "alpha", "beta", "top_k", "narrow", "narrow_k"];

/// One setting of an eval.
pub struct Setting {
    /// As the report's tables show it, e.g. `react (k=all)`,
    /// `toolnet tau=0.1`, `planner=sim-weak solver=sim-strong`.
    pub label: String,
    pub strategy: StrategyKind,
    pub sweep: Option<Sweep>,
    pub config: Config,
    pub opts: SessionOptions,
}

/// What an eval was asked to compare (its flags, checked here).
#[derive(Clone, Copy, Debug)]
pub struct EvalSpec<'a> {
    /// None: react and toolnet (with a matrix: rewoo).
    pub strategies: Option<&'a [StrategyKind]>,
    /// How many tools react is offered: a number, or `all`.
    pub react_k: &'a str,
    /// `NAME=V1,V2,...`: a setting per value.
    pub sweep: Option<&'a str>,
    /// `ROLE=MODEL,MODEL...` per varied role: rewoo once per combination.
    pub matrix: &'a [String],
    /// A budget applies, so each label says whether BTP is on.
    pub budgeted: bool,
}

#[derive(thiserror::Error, Debug)]
pub enum SettingsError {
    /// A flag's value is wrong; the message names the flag.
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Setup(#[from] SetupError),
}

type Result<T> = std::result::Result<T, SettingsError>;

fn invalid(message: String) -> SettingsError {
    SettingsError::Invalid(message)
}

/// The settings `spec` asks for, each from `base` (the shared flags'
/// options) and the given starting experience.
pub fn settings(
    config: &Config,
    spec: EvalSpec,
    base: &SessionOptions,
    experience: &[Experience],
) -> Result<Vec<Setting>> {
    if spec.matrix.is_empty() {
        strategy_settings(config, spec, base, experience)
    } else {
        matrix_settings(config, spec, base, experience)
    }
}

/// The strategies (× the swept values).
fn strategy_settings(
    config: &Config,
    spec: EvalSpec,
    base: &SessionOptions,
    experience: &[Experience],
) -> Result<Vec<Setting>> {
    let sweep: Vec<(String, String)> = match spec.sweep {
        None => vec![(String::new(), String::new())],
        Some(s) => {
            let (name, values) = s.split_once('=').ok_or_else(|| invalid("--sweep: expected NAME=V1,V2,...".into()))?;
            if !SWEEPABLE.contains(&name) {
                return Err(invalid(format!("--sweep: '{name}' cannot be swept ({})", SWEEPABLE.join(", "))));
            }
            values.split(',').map(|v| (name.to_string(), v.trim().to_string())).collect()
        }
    };
    let budgeted = spec.budgeted || spec.sweep.is_some_and(|s| s.starts_with("budget="));
    let strategies = spec.strategies.map_or_else(|| vec![StrategyKind::React, StrategyKind::Toolnet], <[_]>::to_vec);
    // How many tools react is offered, read once: `all` loads the library.
    let react_k = match (strategies.contains(&StrategyKind::React), spec.react_k) {
        (false, _) => 0,
        (true, "all") => session::load_library(config)?.len(),
        (true, k) => k.parse().map_err(|_| invalid(format!("--react-k: '{k}' is neither a number nor 'all'")))?,
    };
    let mut out = Vec::new();
    for (sweep_name, sweep_value) in &sweep {
        for strategy in &strategies {
            let mut opts = measured(base, experience);
            let mut swept = None;
            if !sweep_name.is_empty() {
                opts.param_changes.push(
                    ParamChange::parse(&format!("{sweep_name}={sweep_value}"))
                        .map_err(|e| invalid(format!("--sweep: {e}")))?,
                );
                // A value that is a name (narrow=graph, budget=none) is
                // compared by its setting's label, not plotted on an axis.
                swept = sweep_value.parse().ok().map(|value| Sweep { name: sweep_name.clone(), value });
            }
            opts.strategy = Some(*strategy);
            let mut label = strategy.as_str().to_string();
            if *strategy == StrategyKind::React {
                opts.param_changes.push(ParamChange::TopK(react_k));
                label = format!("react (k={})", spec.react_k);
            }
            if budgeted {
                let on = opts.btp.unwrap_or(config.btp.enabled);
                label = format!("{label} btp {}", if on { "on" } else { "off" });
            }
            if !sweep_name.is_empty() {
                label = format!("{label} {sweep_name}={sweep_value}");
            }
            out.push(Setting { label, strategy: *strategy, sweep: swept, config: config.clone(), opts });
        }
    }
    Ok(out)
}

/// The rewoo paper's Table 4: every combination of the listed models in
/// their roles, each over the same tasks with the same seed.
fn matrix_settings(
    config: &Config,
    spec: EvalSpec,
    base: &SessionOptions,
    experience: &[Experience],
) -> Result<Vec<Setting>> {
    if let Some(s) = spec.strategies.filter(|s| s.iter().any(|k| *k != StrategyKind::Rewoo)) {
        let given: Vec<&str> = s.iter().map(|k| k.as_str()).collect();
        return Err(invalid(format!(
            "--matrix runs the rewoo strategy; --strategy {} conflicts with it (drop --strategy or give rewoo)",
            given.join(",")
        )));
    }
    if spec.sweep.is_some() {
        return Err(invalid("--matrix and --sweep exclude each other: vary the models or a parameter".into()));
    }
    let axes = spec.matrix.iter().map(|m| matrix_axis(m)).collect::<Result<Vec<_>>>()?;
    let cells = session::model_matrix(config, &axes).map_err(|e| invalid(format!("--matrix: {e}")))?;
    let mut out = Vec::new();
    for cell in cells {
        let mut opts = measured(base, experience);
        opts.strategy = Some(StrategyKind::Rewoo);
        let label = cell.roles.iter().map(|(r, m)| format!("{}={m}", r.as_str())).collect::<Vec<_>>().join(" ");
        out.push(Setting { label, strategy: StrategyKind::Rewoo, sweep: None, config: cell.config, opts });
    }
    Ok(out)
}

/// One measured session: it starts from the trajectories and the given
/// experience, and leaves the saved graph, experience and tool labels alone.
fn measured(base: &SessionOptions, experience: &[Experience]) -> SessionOptions {
    let mut opts = base.clone();
    opts.experience = ExperienceSource::InMemory(experience.to_vec());
    opts.graph = GraphSource::Fresh;
    opts.save_graph = false;
    opts.fresh_categories = true;
    opts
}

/// `--matrix ROLE=A,B`: the role and its models.
pub fn matrix_axis(spec: &str) -> Result<(Role, Vec<String>)> {
    let (role, models) = spec.split_once('=').ok_or_else(|| {
        invalid(format!("--matrix {spec}: expected ROLE=MODEL,MODEL..., e.g. planner=sim-weak,sim-strong"))
    })?;
    let role = Role::parse(role.trim()).ok_or_else(|| {
        invalid(format!(
            "--matrix {spec}: unknown role '{}' (planner, solver, classifier, actor, evaluator, judge)",
            role.trim()
        ))
    })?;
    let models: Vec<String> = models.split(',').map(|m| m.trim().to_string()).collect();
    if models.iter().any(String::is_empty) {
        return Err(invalid(format!("--matrix {spec}: an empty model name")));
    }
    Ok((role, models))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec<'a>() -> EvalSpec<'a> {
        EvalSpec { strategies: None, react_k: "all", sweep: None, matrix: &[], budgeted: false }
    }

    fn labels(s: &[Setting]) -> Vec<&str> {
        s.iter().map(|s| s.label.as_str()).collect()
    }

    #[test]
    fn strategies_times_swept_values_each_measured_from_a_fresh_graph() {
        let config = Config::default();
        let base = SessionOptions::default();
        let s = settings(&config, EvalSpec { react_k: "3", sweep: Some("tau=0,0.1"), ..spec() }, &base, &[]).unwrap();
        assert_eq!(labels(&s), ["react (k=3) tau=0", "toolnet tau=0", "react (k=3) tau=0.1", "toolnet tau=0.1"]);
        assert_eq!(s[2].sweep, Some(Sweep { name: "tau".into(), value: 0.1 }));
        assert!(s.iter().all(|s| matches!(s.opts.graph, GraphSource::Fresh) && !s.opts.save_graph));
        assert!(s[0].opts.param_changes.contains(&ParamChange::TopK(3)));

        let budgeted = EvalSpec { strategies: Some(&[StrategyKind::Toolnet]), budgeted: true, ..spec() };
        assert_eq!(labels(&settings(&config, budgeted, &base, &[]).unwrap()), ["toolnet btp on"]);
    }

    #[test]
    fn a_sweep_of_named_values_is_compared_by_label() {
        let agent = EvalSpec { strategies: Some(&[StrategyKind::Agent]), sweep: Some("narrow=off,graph"), ..spec() };
        let s = settings(&Config::default(), agent, &SessionOptions::default(), &[]).unwrap();
        assert_eq!(labels(&s), ["agent narrow=off", "agent narrow=graph"]);
        assert!(s.iter().all(|x| x.sweep.is_none()), "named values are not plotted on an axis");
        assert!(s[1].opts.param_changes.contains(&ParamChange::Narrow(crate::engine::Narrowing::Graph)));
    }

    #[test]
    fn a_matrix_runs_rewoo_once_per_combination() {
        let config = Config::default();
        let matrix = ["planner=sim-weak,sim-strong".to_string(), "solver=sim-weak".to_string()];
        let s = settings(&config, EvalSpec { matrix: &matrix, ..spec() }, &SessionOptions::default(), &[]).unwrap();
        assert_eq!(labels(&s), ["planner=sim-weak solver=sim-weak", "planner=sim-strong solver=sim-weak"]);
        assert!(s.iter().all(|s| s.strategy == StrategyKind::Rewoo));
    }

    #[test]
    fn bad_flags_are_named() {
        let config = Config::default();
        let base = SessionOptions::default();
        let err = |spec: EvalSpec| settings(&config, spec, &base, &[]).err().expect("an error").to_string();
        assert!(err(EvalSpec { sweep: Some("gamma=1"), ..spec() }).contains("'gamma' cannot be swept"));
        assert!(err(EvalSpec { sweep: Some("tau=x"), ..spec() }).contains("--sweep"));
        assert!(err(EvalSpec { sweep: Some("narrow=sideways"), ..spec() }).contains("--sweep"));
        assert!(err(EvalSpec { react_k: "some", ..spec() }).contains("--react-k: 'some'"));
        let matrix = ["pilot=sim".to_string()];
        assert!(err(EvalSpec { matrix: &matrix, ..spec() }).contains("unknown role 'pilot'"));
        let matrix = ["planner=sim".to_string()];
        let react = [StrategyKind::React];
        assert!(err(EvalSpec { matrix: &matrix, strategies: Some(&react), ..spec() }).contains("conflicts"));
    }
}
