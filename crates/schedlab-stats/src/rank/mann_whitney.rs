//! Two-sided Mann–Whitney U test with the p-value benchstat gives.

use serde::Serialize;

use super::null_distribution::{tied_lower_tail, MannWhitneyNull};
use super::ranking::Ranking;
use crate::dist::normal_sf;
use crate::error::{require_sample, Result};

/// How a p-value was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RankMethod {
    /// The exact null distribution of the statistic, given the observed
    /// ties if there are any.
    Exact,
    /// Normal approximation with tie correction.
    NormalApproximation,
}

/// Outcome of [`mann_whitney_u`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MannWhitney {
    /// U statistic of `baseline`: the number of (baseline, candidate) pairs
    /// with the baseline value larger, ties counting one half. This is
    /// `scipy.stats.mannwhitneyu(baseline, candidate).statistic`.
    pub u_baseline: f64,
    /// `n_baseline * n_candidate - u_baseline`.
    pub u_candidate: f64,
    /// `u_candidate / (n_baseline * n_candidate)`: the probability that a
    /// random candidate value exceeds a random baseline value (ties count
    /// one half). 0.5 means no shift.
    pub prob_candidate_greater: f64,
    /// Two-sided p-value as benchstat computes it, except where benchstat's
    /// is not a p of the observed U (ties; see [`mann_whitney_u`]).
    pub p_value: f64,
    /// Exact distribution or normal approximation.
    pub method: RankMethod,
    /// Size of the baseline sample.
    pub n_baseline: usize,
    /// Size of the candidate sample.
    pub n_candidate: usize,
    /// Whether any values (within or across samples) tie.
    pub has_ties: bool,
}

/// go-moremath's `MannWhitneyExactLimit`: without ties benchstat uses the
/// exact distribution of U while each sample has at most this many values.
const EXACT_MAX_PER_SAMPLE: usize = 50;

/// go-moremath's `MannWhitneyTiesExactLimit`: with ties, the exact
/// distribution given the ties while each sample has at most this many values.
const EXACT_WITH_TIES_MAX_PER_SAMPLE: usize = 25;

/// Two-sided Mann–Whitney U test, with the p-value benchstat computes
/// (golang.org/x/perf benchmath's `AssumeNothing.Compare(baseline,
/// candidate)`, which runs go-moremath's `MannWhitneyUTest`).
///
/// - No ties and at most 50 values in each sample: the exact null
///   distribution of U.
/// - Ties (anywhere in the pooled values) and at most 25 values in each
///   sample: the exact null distribution of U given the observed groups of
///   tied values (every choice of which pooled positions are the baseline's
///   equally likely).
/// - Otherwise the normal approximation: tie-corrected variance
///   `n1·n2/12 · ((N+1) − Σ(t³−t)/(N(N−1)))` and continuity correction 0.5
///   towards the mean.
///
/// An exact p is twice the null probability of a U at most the smaller
/// observed one, at most 1. Without ties the null is symmetric and this is
/// benchstat's p exactly. With ties it need not be, and there schedlab
/// departs from benchstat on purpose, because benchstat's p can then say
/// what the data do not: it takes the tail of the baseline's U at the
/// smaller U even when the baseline's is the larger, which is not the tail
/// of what was observed (baseline `14` against `3 3 4 6 12 13`: benchstat
/// prints `p=0.000`, and `p=0.286` with the samples swapped; schedlab 0.286
/// both ways), and it does not cap the doubled tail (baseline `1` against
/// `1 2`: benchstat prints `p=1.333`; schedlab 1). When every value is
/// equal (benchstat's `ErrSamplesEqual`, which it reports as P = 1) the
/// p-value is 1.
pub fn mann_whitney_u(baseline: &[f64], candidate: &[f64]) -> Result<MannWhitney> {
    require_sample(baseline, 1, "baseline")?;
    require_sample(candidate, 1, "candidate")?;
    let (n_a, n_b) = (baseline.len(), candidate.len());
    let combined: Vec<f64> = baseline.iter().chain(candidate).copied().collect();
    let ranking = Ranking::new(&combined);
    let rank_sum_a: f64 = ranking.ranks[..n_a].iter().sum();
    let u_baseline = rank_sum_a - (n_a * (n_a + 1)) as f64 / 2.0;
    let pairs = (n_a * n_b) as f64;
    let u_candidate = pairs - u_baseline;
    let u_smaller = u_baseline.min(u_candidate);
    let has_ties = ranking.has_ties();

    let limit = if has_ties {
        EXACT_WITH_TIES_MAX_PER_SAMPLE
    } else {
        EXACT_MAX_PER_SAMPLE
    };
    let exact = if n_a > limit || n_b > limit {
        None
    } else if u_baseline == u_candidate {
        // The observed U is the centre: the two tails cover everything.
        Some(1.0)
    } else {
        // U is a multiple of 1/2 (a whole number without ties), so these
        // casts are exact.
        let lower_tail = if has_ties {
            // The tail of the sample whose U is the smaller: given the ties the null is not
            // symmetric, and the baseline's tail at the candidate's U is not what was observed.
            let n_smaller = if u_baseline < u_candidate { n_a } else { n_b };
            tied_lower_tail(
                n_smaller,
                &ranking.tie_group_sizes,
                (2.0 * u_smaller) as usize,
            )
        } else {
            let u = u_smaller as usize;
            MannWhitneyNull::new(n_a, n_b, u).map(|null| null.cdf(u))
        };
        lower_tail.map(|tail| (2.0 * tail).min(1.0))
    };
    let (p_value, method) = match exact {
        Some(p) => (p, RankMethod::Exact),
        // Within benchstat's limits the counts always fit, so this is only
        // ever taken where benchstat approximates too.
        None => (
            asymptotic_p(u_smaller, n_a, n_b, ranking.tie_term()),
            RankMethod::NormalApproximation,
        ),
    };
    Ok(MannWhitney {
        u_baseline,
        u_candidate,
        prob_candidate_greater: u_candidate / pairs,
        p_value,
        method,
        n_baseline: n_a,
        n_candidate: n_b,
        has_ties,
    })
}

/// Two-sided p of the normal approximation, from the smaller U.
fn asymptotic_p(u_smaller: f64, n_a: usize, n_b: usize, tie_term: f64) -> f64 {
    let (n_a, n_b) = (n_a as f64, n_b as f64);
    let n = n_a + n_b;
    let variance = n_a * n_b / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance.is_nan() || variance <= 0.0 {
        // All values tie (or n = 2 with a tie): no evidence either way.
        return 1.0;
    }
    // Continuity correction: half a step towards the mean, never past it.
    let distance = (n_a * n_b / 2.0 - u_smaller - 0.5).max(0.0);
    (2.0 * normal_sf(distance / variance.sqrt())).min(1.0)
}
