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
    let mut scratch = Fenwick::default();
    loop {
        let bounds = boundaries(&found, series.len());
        // A permutation moves values only within their segment, so what the scan needs of each
        // segment's values (ranks, distances) holds for every permutation of this round.
        let segments: Vec<Segment> = bounds
            .windows(2)
            .map(|w| Segment::of(series, w[0], w[1]))
            .collect();
        let scan = |order: &[usize], scratch: &mut Fenwick| {
            best_over_segments(series, order, &segments, settings.min_segment, scratch)
        };
        let Some((index, q)) = scan(&identity, &mut scratch) else {
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
            let permuted = scan(&order, &mut scratch).map_or(f64::NEG_INFINITY, |(_, q)| q);
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
    segments: &[Segment],
    min_segment: usize,
    scratch: &mut Fenwick,
) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for segment in segments {
        let (start, end) = (segment.start, segment.start + segment.rank.len());
        for_each_split(
            series,
            &order[start..end],
            segment,
            min_segment,
            scratch,
            |tau, q| {
                if best.is_none_or(|(_, b)| q > b) {
                    best = Some((start + tau, q));
                }
            },
        );
    }
    best
}

/// What a split scan needs of one segment's values, in whatever order they come: each value's
/// rank among them and its summed distance to all the others, and the sum over every pair.
/// Values are taken relative to the segment's median value (one of its values, so integer data
/// stays exact), which keeps the differences of large sums below from cancelling.
struct Segment {
    start: usize,
    center: f64,
    /// By series index − `start`: the rank of the value among the segment's (ties by index).
    rank: Vec<usize>,
    /// By series index − `start`: Σ over the segment's other values of |this − other|.
    distance_to_all: Vec<f64>,
    /// Σ over every pair of the segment's values of their distance.
    all_pairs: f64,
}

impl Segment {
    fn of(series: &[f64], start: usize, end: usize) -> Segment {
        let n = end - start;
        let mut by_value: Vec<usize> = (start..end).collect();
        by_value.sort_by(|&a, &b| series[a].total_cmp(&series[b]).then(a.cmp(&b)));
        let center = by_value.get(n / 2).map_or(0.0, |&i| series[i]);
        let sorted: Vec<f64> = by_value.iter().map(|&i| series[i] - center).collect();
        // below[k]: the sum of the k smallest.
        let mut below = Vec::with_capacity(n + 1);
        below.push(0.0);
        for (k, v) in sorted.iter().enumerate() {
            below.push(below[k] + v);
        }
        let (mut rank, mut distance_to_all) = (vec![0; n], vec![0.0; n]);
        let mut all_pairs = 0.0;
        for (k, (&i, &v)) in by_value.iter().zip(&sorted).enumerate() {
            rank[i - start] = k;
            let smaller = v * k as f64 - below[k];
            let larger = (below[n] - below[k + 1]) - v * (n - 1 - k) as f64;
            distance_to_all[i - start] = smaller + larger;
            all_pairs += smaller;
        }
        Segment {
            start,
            center,
            rank,
            distance_to_all,
            all_pairs,
        }
    }
}

/// Counts and sums of the values moved left so far, by rank: a Fenwick tree, so the distance
/// from a value to every value left of it takes O(log n) instead of O(n).
#[derive(Default)]
struct Fenwick {
    count: Vec<f64>,
    sum: Vec<f64>,
}

impl Fenwick {
    fn reset(&mut self, n: usize) {
        self.count.clear();
        self.count.resize(n + 1, 0.0);
        self.sum.clear();
        self.sum.resize(n + 1, 0.0);
    }

    fn add(&mut self, rank: usize, value: f64) {
        let mut i = rank + 1;
        while i < self.count.len() {
            self.count[i] += 1.0;
            self.sum[i] += value;
            i += i & i.wrapping_neg();
        }
    }

    /// (count, sum) of the values of rank below `rank`.
    fn below(&self, rank: usize) -> (f64, f64) {
        let (mut count, mut sum) = (0.0, 0.0);
        let mut i = rank;
        while i > 0 {
            count += self.count[i];
            sum += self.sum[i];
            i -= i & i.wrapping_neg();
        }
        (count, sum)
    }
}

