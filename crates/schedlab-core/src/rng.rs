//! The one random number generator of the core, for what must come out the same on every machine
//! given a seed: the fake workload's draws, the run plan's shuffled case order, and the seeded
//! noise the analysis tests simulate runs with ([`SplitMix64`]).

/// splitmix64: a tiny, well-mixed, reproducible generator (the same on every machine).
pub(crate) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(GOLDEN_GAMMA);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// The gamma splitmix64's state advances by.
const GOLDEN_GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// A splitmix64 stream: draw i is [`splitmix64`] of the seed plus i gammas. Seeded simulations
/// (the analysis tests' run-to-run noise) draw from it, the same on every machine.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        let draw = splitmix64(self.state);
        self.state = self.state.wrapping_add(GOLDEN_GAMMA);
        draw
    }

    /// Uniform on [0, 1), from the draw's top 53 bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform on [lo, hi): one draw of [`Self::uniform`], stretched.
    pub fn between(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Standard normal, by Box–Muller from two uniforms (the cosine half).
    pub fn normal(&mut self) -> f64 {
        let u = self.uniform().max(1e-300);
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference implementation's first draws from seed 1234567 (Vigna's splitmix64.c).
    #[test]
    fn the_stream_is_the_reference_splitmix64() {
        let mut stream = SplitMix64::new(1_234_567);
        let draws: Vec<u64> = (0..5).map(|_| stream.next_u64()).collect();
        assert_eq!(
            draws,
            [
                6_457_827_717_110_365_317,
                3_203_168_211_198_807_973,
                9_817_491_932_198_370_423,
                4_593_380_528_125_082_431,
                16_408_922_859_458_223_821,
            ]
        );
    }

    #[test]
    fn between_stays_in_its_interval_and_spans_it() {
        let mut g = SplitMix64::new(7);
        let draws: Vec<f64> = (0..10_000).map(|_| g.between(0.02, 0.10)).collect();
        assert!(draws.iter().all(|x| (0.02..0.10).contains(x)));
        let (low, high) = (
            draws.iter().copied().fold(f64::INFINITY, f64::min),
            draws.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        assert!(low < 0.0201 && high > 0.0999, "{low} {high}");
    }
}
