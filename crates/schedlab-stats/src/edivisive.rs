//! E-divisive means change-point detection (Matteson and James, "A Nonparametric Approach for
//! Multiple Change Point Analysis of Multivariate Data", JASA 2014), in the form MongoDB's
//! performance CI (Daly et al., ICPE 2020) and Hunter/Apache Otava use it: bisect the series
//! where the energy distance between the two sides, scaled by their sizes (q̂), is largest,
//! keep the split when a permutation test says it is significant, and repeat inside every
//! segment found, stopping at the first split that is not.
//!
//! The statistic for a split of a segment into X (m values) and Y (k values) is
//!
//! q̂ = m·k/(m+k) · ( 2/(m·k) Σ|xᵢ−yⱼ| − 1/C(m,2) Σ_{i<i'}|xᵢ−xᵢ'| − 1/C(k,2) Σ_{j<j'}|yⱼ−yⱼ'| )
//!
//! with exponent α = 1, the segment's end fixed at its boundary (as MongoDB does, rather than
//! searching it), and every side at least `min_segment` long. The permutation test shuffles the
//! values within each current segment (so earlier changes stay where they are), takes the
//! largest q̂ over all segments, and p = (1 + #{permuted ≥ observed}) / (1 + permutations).
//! Permutations come from a ChaCha8 stream seeded by a `u64`: the same series and seed give the
//! same change points on every machine.
//!
//! A permutation test assumes the values are exchangeable without a change: series that drift
//! (autocorrelated noise) break that, and E-divisive then finds "significant" splits in drift.
//! Judging whether a found change matters — against the machine's noise — is left to the caller
//! (`schedlab_analysis::history`).
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::error::{require_finite, require_open_unit, Result, StatsError};

/// How significant a split must be, how many permutations test it, how short a segment may be,
/// and the seed of the permutations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EDivisiveSettings {
    /// A split is kept when its permutation p-value is at most this.
    pub alpha: f64,
    /// Permutations per test (the smallest p-value possible is 1 / (1 + permutations)).
    pub permutations: usize,
    /// The fewest values on either side of a split; at least 2.
    pub min_segment: usize,
    pub seed: u64,
}

impl Default for EDivisiveSettings {
    fn default() -> Self {
        EDivisiveSettings {
            alpha: 0.01,
            permutations: 199,
            min_segment: 3,
            seed: 0,
        }
    }
}

/// A change point: the series changes between `index − 1` and `index`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ChangePoint {
    /// The first value after the change.
    pub index: usize,
    /// q̂ of the split when it was found.
    pub q: f64,
    /// Its permutation p-value.
    pub p_value: f64,
}

/// The change points of `series`, in index order. A series too short for one split (fewer than
/// 2 × `min_segment` values) has none.
pub fn e_divisive(series: &[f64], settings: &EDivisiveSettings) -> Result<Vec<ChangePoint>> {
    require_finite(series, "series")?;
    require_open_unit(settings.alpha, "alpha")?;
    if settings.min_segment < 2 {
        return Err(StatsError::InvalidParameter {
            name: "min_segment",
            value: settings.min_segment as f64,
            expected: "at least 2 (a side's within distance needs two values)",
        });
    }
    if settings.permutations == 0 {
        return Err(StatsError::InvalidParameter {
            name: "permutations",
            value: 0.0,
            expected: "at least 1",
        });
    }
    let mut rng = ChaCha8Rng::seed_from_u64(settings.seed);
    let mut found: Vec<ChangePoint> = Vec::new();
    let identity: Vec<usize> = (0..series.len()).collect();
    loop {
        let bounds = boundaries(&found, series.len());
        let Some((index, q)) = best_over_segments(series, &identity, &bounds, settings.min_segment)
        else {
            break;
        };
        // Stop counting once the p-value cannot come under alpha any more.
        let give_up = (settings.alpha * (settings.permutations + 1) as f64).floor() as usize;
        let mut at_least = 0usize;
        let mut order = identity.clone();
        let mut done = 0usize;
        for _ in 0..settings.permutations {
            for w in bounds.windows(2) {
                shuffle(&mut order[w[0]..w[1]], &mut rng);
            }
            done += 1;
            let permuted = best_over_segments(series, &order, &bounds, settings.min_segment)
                .map_or(f64::NEG_INFINITY, |(_, q)| q);
            if permuted >= q {
                at_least += 1;
                if at_least >= give_up {
                    break;
                }
            }
        }
        let p_value = (1 + at_least) as f64 / (1 + done) as f64;
        if p_value > settings.alpha || done < settings.permutations {
            break;
        }
        found.push(ChangePoint { index, q, p_value });
        found.sort_by_key(|c| c.index);
    }
    Ok(found)
}

/// Segment boundaries: 0, each change point, the end.
fn boundaries(found: &[ChangePoint], n: usize) -> Vec<usize> {
    std::iter::once(0)
        .chain(found.iter().map(|c| c.index))
        .chain(std::iter::once(n))
        .collect()
}

/// The split with the largest q̂ over every segment, as (index in the series, q̂).
fn best_over_segments(
    series: &[f64],
    order: &[usize],
    bounds: &[usize],
    min_segment: usize,
) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for w in bounds.windows(2) {
        let (start, end) = (w[0], w[1]);
        for_each_split(series, &order[start..end], min_segment, |tau, q| {
            if best.is_none_or(|(_, b)| q > b) {
                best = Some((start + tau, q));
            }
        });
    }
    best
}

