//! What the three heap variants share: the kernel's element array and its invariants, the
//! snapshot and error types, the trait every variant implements, and the names of the variants.

use std::fmt;
use std::str::FromStr;

use super::Op;

/// `true` when deadline `a` is strictly earlier than `b` on the wrapping `u64`
/// clock (the kernel's `dl_time_before`: `(s64)(a - b) < 0`).
///
/// Two deadlines exactly `2^63` apart are each "before" the other; callers
/// that need a consistent order must keep live deadlines within a window
/// narrower than `2^63`.
#[inline]
#[must_use]
pub const fn dl_time_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

/// Marks "this CPU has no heap position" inside the element array; the
/// public API exposes it as `None`.
pub(crate) const NO_POSITION: u32 = u32::MAX;

#[inline]
pub(crate) const fn parent(pos: usize) -> usize {
    (pos - 1) / 2
}

#[inline]
pub(crate) const fn left_child(pos: usize) -> usize {
    2 * pos + 1
}

#[inline]
pub(crate) const fn right_child(pos: usize) -> usize {
    2 * pos + 2
}

/// One entry of the kernel's `struct cpudl_item` array. The array does double
/// duty: `dl`/`cpu` of entry `i` describe heap position `i`, while `idx` of
/// entry `c` is the heap position of CPU `c`. Keeping the kernel's layout
/// (16 bytes per entry) keeps the model's memory traffic comparable.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Element {
    pub(crate) dl: u64,
    pub(crate) cpu: u32,
    pub(crate) idx: u32,
}

/// Storage shared by all variants; the sift strategies live in the variant
/// modules.
#[derive(Clone, Debug)]
pub(crate) struct HeapArray {
    pub(crate) elements: Vec<Element>,
    pub(crate) size: usize,
}

impl HeapArray {
    pub(crate) fn new(num_cpus: u32) -> Self {
        let blank = Element {
            dl: 0,
            cpu: 0,
            idx: NO_POSITION,
        };
        Self {
            elements: vec![blank; num_cpus as usize],
            size: 0,
        }
    }

    pub(crate) fn num_cpus(&self) -> u32 {
        // Construction takes a u32, so the length always fits.
        self.elements.len() as u32
    }

    pub(crate) fn check_cpu(&self, cpu: u32) -> Result<usize, CpudlError> {
        if (cpu as usize) < self.elements.len() {
            Ok(cpu as usize)
        } else {
            Err(CpudlError::CpuOutOfRange {
                cpu,
                num_cpus: self.num_cpus(),
            })
        }
    }

    /// Removes `cpu` from the heap slot `hole` the way both upstream clears do: the last slot's
    /// element moves into the hole and the heap shrinks by one; the caller then restores order.
    pub(crate) fn move_last_into(&mut self, hole: usize, cpu: usize) {
        let last = self.size - 1;
        let moved = self.elements[last];
        self.elements[hole].dl = moved.dl;
        self.elements[hole].cpu = moved.cpu;
        self.size -= 1;
        self.elements[moved.cpu as usize].idx = hole as u32;
        self.elements[cpu].idx = NO_POSITION;
    }

    pub(crate) fn position_of(&self, cpu: usize) -> Option<usize> {
        match self.elements[cpu].idx {
            NO_POSITION => None,
            pos => Some(pos as usize),
        }
    }

    pub(crate) fn maximum(&self) -> Option<(u32, u64)> {
        (self.size > 0).then(|| (self.elements[0].cpu, self.elements[0].dl))
    }

    pub(crate) fn deadline_of(&self, cpu: u32) -> Option<u64> {
        let cpu = self.check_cpu(cpu).ok()?;
        self.position_of(cpu).map(|pos| self.elements[pos].dl)
    }

    pub(crate) fn snapshot(&self) -> HeapSnapshot {
        HeapSnapshot {
            slots: self.elements[..self.size]
                .iter()
                .map(|e| HeapSlot {
                    dl: e.dl,
                    cpu: e.cpu,
                })
                .collect(),
            idx: self
                .elements
                .iter()
                .map(|e| (e.idx != NO_POSITION).then_some(e.idx))
                .collect(),
        }
    }

    pub(crate) fn check_invariants(&self) -> Result<(), InvariantViolation> {
        self.snapshot().check_invariants()
    }
}

