//! How numbers read on screen: costs, durations and token counts, the same
//! in every pane.

/// A cost in the session's unit: two decimals from 1 up, three significant
/// digits below (model calls cost fractions of a cent).
pub(super) fn fmt_cost(c: f64) -> String {
    if !c.is_finite() {
        return if c.is_nan() { "—".to_string() } else { "∞".to_string() };
    }
    if c == 0.0 {
        return "0".to_string();
    }
    if c.abs() >= 1.0 {
        return format!("{c:.2}");
    }
    let decimals = ((-c.abs().log10()).ceil() as usize + 2).min(9);
    let s = format!("{c:.decimals$}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

pub(super) fn fmt_ms(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{}m{:02}s", ms / 60_000, (ms % 60_000) / 1000),
    }
}

/// Token counts: exact when short, then k and M.
pub(super) fn fmt_count(n: u64) -> String {
    match n {
        0..10_000 => n.to_string(),
        10_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.2}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_well() {
        assert_eq!(fmt_cost(21.0), "21.00");
        assert_eq!(fmt_cost(0.000123), "0.000123");
        assert_eq!(fmt_cost(0.5), "0.5");
        assert_eq!(fmt_cost(0.0), "0");
        assert_eq!(fmt_ms(999), "999 ms");
        assert_eq!(fmt_ms(1500), "1.5 s");
        assert_eq!(fmt_ms(125_000), "2m05s");
        assert_eq!(fmt_count(12_345), "12.3k");
    }
}
