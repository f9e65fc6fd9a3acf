//! Descriptive statistics of one sample: the `Summary` row every report
//! prints, harmonic and geometric means, and benchstat's order-statistic
//! confidence interval of the median.

use serde::Serialize;

use crate::dist::normal_quantile;
use crate::error::{
    require_finite_result, require_open_unit, require_positive, require_sample, Result,
};
use crate::ConfidenceInterval;

/// One sample described the way the reports print it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (mean of the two middle values when `n` is even).
    pub median: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
    /// Sample standard deviation (divisor `n - 1`); `None` when `n < 2`.
    pub std: Option<f64>,
    /// Coefficient of variation in percent, `std / mean * 100`; `None` when
    /// `std` is undefined or the mean is zero.
    pub std_pct: Option<f64>,
}

/// Summarises a sample of at least one finite value.
pub fn summarize(xs: &[f64]) -> Result<Summary> {
    require_sample(xs, 1, "sample")?;
    let sorted = sorted_copy(xs);
    let mean = require_finite_result(mean_unchecked(xs))?;
    let std = match xs.len() {
        1 => None,
        _ => Some(require_finite_result(variance_unchecked(xs, mean).sqrt())?),
    };
    let std_pct = std.filter(|_| mean != 0.0).map(|s| s / mean * 100.0);
    Ok(Summary {
        n: xs.len(),
        mean,
        median: median_of_sorted(&sorted),
        min: sorted[0],
        max: sorted[sorted.len() - 1],
        std,
        std_pct,
    })
}

/// Arithmetic mean of at least one finite value.
pub fn mean(xs: &[f64]) -> Result<f64> {
    require_sample(xs, 1, "sample")?;
    require_finite_result(mean_unchecked(xs))
}

/// The plain mean of `xs` (its sum in order, over n) and their sample variance around it
/// (divisor n − 1; `None` for fewer than two values): a run summary, as a comparison and a
/// history compute it and as the store keeps one for every run, case and metric — one function,
/// so both give the same bits. Empty: a NaN mean.
pub fn run_moments(xs: &[f64]) -> (f64, Option<f64>) {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n as f64;
    let variance =
        (n >= 2).then(|| xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64);
    (mean, variance)
}

/// Median of at least one finite value (mean of the two middle values for
/// even `n`, as numpy does).
pub fn median(xs: &[f64]) -> Result<f64> {
    require_sample(xs, 1, "sample")?;
    Ok(median_of_sorted(&sorted_copy(xs)))
}

/// A robust scale of values that should follow Student's t with `df`
/// degrees of freedom: their median absolute deviation from the median,
/// divided by the MAD t itself has (its 0.75 quantile), so 1 means "spread
/// as t predicts". At least two finite values; `df > 0`.
pub fn t_scaled_mad(xs: &[f64], df: f64) -> Result<f64> {
    require_sample(xs, 2, "sample")?;
    if df.is_nan() || df <= 0.0 {
        return Err(crate::StatsError::InvalidParameter {
            name: "df",
            value: df,
            expected: "> 0",
        });
    }
    let center = median_of_sorted(&sorted_copy(xs));
    let deviations: Vec<f64> = xs.iter().map(|x| (x - center).abs()).collect();
    let mad = median_of_sorted(&sorted_copy(&deviations));
    require_finite_result(mad / crate::dist::t_quantile(0.75, df))
}

/// Geometric mean `exp(mean(ln x))`; every value must be > 0.
pub fn geometric_mean(xs: &[f64]) -> Result<f64> {
    require_sample(xs, 1, "sample")?;
    require_positive(xs, "sample")?;
    let logs: Vec<f64> = xs.iter().map(|x| x.ln()).collect();
    Ok(mean_unchecked(&logs).exp())
}

/// Harmonic mean `n / sum(1/x)` (mmtests' Hmean for higher-is-better
/// metrics); every value must be > 0.
pub fn harmonic_mean(xs: &[f64]) -> Result<f64> {
    require_sample(xs, 1, "sample")?;
    require_positive(xs, "sample")?;
    let reciprocal_sum = require_finite_result(xs.iter().map(|x| 1.0 / x).sum())?;
    Ok(xs.len() as f64 / reciprocal_sum)
}

/// The median with its distribution-free confidence interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianCi {
    /// Sample median.
    pub median: f64,
    /// Interval between two order statistics of the sample.
    pub ci: ConfidenceInterval,
    /// Coverage actually achieved by the chosen order statistics (≥ the
    /// requested level, since the binomial distribution is discrete).
    pub achieved_confidence: f64,
    /// 1-based rank of the order statistic giving the lower bound.
    pub low_order: usize,
    /// 1-based rank of the order statistic giving the upper bound.
    pub high_order: usize,
}

