//! benchstat's median confidence interval (golang.org/x/perf benchmath),
//! recorded by `fixtures/benchstat/main.go` for n = 1..60 at seven levels,
//! must be reproduced exactly: same order statistics, same bounds.

mod common;

use common::{assert_close, cases, num, nums, opt_num, parse};
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
