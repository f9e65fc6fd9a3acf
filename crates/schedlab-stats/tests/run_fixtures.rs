//! The run-level statistics against scipy and numpy (`tests/fixtures/gen_runs.py`): the t-based
//! MDE, the F quantile of the stale-calibration guard, t and TOST from an estimate, alpha
//! spending, the t-scaled MAD and the nested variance components.
mod common;

use common::*;
use schedlab_stats::dist::f_quantile;
use schedlab_stats::equivalence::tost_from_estimate;
use schedlab_stats::power::mde_t;
use schedlab_stats::sequential::{spent_alpha, Spending};
use schedlab_stats::summary::t_scaled_mad;
use schedlab_stats::ttest::t_test_from_estimate;
use schedlab_stats::variance::{nested_components, RunStat};
use serde_json::Value;

fn root() -> Value {
    parse(include_str!("fixtures/runs.json"))
}

#[test]
fn f_quantile_matches_scipy() {
    for case in cases(&root(), "f_quantile") {
        let got = f_quantile(num(&case["p"]), num(&case["d1"]), num(&case["d2"]));
        let want = num(&case["q"]);
        // statrs inverts the F cdf by bisection; the guard needs far less than this.
        assert!((got / want - 1.0).abs() < 1e-7, "{case}: {got}");
    }
}

#[test]
fn mde_t_matches_scipy_t_quantiles() {
    for case in cases(&root(), "mde_t") {
        let mde = mde_t(
            num(&case["se"]),
            num(&case["df"]),
            num(&case["alpha"]),
            num(&case["power"]),
        )
        .unwrap();
        assert_close(mde.log_effect, num(&case["log_effect"]), "mde log");
        assert_close(mde.pct_increase, num(&case["pct_increase"]), "mde %");
    }
}

#[test]
fn t_and_tost_from_estimates_match_scipy() {
    let root = root();
    for case in cases(&root, "t_test") {
        let t = t_test_from_estimate(
            num(&case["estimate"]),
            num(&case["se"]),
            num(&case["df"]),
            num(&case["confidence"]),
        )
        .unwrap();
        assert_close(t.p_value, num(&case["p"]), "t p");
        assert_close(t.ci.low, num(&case["low"]), "t low");
        assert_close(t.ci.high, num(&case["high"]), "t high");
    }
    for case in cases(&root, "tost") {
        let e = tost_from_estimate(
            num(&case["estimate"]),
            num(&case["se"]),
            num(&case["df"]),
            num(&case["delta"]),
            num(&case["alpha"]),
        )
        .unwrap();
        assert_close(e.p_lower, num(&case["p_lower"]), "tost lower");
        assert_close(e.p_upper, num(&case["p_upper"]), "tost upper");
    }
}

#[test]
fn spending_matches_lan_demets() {
    for case in cases(&root(), "spending") {
        let (fraction, alpha) = (num(&case["fraction"]), num(&case["alpha"]));
        let obf = spent_alpha(Spending::OBrienFleming, fraction, alpha).unwrap();
        let pocock = spent_alpha(Spending::Pocock, fraction, alpha).unwrap();
        assert_close(obf, num(&case["obrien_fleming"]), "O'Brien-Fleming");
        assert_close(pocock, num(&case["pocock"]), "Pocock");
    }
}

#[test]
fn t_scaled_mad_matches_scipy() {
    for case in cases(&root(), "t_scaled_mad") {
        let got = t_scaled_mad(&nums(&case["values"]), num(&case["df"])).unwrap();
        assert_close(got, num(&case["scale"]), "t-scaled MAD");
    }
}

#[test]
fn nested_components_match_the_textbook_anova() {
    for case in cases(&root(), "nested") {
        let boots: Vec<Vec<RunStat>> = case["boots"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                b.as_array()
                    .unwrap()
                    .iter()
                    .map(|r| RunStat {
                        mean: num(&r["mean"]),
                        variance: Some(num(&r["variance"])),
                        n: r["n"].as_u64().unwrap() as usize,
                    })
                    .collect()
            })
            .collect();
        let c = nested_components(&boots).unwrap();
        assert_close(c.sigma2, num(&case["sigma2"]), "sigma2");
        assert_close(c.sigma2_df, num(&case["sigma2_df"]), "sigma2 df");
        assert_close(c.n_harmonic, num(&case["n_harmonic"]), "n harmonic");
        assert_close_opt(c.ms_run, opt_num(&case["ms_run"]), "ms run");
        assert_close(c.run_df, num(&case["run_df"]), "run df");
        assert_close_opt(c.ms_boot, opt_num(&case["ms_boot"]), "ms boot");
        assert_close(c.boot_df, num(&case["boot_df"]), "boot df");
        assert_close(c.n0, num(&case["n0"]), "n0");
        assert_close(c.tau2, num(&case["tau2"]), "tau2");
        assert_close_opt(c.omega2, opt_num(&case["omega2"]), "omega2");
        assert_close(c.grand_mean, num(&case["grand_mean"]), "grand mean");
    }
}
