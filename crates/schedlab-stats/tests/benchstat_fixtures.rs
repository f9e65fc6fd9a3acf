//! benchstat's median confidence interval (golang.org/x/perf benchmath),
//! recorded by `fixtures/benchstat/main.go` for n = 1..60 at seven levels,
//! must be reproduced exactly: same order statistics, same bounds. So must
//! its Mann–Whitney p-values (`fixtures/benchstat/main.go utest`).

mod common;

use common::{assert_close, cases, num, nums, opt_num, parse};
use schedlab_stats::rank::{mann_whitney_u, RankMethod};
use schedlab_stats::summary::{median_ci, median_ci_orders};

#[test]
fn median_ci_matches_benchstat() {
    let root = parse(include_str!("fixtures/benchstat_median_ci.json"));
    let all = cases(&root, "cases");
    assert_eq!(all.len(), 60);
    for case in all {
        let n = case["n"].as_u64().unwrap() as usize;
        let values = nums(&case["values"]);
        for interval in case["intervals"].as_array().unwrap() {
            let confidence = num(&interval["confidence"]);
            let ctx = format!("n={n} confidence={confidence}");
            let orders = median_ci_orders(n, confidence).unwrap();
            assert_eq!(
                orders.low_order as u64,
                interval["low_order"].as_u64().unwrap(),
                "{ctx} low order"
            );
            assert_eq!(
                orders.high_order as u64,
                interval["high_order"].as_u64().unwrap(),
                "{ctx} high order"
            );
            assert_close(
                orders.achieved_confidence,
                num(&interval["achieved_confidence"]),
                &format!("{ctx} achieved"),
            );

            let ci = median_ci(&values, confidence).unwrap();
            let (low, high) = (opt_num(&interval["low"]), opt_num(&interval["high"]));
            match ci {
                Some(ci) => {
                    assert_eq!(ci.median, num(&case["median"]), "{ctx} median");
                    assert_eq!(Some(ci.ci.low), low, "{ctx} low");
                    assert_eq!(Some(ci.ci.high), high, "{ctx} high");
                }
                // We report no interval exactly when benchstat prints ±∞.
                None => assert!(low.is_none() || high.is_none(), "{ctx}"),
            }
        }
    }
}

/// benchstat's Mann–Whitney p (benchmath's `AssumeNothing.Compare`, that is
/// go-moremath's `MannWhitneyUTest`), recorded by `fixtures/benchstat/main.go
/// utest`: untied samples of 1 to 64 values and tied ones of 1 to 31 each
/// side, across both exact limits, plus hand-picked edge cases. Same U, same
/// choice of exact or approximate, same p (benchstat's exact counts with ties
/// go through `exp(lgamma)`, hence the tolerance) and the same three decimals
/// printed — except where benchstat's p with ties is not a p of the observed
/// U (see `mann_whitney_u`): above 1 schedlab gives 1, and where the
/// baseline's U is the larger schedlab gives the p of the swapped samples,
/// which is benchstat's own there.
#[test]
fn mann_whitney_matches_benchstat() {
    let root = parse(include_str!("fixtures/benchstat_utest.json"));
    let all = cases(&root, "cases");
    assert_eq!(all.len(), 255);
    let (mut above_one, mut larger_base) = (0, 0);
    for case in all {
        let ctx = case["name"].as_str().unwrap();
        let (a, b) = (nums(&case["baseline"]), nums(&case["candidate"]));
        let r = mann_whitney_u(&a, &b).unwrap();
        assert_eq!(r.has_ties, case["ties"].as_bool().unwrap(), "{ctx} ties");
        let expected_method = if case["exact"].as_bool().unwrap() {
            RankMethod::Exact
        } else {
            RankMethod::NormalApproximation
        };
        assert_eq!(r.method, expected_method, "{ctx} method");
        if let Some(u) = opt_num(&case["u"]) {
            assert_eq!(r.u_baseline, u, "{ctx} U");
        }
        let benchstat_p = num(&case["p"]);
        let quirk = r.has_ties && r.method == RankMethod::Exact;
        if quirk && r.u_baseline > r.u_candidate {
            larger_base += 1;
            let swapped = mann_whitney_u(&b, &a).unwrap();
            assert_eq!(r.p_value, swapped.p_value, "{ctx} p, swapped");
            continue;
        }
        if quirk && benchstat_p > 1.0 + 1e-9 {
            above_one += 1;
            assert_eq!(r.p_value, 1.0, "{ctx} p, capped");
            continue;
        }
        assert_close(r.p_value, benchstat_p, &format!("{ctx} p"));
        assert_eq!(
            format!("p={:.3}", r.p_value),
            case["printed"].as_str().unwrap(),
            "{ctx} printed"
        );
    }
    // Both departures must stay in the fixture for the test to pin them down.
    assert!(above_one >= 3, "{above_one} cases above 1");
    assert!(
        larger_base >= 1,
        "{larger_base} cases of a larger baseline U"
    );
}
