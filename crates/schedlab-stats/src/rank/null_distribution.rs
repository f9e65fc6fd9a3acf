//! The exact null distribution of the Mann–Whitney U statistic, counted in
//! integers so tail probabilities are exact (scipy sums floating-point
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
}