/// Errors from heap operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpudlError {
    /// The CPU id is not below the `num_cpus` the heap was built with.
    #[error("cpu {cpu} is out of range: the heap was built for {num_cpus} CPUs")]
    CpuOutOfRange {
        /// The rejected CPU id.
        cpu: u32,
        /// The heap's CPU count.
        num_cpus: u32,
    },
}

/// A broken heap invariant, naming the slot or CPU and the values involved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InvariantViolation {
    /// A heap slot names a CPU the heap was not built for.
    #[error("slot {slot} holds cpu {cpu}, outside 0..{num_cpus}")]
    SlotCpuOutOfRange {
        /// Heap position.
        slot: usize,
        /// CPU stored there.
        cpu: u32,
        /// The heap's CPU count.
        num_cpus: u32,
    },
    /// One CPU occupies two heap slots.
    #[error("cpu {cpu} occupies both slot {first_slot} and slot {second_slot}")]
    DuplicateCpu {
        /// The repeated CPU.
        cpu: u32,
        /// Its first heap position.
        first_slot: usize,
        /// Its second heap position.
        second_slot: usize,
    },
    /// A slot's CPU does not point back at that slot.
    #[error("slot {slot} holds cpu {cpu} but idx[{cpu}] = {idx:?}")]
    IdxMismatch {
        /// Heap position.
        slot: usize,
        /// CPU stored there.
        cpu: u32,
        /// What `idx[cpu]` says instead.
        idx: Option<u32>,
    },
    /// A CPU claims a heap position that does not hold it (or is not in the
    /// heap at all).
    #[error("idx[{cpu}] = {idx}, but size is {size} and that slot holds {slot_cpu:?}")]
    DanglingIdx {
        /// The CPU whose `idx` is wrong.
        cpu: u32,
        /// The position it claims.
        idx: u32,
        /// Current heap size.
        size: usize,
        /// The CPU actually at that position, if the position is in the heap.
        slot_cpu: Option<u32>,
    },
    /// The number of CPUs with a position differs from the heap size.
    #[error("{with_position} CPUs have a heap position but size is {size}")]
    CountMismatch {
        /// CPUs whose `idx` is `Some`.
        with_position: usize,
        /// Heap size.
        size: usize,
    },
    /// A parent's deadline is strictly earlier than its child's.
    #[error(
        "heap order: parent slot {parent_slot} (cpu {parent_cpu}, dl {parent_dl}) is before \
         child slot {child_slot} (cpu {child_cpu}, dl {child_dl})"
    )]
    HeapOrder {
        /// Parent position.
        parent_slot: usize,
        /// Parent CPU.
        parent_cpu: u32,
        /// Parent deadline.
        parent_dl: u64,
        /// Child position.
        child_slot: usize,
        /// Child CPU.
        child_cpu: u32,
        /// Child deadline.
        child_dl: u64,
    },
}

/// One live heap position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct HeapSlot {
    /// Deadline key.
    pub dl: u64,
    /// CPU occupying the slot.
    pub cpu: u32,
}

/// The logical state of a heap: the live slots (positions `< size`, so
/// `slots.len()` is the size) and every CPU's heap position.
///
/// Slots at positions `>= size` are deliberately left out. They hold
/// whatever the last removal left behind, which is not part of the heap's
/// meaning; the cpudl-bench debug dumps include them, so an empty diff of
/// those dumps is a slightly stronger statement than equality here. The one
/// place where stale slots matter is [`Orig`] removing the last slot of an
/// already broken heap: its sift-up then starts on the stale slot, and the
/// damage shows up in the logical state (a resurrected or lost CPU), which
/// this snapshot does capture.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HeapSnapshot {
    /// Live slots, heap position order.
    pub slots: Vec<HeapSlot>,
    /// `idx[cpu]`: heap position of each CPU, `None` when absent.
    pub idx: Vec<Option<u32>>,
}

impl HeapSnapshot {
    /// Number of CPUs in the heap.
    #[must_use]
    pub fn size(&self) -> usize {
        self.slots.len()
    }

    /// Deadline of each CPU as the `idx` array sees it (`None` when absent or
    /// when `idx` points outside the live slots).
    #[must_use]
    pub fn deadlines_by_cpu(&self) -> Vec<Option<u64>> {
        self.idx
            .iter()
            .map(|pos| pos.and_then(|p| self.slots.get(p as usize)).map(|s| s.dl))
            .collect()
    }

