//! `unit_convert`: length, mass, temperature, volume, speed, area, time and
//! data sizes. Every linear unit is a factor to its quantity's base unit;
//! temperatures are converted through kelvin.

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Quantity {
    Length,
    Mass,
    Temperature,
    Volume,
    Speed,
    Area,
    Time,
    Data,
}

impl Quantity {
    fn name(self) -> &'static str {
        match self {
            Quantity::Length => "length",
            Quantity::Mass => "mass",
            Quantity::Temperature => "temperature",
            Quantity::Volume => "volume",
            Quantity::Speed => "speed",
            Quantity::Area => "area",
            Quantity::Time => "time",
            Quantity::Data => "data size",
        }
    }
}

struct Unit {
    name: &'static str,
    quantity: Quantity,
    /// Base units per one of this unit (unused for temperatures).
    factor: f64,
    aliases: &'static [&'static str],
}

use Quantity::*;

/// US customary for cups, pints, quarts and gallons; `imperial_gallon` for
/// the British one. The canonical names are the manifest's enum.
const UNITS: &[Unit] = &[
    Unit { name: "millimeter", quantity: Length, factor: 0.001, aliases: &["mm", "millimetre"] },
    Unit { name: "centimeter", quantity: Length, factor: 0.01, aliases: &["cm", "centimetre"] },
    Unit { name: "meter", quantity: Length, factor: 1.0, aliases: &["m", "metre"] },
    Unit { name: "kilometer", quantity: Length, factor: 1000.0, aliases: &["km", "kilometre"] },
    Unit { name: "inch", quantity: Length, factor: 0.0254, aliases: &["in", "inches"] },
    Unit { name: "foot", quantity: Length, factor: 0.3048, aliases: &["ft", "feet"] },
    Unit { name: "yard", quantity: Length, factor: 0.9144, aliases: &["yd"] },
    Unit { name: "mile", quantity: Length, factor: 1609.344, aliases: &["mi"] },
    Unit { name: "nautical_mile", quantity: Length, factor: 1852.0, aliases: &["nmi"] },
    Unit { name: "milligram", quantity: Mass, factor: 1e-6, aliases: &["mg"] },
    Unit { name: "gram", quantity: Mass, factor: 0.001, aliases: &["g"] },
    Unit { name: "kilogram", quantity: Mass, factor: 1.0, aliases: &["kg"] },
    Unit { name: "tonne", quantity: Mass, factor: 1000.0, aliases: &["t", "metric_ton"] },
    Unit { name: "ounce", quantity: Mass, factor: 0.028_349_523_125, aliases: &["oz"] },
    Unit { name: "pound", quantity: Mass, factor: 0.453_592_37, aliases: &["lb", "lbs"] },
    Unit { name: "stone", quantity: Mass, factor: 6.350_293_18, aliases: &["st"] },
    Unit { name: "celsius", quantity: Temperature, factor: 1.0, aliases: &["c", "degc"] },
    Unit { name: "fahrenheit", quantity: Temperature, factor: 1.0, aliases: &["f", "degf"] },
    Unit { name: "kelvin", quantity: Temperature, factor: 1.0, aliases: &["k"] },
    Unit { name: "milliliter", quantity: Volume, factor: 0.001, aliases: &["ml", "millilitre"] },
    Unit { name: "liter", quantity: Volume, factor: 1.0, aliases: &["l", "litre"] },
    Unit { name: "cubic_meter", quantity: Volume, factor: 1000.0, aliases: &["m3", "cubic_metre"] },
    Unit { name: "teaspoon", quantity: Volume, factor: 0.004_928_921_593_75, aliases: &["tsp"] },
    Unit { name: "tablespoon", quantity: Volume, factor: 0.014_786_764_781_25, aliases: &["tbsp"] },
    Unit { name: "cup", quantity: Volume, factor: 0.236_588_236_5, aliases: &[] },
    Unit { name: "pint", quantity: Volume, factor: 0.473_176_473, aliases: &["pt"] },
    Unit { name: "quart", quantity: Volume, factor: 0.946_352_946, aliases: &["qt"] },
    Unit { name: "gallon", quantity: Volume, factor: 3.785_411_784, aliases: &["gal", "us_gallon"] },
    Unit { name: "imperial_gallon", quantity: Volume, factor: 4.546_09, aliases: &["uk_gallon"] },
    Unit { name: "meter_per_second", quantity: Speed, factor: 1.0, aliases: &["m/s", "mps"] },
    Unit { name: "kilometer_per_hour", quantity: Speed, factor: 1.0 / 3.6, aliases: &["km/h", "kph", "kmh"] },
    Unit { name: "mile_per_hour", quantity: Speed, factor: 0.447_04, aliases: &["mph"] },
    Unit { name: "knot", quantity: Speed, factor: 1852.0 / 3600.0, aliases: &["kn", "kt"] },
    Unit { name: "foot_per_second", quantity: Speed, factor: 0.3048, aliases: &["ft/s", "fps"] },
    Unit { name: "square_meter", quantity: Area, factor: 1.0, aliases: &["m2", "sq_m"] },
    Unit { name: "square_kilometer", quantity: Area, factor: 1e6, aliases: &["km2", "sq_km"] },
    Unit { name: "square_foot", quantity: Area, factor: 0.092_903_04, aliases: &["ft2", "sq_ft"] },
    Unit { name: "square_mile", quantity: Area, factor: 2_589_988.110_336, aliases: &["mi2", "sq_mi"] },
    Unit { name: "hectare", quantity: Area, factor: 10_000.0, aliases: &["ha"] },
    Unit { name: "acre", quantity: Area, factor: 4_046.856_422_4, aliases: &["ac"] },
    Unit { name: "second", quantity: Time, factor: 1.0, aliases: &["s", "sec"] },
    Unit { name: "minute", quantity: Time, factor: 60.0, aliases: &["min"] },
    Unit { name: "hour", quantity: Time, factor: 3600.0, aliases: &["h", "hr"] },
    Unit { name: "day", quantity: Time, factor: 86_400.0, aliases: &["d"] },
    Unit { name: "week", quantity: Time, factor: 604_800.0, aliases: &["wk"] },
    Unit { name: "byte", quantity: Data, factor: 1.0, aliases: &["b"] },
    Unit { name: "kilobyte", quantity: Data, factor: 1e3, aliases: &["kb"] },
    Unit { name: "megabyte", quantity: Data, factor: 1e6, aliases: &["mb"] },
    Unit { name: "gigabyte", quantity: Data, factor: 1e9, aliases: &["gb"] },
    Unit { name: "kibibyte", quantity: Data, factor: 1024.0, aliases: &["kib"] },
    Unit { name: "mebibyte", quantity: Data, factor: 1_048_576.0, aliases: &["mib"] },
    Unit { name: "gibibyte", quantity: Data, factor: 1_073_741_824.0, aliases: &["gib"] },
];

