//! Exact null distributions of the rank statistics, counted in integers so
//! tail probabilities are exact in both tails (scipy sums floating-point
//! probabilities and loses the far tail to cancellation).

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

    /// Largest `k >= 1` with P(U <= k - 1) <= `tail`, with that probability;
    /// `None` if even k = 1 exceeds it. Needs max_u >= the answer, which
    /// holds for max_u = mn/2 and tail < 1/2.
    pub(crate) fn critical_rank(&self, tail: f64) -> Option<(usize, f64)> {
        critical_rank(self.cumulative.len(), |u| self.cdf(u), tail)
    }
}

/// Null distribution of a sum of randomly signed weights: each weight is
/// counted with probability 1/2. With weights 1..n this is the Wilcoxon
/// signed-rank statistic T+; with doubled average ranks it is T+'s exact
/// distribution conditional on the observed ties.
pub(crate) struct SignedRankNull {
    /// `cumulative[s]` = number of sign patterns with sum <= s.
    cumulative: Vec<u128>,
    total: u128,
}

impl SignedRankNull {
    /// `None` beyond 126 weights, where 2^n no longer fits.
    pub(crate) fn new(weights: &[u64]) -> Option<Self> {
        if weights.len() > 126 {
            return None;
        }
        let max_sum: u64 = weights.iter().sum();
        let mut counts = vec![0u128; usize::try_from(max_sum).ok()? + 1];
        counts[0] = 1;
        let mut reached = 0usize;
        for &weight in weights {
            let weight = weight as usize;
            reached += weight;
            for s in (weight..=reached).rev() {
                counts[s] += counts[s - weight];
            }
        }
        accumulate(&mut counts);
        Some(SignedRankNull {
            cumulative: counts,
            total: 1u128 << weights.len(),
        })
    }

    /// The distribution of T+ for n untied, non-zero differences.
    pub(crate) fn untied(n: usize) -> Option<Self> {
        let weights: Vec<u64> = (1..=n as u64).collect();
        Self::new(&weights)
    }

    /// P(sum <= s); s may exceed the maximum.
    pub(crate) fn cdf(&self, s: usize) -> f64 {
        let index = s.min(self.cumulative.len() - 1);
        self.cumulative[index] as f64 / self.total as f64
    }

    /// P(sum >= s), counted from the top so the upper tail is exact too.
    pub(crate) fn sf(&self, s: usize) -> f64 {
        if s == 0 {
            return 1.0;
        }
        let below = self.cumulative[(s - 1).min(self.cumulative.len() - 1)];
        (self.total - below) as f64 / self.total as f64
    }

    /// See [`MannWhitneyNull::critical_rank`].
    pub(crate) fn critical_rank(&self, tail: f64) -> Option<(usize, f64)> {
        critical_rank(self.cumulative.len(), |s| self.cdf(s), tail)
    }
}

fn critical_rank(support: usize, cdf: impl Fn(usize) -> f64, tail: f64) -> Option<(usize, f64)> {
    // Tail probabilities are ratios of integers and often hit the requested
    // level exactly (1/20 at 90 % for 3 + 3 values) while (1 - 0.9) / 2
    // rounds just below it; the slack keeps such exact-level intervals.
    let tail = tail * (1.0 + 1e-12);
    if cdf(0) > tail {
        return None;
    }
    let mut k = 1;
    while k < support && cdf(k) <= tail {
        k += 1;
    }
    Some((k, cdf(k - 1)))
}

/// Turns counts per value into counts of values at most each one, in place.
fn accumulate<T: Copy + std::ops::AddAssign>(counts: &mut [T]) {
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
    fn signed_rank_small_case() {
        // n = 3: sums 0,1,2,3,3,4,5,6 over 8 sign patterns.
        let null = SignedRankNull::untied(3).unwrap();
        assert_eq!(null.cdf(3) * 8.0, 5.0);
        assert_eq!(null.sf(3) * 8.0, 5.0);
        assert_eq!(null.sf(0), 1.0);
        assert_eq!(null.cdf(100), 1.0);
    }

    #[test]
    fn huge_samples_refuse_exact_counts() {
        assert!(MannWhitneyNull::new(100, 100, 10).is_none());
        assert!(SignedRankNull::untied(200).is_none());
    }
}
