//! Builtin tools: Rust functions run in process, offline, over data embedded
//! in the binary. The arguments arrive checked against the manifest's schema,
//! but every function re-checks what it reads and answers a bad value with a
//! `Failed` error, never a panic.

mod args;
mod calc;
mod dates;
mod lookup;
mod math;
mod number;
mod units;

use rand::Rng;
use serde_json::{Value, json};

use super::ToolResult;
use super::nothing_found::NOTHING_FOUND;
use args::{failed, int_arg, num_arg, str_arg};
use number::number;

pub use math::tool as math_tool;
pub use units::unit_names;

/// The calculator's arithmetic, for callers that check a claimed result
/// (the simulated evaluator re-does a calculation the way a careful
/// reviewer would).
pub fn evaluate_expression(expression: &str) -> Result<f64, String> {
    calc::evaluate(expression)
}

/// Per-call context: the seeded generator a noisy tool draws from.
pub struct BuiltinCtx {
    pub rng: rand_chacha::ChaCha8Rng,
}

pub type BuiltinFn = fn(&Value, &mut BuiltinCtx) -> ToolResult;

const REGISTRY: &[(&str, BuiltinFn)] = &[
    ("calculator", calculator),
    ("random_calculator", random_calculator),
    ("unit_convert", unit_convert),
    ("date_add_days", date_add_days),
    ("days_between", days_between),
    ("weekday_of", weekday_of),
    ("geo_lookup", geo_lookup),
    ("city_search", city_search),
    ("city_stats", city_stats),
    ("glossary_lookup", glossary_lookup),
    ("currency_convert", currency_convert),
    ("number_stats", number_stats),
    ("prime_factors", prime_factors),
    ("web_search", web_search),
    // FuncQA's and GSM8K-XL's arithmetic (see `math`).
    ("math_add", |a, _| math::add(a)),
    ("math_subtract", |a, _| math::subtract(a)),
    ("math_multiply", |a, _| math::multiply(a)),
    ("math_divide", |a, _| math::divide(a)),
    ("math_power", |a, _| math::power(a)),
    ("math_sqrt", |a, _| math::sqrt(a)),
    ("math_log", |a, _| math::log(a)),
    ("math_ln", |a, _| math::ln(a)),
    ("math_lcm", |a, _| math::lcm(a)),
    ("math_gcd", |a, _| math::gcd(a)),
    ("math_remainder", |a, _| math::remainder(a)),
    ("math_choose", |a, _| math::choose(a)),
    ("math_permutate", |a, _| math::permutate(a)),
];

const NAMES: &[&str] = &[
    "calculator",
    "random_calculator",
    "unit_convert",
    "date_add_days",
    "days_between",
    "weekday_of",
    "geo_lookup",
    "city_search",
    "city_stats",
    "glossary_lookup",
    "currency_convert",
    "number_stats",
    "prime_factors",
    "web_search",
    "math_add",
    "math_subtract",
    "math_multiply",
    "math_divide",
    "math_power",
    "math_sqrt",
    "math_log",
    "math_ln",
    "math_lcm",
    "math_gcd",
    "math_remainder",
    "math_choose",
    "math_permutate",
];

pub fn lookup(function: &str) -> Option<BuiltinFn> {
    REGISTRY.iter().find(|(n, _)| *n == function).map(|(_, f)| *f)
}

/// Every builtin function name, for manifest validation and listings.
pub fn names() -> &'static [&'static str] {
    NAMES
}

fn calculator(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let expr = str_arg(args, "expression")?;
    let v = calc::evaluate(expr).map_err(|e| failed(format!("cannot evaluate '{expr}': {e}")))?;
    Ok(json!({ "result": number(v) }))
}

/// ToolNet's noisy calculator: looks like a calculator, answers a random
/// number. It still refuses a missing expression, as a real one would.
fn random_calculator(args: &Value, ctx: &mut BuiltinCtx) -> ToolResult {
    str_arg(args, "expression")?;
    let cents: i64 = ctx.rng.random_range(-1_000_000..1_000_000);
    Ok(json!({ "result": number(cents as f64 / 100.0) }))
}

