//! Sums and means of the figures a report prints. Rust's `Sum` for floats
//! starts from -0.0, so an empty sum prints as `-0.00`; these start from
//! +0.0, and a mean of nothing is 0, not NaN.

/// The sum, 0.0 (never -0.0) when `xs` is empty.
pub fn total(xs: impl IntoIterator<Item = f64>) -> f64 {
    xs.into_iter().fold(0.0, |a, x| a + x)
}

/// The arithmetic mean, 0.0 when `xs` is empty.
pub fn mean(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = xs.into_iter().fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_sums_to_positive_zero() {
        assert!(total(std::iter::empty()).is_sign_positive());
        assert!(mean(std::iter::empty()).is_sign_positive());
        assert_eq!(format!("{:.2}", mean(Vec::new())), "0.00");
        assert_eq!(mean([1.0, 2.0, 6.0]), 3.0);
        assert_eq!(total([0.5, 0.25]), 0.75);
    }
}
