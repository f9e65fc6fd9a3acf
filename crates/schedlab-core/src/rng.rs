//! The one random number generator of the core, for what must come out the same on every machine
//! given a seed: the fake workload's draws and the run plan's shuffled case order.

/// splitmix64: a tiny, well-mixed, reproducible generator (the same on every machine).
pub(crate) fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}
