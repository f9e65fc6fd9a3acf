//! How every report rounds a number for display: one rule for the text styles, the HTML pages
//! and the histories, so a value reads the same wherever it is printed.

/// `value` with at least three significant digits, so no nonzero value ever reads as `0`.
///
/// The decimals step down with the magnitude — four below 1, three below 100, one below 10,000,
/// none above — so a column of like values lines up: 0.2414, 5.307, 12.345, 123.5, 9947.3, 188419
/// (four or five digits, whole numbers whole). Where four decimals would leave fewer than three
/// significant digits, below 0.1, a value gets three: 0.0647, 0.00123, and below 0.0001 as an
/// exponent, 2.04e-5, rather than behind a run of zeros. NaN is `—` and an infinity `∞`.
pub fn format_value(value: f64) -> String {
    if value.is_nan() {
        return "—".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "∞" } else { "-∞" }.to_string();
    }
    let magnitude = value.abs();
    let decimals = if magnitude == 0.0 {
        return "0".to_string();
    } else if magnitude >= 10_000.0 {
        0
    } else if magnitude >= 100.0 {
        1
    } else if magnitude >= 1.0 {
        3
    } else if magnitude >= 0.01 {
        4
    } else if magnitude >= 1e-4 {
        (2 - magnitude.log10().floor() as i32) as usize
    } else {
        return format!("{value:.2e}");
    };
    format!("{value:.decimals$}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_step_with_magnitude() {
        assert_eq!(format_value(188_419.4), "188419");
        assert_eq!(format_value(48_369_494_611.0), "48369494611");
        assert_eq!(format_value(9947.3), "9947.3");
        assert_eq!(format_value(123.45), "123.5");
        assert_eq!(format_value(12.345), "12.345");
        assert_eq!(format_value(5.3071), "5.307");
        assert_eq!(format_value(0.2414), "0.2414");
        assert_eq!(format_value(0.01234), "0.0123");
        assert_eq!(format_value(-0.0647), "-0.0647");
    }

    /// The text styles printed these as `0.0000` beside a change of several percent.
    #[test]
    fn small_values_keep_their_digits() {
        assert_eq!(format_value(0.001234), "0.00123");
        assert_eq!(format_value(0.0002572), "0.000257");
        assert_eq!(format_value(0.0003), "0.000300");
        assert_eq!(format_value(2e-5), "2.00e-5");
        assert_eq!(format_value(-2.0401e-5), "-2.04e-5");
        assert_eq!(format_value(3e-300), "3.00e-300");
        for v in [9.9e-3, 1e-3, 1e-4, 9.99e-5, 1e-9, f64::MIN_POSITIVE] {
            let text = format_value(v);
            assert!(
                text.chars().any(|c| ('1'..='9').contains(&c)),
                "{v}: {text}"
            );
        }
    }

    #[test]
    fn zero_and_the_non_finite() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(-0.0), "0");
        assert_eq!(format_value(f64::NAN), "—");
        assert_eq!(format_value(f64::INFINITY), "∞");
        assert_eq!(format_value(f64::NEG_INFINITY), "-∞");
    }
}
