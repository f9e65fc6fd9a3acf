//! The exact null distribution of the Mann–Whitney U statistic, without and
//! with ties, counted in integers so tail probabilities are exact up to the
//! one final division (scipy and go-moremath sum floating-point
//! probabilities or binomials and lose the last digits, and scipy the far
//! tail, to rounding).
//!
//! Why integers, and why 128 bits: every count is at most C(m+n, m), the
//! number of ways to choose which of the pooled values are the baseline's.
//! benchstat takes the exact path up to 50 values per sample without ties,
//! where C(100, 50) ≈ 1.0e29 overflows u64 (1.8e19) and is far past the
//! 2^53 ≈ 9.0e15 up to which f64 holds every integer; i128 (to 1.7e38) holds
//! it exactly. With ties the limit is 25 per sample, C(50, 25) ≈ 1.3e14, so
//! u128 has a margin of 10^24; the counts are still checked and a count that
//! would overflow gives `None` rather than a wrong answer.

/// Null distribution of the Mann–Whitney U statistic for untied samples of
/// sizes `m` and `n`: every one of the C(m+n, m) arrangements of ranks is
/// equally likely.
pub(crate) struct MannWhitneyNull {
    /// `cumulative[u]` = number of arrangements with U <= u.
    cumulative: Vec<i128>,
    total: i128,
}

impl MannWhitneyNull {
    /// Counts for U = 0..=max_u. Returns `None` when C(m+n, m) is too large
    /// for 128-bit arithmetic (beyond roughly 64 + 64 values, or one side of
    /// 8 with the other above ~10^5).
    pub(crate) fn new(m: usize, n: usize, max_u: usize) -> Option<Self> {
        let (small, large) = (m.min(n), m.max(n));
        let mut total: i128 = 1;
        for i in 1..=small {
            total = total.checked_mul((large + i) as i128)? / i as i128;
        }
        // The in-place polynomial updates below briefly hold up to about
        // three times the largest final count.
        if total > i128::MAX / 4 {
            return None;
        }
        // The U distribution's generating function is the Gaussian binomial
        // coefficient [m+n choose m]_q = prod_{i=1..m} (1 - q^(n+i)) / (1 - q^i);
        // both factors only feed higher powers, so truncating at max_u is exact.
        let mut counts = vec![0i128; max_u + 1];
        counts[0] = 1;
        for i in 1..=small {
            let removed = large + i;
            for u in (removed..=max_u).rev() {
                counts[u] -= counts[u - removed];
            }
            for u in i..=max_u {
                counts[u] += counts[u - i];
            }
        }
        accumulate(&mut counts);
        Some(MannWhitneyNull {
            cumulative: counts,
            total,
        })
    }

    /// P(U <= u) for u <= max_u.
    pub(crate) fn cdf(&self, u: usize) -> f64 {
        self.cumulative[u] as f64 / self.total as f64
    }
}

/// P(U <= two_u_max / 2) for the U statistic of a baseline of `n_baseline`
/// values when the pooled sample, sorted, falls into groups of tied values of
/// the sizes `tie_group_sizes` (in order; a group of 1 is an untied value).
/// Under the null hypothesis every choice of which `n_baseline` of the pooled
/// positions are the baseline's is equally likely, so this is the share of
/// those C(N, n_baseline) choices whose U is at most the bound. U counts the
/// (baseline, candidate) pairs with the baseline value larger, ties one half;
/// `2U` is an integer, which the bound is given as.
///
/// The count runs group by group over (baseline values placed so far, 2U so
/// far). Putting `r` of a group's `t` positions in the baseline adds, for
/// each of those `r`, two per candidate value in earlier groups and one per
/// candidate value tied with it in the group: `r * (2 * earlier_candidates +
/// t - r)` to 2U, in C(t, r) ways. Later groups never lower 2U, so states
/// past the bound are dropped as they arise. `None` if a count overflows
/// (not before C(N, n_baseline) exceeds u128, N far above 100) or the sizes
/// are inconsistent.
pub(crate) fn tied_lower_tail(
    n_baseline: usize,
    tie_group_sizes: &[usize],
    two_u_max: usize,
) -> Option<f64> {
    let pooled: usize = tie_group_sizes.iter().sum();
    if n_baseline > pooled {
        return None;
    }
    let width = two_u_max + 1;
    // ways[placed * width + two_u]
    let mut ways = vec![0u128; (n_baseline + 1) * width];
    let mut next = vec![0u128; ways.len()];
    ways[0] = 1;
    let mut before = 0;
    for &t in tie_group_sizes {
        let choose = binomial_row(t)?;
        next.fill(0);
        for placed in 0..=n_baseline.min(before) {
            let earlier_candidates = before - placed;
            for two_u in 0..width {
                let count = ways[placed * width + two_u];
                if count == 0 {
                    continue;
                }
                for r in 0..=t.min(n_baseline - placed) {
                    let added = r * (2 * earlier_candidates + t - r);
                    let target = two_u + added;
                    if target > two_u_max {
                        // Not `break`: `added` rises and falls again in r
                        // (a whole group put in the baseline adds nothing
                        // when no candidate value came before it).
                        continue;
                    }
                    let slot = &mut next[(placed + r) * width + target];
                    *slot = slot.checked_add(count.checked_mul(choose[r])?)?;
                }
            }
        }
        std::mem::swap(&mut ways, &mut next);
        before += t;
    }
    let at_most: u128 = ways[n_baseline * width..]
        .iter()
        .try_fold(0u128, |sum, &w| sum.checked_add(w))?;
    let total = binomial(pooled, n_baseline)?;
    Some(at_most as f64 / total as f64)
}

