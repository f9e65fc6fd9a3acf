//! The exchange-based heap of the original `cpudeadline.c` ([`Orig`]) and its
//! wraparound fix ([`Bugfix`]). They differ only in the deadline a new CPU
//! holds before its key is changed to the real one.

use super::{
    dl_time_before, impl_heap_accessors, left_child, parent, right_child, CpuDeadlineHeap,
    CpudlError, HeapArray, Variant,
};

/// What a newly inserted CPU's slot holds before `change_key` runs.
#[derive(Clone, Copy, Debug)]
enum Placeholder {
    /// The original code: 0. `change_key` then sees "new key before old key"
    /// for every deadline `>= 2^63` and sifts down from a leaf, i.e. never
    /// moves the node up.
    Zero,
    /// The fix: the new deadline itself, so `change_key` always takes the
    /// sift-up branch for an insertion.
    NewDeadline,
}

impl HeapArray {
    /// Swap the contents of two slots and keep both CPUs' `idx` pointing at
    /// them. Reading the CPUs first matters: after the swap, `idx` is indexed
    /// by the CPUs that *were* there.
    fn exchange(&mut self, a: usize, b: usize) {
        let (cpu_a, cpu_b) = (self.elements[a].cpu as usize, self.elements[b].cpu as usize);
        let (dl_a, dl_b) = (self.elements[a].dl, self.elements[b].dl);
        self.elements[a].cpu = cpu_b as u32;
        self.elements[b].cpu = cpu_a as u32;
        self.elements[a].dl = dl_b;
        self.elements[b].dl = dl_a;
        let (idx_a, idx_b) = (self.elements[cpu_a].idx, self.elements[cpu_b].idx);
        self.elements[cpu_a].idx = idx_b;
        self.elements[cpu_b].idx = idx_a;
    }

    /// Sift down by exchanges; ties never move (strict comparisons).
    fn exchange_sift_down(&mut self, mut pos: usize) {
        loop {
            let (l, r) = (left_child(pos), right_child(pos));
            let mut largest = pos;
            if l < self.size && dl_time_before(self.elements[pos].dl, self.elements[l].dl) {
                largest = l;
            }
            if r < self.size && dl_time_before(self.elements[largest].dl, self.elements[r].dl) {
                largest = r;
            }
            if largest == pos {
                return;
            }
            self.exchange(largest, pos);
            pos = largest;
        }
    }

    /// Sift up by exchanges while the parent is strictly before; returns the
    /// final position.
    fn exchange_sift_up(&mut self, mut pos: usize) -> usize {
        while pos > 0 && dl_time_before(self.elements[parent(pos)].dl, self.elements[pos].dl) {
            self.exchange(pos, parent(pos));
            pos = parent(pos);
        }
        pos
    }

    /// The direction is chosen by comparing the new key with the key the slot
    /// holds *now* — for an insertion that is the placeholder, which is where
    /// the original bug lives.
    fn change_key(&mut self, pos: usize, new_dl: u64) {
        let moves_down = dl_time_before(new_dl, self.elements[pos].dl);
        self.elements[pos].dl = new_dl;
        if moves_down {
            self.exchange_sift_down(pos);
        } else {
            self.exchange_sift_up(pos);
        }
    }

    /// The original `cpudl_set(cp, cpu, dl, is_valid)`. `cpu` must already be
    /// range-checked.
    fn exchange_set(&mut self, cpu: usize, dl: u64, is_valid: bool, placeholder: Placeholder) {
        let old_pos = self.position_of(cpu);
        if !is_valid {
            let Some(hole) = old_pos else { return };
            self.move_last_into(hole, cpu);
            // When the removed CPU sat in the last slot, `hole == size` now
            // and this sift starts on a slot outside the heap. In a valid heap
            // it cannot move (a child is never strictly after its parent), but
            // in a heap Orig has already broken it can, dragging the removed
            // CPU back in; the model keeps that behaviour.
            let settled = self.exchange_sift_up(hole);
            self.exchange_sift_down(settled);
            return;
        }
        match old_pos {
            None => {
                let pos = self.size;
                self.size += 1;
                self.elements[pos].dl = match placeholder {
                    Placeholder::Zero => 0,
                    Placeholder::NewDeadline => dl,
                };
                self.elements[pos].cpu = cpu as u32;
                self.elements[cpu].idx = pos as u32;
                self.change_key(pos, dl);
            }
            Some(pos) => self.change_key(pos, dl),
        }
    }
}

/// Declares one exchange-based variant; the two differ only in placeholder.
macro_rules! exchange_variant {
    ($(#[$doc:meta])* $name:ident, $variant:expr, $placeholder:expr) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            heap: HeapArray,
        }

        impl $name {
            /// An empty heap for CPUs `0..num_cpus`. Memory is
            /// `16 * num_cpus` bytes, allocated here once.
            #[must_use]
            pub fn new(num_cpus: u32) -> Self {
                Self {
                    heap: HeapArray::new(num_cpus),
                }
            }

            /// The original single-entry API: `is_valid == false` removes
            /// `cpu` (ignoring `dl`), otherwise inserts or re-keys it.
            pub fn set_with_validity(
                &mut self,
                cpu: u32,
                dl: u64,
                is_valid: bool,
            ) -> Result<(), CpudlError> {
                let cpu = self.heap.check_cpu(cpu)?;
                self.heap.exchange_set(cpu, dl, is_valid, $placeholder);
                Ok(())
            }
        }

        impl CpuDeadlineHeap for $name {
            fn variant(&self) -> Variant {
                $variant
            }

            fn set(&mut self, cpu: u32, dl: u64) -> Result<(), CpudlError> {
                self.set_with_validity(cpu, dl, true)
            }

            fn clear(&mut self, cpu: u32) -> Result<(), CpudlError> {
                self.set_with_validity(cpu, 0, false)
            }

            impl_heap_accessors!();
        }
    };
}

