//! Every public function checked against numpy/scipy answers recorded by
//! `fixtures/gen_fixtures.py` (relative 1e-9, absolute 1e-12 near zero).

mod common;

use common::{assert_close, assert_close_opt, cases, num, nums, opt_num, parse};
use schedlab_stats::multiplicity::{benjamini_hochberg, benjamini_yekutieli, holm};
use schedlab_stats::rank::{mann_whitney_u, RankMethod};
use schedlab_stats::summary::{geometric_mean, harmonic_mean, mean, median, summarize};
use schedlab_stats::ttest::one_sample_t_test;
use serde_json::Value;

fn name(case: &Value) -> String {
    case["name"].as_str().unwrap_or("?").to_string()
}

#[test]
fn summary_matches_numpy() {
    let root = parse(include_str!("fixtures/summary.json"));
    for case in cases(&root, "cases") {
        let ctx = name(case);
        let xs = nums(&case["values"]);
        let s = summarize(&xs).unwrap();
        assert_eq!(s.n as u64, case["n"].as_u64().unwrap(), "{ctx}");
        assert_close(s.mean, num(&case["mean"]), &format!("{ctx} mean"));
        assert_close(s.median, num(&case["median"]), &format!("{ctx} median"));
        assert_close(s.min, num(&case["min"]), &format!("{ctx} min"));
        assert_close(s.max, num(&case["max"]), &format!("{ctx} max"));
        assert_close_opt(s.std, opt_num(&case["std"]), &format!("{ctx} std"));
        assert_close_opt(
            s.std_pct,
            opt_num(&case["std_pct"]),
            &format!("{ctx} std_pct"),
        );
        assert_close(mean(&xs).unwrap(), num(&case["mean"]), &ctx);
        assert_close(median(&xs).unwrap(), num(&case["median"]), &ctx);
        if let Some(gmean) = case.get("geometric_mean") {
            let g = geometric_mean(&xs).unwrap();
            assert_close(g, num(gmean), &format!("{ctx} gmean"));
            let h = harmonic_mean(&xs).unwrap();
            assert_close(h, num(&case["harmonic_mean"]), &format!("{ctx} hmean"));
        }
    }
}

/// The one-sample t test on log ratios, exponentiated into a ratio and its
/// interval, as scipy's `ttest_1samp` (and `ttest_rel` on the logs) give them.
#[test]
fn one_sample_t_test_on_log_ratios_matches_scipy() {
    let root = parse(include_str!("fixtures/ttest.json"));
    for case in cases(&root, "paired_log_ratio") {
        let ctx = format!("{} @{}", name(case), case["confidence"]);
        let (a, b) = (nums(&case["baseline"]), nums(&case["candidate"]));
        let log_ratios: Vec<f64> = a.iter().zip(&b).map(|(x, y)| y.ln() - x.ln()).collect();
        let r = one_sample_t_test(&log_ratios, num(&case["confidence"])).unwrap();
        let n = log_ratios.len() as f64;
        assert_close(r.estimate, num(&case["mean_log_ratio"]), &ctx);
        assert_close(r.std_err * n.sqrt(), num(&case["std_log_ratio"]), &ctx);
        assert_close(r.estimate.exp(), num(&case["ratio"]), &ctx);
        assert_close(
            r.ci.low.exp(),
            num(&case["ratio_ci_low"]),
            &format!("{ctx} low"),
        );
        assert_close(
            r.ci.high.exp(),
            num(&case["ratio_ci_high"]),
            &format!("{ctx} high"),
        );
        assert_close(r.t, num(&case["t"]), &format!("{ctx} t"));
        assert_close(r.df, num(&case["df"]), &format!("{ctx} df"));
        assert_close(r.p_value, num(&case["p_value"]), &format!("{ctx} p"));
        assert_close(
            r.p_value,
            num(&case["p_value_ttest_rel"]),
            &format!("{ctx} p rel"),
        );
    }
}

/// Mann–Whitney under benchstat's rule (exact up to 50 values per side
/// without ties, up to 25 with ties, else the normal approximation): scipy's
/// `method="exact"` or `"asymptotic"` as the rule picks, and enumeration of
/// every split where the exact case has ties (scipy's exact ignores ties).
#[test]
fn mann_whitney_matches_scipy() {
    let root = parse(include_str!("fixtures/rank.json"));
    for case in cases(&root, "mann_whitney") {
        let ctx = name(case);
        let (a, b) = (nums(&case["baseline"]), nums(&case["candidate"]));
        let r = mann_whitney_u(&a, &b).unwrap();
        assert_close(r.u_baseline, num(&case["u_baseline"]), &format!("{ctx} U"));
        assert_close(r.p_value, num(&case["p_value"]), &format!("{ctx} p"));
        let expected_method = match case["method"].as_str().unwrap() {
            "exact" => RankMethod::Exact,
            _ => RankMethod::NormalApproximation,
        };
        assert_eq!(r.method, expected_method, "{ctx}");
    }
}

/// Untied samples of 3 to 25 values per side, and a few up to 50: the exact
/// p of `scipy.stats.mannwhitneyu(..., method="exact")`.
#[test]
fn mann_whitney_exact_matches_scipy_without_ties() {
    let root = parse(include_str!("fixtures/rank.json"));
    let all = cases(&root, "exact_untied");
    assert!(all.len() >= 80);
    for case in all {
        let ctx = name(case);
        let (a, b) = (nums(&case["baseline"]), nums(&case["candidate"]));
        let r = mann_whitney_u(&a, &b).unwrap();
        assert!(!r.has_ties, "{ctx}");
        assert_eq!(r.method, RankMethod::Exact, "{ctx}");
        assert_eq!(r.u_baseline, num(&case["u_baseline"]), "{ctx} U");
        assert_close(r.p_value, num(&case["p_value"]), &format!("{ctx} p"));
    }
}

/// Tied samples of 2 to 14 values in all: the exact p with ties, from
/// enumerating every way to split the pooled values and computing each
/// split's U pair by pair.
#[test]
fn mann_whitney_exact_with_ties_matches_enumeration() {
    let root = parse(include_str!("fixtures/rank.json"));
    let all = cases(&root, "exact_tied");
    assert!(all.len() >= 40);
    for case in all {
        let ctx = name(case);
        let (a, b) = (nums(&case["baseline"]), nums(&case["candidate"]));
        let r = mann_whitney_u(&a, &b).unwrap();
        assert!(r.has_ties, "{ctx}");
        assert_eq!(r.method, RankMethod::Exact, "{ctx}");
        assert_eq!(r.u_baseline, num(&case["u_baseline"]), "{ctx} U");
        assert_close(r.p_value, num(&case["p_value"]), &format!("{ctx} p"));
    }
}

#[test]
fn multiplicity_matches_scipy_and_statsmodels_holm() {
    let root = parse(include_str!("fixtures/multiplicity.json"));
    for case in cases(&root, "cases") {
        let ctx = name(case);
        let p = nums(&case["p"]);
        let checks = [
            ("bh", benjamini_hochberg(&p).unwrap()),
            ("by", benjamini_yekutieli(&p).unwrap()),
            ("holm", holm(&p).unwrap()),
        ];
        for (key, actual) in checks {
            let expected = nums(&case[key]);
            assert_eq!(actual.len(), expected.len());
            for (i, (a, e)) in actual.iter().zip(&expected).enumerate() {
                assert_close(*a, *e, &format!("{ctx} {key}[{i}]"));
            }
        }
    }
}
