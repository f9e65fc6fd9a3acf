//! Invariants that must hold for any input, checked with proptest: order
//! relations, symmetry under swapping samples, invariance under scaling,
//! monotone multiplicity adjustments, and no panics on hostile input.

use proptest::prelude::*;
use schedlab_stats::multiplicity::{benjamini_hochberg, benjamini_yekutieli, holm};
use schedlab_stats::rank::{mann_whitney_u, RankMethod};
use schedlab_stats::summary::{median_ci, summarize};
use schedlab_stats::{ministat, power, summary};

fn rel_close(a: f64, b: f64, tol: f64) -> bool {
    a == b || (a - b).abs() <= tol * a.abs().max(b.abs()).max(1e-300)
}

/// Positive measurements, sometimes with ties.
fn positive_sample(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        prop::collection::vec(0.5f64..2000.0, 2..max_len),
        prop::collection::vec((1u32..6).prop_map(f64::from), 2..max_len),
    ]
}

/// At most 6 values, mostly few distinct ones so that they tie.
fn small_sample() -> impl Strategy<Value = Vec<f64>> {
    prop_oneof![
        3 => prop::collection::vec((0u32..4).prop_map(f64::from), 1..=6),
        1 => prop::collection::vec(0.0f64..10.0, 1..=6),
    ]
}

/// U of `x`: pairs with the `x` value larger, ties one half.
fn u_by_pairs(x: &[f64], y: &[f64]) -> f64 {
    x.iter()
        .flat_map(|xi| y.iter().map(move |yj| (xi, yj)))
        .map(|(xi, yj)| {
            if xi > yj {
                1.0
            } else if xi == yj {
                0.5
            } else {
                0.0
            }
        })
        .sum()
}

/// benchstat's exact two-sided p by brute force: 2 P(U <= min(U_a, U_b))
/// for the baseline's U over every choice of which pooled values are the
/// baseline's, 1 when the two U are equal (not capped at 1, like
/// benchstat's).
fn enumerated_exact_p(a: &[f64], b: &[f64]) -> f64 {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let pairs = (a.len() * b.len()) as f64;
    let observed = u_by_pairs(a, b);
    if observed == pairs - observed {
        return 1.0;
    }
    let smaller = observed.min(pairs - observed);
    let (mut at_most, mut total) = (0u64, 0u64);
    for mask in 0u32..1 << pooled.len() {
        if mask.count_ones() as usize != a.len() {
            continue;
        }
        let side = |in_baseline: bool| -> Vec<f64> {
            (0..pooled.len())
                .filter(|i| (mask >> i & 1 == 1) == in_baseline)
                .map(|i| pooled[i])
                .collect()
        };
        let (x, y) = (side(true), side(false));
        total += 1;
        // The tail of the sample whose observed U is the smaller.
        let u = if observed <= pairs - observed {
            u_by_pairs(&x, &y)
        } else {
            u_by_pairs(&y, &x)
        };
        if u <= smaller {
            at_most += 1;
        }
    }
    (2.0 * at_most as f64 / total as f64).min(1.0)
}

fn any_finite_sample(max_len: usize) -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(-1e6f64..1e6, 1..max_len)
}

fn p_values() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![0.0f64..=1.0, Just(0.0), Just(1.0), 0.0f64..1e-6],
        0..60,
    )
}

/// Finite but extreme values: overflow in sums, subnormals, huge ratios.
fn extreme_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![
            Just(f64::MAX),
            Just(-f64::MAX),
            Just(f64::MIN_POSITIVE),
            Just(5e-324),
            Just(1e300),
            Just(1e-300),
            1.0f64..10.0,
        ],
        0..10,
    )
}

/// Anything a caller might pass, including NaN, infinities and empties.
fn hostile_sample() -> impl Strategy<Value = Vec<f64>> {
    prop::collection::vec(
        prop_oneof![
            any::<f64>(),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(0.0),
            Just(-1.0),
            Just(1.0),
        ],
        0..12,
    )
}

