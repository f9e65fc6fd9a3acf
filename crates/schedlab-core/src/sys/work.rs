//! The scenario workload's unit of CPU work as fixed machine code: one iteration is an add and a
//! multiply on a loop-carried dependency chain (about four cycles), whatever the compiler and
//! its optimisation level. A Rust loop's cost per iteration changed with the build (a debug build's
//! calls and stack traffic made it vary by ±20 % from one millisecond to the next on a shared
//! VM, where a release build's did not), and a run phase is only as accurate as the constancy of
//! its unit: this one costs the same in the tests (debug) as in the binary users run. Part of the
//! audited OS layer (`crate::sys`) because it is inline assembly.

/// Runs `units` iterations of the dependency chain from `seed` and returns the chain's value, which
/// the caller keeps (so nothing is dead code to anyone). `units` 0 does nothing.
#[inline(never)]
pub fn dependent_work(units: u64, seed: u64) -> u64 {
    if units == 0 {
        return seed;
    }
    #[cfg(target_arch = "x86_64")]
    {
        let mut acc = seed;
        let mut left = units;
        // SAFETY: registers only (`nomem`, `nostack`): the loop reads and writes the two operands
        // and the flags, and ends when `left` reaches 0 (it starts above 0).
        unsafe {
            std::arch::asm!(
                "2:",
                "add {acc}, {left}",
                "imul {acc}, {acc}, 3",
                "dec {left}",
                "jnz 2b",
                acc = inout(reg) acc,
                left = inout(reg) left,
                options(nomem, nostack),
            );
        }
        debug_assert_eq!(left, 0);
        acc
    }
    #[cfg(target_arch = "aarch64")]
    {
        let mut acc = seed;
        let mut left = units;
        // SAFETY: registers only (`nomem`, `nostack`): the loop reads and writes the two operands
        // and the flags, and ends when `left` reaches 0 (it starts above 0).
        unsafe {
            std::arch::asm!(
                "2:",
                "add {acc}, {acc}, {left}",
                "madd {acc}, {acc}, {three}, {acc}",
                "subs {left}, {left}, #1",
                "b.ne 2b",
                acc = inout(reg) acc,
                left = inout(reg) left,
                three = in(reg) 2u64,
                options(nomem, nostack),
            );
        }
        debug_assert_eq!(left, 0);
        acc
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let mut acc = seed;
        for i in (1..=units).rev() {
            acc = std::hint::black_box(acc.wrapping_add(i).wrapping_mul(3));
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same chain in Rust: the machine code computes what it says.
    fn reference(units: u64, seed: u64) -> u64 {
        let mut acc = seed;
        for left in (1..=units).rev() {
            acc = acc.wrapping_add(left).wrapping_mul(3);
        }
        acc
    }

    #[test]
    fn the_chain_is_computed_and_zero_units_do_nothing() {
        for (units, seed) in [(1, 0), (2, 5), (1_000, 7), (65_537, u64::MAX)] {
            assert_eq!(
                dependent_work(units, seed),
                reference(units, seed),
                "{units}"
            );
        }
        assert_eq!(dependent_work(0, 42), 42);
    }
}