/// Which order statistics bound the median's confidence interval for a
/// sample of `n`, as benchstat chooses them.
///
/// `low_order == 0` means the lower bound is -∞ and `high_order == n + 1`
/// means the upper bound is +∞, i.e. the sample is too small.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MedianCiOrders {
    /// 1-based rank of the lower bound, 0 for -∞.
    pub low_order: usize,
    /// 1-based rank of the upper bound, `n + 1` for +∞.
    pub high_order: usize,
    /// Coverage of `[X(low), X(high)]`.
    pub achieved_confidence: f64,
}

/// benchstat switches from the exact binomial to its normal approximation
/// above this sample size; matching it keeps our intervals identical.
const MEDIAN_CI_EXACT_LIMIT: usize = 30;

/// Order statistics bounding the median's confidence interval, computed as
/// golang/perf `benchmath` (go-moremath `QuantileCI` at q = 0.5) does.
///
/// The number of sample values below the population median is
/// Binomial(n, 1/2). For `n <= 30` the interval grows outward from the mode,
/// always taking the more probable neighbour and preferring the left on ties,
/// until its probability reaches `confidence`. Above 30 the binomial is
/// replaced by its normal approximation with continuity correction, rounded
/// outward to whole ranks, and the upper rank is pulled in by one when that
/// still meets the level with less excess coverage.
pub fn median_ci_orders(n: usize, confidence: f64) -> Result<MedianCiOrders> {
    require_open_unit(confidence, "confidence")?;
    let (low, high, achieved) = if n <= MEDIAN_CI_EXACT_LIMIT {
        exact_median_orders(n, confidence)
    } else {
        approximate_median_orders(n, confidence)
    };
    Ok(MedianCiOrders {
        low_order: low.max(0) as usize,
        high_order: high.min(rank_limit(n)) as usize,
        achieved_confidence: achieved,
    })
}

/// `n + 1`, the "+∞" rank, without overflowing for absurd `n`.
fn rank_limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX).saturating_add(1)
}

fn binomial_half_pmf(n: usize, k: i64) -> f64 {
    if k < 0 || k > n as i64 {
        return 0.0;
    }
    binomial_coefficient_as_benchstat(n, k as usize) * 0.5f64.powi(n as i32)
}

/// go-moremath's `Choose`: exact up to n = 20, `exp(lchoose)` above.
///
/// Copying the inexact branch matters: for 21 <= n <= 30 the two binomial
/// probabilities at equal distance from the mode then differ in the last
/// bits, and that rounding noise decides whether benchstat widens the
/// interval to the left or to the right. libm's `lgamma` returns the same
/// bits as Go's `math.Lgamma` at these integers, and `exp` is monotone, so
/// every such comparison comes out as in benchstat.
fn binomial_coefficient_as_benchstat(n: usize, k: usize) -> f64 {
    const EXACT_LIMIT: usize = 20;
    if k == 0 || k == n {
        return 1.0;
    }
    if n <= EXACT_LIMIT {
        let k = k.min(n - k) as u64;
        let mut c: u64 = 1;
        for i in 0..k {
            c = c * (n as u64 - i) / (i + 1);
        }
        return c as f64;
    }
    let ln_gamma = |x: usize| libm::lgamma(x as f64);
    libm::exp(ln_gamma(n + 1) - ln_gamma(k + 1) - ln_gamma(n - k + 1))
}

fn exact_median_orders(n: usize, confidence: f64) -> (i64, i64, f64) {
    let mode = ((n as f64 + 1.0) * 0.5).ceil() as i64 - 1;
    let mut accumulated = binomial_half_pmf(n, mode);
    let (mut low, mut high) = (mode, mode + 1);
    let mut left = binomial_half_pmf(n, low - 1);
    let mut right = binomial_half_pmf(n, high);
    while accumulated < confidence && (left > 0.0 || right > 0.0) {
        if left >= right {
            accumulated += left;
            low -= 1;
            left = binomial_half_pmf(n, low - 1);
        } else {
            accumulated += right;
            high += 1;
            right = binomial_half_pmf(n, high);
        }
    }
    (low, high, accumulated)
}