    /// Check the heap invariants on this state; see
    /// [`CpuDeadlineHeap::check_invariants`].
    pub fn check_invariants(&self) -> Result<(), InvariantViolation> {
        let num_cpus = self.idx.len();
        let size = self.slots.len();
        let mut first_slot_of_cpu: Vec<Option<usize>> = vec![None; num_cpus];
        for (slot, item) in self.slots.iter().enumerate() {
            let cpu = item.cpu as usize;
            if cpu >= num_cpus {
                return Err(InvariantViolation::SlotCpuOutOfRange {
                    slot,
                    cpu: item.cpu,
                    num_cpus: num_cpus as u32,
                });
            }
            if let Some(first_slot) = first_slot_of_cpu[cpu] {
                return Err(InvariantViolation::DuplicateCpu {
                    cpu: item.cpu,
                    first_slot,
                    second_slot: slot,
                });
            }
            first_slot_of_cpu[cpu] = Some(slot);
            if self.idx[cpu] != Some(slot as u32) {
                return Err(InvariantViolation::IdxMismatch {
                    slot,
                    cpu: item.cpu,
                    idx: self.idx[cpu],
                });
            }
        }
        let mut with_position = 0;
        for (cpu, pos) in self.idx.iter().enumerate() {
            let Some(pos) = *pos else { continue };
            with_position += 1;
            let slot_cpu = self.slots.get(pos as usize).map(|s| s.cpu);
            if slot_cpu != Some(cpu as u32) {
                return Err(InvariantViolation::DanglingIdx {
                    cpu: cpu as u32,
                    idx: pos,
                    size,
                    slot_cpu,
                });
            }
        }
        if with_position != size {
            return Err(InvariantViolation::CountMismatch {
                with_position,
                size,
            });
        }
        for child_slot in 1..size {
            let parent_slot = parent(child_slot);
            let (p, c) = (self.slots[parent_slot], self.slots[child_slot]);
            if dl_time_before(p.dl, c.dl) {
                return Err(InvariantViolation::HeapOrder {
                    parent_slot,
                    parent_cpu: p.cpu,
                    parent_dl: p.dl,
                    child_slot,
                    child_cpu: c.cpu,
                    child_dl: c.dl,
                });
            }
        }
        Ok(())
    }

    /// Render two states in adjacent columns, marking rows that differ with
    /// `*`, for reporting a divergence.
    #[must_use]
    pub fn side_by_side(&self, left_label: &str, other: &Self, right_label: &str) -> String {
        use fmt::Write as _;
        let mut out = String::new();
        let size_mark = if self.size() == other.size() {
            ' '
        } else {
            '*'
        };
        let left_header = format!("{left_label}: size={}", self.size());
        let _ = writeln!(
            out,
            "{size_mark} {left_header:<44} | {right_label}: size={}",
            other.size()
        );
        let slot_cell = |slots: &[HeapSlot], i: usize| {
            slots
                .get(i)
                .map_or_else(String::new, |s| format!("cpu {:>4} dl {}", s.cpu, Dl(s.dl)))
        };
        for i in 0..self.size().max(other.size()) {
            let (l, r) = (self.slots.get(i), other.slots.get(i));
            let mark = if l == r { ' ' } else { '*' };
            let _ = writeln!(
                out,
                "{mark} slot {i:>4}  {:<33} | {}",
                slot_cell(&self.slots, i),
                slot_cell(&other.slots, i)
            );
        }
        let idx_cell = |idx: &[Option<u32>], cpu: usize| match idx.get(cpu) {
            Some(Some(pos)) => pos.to_string(),
            Some(None) => "-".to_owned(),
            None => String::new(),
        };
        for cpu in 0..self.idx.len().max(other.idx.len()) {
            let mark = if self.idx.get(cpu) == other.idx.get(cpu) {
                ' '
            } else {
                '*'
            };
            let _ = writeln!(
                out,
                "{mark} idx[{cpu:>4}] {:<34} | {}",
                idx_cell(&self.idx, cpu),
                idx_cell(&other.idx, cpu)
            );
        }
        out
    }
}

/// Prints a deadline in decimal, and relative to `2^63` when it is near
/// there, because cpudl-bench's deadlines straddle `2^63` and the offsets are
/// what a reader can compare.
pub(crate) struct Dl(pub(crate) u64);