/// C(t, 0), C(t, 1), ..., C(t, t).
fn binomial_row(t: usize) -> Option<Vec<u128>> {
    let mut row = vec![1u128; t + 1];
    for r in 1..t {
        row[r] = row[r - 1].checked_mul((t + 1 - r) as u128)? / r as u128;
    }
    Some(row)
}

/// C(n, k), exactly.
fn binomial(n: usize, k: usize) -> Option<u128> {
    let k = k.min(n - k);
    let mut c = 1u128;
    for i in 1..=k {
        // c * (n - k + i) / i stays an integer: it is C(n - k + i, i).
        c = c.checked_mul((n - k + i) as u128)? / i as u128;
    }
    Some(c)
}

/// Turns counts per value into counts of values at most each one, in place.
fn accumulate(counts: &mut [i128]) {
    for i in 1..counts.len() {
        let below = counts[i - 1];
        counts[i] += below;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u_distribution_small_case() {
        // m = n = 2: U takes 0,1,2,2,3,4 over the 6 arrangements.
        let null = MannWhitneyNull::new(2, 2, 4).unwrap();
        let counts: Vec<f64> = (0..=4).map(|u| null.cdf(u) * 6.0).collect();
        assert_eq!(counts, vec![1.0, 2.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn huge_samples_refuse_exact_counts() {
        assert!(MannWhitneyNull::new(100, 100, 10).is_none());
    }

    #[test]
    fn benchstat_largest_untied_case_is_counted() {
        // 50 + 50, benchstat's largest exact case without ties: the lower
        // half of the distribution holds just under half the mass.
        let null = MannWhitneyNull::new(50, 50, 1249).unwrap();
        let below_mean = null.cdf(1249);
        assert!(below_mean < 0.5 && below_mean > 0.49, "{below_mean}");
    }

    #[test]
    fn tied_counts_by_hand() {
        // Pooled 10 10 11 11 12 12, baseline of 3: U = 0.5 for {10, 10, 11}
        // (two ways), and no split has a smaller U; C(6, 3) = 20.
        assert_eq!(tied_lower_tail(3, &[2, 2, 2], 1), Some(2.0 / 20.0));
        assert_eq!(tied_lower_tail(3, &[2, 2, 2], 0), Some(0.0));
        // Pooled 1 1 2, baseline of 1: U is 0.5 (either 1) or 2.
        assert_eq!(tied_lower_tail(1, &[2, 1], 1), Some(2.0 / 3.0));
        assert_eq!(tied_lower_tail(1, &[2, 1], 3), Some(2.0 / 3.0));
        assert_eq!(tied_lower_tail(1, &[2, 1], 4), Some(1.0));
        // A whole group in the baseline with no candidate before it adds
        // nothing to U: baseline {1, 1, 1} of 1 1 1 2 has U = 0.
        assert_eq!(tied_lower_tail(3, &[3, 1], 0), Some(1.0 / 4.0));
        // All tied: U is always n1 * n2 / 2.
        assert_eq!(tied_lower_tail(2, &[5], 5), Some(0.0));
        assert_eq!(tied_lower_tail(2, &[5], 6), Some(1.0));
    }

    #[test]
    fn tied_counts_without_ties_match_the_untied_distribution() {
        for (m, n) in [(1, 1), (3, 4), (7, 2), (10, 10), (13, 25)] {
            let null = MannWhitneyNull::new(m, n, m * n).unwrap();
            let singletons = vec![1; m + n];
            for u in 0..=m * n {
                let tied = tied_lower_tail(m, &singletons, 2 * u).unwrap();
                assert_eq!(tied, null.cdf(u), "m={m} n={n} u={u}");
                if u < m * n {
                    // Half-integer bounds add nothing without ties.
                    assert_eq!(tied_lower_tail(m, &singletons, 2 * u + 1).unwrap(), tied);
                }
            }
        }
    }

    #[test]
    fn tied_counts_reject_inconsistent_sizes() {
        assert_eq!(tied_lower_tail(4, &[1, 2], 3), None);
    }
}
