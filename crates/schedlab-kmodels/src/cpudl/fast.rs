//! The hole-based heap ([`Fast`]): cpudl-bench's `cpudeadline-bugfix-fast.c`,
//! the form that went upstream. Each sift saves the moving item, shifts
//! parents or children into the hole, and writes the item once at the end.

use super::{
    dl_time_before, impl_heap_accessors, left_child, parent, right_child, CpuDeadlineHeap,
    CpudlError, HeapArray, Variant,
};

impl HeapArray {
    /// Copy slot `from` into slot `to` and point its CPU at `to`.
    #[inline]
    fn shift_into(&mut self, from: usize, to: usize) {
        let item = self.elements[from];
        self.elements[to].dl = item.dl;
        self.elements[to].cpu = item.cpu;
        self.elements[item.cpu as usize].idx = to as u32;
    }

    #[inline]
    fn place(&mut self, pos: usize, cpu: u32, dl: u64) {
        self.elements[pos].dl = dl;
        self.elements[pos].cpu = cpu;
        self.elements[cpu as usize].idx = pos as u32;
    }

    fn hole_sift_down(&mut self, mut pos: usize) {
        let (moving_cpu, moving_dl) = (self.elements[pos].cpu, self.elements[pos].dl);
        if left_child(pos) >= self.size {
            return;
        }
        loop {
            let (l, r) = (left_child(pos), right_child(pos));
            let mut largest = pos;
            let mut largest_dl = moving_dl;
            if l < self.size && dl_time_before(moving_dl, self.elements[l].dl) {
                largest = l;
                largest_dl = self.elements[l].dl;
            }
            if r < self.size && dl_time_before(largest_dl, self.elements[r].dl) {
                largest = r;
            }
            if largest == pos {
                break;
            }
            self.shift_into(largest, pos);
            pos = largest;
        }
        self.place(pos, moving_cpu, moving_dl);
    }

    /// Moves while the item is *not before* its parent, so on equal keys it
    /// climbs, unlike the exchange-based sift-up. This is the only behavioural
    /// difference from [`super::Bugfix`] on well-formed input.
    fn hole_sift_up(&mut self, mut pos: usize) {
        let (moving_cpu, moving_dl) = (self.elements[pos].cpu, self.elements[pos].dl);
        if pos == 0 {
            return;
        }
        while pos != 0 {
            let p = parent(pos);
            if dl_time_before(moving_dl, self.elements[p].dl) {
                break;
            }
            self.shift_into(p, pos);
            pos = p;
        }
        self.place(pos, moving_cpu, moving_dl);
    }

    fn hole_heapify(&mut self, pos: usize) {
        if pos > 0 && dl_time_before(self.elements[parent(pos)].dl, self.elements[pos].dl) {
            self.hole_sift_up(pos);
        } else {
            self.hole_sift_down(pos);
        }
    }

    fn fast_set(&mut self, cpu: usize, dl: u64) {
        match self.position_of(cpu) {
            None => {
                let pos = self.size;
                self.size += 1;
                self.place(pos, cpu as u32, dl);
                self.hole_sift_up(pos);
            }
            Some(pos) => {
                self.elements[pos].dl = dl;
                self.hole_heapify(pos);
            }
        }
    }

    fn fast_clear(&mut self, cpu: usize) {
        let Some(hole) = self.position_of(cpu) else {
            return;
        };
        self.move_last_into(hole, cpu);
        self.hole_heapify(hole);
    }
}

/// The hole-based heap with split `set`/`clear` (upstream form, wraparound
/// fix included).
#[derive(Clone, Debug)]
pub struct Fast {
    heap: HeapArray,
}

impl Fast {
    /// An empty heap for CPUs `0..num_cpus`. Memory is `16 * num_cpus`
    /// bytes, allocated here once.
    #[must_use]
    pub fn new(num_cpus: u32) -> Self {
        Self {
            heap: HeapArray::new(num_cpus),
        }
    }
}

impl CpuDeadlineHeap for Fast {
    fn variant(&self) -> Variant {
        Variant::Fast
    }

    fn set(&mut self, cpu: u32, dl: u64) -> Result<(), CpudlError> {
        let cpu = self.heap.check_cpu(cpu)?;
        self.heap.fast_set(cpu, dl);
        Ok(())
    }

    fn clear(&mut self, cpu: u32) -> Result<(), CpudlError> {
        let cpu = self.heap.check_cpu(cpu)?;
        self.heap.fast_clear(cpu);
        Ok(())
    }

    impl_heap_accessors!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpudl::Bugfix;

    #[test]
    fn keeps_the_latest_deadline_at_the_root() {
        let mut heap = Fast::new(5);
        for (cpu, dl) in [(0, 10), (1, 30), (2, 20), (3, 40), (4, 5)] {
            heap.set(cpu, dl).unwrap();
            heap.check_invariants().unwrap();
        }
        assert_eq!(heap.maximum(), Some((3, 40)));
        heap.clear(3).unwrap();
        heap.check_invariants().unwrap();
        assert_eq!(heap.maximum(), Some((1, 30)));
        heap.set(1, 0).unwrap();
        heap.check_invariants().unwrap();
        assert_eq!(heap.maximum(), Some((2, 20)));
        for cpu in 0..5 {
            heap.clear(cpu).unwrap();
            heap.check_invariants().unwrap();
        }
        assert!(heap.is_empty());
        assert_eq!(heap.maximum(), None);
    }

    #[test]
    fn equal_keys_climb_in_fast_but_not_in_bugfix() {
        let mut fast = Fast::new(2);
        let mut bugfix = Bugfix::new(2);
        for heap in [&mut fast as &mut dyn CpuDeadlineHeap, &mut bugfix] {
            heap.set(0, 7).unwrap();
            heap.set(1, 7).unwrap();
            heap.check_invariants().unwrap();
        }
        assert_eq!(fast.maximum(), Some((1, 7)));
        assert_eq!(bugfix.maximum(), Some((0, 7)));
    }
}