impl fmt::Display for Dl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let offset = self.0.wrapping_sub(1 << 63) as i64;
        if offset.unsigned_abs() < (1 << 40) {
            write!(f, "{} (2^63{offset:+})", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

impl fmt::Display for HeapSnapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "size={}", self.size())?;
        for (i, s) in self.slots.iter().enumerate() {
            writeln!(f, "slot {i:>4}: cpu {:>4} dl {}", s.cpu, Dl(s.dl))?;
        }
        for (cpu, pos) in self.idx.iter().enumerate() {
            match pos {
                Some(pos) => writeln!(f, "idx[{cpu:>4}] = {pos}")?,
                None => writeln!(f, "idx[{cpu:>4}] = -")?,
            }
        }
        Ok(())
    }
}

/// The common interface of the three heap variants.
///
/// CPU ids must be below the `num_cpus` given at construction; anything else
/// is rejected with [`CpudlError::CpuOutOfRange`] and leaves the heap
/// untouched.
pub trait CpuDeadlineHeap {
    /// Which variant this is.
    fn variant(&self) -> Variant;

    /// The CPU count fixed at construction.
    fn num_cpus(&self) -> u32;

    /// Give `cpu` deadline `dl`: insert it if absent, change its key if
    /// present (the kernel's `cpudl_set`, or `cpudl_set(cpu, dl, 1)` in the
    /// original API).
    fn set(&mut self, cpu: u32, dl: u64) -> Result<(), CpudlError>;

    /// Remove `cpu` from the heap; a no-op when it is absent (the kernel's
    /// `cpudl_clear`, or `cpudl_set(cpu, _, 0)` in the original API).
    fn clear(&mut self, cpu: u32) -> Result<(), CpudlError>;

    /// Number of CPUs in the heap.
    fn len(&self) -> usize;

    /// `true` when no CPU is in the heap.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The root: `(cpu, deadline)` of the CPU with the latest deadline, or
    /// `None` for an empty heap. On a heap whose invariants are broken (only
    /// [`Orig`] gets there) this is still the root, as the kernel would read
    /// it, not necessarily the latest deadline.
    fn maximum(&self) -> Option<(u32, u64)>;

    /// The deadline currently stored for `cpu`, `None` when absent or out of
    /// range.
    fn deadline_of(&self, cpu: u32) -> Option<u64>;

    /// Check, in this order: every slot's CPU is in range and appears once;
    /// `idx[slot.cpu]` is that slot; every `Some` idx points at a live slot
    /// holding that CPU (so the count of `Some` equals the size); no parent
    /// is strictly before one of its children.
    fn check_invariants(&self) -> Result<(), InvariantViolation>;

    /// The logical state; see [`HeapSnapshot`].
    fn snapshot(&self) -> HeapSnapshot;

    /// Apply one generated operation.
    fn apply(&mut self, op: Op) -> Result<(), CpudlError> {
        match op {
            Op::Set { cpu, dl } => self.set(cpu, dl),
            Op::Clear { cpu } => self.clear(cpu),
        }
    }
}

/// Implements the trait methods that only read the shared storage.
macro_rules! impl_heap_accessors {
    () => {
        fn num_cpus(&self) -> u32 {
            self.heap.num_cpus()
        }

        fn len(&self) -> usize {
            self.heap.size
        }

        fn maximum(&self) -> Option<(u32, u64)> {
            self.heap.maximum()
        }

        fn deadline_of(&self, cpu: u32) -> Option<u64> {
            self.heap.deadline_of(cpu)
        }

        fn check_invariants(&self) -> Result<(), $crate::cpudl::InvariantViolation> {
            self.heap.check_invariants()
        }

        fn snapshot(&self) -> $crate::cpudl::HeapSnapshot {
            self.heap.snapshot()
        }
    };
}
pub(crate) use impl_heap_accessors;

/// Names the three variants, for building a heap from a command-line choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Variant {
    /// [`Orig`]: exchange-based, placeholder 0 (wraparound bug).
    Orig,
    /// [`Bugfix`]: exchange-based, placeholder = new deadline.
    Bugfix,
    /// [`Fast`]: hole-based sifts.
    Fast,
}

impl Variant {
    /// All variants, in the order above.
    pub const ALL: [Variant; 3] = [Variant::Orig, Variant::Bugfix, Variant::Fast];

    /// Short lowercase name (`orig`, `bugfix`, `fast`).
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Variant::Orig => "orig",
            Variant::Bugfix => "bugfix",
            Variant::Fast => "fast",
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Error for an unknown variant name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown cpudl variant {0:?}: expected orig, bugfix or fast")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Variant::ALL
            .into_iter()
            .find(|v| v.name() == s)
            .ok_or_else(|| UnknownVariant(s.to_owned()))
    }
}