/// Calls `visit(tau, q̂)` for every split of the values `series[order[..]]` into
/// `order[..tau]` and `order[tau..]` with both sides at least `min_segment` long. O(n²): the
/// within and between sums move one value across at a time.
fn for_each_split(
    series: &[f64],
    order: &[usize],
    min_segment: usize,
    mut visit: impl FnMut(usize, f64),
) {
    let n = order.len();
    // Not `n < 2 * min_segment`: a huge min_segment would overflow.
    if n / 2 < min_segment {
        return;
    }
    let value = |i: usize| series[order[i]];
    let mut within_right = 0.0;
    for i in 0..n {
        for j in i + 1..n {
            within_right += (value(i) - value(j)).abs();
        }
    }
    let (mut within_left, mut between) = (0.0, 0.0);
    for tau in 1..=n - min_segment {
        let t = tau - 1;
        let to_left: f64 = (0..t).map(|i| (value(i) - value(t)).abs()).sum();
        let to_right: f64 = (t + 1..n).map(|j| (value(t) - value(j)).abs()).sum();
        within_left += to_left;
        within_right -= to_right;
        between += to_right - to_left;
        let (m, k) = (tau as f64, (n - tau) as f64);
        if tau < min_segment {
            continue;
        }
        let pairs = |c: f64| c * (c - 1.0) / 2.0;
        let energy = 2.0 * between / (m * k) - within_left / pairs(m) - within_right / pairs(k);
        visit(tau, m * k / (m + k) * energy);
    }
}

/// Fisher–Yates, with draws from the seeded stream.
fn shuffle(values: &mut [usize], rng: &mut ChaCha8Rng) {
    for i in (1..values.len()).rev() {
        let j = rng.random_range(0..=i as u32) as usize;
        values.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// q̂ of every split of the whole series from the running sums (`None` where a side would
    /// be shorter than `min_segment`).
    fn q_hat_values(series: &[f64], min_segment: usize) -> Vec<Option<f64>> {
        let order: Vec<usize> = (0..series.len()).collect();
        let mut out = vec![None; series.len()];
        for_each_split(series, &order, min_segment.max(2), |tau, q| {
            out[tau] = Some(q)
        });
        out
    }

    /// q̂ straight from its definition, to check the running sums.
    fn q_direct(x: &[f64], y: &[f64]) -> f64 {
        let (m, k) = (x.len() as f64, y.len() as f64);
        let mut between = 0.0;
        for a in x {
            for b in y {
                between += (a - b).abs();
            }
        }
        let within = |s: &[f64]| {
            let mut w = 0.0;
            for i in 0..s.len() {
                for j in i + 1..s.len() {
                    w += (s[i] - s[j]).abs();
                }
            }
            w / (s.len() as f64 * (s.len() as f64 - 1.0) / 2.0)
        };
        m * k / (m + k) * (2.0 * between / (m * k) - within(x) - within(y))
    }

    #[test]
    fn running_sums_match_the_definition() {
        let series = [1.0, 1.2, 0.9, 3.0, 3.1, 2.8, 3.3, 1.1, 0.7];
        let q = q_hat_values(&series, 2);
        for (tau, value) in q.iter().enumerate() {
            if (2..=series.len() - 2).contains(&tau) {
                let expected = q_direct(&series[..tau], &series[tau..]);
                assert!((value.unwrap() - expected).abs() < 1e-9, "tau {tau}");
            } else {
                assert!(value.is_none(), "tau {tau}");
            }
        }
    }

    #[test]
    fn a_clean_step_is_found_where_it_is() {
        let series: Vec<f64> = (0..30)
            .map(|i| if i < 18 { 10.0 } else { 11.0 } + 0.01 * ((i * 7 % 5) as f64))
            .collect();
        let found = e_divisive(&series, &EDivisiveSettings::default()).unwrap();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].index, 18);
        assert!(found[0].p_value <= 0.01);
    }

    #[test]
    fn a_constant_series_has_no_change() {
        let found = e_divisive(&[5.0; 40], &EDivisiveSettings::default()).unwrap();
        assert!(found.is_empty());
    }

    #[test]
    fn same_seed_same_answer() {
        let series: Vec<f64> = (0..50).map(|i| ((i * 37 % 11) as f64).sin()).collect();
        let s = EDivisiveSettings {
            alpha: 0.2,
            ..EDivisiveSettings::default()
        };
        assert_eq!(
            e_divisive(&series, &s).unwrap(),
            e_divisive(&series, &s).unwrap()
        );
    }

    #[test]
    fn bad_input_is_an_error() {
        let s = EDivisiveSettings::default();
        assert!(e_divisive(&[1.0, f64::NAN], &s).is_err());
        let short = EDivisiveSettings {
            min_segment: 1,
            ..s
        };
        assert!(e_divisive(&[1.0, 2.0], &short).is_err());
        assert!(e_divisive(&[], &s).unwrap().is_empty());
        let huge = EDivisiveSettings {
            min_segment: usize::MAX,
            ..s
        };
        assert!(e_divisive(&[1.0, 2.0, 3.0, 4.0], &huge).unwrap().is_empty());
    }
}