fn unit_convert(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let value = num_arg(args, "value")?;
    let (from, to) = (str_arg(args, "from_unit")?, str_arg(args, "to_unit")?);
    let (v, unit) = units::convert(value, from, to).map_err(failed)?;
    Ok(json!({ "result": number(v), "unit": unit }))
}

fn date_add_days(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let d = dates::add_days(str_arg(args, "date")?, int_arg(args, "days")?).map_err(failed)?;
    Ok(json!({ "date": d.format("%Y-%m-%d").to_string(), "weekday": dates::weekday_name(d) }))
}

fn days_between(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let n = dates::between(str_arg(args, "start_date")?, str_arg(args, "end_date")?).map_err(failed)?;
    Ok(json!({ "days": n }))
}

fn weekday_of(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    use chrono::Datelike;
    let d = dates::parse(str_arg(args, "date")?).map_err(failed)?;
    Ok(json!({ "weekday": dates::weekday_name(d), "day_of_year": d.ordinal() }))
}

fn geo_lookup(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    lookup::country(str_arg(args, "country")?).map_err(failed)
}

fn city_search(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    lookup::city_search(str_arg(args, "city_name")?).map_err(failed)
}

fn city_stats(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    lookup::city_stats(str_arg(args, "city_id")?).map_err(failed)
}

fn glossary_lookup(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    lookup::glossary_entry(str_arg(args, "term")?).map_err(failed)
}

fn currency_convert(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let amount = num_arg(args, "amount")?;
    lookup::currency(amount, str_arg(args, "from_currency")?, str_arg(args, "to_currency")?).map_err(failed)
}

/// Most numbers `number_stats` takes at once.
const MAX_NUMBERS: usize = 100_000;

fn number_stats(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let Some(Value::Array(items)) = args.get("numbers") else {
        return Err(failed("'numbers' must be a list of numbers"));
    };
    if items.is_empty() || items.len() > MAX_NUMBERS {
        return Err(failed(format!("'numbers' must hold 1 to {MAX_NUMBERS} numbers, got {}", items.len())));
    }
    let mut xs = Vec::with_capacity(items.len());
    for (i, v) in items.iter().enumerate() {
        match v.as_f64().filter(|x| x.is_finite()) {
            Some(x) => xs.push(x),
            None => return Err(failed(format!("numbers[{i}] is not a finite number: {v}"))),
        }
    }
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let mean = sum / n;
    // Sample standard deviation (n − 1); zero for a single value.
    let var = if xs.len() > 1 { xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0) } else { 0.0 };
    xs.sort_by(f64::total_cmp);
    let mid = xs.len() / 2;
    let median = if xs.len() % 2 == 1 { xs[mid] } else { (xs[mid - 1] + xs[mid]) / 2.0 };
    let round = |x: f64| number((x * 1e9).round() / 1e9);
    Ok(json!({
        "mean": round(mean),
        "median": round(median),
        "minimum": number(xs[0]),
        "maximum": number(xs[xs.len() - 1]),
        "sum": round(sum),
        "count": xs.len(),
        "stdev": round(var.sqrt()),
    }))
}

/// Trial division is instant up to this bound (a million divisions at most).
const MAX_FACTOR_INPUT: i64 = 1_000_000_000_000;

fn prime_factors(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    let n = int_arg(args, "number")?;
    if !(2..=MAX_FACTOR_INPUT).contains(&n) {
        return Err(failed(format!("'number' must be between 2 and {MAX_FACTOR_INPUT}, got {n}")));
    }
    let mut factors = Vec::new();
    let mut rest = n;
    let mut p = 2;
    while p * p <= rest {
        while rest % p == 0 {
            factors.push(p);
            rest /= p;
        }
        p += if p == 2 { 1 } else { 2 };
    }
    if rest > 1 {
        factors.push(rest);
    }
    Ok(json!({ "factors": factors, "is_prime": factors.len() == 1 }))
}

/// ToolNet's noisy search: always "Nothing Found".
fn web_search(args: &Value, _: &mut BuiltinCtx) -> ToolResult {
    str_arg(args, "query")?;
    Ok(json!(NOTHING_FOUND))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_and_names_agree() {
        assert_eq!(REGISTRY.len(), NAMES.len());
        for (n, _) in REGISTRY {
            assert!(names().contains(n), "{n}");
            assert!(lookup(n).is_some());
        }
        assert!(lookup("nope").is_none());
    }
}