/// Canonical unit names, in the order of the table.
pub fn unit_names() -> impl Iterator<Item = &'static str> {
    UNITS.iter().map(|u| u.name)
}

fn find(name: &str) -> Option<&'static Unit> {
    let key = name.trim().to_lowercase().replace([' ', '-'], "_");
    let singular = key.strip_suffix('s').unwrap_or(&key);
    UNITS.iter().find(|u| {
        u.name == key || u.name == singular || u.aliases.iter().any(|a| *a == key)
        // Plurals of the compound names: "miles_per_hour", "kilometers_per_hour".
            || u.name.replace("_per_", "s_per_") == key
    })
}

fn to_kelvin(v: f64, unit: &str) -> f64 {
    match unit {
        "celsius" => v + 273.15,
        "fahrenheit" => (v - 32.0) * 5.0 / 9.0 + 273.15,
        _ => v,
    }
}

fn from_kelvin(k: f64, unit: &str) -> f64 {
    match unit {
        "celsius" => k - 273.15,
        "fahrenheit" => (k - 273.15) * 9.0 / 5.0 + 32.0,
        _ => k,
    }
}

/// Rounds away the binary noise of the factor arithmetic (12 significant
/// digits), so 100 celsius is 212 fahrenheit and not 212.00000000000003.
fn tidy(v: f64) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    let digits = 12 - (v.abs().log10().floor() as i32) - 1;
    if !(-300..=300).contains(&digits) {
        return v;
    }
    let scale = 10f64.powi(digits);
    let r = (v * scale).round() / scale;
    if r.is_finite() { r } else { v }
}

/// Converts `value` between two units; returns the value and the canonical
/// name of the target unit.
pub fn convert(value: f64, from: &str, to: &str) -> Result<(f64, &'static str), String> {
    if !value.is_finite() {
        return Err("value must be a finite number".into());
    }
    let f = find(from).ok_or_else(|| format!("unknown unit '{from}'"))?;
    let t = find(to).ok_or_else(|| format!("unknown unit '{to}'"))?;
    if f.quantity != t.quantity {
        return Err(format!("cannot convert {} ({}) to {} ({})", f.name, f.quantity.name(), t.name, t.quantity.name()));
    }
    let v = if f.quantity == Temperature {
        let k = to_kelvin(value, f.name);
        if k < 0.0 {
            return Err(format!("{value} {} is below absolute zero", f.name));
        }
        from_kelvin(k, t.name)
    } else {
        value * f.factor / t.factor
    };
    Ok((tidy(v), t.name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_plurals_resolve() {
        for n in ["km", "Kilometers", "kilometre", "kilometer"] {
            assert_eq!(find(n).map(|u| u.name), Some("kilometer"), "{n}");
        }
        assert_eq!(find("miles per hour").map(|u| u.name), Some("mile_per_hour"));
        assert_eq!(find("feet").map(|u| u.name), Some("foot"));
        assert!(find("furlong").is_none());
    }

    #[test]
    fn every_alias_is_unique() {
        let mut seen = std::collections::BTreeSet::new();
        for u in UNITS {
            assert!(seen.insert(u.name), "{}", u.name);
            for a in u.aliases {
                assert!(seen.insert(a), "{a}");
            }
        }
    }
}