fn approximate_median_orders(n: usize, confidence: f64) -> (i64, i64, f64) {
    let mu = n as f64 * 0.5;
    let sigma = (n as f64 * 0.25).sqrt();
    let lower_edge = mu + sigma * normal_quantile((1.0 - confidence) * 0.5);
    let upper_edge = 2.0 * mu - lower_edge;
    let low = (lower_edge - 0.5).floor() as i64 + 1;
    let mut high = (upper_edge - 0.5).ceil() as i64 + 1;
    let coverage = |l: i64, r: i64| {
        crate::dist::normal_cdf((r as f64 - 0.5 - mu) / sigma)
            - crate::dist::normal_cdf((l as f64 - 0.5 - mu) / sigma)
    };
    let mut achieved = coverage(low, high);
    let pulled_in = coverage(low, high - 1);
    if pulled_in >= confidence && pulled_in < achieved {
        achieved = pulled_in;
        high -= 1;
    }
    if low <= 0 && high >= rank_limit(n) {
        achieved = 1.0;
    }
    (low, high, achieved)
}

/// Median with benchstat's order-statistic confidence interval.
///
/// Returns `Ok(None)` when the sample is too small for any pair of order
/// statistics to reach `confidence` (benchstat prints "± ∞" and "need >= 6
/// samples" at 0.95).
pub fn median_ci(xs: &[f64], confidence: f64) -> Result<Option<MedianCi>> {
    require_sample(xs, 1, "sample")?;
    let orders = median_ci_orders(xs.len(), confidence)?;
    if orders.low_order < 1 || orders.high_order > xs.len() {
        return Ok(None);
    }
    let sorted = sorted_copy(xs);
    Ok(Some(MedianCi {
        median: median_of_sorted(&sorted),
        ci: ConfidenceInterval {
            low: sorted[orders.low_order - 1],
            high: sorted[orders.high_order - 1],
            level: confidence,
        },
        achieved_confidence: orders.achieved_confidence,
        low_order: orders.low_order,
        high_order: orders.high_order,
    }))
}

pub(crate) fn sorted_copy(xs: &[f64]) -> Vec<f64> {
    let mut sorted = xs.to_vec();
    sorted.sort_unstable_by(f64::total_cmp);
    sorted
}

/// Median of an ascending, non-empty slice.
pub(crate) fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        midpoint(sorted[n / 2 - 1], sorted[n / 2])
    }
}

/// `(a + b) / 2` as numpy computes it, without overflowing for huge values.
pub(crate) fn midpoint(a: f64, b: f64) -> f64 {
    let m = (a + b) / 2.0;
    if m.is_finite() {
        m
    } else {
        a / 2.0 + b / 2.0
    }
}

/// Mean with one refinement pass, so a constant sample has exactly that
/// constant as its mean and therefore an exactly zero deviation.
pub(crate) fn mean_unchecked(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let first_pass = xs.iter().sum::<f64>() / n;
    first_pass + xs.iter().map(|x| x - first_pass).sum::<f64>() / n
}

/// Two-pass sample variance (divisor `n - 1`) around a precomputed mean.
pub(crate) fn variance_unchecked(xs: &[f64], mean: f64) -> f64 {
    let squares: f64 = xs.iter().map(|x| (x - mean) * (x - mean)).sum();
    squares / (xs.len() as f64 - 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_scaled_mad_is_one_for_t_quantiles_and_scales_with_them() {
        let df = 6.0;
        let n = 2001;
        let xs: Vec<f64> = (0..n)
            .map(|i| crate::dist::t_quantile((i as f64 + 0.5) / n as f64, df))
            .collect();
        let scale = t_scaled_mad(&xs, df).unwrap();
        assert!((scale - 1.0).abs() < 0.01, "{scale}");
        let wide: Vec<f64> = xs.iter().map(|x| 3.0 * x + 7.0).collect();
        assert!((t_scaled_mad(&wide, df).unwrap() / scale - 3.0).abs() < 1e-9);
        assert!(t_scaled_mad(&xs, 0.0).is_err());
    }

    #[test]
    fn constant_sample_has_zero_spread() {
        let s = summarize(&[0.1, 0.1, 0.1]).unwrap();
        assert_eq!(s.mean, 0.1);
        assert_eq!(s.std, Some(0.0));
        assert_eq!(s.std_pct, Some(0.0));
    }

    #[test]
    fn single_value_has_no_std() {
        let s = summarize(&[3.0]).unwrap();
        assert_eq!((s.n, s.median, s.std, s.std_pct), (1, 3.0, None, None));
    }

    #[test]
    fn benchstat_needs_six_samples_at_95() {
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0], 0.95)
            .unwrap()
            .is_none());
        assert!(median_ci(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 0.95)
            .unwrap()
            .is_some());
    }

    #[test]
    fn rejects_bad_input() {
        assert!(summarize(&[]).is_err());
        assert!(summarize(&[1.0, f64::NAN]).is_err());
        assert!(geometric_mean(&[1.0, 0.0]).is_err());
        assert!(median_ci(&[1.0], 1.0).is_err());
    }
}
