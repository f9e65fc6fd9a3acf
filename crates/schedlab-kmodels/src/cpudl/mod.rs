//! The sched/deadline CPU heap (`kernel/sched/cpudeadline.c`): a max-heap of
//! CPUs keyed by the deadline of the earliest-deadline task each one runs, so
//! the root is the CPU whose current work is the least urgent.
//!
//! Three variants sit behind [`CpuDeadlineHeap`]:
//!
//! - [`Orig`]: the exchange-based code before the wraparound fix. A new CPU
//!   enters with placeholder deadline 0, so any deadline `>= 2^63` compares as
//!   *earlier* than the placeholder and the node sifts down instead of up.
//! - [`Bugfix`]: identical, but the placeholder is the new deadline itself.
//! - [`Fast`]: hole-based sifts and split set/clear (the form that went
//!   upstream).
//!
//! Deadline comparisons are modular ([`dl_time_before`]), exactly as in the
//! kernel. That relation is only a total order on sets of deadlines that fit
//! in half the `u64` ring (the spread between the earliest and the latest live
//! deadline is below `2^63`); the kernel relies on that and so do the
//! guarantees documented here.
//!
//! [`ops`] generates operation streams (the cpudl-bench driver, a realistic
//! mix), and [`lockstep`] replays one stream on two heaps comparing their
//! whole logical state after every step.
//!
//! ```
//! use schedlab_kmodels::cpudl::{run_lockstep, Bugfix, CpudlBenchOps, LockstepError, Orig};
//!
//! let ops = CpudlBenchOps::new(32, 1000);
//! let err = run_lockstep(&mut Orig::new(32), &mut Bugfix::new(32), ops).unwrap_err();
//! // The third op inserts a deadline >= 2^63, which Orig leaves at a leaf.
//! assert!(matches!(err, LockstepError::Diverged(ref d) if d.step == 2));
//! ```

mod exchange;
mod fast;
mod heap;
pub mod lockstep;
pub mod ops;

pub use exchange::{Bugfix, Orig};
pub use fast::Fast;
pub use heap::{
    dl_time_before, CpuDeadlineHeap, CpudlError, HeapSlot, HeapSnapshot, InvariantViolation,
    UnknownVariant, Variant,
};
pub(crate) use heap::{impl_heap_accessors, left_child, parent, right_child, HeapArray};
pub use lockstep::{
    fast_moves_past_equal_ancestor, run_checked, run_lockstep, CheckedRunError, Divergence,
    LockstepError,
};
pub use ops::{
    count_op_mix, CpudlBenchMixAnalysis, CpudlBenchOps, Op, OpMix, RealisticOps,
    CPUDL_BENCH_DL_BASE, CPUDL_BENCH_DL_RANGE, CPUDL_BENCH_SEED, REALISTIC_DEFAULT_START_CLOCK,
};

impl Variant {
    /// An empty heap of this variant for CPUs `0..num_cpus`.
    #[must_use]
    pub fn build(self, num_cpus: u32) -> Box<dyn CpuDeadlineHeap + Send> {
        match self {
            Variant::Orig => Box::new(Orig::new(num_cpus)),
            Variant::Bugfix => Box::new(Bugfix::new(num_cpus)),
            Variant::Fast => Box::new(Fast::new(num_cpus)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dl_time_before_is_modular() {
        assert!(dl_time_before(1, 2));
        assert!(!dl_time_before(2, 1));
        assert!(!dl_time_before(5, 5));
        assert!(dl_time_before(u64::MAX, 0));
        assert!(dl_time_before((1 << 63) - 1, 1 << 63));
        // The trap behind the original bug: every deadline >= 2^63 is
        // "before" 0.
        assert!(dl_time_before(1 << 63, 0));
        assert!(dl_time_before((1 << 63) + 12345, 0));
        // Exactly half a ring apart: each is before the other.
        assert!(dl_time_before(0, 1 << 63) && dl_time_before(1 << 63, 0));
    }

    #[test]
    fn variant_names_round_trip() {
        for v in Variant::ALL {
            assert_eq!(v.name().parse::<Variant>(), Ok(v));
            assert_eq!(v.build(4).variant(), v);
        }
        assert!("heap".parse::<Variant>().is_err());
    }

    #[test]
    fn invariant_checker_names_the_broken_pair() {
        let snap = HeapSnapshot {
            slots: vec![HeapSlot { dl: 5, cpu: 0 }, HeapSlot { dl: 9, cpu: 1 }],
            idx: vec![Some(0), Some(1)],
        };
        assert_eq!(
            snap.check_invariants(),
            Err(InvariantViolation::HeapOrder {
                parent_slot: 0,
                parent_cpu: 0,
                parent_dl: 5,
                child_slot: 1,
                child_cpu: 1,
                child_dl: 9
            })
        );
        let dangling = HeapSnapshot {
            slots: vec![HeapSlot { dl: 5, cpu: 0 }],
            idx: vec![Some(0), Some(0)],
        };
        assert!(matches!(
            dangling.check_invariants(),
            Err(InvariantViolation::DanglingIdx { cpu: 1, .. })
        ));
    }

    #[test]
    fn side_by_side_marks_differences() {
        let a = HeapSnapshot {
            slots: vec![HeapSlot { dl: 9, cpu: 1 }, HeapSlot { dl: 5, cpu: 0 }],
            idx: vec![Some(1), Some(0)],
        };
        let b = HeapSnapshot {
            slots: vec![HeapSlot { dl: 9, cpu: 1 }],
            idx: vec![None, Some(0)],
        };
        let text = a.side_by_side("a", &b, "b");
        assert!(text.starts_with("* a: size=2"));
        assert!(text.contains("  slot    0"));
        assert!(text.contains("* slot    1"));
        assert!(text.contains("* idx[   0]"));
        assert!(text.contains("  idx[   1]"));
    }
}