/// Calls `visit(tau, q̂)` for every split of the values `series[order[..]]` (a permutation of
/// `segment`'s) into `order[..tau]` and `order[tau..]` with both sides at least `min_segment`
/// long. The within and between sums move one value across at a time; its distances to the
/// values left of it come from `scratch` in O(log n), those to the right from its distance to
/// all of them: O(n log n) per scan, where summing each value's distances directly took O(n²)
/// (0.38 s for 1,000 runs with a change, most of it in the permutation test's 199 scans).
fn for_each_split(
    series: &[f64],
    order: &[usize],
    segment: &Segment,
    min_segment: usize,
    scratch: &mut Fenwick,
    mut visit: impl FnMut(usize, f64),
) {
    let n = order.len();
    // Not `n < 2 * min_segment`: a huge min_segment would overflow.
    if n / 2 < min_segment {
        return;
    }
    scratch.reset(n);
    let mut within_right = segment.all_pairs;
    let (mut within_left, mut between) = (0.0, 0.0);
    let (mut left_count, mut left_sum) = (0.0, 0.0);
    for tau in 1..=n - min_segment {
        let i = order[tau - 1];
        let local = i - segment.start;
        let (rank, value) = (segment.rank[local], series[i] - segment.center);
        let (smaller_count, smaller_sum) = scratch.below(rank);
        let to_left = (value * smaller_count - smaller_sum)
            + ((left_sum - smaller_sum) - value * (left_count - smaller_count));
        let to_right = segment.distance_to_all[local] - to_left;
        scratch.add(rank, value);
        left_count += 1.0;
        left_sum += value;
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
        q_hat_in_order(series, &order, min_segment)
    }

    fn q_hat_in_order(series: &[f64], order: &[usize], min_segment: usize) -> Vec<Option<f64>> {
        let segment = Segment::of(series, 0, series.len());
        let mut out = vec![None; series.len()];
        let mut scratch = Fenwick::default();
        for_each_split(
            series,
            order,
            &segment,
            min_segment.max(2),
            &mut scratch,
            |tau, q| out[tau] = Some(q),
        );
        out
    }

    /// The O(n²) scan the Fenwick tree replaced: each value's distances summed one by one.
    fn q_hat_quadratic(series: &[f64], order: &[usize], min_segment: usize) -> Vec<Option<f64>> {
        let n = order.len();
        let mut out = vec![None];
        let value = |i: usize| series[order[i]];
        let mut within_right = 0.0;
        for i in 0..n {
            for j in i + 1..n {
                within_right += (value(i) - value(j)).abs();
            }
        }
        let (mut within_left, mut between) = (0.0, 0.0);
        for tau in 1..=n.saturating_sub(min_segment) {
            let t = tau - 1;
            let to_left: f64 = (0..t).map(|i| (value(i) - value(t)).abs()).sum();
            let to_right: f64 = (t + 1..n).map(|j| (value(t) - value(j)).abs()).sum();
            within_left += to_left;
            within_right -= to_right;
            between += to_right - to_left;
            let (m, k) = (tau as f64, (n - tau) as f64);
            let pairs = |c: f64| c * (c - 1.0) / 2.0;
            let energy = 2.0 * between / (m * k) - within_left / pairs(m) - within_right / pairs(k);
            let kept = tau >= min_segment && n / 2 >= min_segment;
            out.push(kept.then_some(m * k / (m + k) * energy));
        }
        out.resize(n, None);
        out
    }

    /// The O(n log n) scan gives the O(n²) one's q̂ in every order the permutation test makes:
    /// to rounding on continuous values, exactly on small integers (and ties), where both
    /// compute without rounding.
    #[test]
    fn the_fenwick_scan_matches_the_quadratic_one() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for n in [4, 5, 6, 7, 10, 31, 64, 200] {
            for trial in 0..20 {
                let continuous = trial % 2 == 0;
                let series: Vec<f64> = (0..n)
                    .map(|i| {
                        let step = if i > n / 3 { 0.1 } else { 0.0 };
                        if continuous {
                            3.9 + step + 0.02 * rng.random::<f64>()
                        } else {
                            f64::from(rng.random_range(0..4u32)) + 10.0 * step
                        }
                    })
                    .collect();
                let mut order: Vec<usize> = (0..n).collect();
                if trial % 4 >= 2 {
                    shuffle(&mut order, &mut rng);
                }
                for min_segment in [2, 3, 5] {
                    let fast = q_hat_in_order(&series, &order, min_segment);
                    let slow = q_hat_quadratic(&series, &order, min_segment);
                    for (tau, (f, s)) in fast.iter().zip(&slow).enumerate() {
                        match (f, s) {
                            (Some(f), Some(s)) if continuous => assert!(
                                (f - s).abs() <= 1e-9 * s.abs().max(1e-3),
                                "n {n} trial {trial} tau {tau}: {f} vs {s}"
                            ),
                            (f, s) => assert_eq!(f, s, "n {n} trial {trial} tau {tau}"),
                        }
                    }
                }
            }
        }
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
