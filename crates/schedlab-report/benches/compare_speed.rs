//! How long `compare` takes for seed 004's matrix: 48 cases × 30 samples per side, with the
//! 2,000-resample bootstrap of every row. Prints the median of several timings; the target is
//! well under one second. Run with `cargo bench -p schedlab-report --bench compare_speed`.
use std::time::Instant;

use schedlab_core::metric::Better;
use schedlab_report::compare::{compare, side_from_samples, Settings};

fn sample(seed: u64, n: usize, centre: f64) -> Vec<f64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            centre * (1.0 + ((state >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 0.04)
        })
        .collect()
}

fn main() {
    let sides = |offset: u64| {
        (0..48)
            .map(|case| {
                let name = format!("case-{case:02}");
                (
                    name,
                    "time_sec".to_string(),
                    Better::Lower,
                    vec![sample(case * 2 + offset, 30, 1.0 + case as f64)],
                )
            })
            .collect::<Vec<_>>()
    };
    let mut timings = Vec::new();
    for _ in 0..7 {
        let base = side_from_samples("base", sides(0));
        let cand = side_from_samples("cand", sides(1));
        let start = Instant::now();
        let comparison = compare(base, vec![cand], Settings::default());
        timings.push(start.elapsed().as_secs_f64());
        assert_eq!(comparison.rows.len(), 48);
    }
    timings.sort_by(f64::total_cmp);
    println!(
        "compare: 48 cases x 30 samples, 2000 bootstrap resamples per row: median {:.1} ms (min {:.1} ms, max {:.1} ms)",
        timings[3] * 1e3,
        timings[0] * 1e3,
        timings[6] * 1e3
    );
}
