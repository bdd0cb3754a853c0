//! Lookups over the data files shipped in `sample-tools/data/`, embedded in
//! the binary so it works from any directory.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Value, json};

use super::number::number;

const COUNTRIES: &str = include_str!("../../../../../sample-tools/data/countries.json");
const CITIES: &str = include_str!("../../../../../sample-tools/data/cities.json");
const GLOSSARY: &str = include_str!("../../../../../sample-tools/data/glossary.json");
const RATES: &str = include_str!("../../../../../sample-tools/data/currency_rates.json");

#[derive(Deserialize)]
struct Countries {
    figures_as_of: String,
    countries: Vec<Country>,
}

#[derive(Deserialize)]
struct Country {
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
    capital: String,
    population: u64,
    area_km2: f64,
    currency_code: String,
    continent: String,
    languages: Vec<String>,
}

#[derive(Deserialize)]
struct Cities {
    figures_as_of: String,
    cities: Vec<City>,
}

#[derive(Deserialize)]
struct City {
    city_id: String,
    name: String,
    #[serde(default)]
    aliases: Vec<String>,
    country: String,
    population: u64,
    elevation_m: i64,
    area_km2: f64,
    timezone: String,
}

#[derive(Deserialize)]
struct Glossary {
    terms: Vec<Term>,
}

#[derive(Deserialize)]
struct Term {
    term: String,
    #[serde(default)]
    aliases: Vec<String>,
    category: String,
    definition: String,
}

#[derive(Deserialize)]
struct Rates {
    note: String,
    base: String,
    rates: BTreeMap<String, f64>,
}

/// Parses an embedded file once. A file that does not parse is a build
/// mistake that the tests catch; at run time it becomes the tool's error.
fn parsed<T: for<'de> Deserialize<'de>>(
    cell: &'static OnceLock<Result<T, String>>,
    text: &str,
    file: &str,
) -> Result<&'static T, String> {
    cell.get_or_init(|| serde_json::from_str(text).map_err(|e| format!("embedded {file} is unreadable: {e}")))
        .as_ref()
        .map_err(Clone::clone)
}

fn countries() -> Result<&'static Countries, String> {
    static C: OnceLock<Result<Countries, String>> = OnceLock::new();
    parsed(&C, COUNTRIES, "countries.json")
}

fn cities() -> Result<&'static Cities, String> {
    static C: OnceLock<Result<Cities, String>> = OnceLock::new();
    parsed(&C, CITIES, "cities.json")
}

fn glossary() -> Result<&'static Glossary, String> {
    static C: OnceLock<Result<Glossary, String>> = OnceLock::new();
    parsed(&C, GLOSSARY, "glossary.json")
}

fn rates() -> Result<&'static Rates, String> {
    static C: OnceLock<Result<Rates, String>> = OnceLock::new();
    parsed(&C, RATES, "currency_rates.json")
}

/// Lower case, accents folded, punctuation and extra spaces dropped, so
/// "São Paulo", "sao paulo" and "Sao-Paulo" are one key.
pub(crate) fn fold(s: &str) -> String {
    let t = crate::text::fold(s);
    t.strip_prefix("the ").map(str::to_string).unwrap_or(t)
}

fn matches(query: &str, name: &str, aliases: &[String]) -> bool {
    let q = fold(query);
    fold(name) == q || aliases.iter().any(|a| fold(a) == q)
}

pub fn country(name: &str) -> Result<Value, String> {
    let data = countries()?;
    let c = data
        .countries
        .iter()
        .find(|c| matches(name, &c.name, &c.aliases))
        .ok_or_else(|| format!("no country named '{name}' in the dataset ({} countries)", data.countries.len()))?;
    Ok(json!({
        "name": c.name,
        "capital": c.capital,
        "population": c.population,
        "area_km2": c.area_km2,
        "currency_code": c.currency_code,
        "continent": c.continent,
        "languages": c.languages,
        "figures_as_of": data.figures_as_of,
    }))
}

pub fn city_search(name: &str) -> Result<Value, String> {
    let data = cities()?;
    let c = data
        .cities
        .iter()
        .find(|c| matches(name, &c.name, &c.aliases))
        .ok_or_else(|| format!("no city named '{name}' in the dataset"))?;
    Ok(json!({ "city_id": c.city_id, "name": c.name, "country": c.country }))
}

pub fn city_stats(city_id: &str) -> Result<Value, String> {
    let data = cities()?;
    let id = city_id.trim().to_uppercase();
    let c = data
        .cities
        .iter()
        .find(|c| c.city_id == id)
        .ok_or_else(|| format!("unknown city_id '{city_id}' (get one from city_search)"))?;
    Ok(json!({
        "name": c.name,
        "country": c.country,
        "population": c.population,
        "elevation_m": c.elevation_m,
        "area_km2": c.area_km2,
        "time_zone": c.timezone,
        "figures_as_of": data.figures_as_of,
    }))
}

pub fn glossary_entry(term: &str) -> Result<Value, String> {
    let data = glossary()?;
    let t = data
        .terms
        .iter()
        .find(|t| matches(term, &t.term, &t.aliases))
        .ok_or_else(|| format!("no glossary entry for '{term}'"))?;
    Ok(json!({ "definition": t.definition, "category": t.category }))
}

/// Converts with the fixed example table; the result is rounded to cents.
pub fn currency(amount: f64, from: &str, to: &str) -> Result<Value, String> {
    if !amount.is_finite() {
        return Err("amount must be a finite number".into());
    }
    let data = rates()?;
    let rate_of = |code: &str| {
        let code = code.trim().to_uppercase();
        data.rates.get(&code).copied().ok_or_else(|| {
            let known: Vec<&str> = data.rates.keys().map(String::as_str).collect();
            format!("unknown currency code '{code}' (known: {})", known.join(", "))
        })
    };
    let (f, t) = (rate_of(from)?, rate_of(to)?);
    let rate = t / f;
    let result = (amount * rate * 100.0).round() / 100.0;
    Ok(json!({
        "result": number(result),
        "rate": number((rate * 1e6).round() / 1e6),
        "rates_note": format!("{} (base {})", data.note, data.base),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_files_parse() {
        assert_eq!(countries().unwrap().countries.len(), 40);
        assert!(cities().unwrap().cities.len() >= 30);
        assert!(glossary().unwrap().terms.len() >= 40);
        let r = rates().unwrap();
        for c in &countries().unwrap().countries {
            assert!(r.rates.contains_key(&c.currency_code), "{} has no rate", c.currency_code);
        }
    }

    #[test]
    fn names_fold() {
        assert_eq!(fold("  São-Paulo "), "sao paulo");
        assert_eq!(fold("The Netherlands"), "netherlands");
        assert_eq!(country("usa").unwrap()["capital"], "Washington, D.C.");
        assert_eq!(city_search("bogota").unwrap()["city_id"], "C0022");
    }
}
