//! Date arithmetic on ISO dates (YYYY-MM-DD), proleptic Gregorian calendar.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

/// Larger offsets than this (about 2,700 years) are refused: chrono's
/// range ends near year 262,000 and no sensible question needs more.
const MAX_DAYS: i64 = 1_000_000;

pub fn parse(s: &str) -> Result<NaiveDate, String> {
    NaiveDate::parse_from_str(s.trim(), "%Y-%m-%d").map_err(|_| format!("'{s}' is not a date of the form YYYY-MM-DD"))
}

pub fn weekday_name(d: NaiveDate) -> &'static str {
    match d.weekday() {
        Weekday::Mon => "Monday",
        Weekday::Tue => "Tuesday",
        Weekday::Wed => "Wednesday",
        Weekday::Thu => "Thursday",
        Weekday::Fri => "Friday",
        Weekday::Sat => "Saturday",
        Weekday::Sun => "Sunday",
    }
}

pub fn add_days(date: &str, days: i64) -> Result<NaiveDate, String> {
    if days.abs() > MAX_DAYS {
        return Err(format!("days must be within ±{MAX_DAYS}"));
    }
    parse(date)?
        .checked_add_signed(Duration::days(days))
        .ok_or_else(|| "the resulting date is out of range".to_string())
}

/// Days from `start` to `end`: negative when `end` comes first.
pub fn between(start: &str, end: &str) -> Result<i64, String> {
    Ok((parse(end)? - parse(start)?).num_days())
}