exchange_variant!(
    /// The original exchange-based heap with the wraparound bug: a new CPU
    /// enters with placeholder deadline 0, so a deadline `>= 2^63` (which is
    /// "before" 0 on the wrapping clock) sifts down from its leaf instead of
    /// up, and heap order breaks. Kept to reproduce the bug.
    Orig,
    Variant::Orig,
    Placeholder::Zero
);

exchange_variant!(
    /// The exchange-based heap with the wraparound fix: a new CPU's
    /// placeholder is its own deadline, so insertion always sifts up.
    Bugfix,
    Variant::Bugfix,
    Placeholder::NewDeadline
);

#[cfg(test)]
mod tests {
    use super::*;

    const HALF: u64 = 1 << 63;

    #[test]
    fn bugfix_keeps_the_latest_deadline_at_the_root() {
        let mut heap = Bugfix::new(4);
        for (cpu, dl) in [(0, 10), (1, 30), (2, 20), (3, 40)] {
            heap.set(cpu, dl).unwrap();
            heap.check_invariants().unwrap();
        }
        assert_eq!(heap.maximum(), Some((3, 40)));
        heap.clear(3).unwrap();
        assert_eq!(heap.maximum(), Some((1, 30)));
        heap.set(0, 50).unwrap();
        assert_eq!(heap.maximum(), Some((0, 50)));
        heap.set(0, 1).unwrap();
        assert_eq!(heap.maximum(), Some((1, 30)));
        heap.check_invariants().unwrap();
        heap.clear(3).unwrap();
        assert_eq!(heap.len(), 3);
    }

    #[test]
    fn orig_breaks_heap_order_above_two_to_the_63() {
        let mut heap = Orig::new(2);
        heap.set(0, HALF).unwrap();
        heap.set(1, HALF + 1).unwrap();
        assert!(matches!(
            heap.check_invariants(),
            Err(super::super::InvariantViolation::HeapOrder {
                parent_cpu: 0,
                child_cpu: 1,
                ..
            })
        ));
        assert_eq!(heap.maximum(), Some((0, HALF)));

        let mut fixed = Bugfix::new(2);
        fixed.set(0, HALF).unwrap();
        fixed.set(1, HALF + 1).unwrap();
        fixed.check_invariants().unwrap();
        assert_eq!(fixed.maximum(), Some((1, HALF + 1)));
    }

    #[test]
    fn orig_is_fine_below_two_to_the_63() {
        let mut heap = Orig::new(3);
        for (cpu, dl) in [(0, HALF - 3), (1, HALF - 2), (2, HALF - 1)] {
            heap.set(cpu, dl).unwrap();
        }
        heap.check_invariants().unwrap();
        assert_eq!(heap.maximum(), Some((2, HALF - 1)));
    }

    #[test]
    fn orig_removing_the_last_slot_of_a_broken_heap_resurrects_it() {
        // After the bug leaves cpu 1 (later) under cpu 0, removing cpu 1,
        // which sits in the last slot, sifts its stale slot up past cpu 0:
        // cpu 1 is back at the root and cpu 0 loses its position.
        let mut heap = Orig::new(2);
        heap.set(0, HALF).unwrap();
        heap.set(1, HALF + 1).unwrap();
        heap.clear(1).unwrap();
        let snap = heap.snapshot();
        assert_eq!(snap.size(), 1);
        assert_eq!(snap.slots[0].cpu, 1);
        assert_eq!(snap.idx, vec![None, Some(0)]);
        // The structure is self-consistent again, so the invariant checker
        // cannot see that the wrong CPU was removed; only a comparison with
        // the intended contents (or with Bugfix in lock step) can.
        heap.check_invariants().unwrap();
        assert_eq!(heap.deadline_of(0), None);
        assert_eq!(heap.deadline_of(1), Some(HALF + 1));
    }

    #[test]
    fn out_of_range_cpu_is_rejected_without_change() {
        let mut heap = Bugfix::new(2);
        heap.set(0, 1).unwrap();
        let before = heap.snapshot();
        assert_eq!(
            heap.set(2, 5),
            Err(CpudlError::CpuOutOfRange {
                cpu: 2,
                num_cpus: 2
            })
        );
        assert!(heap.clear(7).is_err());
        assert_eq!(heap.snapshot(), before);
        assert_eq!(heap.deadline_of(9), None);
    }

    #[test]
    fn zero_cpu_heap_rejects_everything() {
        let mut heap = Orig::new(0);
        assert!(heap.set(0, 1).is_err());
        assert!(heap.is_empty());
        assert_eq!(heap.maximum(), None);
        heap.check_invariants().unwrap();
    }
}