proptest! {
    #[test]
    fn median_lies_between_min_and_max(xs in any_finite_sample(50)) {
        let s = summarize(&xs).unwrap();
        prop_assert!(s.min <= s.median && s.median <= s.max);
        prop_assert!(s.min <= s.mean && s.mean <= s.max);
        if let Some(std) = s.std {
            prop_assert!(std >= 0.0);
        }
    }

    #[test]
    fn intervals_contain_their_estimates(a in positive_sample(30)) {
        if let Some(ci) = median_ci(&a, 0.95).unwrap() {
            prop_assert!(ci.ci.contains(ci.median));
        }
    }

    #[test]
    fn adjusted_p_values_are_valid(p in p_values()) {
        for adjusted in [benjamini_hochberg(&p).unwrap(), benjamini_yekutieli(&p).unwrap(), holm(&p).unwrap()] {
            prop_assert_eq!(adjusted.len(), p.len());
            for (i, (&q, &raw)) in adjusted.iter().zip(&p).enumerate() {
                prop_assert!(q >= raw, "q[{}] = {} < p = {}", i, q, raw);
                prop_assert!(q <= 1.0);
                for (&q2, &raw2) in adjusted.iter().zip(&p) {
                    if raw <= raw2 {
                        prop_assert!(q <= q2, "not monotone: p {} -> {}, p {} -> {}", raw, q, raw2, q2);
                    }
                }
            }
        }
        // BY is BH times a factor >= 1.
        for (by, bh) in benjamini_yekutieli(&p).unwrap().iter().zip(benjamini_hochberg(&p).unwrap()) {
            prop_assert!(*by >= bh);
        }
    }

    #[test]
    fn swapping_samples_negates_or_inverts(a in positive_sample(25), b in positive_sample(25)) {
        let forward = mann_whitney_u(&a, &b).unwrap();
        let backward = mann_whitney_u(&b, &a).unwrap();
        prop_assert_eq!(forward.u_baseline, backward.u_candidate);
        prop_assert!(rel_close(forward.p_value, backward.p_value, 1e-12));

        let forward = ministat::ministat_difference(&a, &b, 0.95).unwrap();
        let backward = ministat::ministat_difference(&b, &a, 0.95).unwrap();
        prop_assert_eq!(forward.diff, -backward.diff);
        prop_assert_eq!(forward.significant, backward.significant);
    }

    /// Mirroring every value swaps the tails; the p of the observed U stays.
    #[test]
    fn swapping_samples_is_negating_them(a in positive_sample(30), b in positive_sample(30)) {
        let negated = |xs: &[f64]| xs.iter().map(|x| -x).collect::<Vec<f64>>();
        let swapped = mann_whitney_u(&b, &a).unwrap();
        let mirrored = mann_whitney_u(&negated(&a), &negated(&b)).unwrap();
        prop_assert_eq!(swapped.p_value, mirrored.p_value);
        prop_assert_eq!(swapped.u_baseline, mirrored.u_baseline);
        prop_assert_eq!(swapped.method, mirrored.method);
    }

    /// The p is a probability above 0, ties or not: the doubled tail of the
    /// observed U holds the observed split itself, and it is capped at 1.
    #[test]
    fn mann_whitney_p_is_a_probability(
        a in prop_oneof![positive_sample(60), any_finite_sample(60)],
        b in prop_oneof![positive_sample(60), any_finite_sample(60)],
    ) {
        let r = mann_whitney_u(&a, &b).unwrap();
        prop_assert!(r.p_value > 0.0 && r.p_value <= 1.0, "p = {}", r.p_value);
    }

    /// The exact p, with or without ties, against enumerating every way to
    /// split the pooled values and computing each split's U pair by pair.
    #[test]
    fn exact_p_matches_enumeration(
        a in small_sample(),
        b in small_sample(),
    ) {
        let r = mann_whitney_u(&a, &b).unwrap();
        prop_assert_eq!(r.method, RankMethod::Exact);
        let expected = enumerated_exact_p(&a, &b);
        prop_assert!(rel_close(r.p_value, expected, 1e-12), "p = {}, enumeration {}", r.p_value, expected);
    }

    #[test]
    fn ratios_ignore_a_common_scale(a in positive_sample(25), b in positive_sample(25), power_of_two in -20i32..20) {
        let scaled = |xs: &[f64], c: f64| xs.iter().map(|x| x * c).collect::<Vec<f64>>();
        // Scaling by a power of two is exact, so rank results are identical.
        let exact = 2f64.powi(power_of_two);
        let plain = mann_whitney_u(&a, &b).unwrap();
        let scaled_result = mann_whitney_u(&scaled(&a, exact), &scaled(&b, exact)).unwrap();
        prop_assert_eq!(plain, scaled_result);
        let plain = summary::summarize(&a).unwrap();
        let scaled_result = summary::summarize(&scaled(&a, exact)).unwrap();
        prop_assert_eq!(plain.std_pct, scaled_result.std_pct);
    }

    #[test]
    fn hostile_input_never_panics(
        a in prop_oneof![hostile_sample(), extreme_sample()],
        b in prop_oneof![hostile_sample(), extreme_sample()],
        level in prop_oneof![any::<f64>(), 0.0f64..1.0],
    ) {
        let _ = summary::summarize(&a);
        let _ = summary::geometric_mean(&a);
        let _ = summary::harmonic_mean(&a);
        let _ = median_ci(&a, level);
        let _ = summary::median_ci_orders(a.len(), level);
        let _ = ministat::ministat_difference(&a, &b, level);
        let _ = ministat::ministat_vitals(&a);
        let _ = mann_whitney_u(&a, &b);
        let _ = schedlab_stats::ttest::one_sample_t_test(&a, level);
        let _ = benjamini_hochberg(&a);
        let _ = holm(&a);
        let _ = power::mde_t(level, a.len() as f64, level, level);
        let counted = power::Counted::Pairs;
        let _ = power::required_count(counted, level, level, level, level, level, a.len());
        let _ = schedlab_stats::dist::f_quantile(level, a.len() as f64, level);
        let _ = schedlab_stats::dist::f_quantile(level, level, b.len() as f64);
    }
}
