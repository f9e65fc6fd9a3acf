//! Lock-step replay: the cpudl-bench debug trick (dump the whole heap after
//! every operation of two builds and diff the dumps) done in memory, plus an
//! invariant-checked replay and an exact predictor of where [`super::Fast`]
//! and [`super::Bugfix`] part ways.

use std::fmt;

use super::{
    dl_time_before, parent, CpuDeadlineHeap, CpudlError, HeapSnapshot, InvariantViolation, Op,
    Variant,
};

/// The first step after which two heaps' logical states differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Divergence {
    /// 0-based index of the operation in the stream.
    pub step: usize,
    /// That operation.
    pub op: Op,
    /// Variant of the first heap.
    pub variant_a: Variant,
    /// Variant of the second heap.
    pub variant_b: Variant,
    /// The state both heaps shared before the step.
    pub before_a: HeapSnapshot,
    /// First heap after the step.
    pub after_a: HeapSnapshot,
    /// Second heap after the step.
    pub after_b: HeapSnapshot,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} and {} diverge at step {} ({}); rows marked * differ:",
            self.variant_a, self.variant_b, self.step, self.op
        )?;
        f.write_str(&self.after_a.side_by_side(
            self.variant_a.name(),
            &self.after_b,
            self.variant_b.name(),
        ))?;
        writeln!(f, "state before the step:")?;
        write!(f, "{}", self.before_a)
    }
}

/// Why a lock-step run stopped early.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LockstepError {
    /// The heaps were not equal to begin with (e.g. different CPU counts).
    #[error("the heaps differ before the first operation")]
    StartStatesDiffer {
        /// First heap's state.
        a: Box<HeapSnapshot>,
        /// Second heap's state.
        b: Box<HeapSnapshot>,
    },
    /// The states differ after some step.
    #[error("{0}")]
    Diverged(Box<Divergence>),
    /// An operation named a CPU out of range (both heaps reject it alike).
    #[error("step {step} ({op}) was rejected: {error}")]
    Rejected {
        /// 0-based index of the operation.
        step: usize,
        /// The operation.
        op: Op,
        /// The heap's error.
        error: CpudlError,
    },
}

/// Apply `ops` to both heaps, comparing their full logical state (size, live
/// slots, `idx` of every CPU; see [`HeapSnapshot`] for why stale slots are
/// excluded) after every step. Returns the number of steps on success.
pub fn run_lockstep(
    a: &mut dyn CpuDeadlineHeap,
    b: &mut dyn CpuDeadlineHeap,
    ops: impl IntoIterator<Item = Op>,
) -> Result<usize, LockstepError> {
    let mut before = a.snapshot();
    let start_b = b.snapshot();
    if before != start_b {
        return Err(LockstepError::StartStatesDiffer {
            a: Box::new(before),
            b: Box::new(start_b),
        });
    }
    let mut steps = 0;
    for (step, op) in ops.into_iter().enumerate() {
        if let Err(error) = a.apply(op) {
            return Err(LockstepError::Rejected { step, op, error });
        }
        b.apply(op)
            .map_err(|error| LockstepError::Rejected { step, op, error })?;
        let (after_a, after_b) = (a.snapshot(), b.snapshot());
        if after_a != after_b {
            return Err(LockstepError::Diverged(Box::new(Divergence {
                step,
                op,
                variant_a: a.variant(),
                variant_b: b.variant(),
                before_a: before,
                after_a,
                after_b,
            })));
        }
        before = after_a;
        steps = step + 1;
    }
    Ok(steps)
}

/// Why an invariant-checked run stopped early.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckedRunError {
    /// The heap broke an invariant.
    #[error("step {step} ({op}): {violation}")]
    Violation {
        /// 0-based index of the operation.
        step: usize,
        /// The operation.
        op: Op,
        /// What broke.
        violation: InvariantViolation,
        /// State before the step.
        before: Box<HeapSnapshot>,
        /// State after the step.
        after: Box<HeapSnapshot>,
    },
    /// An operation named a CPU out of range.
    #[error("step {step} ({op}) was rejected: {error}")]
    Rejected {
        /// 0-based index of the operation.
        step: usize,
        /// The operation.
        op: Op,
        /// The heap's error.
        error: CpudlError,
    },
}

/// Apply `ops` to `heap`, checking the invariants after every step. Returns
/// the number of steps on success.
pub fn run_checked(
    heap: &mut dyn CpuDeadlineHeap,
    ops: impl IntoIterator<Item = Op>,
) -> Result<usize, CheckedRunError> {
    let mut steps = 0;
    for (step, op) in ops.into_iter().enumerate() {
        let before = heap.snapshot();
        heap.apply(op)
            .map_err(|error| CheckedRunError::Rejected { step, op, error })?;
        if let Err(violation) = heap.check_invariants() {
            return Err(CheckedRunError::Violation {
                step,
                op,
                violation,
                before: Box::new(before),
                after: Box::new(heap.snapshot()),
            });
        }
        steps = step + 1;
    }
    Ok(steps)
}

