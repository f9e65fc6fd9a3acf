//! The seeded bootstrap must give bit-identical answers on every machine and
//! every build: these values were recorded once and are compared by bits.
//! A failure means the random stream or the interval arithmetic changed
//! (e.g. a rand/rand_chacha upgrade), which silently changes reported
//! intervals for stored results; bump deliberately, never casually.

use schedlab_stats::bootstrap::{
    bootstrap_ratio_of_medians, ratio_of_medians_replicates, BootstrapSettings,
};

fn samples() -> (Vec<f64>, Vec<f64>) {
    let baseline = (0..30)
        .map(|i| 100.0 + ((i * 37) % 17) as f64 * 0.37 + i as f64 * 0.01)
        .collect();
    let candidate = (0..25)
        .map(|i| 103.0 + ((i * 23) % 19) as f64 * 0.41 - i as f64 * 0.02)
        .collect();
    (baseline, candidate)
}

#[test]
fn replicate_stream_is_pinned() {
    let (a, b) = samples();
    let bits: Vec<u64> = ratio_of_medians_replicates(&a, &b, 5, 0x5eed)
        .unwrap()
        .into_iter()
        .map(f64::to_bits)
        .collect();
    assert_eq!(
        bits,
        [
            0x3ff04e45c51f8236,
            0x3ff0ac757ec15e7e,
            0x3ff043a7476fca97,
            0x3ff05504d12b8d62,
            0x3ff078487d1007f7
        ]
    );
}

#[test]
fn intervals_are_pinned() {
    let (a, b) = samples();
    let settings = BootstrapSettings {
        resamples: 2000,
        confidence: 0.95,
        seed: 0x5eed,
    };
    let r = bootstrap_ratio_of_medians(&a, &b, settings).unwrap();
    let bca = r.bca.unwrap().ci;
    assert_eq!(r.ratio.to_bits(), 0x3ff0821371187060);
    assert_eq!(r.percentile.low.to_bits(), 0x3ff032ba3cca2ced);
    assert_eq!(r.percentile.high.to_bits(), 0x3ff0c9ac8eaf344f);
    assert_eq!(bca.low.to_bits(), 0x3ff03595cb2e5b07);
    assert_eq!(bca.high.to_bits(), 0x3ff0cac7bb01b98f);
}

#[test]
fn different_seeds_give_different_streams() {
    let (a, b) = samples();
    let first = ratio_of_medians_replicates(&a, &b, 20, 1).unwrap();
    let second = ratio_of_medians_replicates(&a, &b, 20, 2).unwrap();
    assert_ne!(first, second);
}
