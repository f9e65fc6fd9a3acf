//! Work the compiler cannot remove, counted in loop iterations: the `--work` of semaphore, fanout
//! and contention, so that one unit costs the same in each.
use std::hint::black_box;

/// `work` iterations of real work the compiler cannot remove: each adds the loop index to an
/// accumulator in memory whose address escapes through `black_box`, so every iteration is a load,
/// an add and a store, as the seed's `cpu_eat` loop compiled at -O0 (a few cycles per iteration,
/// bound by store-to-load forwarding).
#[inline(never)]
pub fn burn(work: u64, seed: u64) -> u64 {
    let mut acc = seed;
    for i in 0..work {
        let cell = black_box(&mut acc);
        *cell = cell.wrapping_add(i);
    }
    acc
}
