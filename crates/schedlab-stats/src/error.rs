//! The crate's single error type and the input checks every public function
//! runs before touching the data.

use thiserror::Error;

/// Everything that can be wrong with the data or parameters handed to this
/// crate. No function here panics on user data; it returns one of these.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum StatsError {
    /// A sample is shorter than the method needs.
    #[error("{what} needs at least {needed} values, got {got}")]
    TooFewSamples {
        /// Which argument, e.g. `"baseline"`.
        what: &'static str,
        /// The minimum length the method accepts.
        needed: usize,
        /// The length that was passed.
        got: usize,
    },
    /// A value is NaN or infinite.
    #[error("{what}[{index}] is not finite ({value})")]
    NonFinite {
        /// Which argument.
        what: &'static str,
        /// Position of the first offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A value is zero or negative where the method takes logarithms or
    /// divides by it.
    #[error("{what}[{index}] = {value} but must be > 0 (logarithms or ratios are taken)")]
    NonPositive {
        /// Which argument.
        what: &'static str,
        /// Position of the first offending value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// A scalar parameter (confidence, alpha, power, ...) is out of range.
    #[error("{name} = {value} is out of range: must be {expected}")]
    InvalidParameter {
        /// Parameter name.
        name: &'static str,
        /// The value passed.
        value: f64,
        /// Human-readable valid range.
        expected: &'static str,
    },
    /// ministat only has t values for 80, 90, 95, 98, 99 and 99.5 %.
    #[error(
        "confidence {0} is not one of ministat's levels (0.80, 0.90, 0.95, 0.98, 0.99, 0.995)"
    )]
    UnsupportedMinistatConfidence(f64),
    /// A p-value outside [0, 1] or NaN.
    #[error("p-value [{index}] = {value} is not in [0, 1]")]
    InvalidPValue {
        /// Position of the offending p-value.
        index: usize,
        /// The offending value.
        value: f64,
    },
    /// Values so large (near `f64::MAX`) that a sum, difference or ratio
    /// overflowed; the result would be infinite or NaN.
    #[error("values are too large: an intermediate result overflowed")]
    Overflow,
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, StatsError>;

pub(crate) fn require_len(xs: &[f64], needed: usize, what: &'static str) -> Result<()> {
    if xs.len() < needed {
        return Err(StatsError::TooFewSamples {
            what,
            needed,
            got: xs.len(),
        });
    }
    Ok(())
}

pub(crate) fn require_finite(xs: &[f64], what: &'static str) -> Result<()> {
    match xs.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(StatsError::NonFinite {
            what,
            index,
            value: xs[index],
        }),
        None => Ok(()),
    }
}

/// Length and finiteness together: the check almost every function starts with.
pub(crate) fn require_sample(xs: &[f64], needed: usize, what: &'static str) -> Result<()> {
    require_len(xs, needed, what)?;
    require_finite(xs, what)
}

pub(crate) fn require_positive(xs: &[f64], what: &'static str) -> Result<()> {
    require_finite(xs, what)?;
    match xs.iter().position(|&x| x <= 0.0) {
        Some(index) => Err(StatsError::NonPositive {
            what,
            index,
            value: xs[index],
        }),
        None => Ok(()),
    }
}

/// Turns an overflowed (infinite or NaN) intermediate into an error.
pub(crate) fn require_finite_result(value: f64) -> Result<f64> {
    if value.is_finite() {
        Ok(value)
    } else {
        Err(StatsError::Overflow)
    }
}

/// Checks a probability-like parameter lies strictly inside (0, 1).
pub(crate) fn require_open_unit(value: f64, name: &'static str) -> Result<()> {
    if value.is_finite() && value > 0.0 && value < 1.0 {
        Ok(())
    } else {
        Err(StatsError::InvalidParameter {
            name,
            value,
            expected: "strictly between 0 and 1",
        })
    }
}