/// Predict whether applying `op` to the valid heap `before` makes
/// [`super::Fast`] and [`super::Bugfix`] disagree.
///
/// Both variants run the same sift-down, and their sift-ups differ only in
/// ties: Bugfix climbs while the parent is strictly before the moving key,
/// Fast while the key is not before the parent. So they part ways exactly
/// when the moving key's upward path meets an ancestor with an *equal* key
/// after passing only strictly-earlier ones:
///
/// - insert (set of an absent CPU): the moving key is the new deadline,
///   starting at position `size`; a tie with the immediate parent already
///   counts, because Fast's insert goes straight to its sift-up;
/// - update to a key not before the old one: starting at the CPU's position;
///   Fast only chooses to sift up if the parent is strictly before, so the
///   tie must be with the grandparent or higher;
/// - real delete of a CPU not in the last slot: the last slot's key moves
///   into the hole, same rule as an update;
/// - update to an earlier key, delete of the last slot, no-op clear: never.
///
/// This assumes `before` satisfies the invariants and all its deadlines and
/// `op`'s lie within a window narrower than `2^63`, where the modular
/// comparison is a total order; the property tests check the prediction
/// against both implementations. Returns `false` for out-of-range CPUs.
#[must_use]
pub fn fast_moves_past_equal_ancestor(before: &HeapSnapshot, op: Op) -> bool {
    let slots = &before.slots;
    let Some(&position) = before.idx.get(op.cpu() as usize) else {
        return false;
    };
    let (start, key, tie_with_parent_counts) = match (op, position) {
        (Op::Set { dl, .. }, None) => (slots.len(), dl, true),
        (Op::Set { dl, .. }, Some(pos)) => {
            let Some(old) = slots.get(pos as usize) else {
                return false;
            };
            if dl_time_before(dl, old.dl) {
                return false;
            }
            (pos as usize, dl, false)
        }
        (Op::Clear { .. }, None) => return false,
        (Op::Clear { .. }, Some(pos)) => {
            let hole = pos as usize;
            match slots.len().checked_sub(1) {
                Some(last) if hole < last => (hole, slots[last].dl, false),
                _ => return false,
            }
        }
    };
    let mut pos = start;
    let mut at_first_level = true;
    while pos > 0 {
        let ancestor = parent(pos);
        let ancestor_dl = slots[ancestor].dl;
        if dl_time_before(ancestor_dl, key) {
            pos = ancestor;
            at_first_level = false;
            continue;
        }
        return ancestor_dl == key && (tie_with_parent_counts || !at_first_level);
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpudl::{Bugfix, CpudlBenchOps, Fast, Orig};

    /// Two inserts with deadlines at 2^63 and just after, where the wrapping clock makes the
    /// original heap and the fixed one place the second CPU differently.
    const WRAPAROUND_INSERTS: [Op; 2] = [
        Op::Set {
            cpu: 0,
            dl: 1 << 63,
        },
        Op::Set {
            cpu: 1,
            dl: (1 << 63) + 1,
        },
    ];

    #[test]
    fn lockstep_orig_vs_bugfix_reports_the_first_wraparound_insert() {
        let ops = WRAPAROUND_INSERTS;
        let err = run_lockstep(&mut Orig::new(2), &mut Bugfix::new(2), ops).unwrap_err();
        let LockstepError::Diverged(d) = err else {
            panic!("expected divergence, got {err:?}")
        };
        assert_eq!(d.step, 1);
        assert_eq!(d.after_a.slots[0].cpu, 0);
        assert_eq!(d.after_b.slots[0].cpu, 1);
        let text = d.to_string();
        assert!(text.contains("orig and bugfix diverge at step 1"));
        assert!(text.contains("* slot    0"));
    }

    #[test]
    fn lockstep_orig_vs_bugfix_on_the_bench_mix() {
        let err = run_lockstep(
            &mut Orig::new(32),
            &mut Bugfix::new(32),
            CpudlBenchOps::new(32, 10_000),
        )
        .unwrap_err();
        let LockstepError::Diverged(d) = err else {
            panic!("expected divergence, got {err:?}")
        };
        // The diverging op is an insert of a deadline >= 2^63.
        assert!(matches!(d.op, Op::Set { dl, .. } if dl >= 1 << 63));
        assert_eq!(d.before_a.idx[d.op.cpu() as usize], None);
    }

    #[test]
    fn lockstep_rejects_mismatched_sizes_and_bad_cpus() {
        assert!(matches!(
            run_lockstep(&mut Fast::new(2), &mut Bugfix::new(3), []),
            Err(LockstepError::StartStatesDiffer { .. })
        ));
        assert!(matches!(
            run_lockstep(
                &mut Fast::new(2),
                &mut Bugfix::new(2),
                [Op::Clear { cpu: 5 }]
            ),
            Err(LockstepError::Rejected { step: 0, .. })
        ));
        assert_eq!(
            run_lockstep(
                &mut Fast::new(2),
                &mut Bugfix::new(2),
                CpudlBenchOps::new(2, 50)
            ),
            Ok(50)
        );
    }

    #[test]
    fn predictor_spots_the_minimal_tie() {
        let mut heap = Bugfix::new(2);
        heap.set(0, 7).unwrap();
        let before = heap.snapshot();
        assert!(fast_moves_past_equal_ancestor(
            &before,
            Op::Set { cpu: 1, dl: 7 }
        ));
        assert!(!fast_moves_past_equal_ancestor(
            &before,
            Op::Set { cpu: 1, dl: 8 }
        ));
        assert!(!fast_moves_past_equal_ancestor(
            &before,
            Op::Set { cpu: 1, dl: 6 }
        ));
        assert!(!fast_moves_past_equal_ancestor(
            &before,
            Op::Clear { cpu: 0 }
        ));
    }

    #[test]
    fn run_checked_names_the_step() {
        let ops = WRAPAROUND_INSERTS;
        assert_eq!(run_checked(&mut Bugfix::new(2), ops), Ok(2));
        let err = run_checked(&mut Orig::new(2), ops).unwrap_err();
        assert!(matches!(
            err,
            CheckedRunError::Violation {
                step: 1,
                violation: InvariantViolation::HeapOrder { .. },
                ..
            }
        ));
    }
}
