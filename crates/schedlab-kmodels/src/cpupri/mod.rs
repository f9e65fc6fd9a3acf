//! The RT push/pull CPU-priority map (`kernel/sched/cpupri.c`) as a
//! concurrent data structure: per priority level, an atomic count and a
//! bitmap of the CPUs currently at that level, plus each CPU's level.
//! `find` returns a CPU from the lowest level holding an allowed CPU, which
//! is where the RT scheduler pushes a waking task.
//!
//! Two bitmap layouts are modelled:
//!
//! - [`Layout::Shared`]: one bitmap per level on its own cache line
//!   (upstream). Every `set` anywhere writes the same lines every `find`
//!   reads.
//! - [`Layout::PerNode`]: one bitmap per level *per NUMA node*, each on its
//!   own cache lines (the 2025 per-node split proposed for high core counts).
//!   A CPU's bit lives only in its node's bitmap; every node's bitmap starts
//!   with all *other* nodes' bits set, so the AND of all nodes' bitmaps is
//!   the level's full CPU set, which is how `find` reconstructs it.
//!
//! [`reference`](mod@reference) holds a plain scan to check answers against and an
//! ownership scheme for checking answers while other threads write.
//!
//! ```
//! use schedlab_kmodels::cpupri::{CpuMask, CpuPri, Cpupri, Layout, NumaTopology};
//!
//! let map = Cpupri::new(NumaTopology::new(8, 2)?, Layout::PerNode);
//! map.set(3, Some(CpuPri::NORMAL))?;
//! map.set(5, CpuPri::rt(10))?;
//! let mut lowest = CpuMask::new();
//! let task = CpuPri::rt(20).expect("valid RT priority");
//! assert_eq!(map.find(task, &CpuMask::first_n(8), &mut lowest), Some(3));
//! assert_eq!(lowest, CpuMask::from_cpus([3])?);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod map;
pub mod mask;
pub mod reference;

pub use map::{
    CpuPri, Cpupri, CpupriError, CpupriViolation, Layout, NumaTopology, CPUPRI_NR_PRIORITIES,
    MAX_RT_PRIO,
};
pub use mask::{CpuBeyondMask, CpuMask, MAX_CPUS};
pub use reference::{
    check_find_answer, partition_blocks, partition_interleaved, reference_find, CpuOwner,
    FindMismatch, ReferenceAnswer,
};
