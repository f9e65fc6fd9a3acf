//! The map itself: per priority level an atomic count and bitmap (one shared, or one per NUMA
//! node), each CPU's level, and `find`.

use std::fmt;
use std::sync::atomic::{fence, AtomicI32, AtomicU64, AtomicU8, Ordering};

use super::mask::{bit_of, word_of, CpuMask, MAX_CPUS};

/// The kernel's `MAX_RT_PRIO`.
pub const MAX_RT_PRIO: u8 = 100;

/// Number of cpupri levels: `MAX_RT_PRIO + 1` (kernel `cpupri.h` since
/// v5.11: NORMAL = 0, RT1..RT99 = 1..=99, HIGHER = 100; INVALID is kept
/// outside the array).
pub const CPUPRI_NR_PRIORITIES: usize = MAX_RT_PRIO as usize + 1;

/// A valid cpupri level, `0..CPUPRI_NR_PRIORITIES`. Higher is more urgent.
/// The kernel's `CPUPRI_INVALID` is `Option::<CpuPri>::None` here.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CpuPri(u8);

impl CpuPri {
    /// `CPUPRI_NORMAL`: the CPU runs no RT task.
    pub const NORMAL: CpuPri = CpuPri(0);
    /// `CPUPRI_HIGHER`: above every RT level (used for deadline/stop tasks).
    pub const HIGHER: CpuPri = CpuPri(MAX_RT_PRIO);

    /// The level `level`, if below [`CPUPRI_NR_PRIORITIES`].
    #[must_use]
    pub const fn new(level: u8) -> Option<CpuPri> {
        if (level as usize) < CPUPRI_NR_PRIORITIES {
            Some(CpuPri(level))
        } else {
            None
        }
    }

    /// The level of an RT task with `rt_priority` 1..=99.
    #[must_use]
    pub const fn rt(rt_priority: u8) -> Option<CpuPri> {
        if rt_priority >= 1 && rt_priority < MAX_RT_PRIO {
            Some(CpuPri(rt_priority))
        } else {
            None
        }
    }

    /// The kernel's `convert_prio` for a kernel-internal `prio` 0..=100:
    /// 0..=98 map to RT99..RT1, 99 (`MAX_RT_PRIO - 1`) to NORMAL, 100 to
    /// HIGHER.
    #[must_use]
    pub const fn from_task_prio(prio: u8) -> Option<CpuPri> {
        match prio {
            0..=98 => Some(CpuPri(MAX_RT_PRIO - 1 - prio)),
            99 => Some(CpuPri::NORMAL),
            100 => Some(CpuPri::HIGHER),
            _ => None,
        }
    }

    /// The numeric level.
    #[must_use]
    pub const fn level(self) -> u8 {
        self.0
    }
}

impl fmt::Display for CpuPri {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            0 => f.write_str("NORMAL"),
            MAX_RT_PRIO => f.write_str("HIGHER"),
            rt => write!(f, "RT{rt}"),
        }
    }
}

/// Errors from building or updating a [`Cpupri`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpupriError {
    /// `nr_cpus` must be in `1..=MAX_CPUS`.
    #[error("nr_cpus {nr_cpus} is outside 1..={MAX_CPUS}")]
    BadCpuCount {
        /// The rejected count.
        nr_cpus: u32,
    },
    /// `nodes` must be in `1..=nr_cpus` so every node has a CPU.
    #[error("{nodes} NUMA nodes cannot be laid over {nr_cpus} CPUs (need 1..=nr_cpus)")]
    BadNodeCount {
        /// The rejected node count.
        nodes: u32,
        /// The CPU count.
        nr_cpus: u32,
    },
    /// A CPU id at or beyond `nr_cpus`.
    #[error("cpu {cpu} is out of range: the map covers {nr_cpus} CPUs")]
    CpuOutOfRange {
        /// The rejected CPU.
        cpu: u32,
        /// The map's CPU count.
        nr_cpus: u32,
    },
    /// A [`CpuOwner`] was asked to change a CPU it does not own.
    #[error("cpu {cpu} is not owned by this CpuOwner")]
    NotOwned {
        /// The rejected CPU.
        cpu: u32,
    },
}

/// CPUs `0..nr_cpus` spread over `nodes` NUMA nodes in contiguous blocks
/// whose sizes differ by at most one: CPU `c` is on node
/// `c * nodes / nr_cpus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct NumaTopology {
    nr_cpus: u32,
    nodes: u32,
}

impl NumaTopology {
    /// Validate and build; see [`CpupriError`] for the limits.
    pub fn new(nr_cpus: u32, nodes: u32) -> Result<Self, CpupriError> {
        if nr_cpus == 0 || nr_cpus > MAX_CPUS {
            return Err(CpupriError::BadCpuCount { nr_cpus });
        }
        if nodes == 0 || nodes > nr_cpus {
            return Err(CpupriError::BadNodeCount { nodes, nr_cpus });
        }
        Ok(Self { nr_cpus, nodes })
    }

    /// CPU count.
    #[must_use]
    pub const fn nr_cpus(&self) -> u32 {
        self.nr_cpus
    }

    /// Node count.
    #[must_use]
    pub const fn nodes(&self) -> u32 {
        self.nodes
    }

    /// Node of `cpu`, `None` when out of range.
    #[must_use]
    pub const fn node_of(&self, cpu: u32) -> Option<u32> {
        if cpu < self.nr_cpus {
            Some((cpu as u64 * self.nodes as u64 / self.nr_cpus as u64) as u32)
        } else {
            None
        }
    }

    /// CPUs of `node` (empty when out of range).
    #[must_use]
    pub fn cpus_of_node(&self, node: u32) -> CpuMask {
        if node >= self.nodes {
            return CpuMask::new();
        }
        // First CPU c with c * nodes / nr_cpus >= node, i.e. ceil(node * nr_cpus / nodes).
        let first_cpu = |n: u32| {
            (u64::from(n) * u64::from(self.nr_cpus)).div_ceil(u64::from(self.nodes)) as u32
        };
        CpuMask::range(first_cpu(node), first_cpu(node + 1))
    }
}

/// Where the per-level CPU bitmaps live.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// One bitmap per level (upstream).
    Shared,
    /// One bitmap per level per NUMA node (the per-node split).
    PerNode,
}

const CACHE_LINE: usize = 64;
const WORDS_PER_LINE: usize = CACHE_LINE / std::mem::size_of::<u64>();

/// Aligns and pads its content to a cache line so neighbours never share it.
#[repr(align(64))]
#[derive(Debug, Default)]
struct CacheAligned<T>(T);

/// A bitmap in whole cache lines, so no two bitmaps ever share a line.
#[derive(Debug)]
struct AtomicBitmap {
    lines: Box<[CacheAligned<[AtomicU64; WORDS_PER_LINE]>]>,
}

impl AtomicBitmap {
    fn new(words: usize, initial: impl Fn(usize) -> u64) -> Self {
        let lines = (0..words.div_ceil(WORDS_PER_LINE))
            .map(|line| {
                CacheAligned(std::array::from_fn(|i| {
                    let word = line * WORDS_PER_LINE + i;
                    AtomicU64::new(if word < words { initial(word) } else { 0 })
                }))
            })
            .collect();
        Self { lines }
    }

    #[inline]
    fn word(&self, index: usize) -> &AtomicU64 {
        &self.lines[index / WORDS_PER_LINE].0[index % WORDS_PER_LINE]
    }
}

/// `struct cpupri_vec`: the count on its own line (it is written on every
/// level change), the bitmaps separately aligned.
#[derive(Debug)]
struct PriorityVector {
    count: CacheAligned<AtomicI32>,
    /// One bitmap for [`Layout::Shared`], one per node for
    /// [`Layout::PerNode`].
    masks: CacheAligned<Box<[AtomicBitmap]>>,
}

/// Encoding of `CPUPRI_INVALID` in the `cpu_to_pri` bytes.
const INVALID_LEVEL: u8 = u8::MAX;

/// The CPU-priority map. All methods take `&self`; share it between threads
/// with `Arc` or scoped threads.
///
/// Concurrency contract (the kernel's): `set` for one CPU must not run
/// concurrently with another `set` for the *same* CPU (the kernel holds that
/// CPU's runqueue lock). `set` for different CPUs and any number of `find`s
/// may run at once. Breaking the contract cannot cause undefined behaviour,
/// only counts and bitmaps that disagree.
#[derive(Debug)]
pub struct Cpupri {
    topology: NumaTopology,
    layout: Layout,
    words: usize,
    vectors: Box<[PriorityVector]>,
    cpu_to_pri: Box<[AtomicU8]>,
    node_cpus: Box<[CpuMask]>,
}

impl Cpupri {
    /// A map with every CPU at `CPUPRI_INVALID`.
    pub fn new(topology: NumaTopology, layout: Layout) -> Self {
        let words = topology.nr_cpus().div_ceil(u64::BITS) as usize;
        let node_cpus: Box<[CpuMask]> = (0..topology.nodes())
            .map(|n| topology.cpus_of_node(n))
            .collect();
        let vectors = (0..CPUPRI_NR_PRIORITIES)
            .map(|_| {
                let masks = match layout {
                    Layout::Shared => vec![AtomicBitmap::new(words, |_| 0)],
                    Layout::PerNode => node_cpus
                        .iter()
                        .map(|own| {
                            let others =
                                CpuMask::first_n(topology.nr_cpus()).and(&complement(own, words));
                            AtomicBitmap::new(words, |w| others.word(w))
                        })
                        .collect(),
                };
                PriorityVector {
                    count: CacheAligned(AtomicI32::new(0)),
                    masks: CacheAligned(masks.into_boxed_slice()),
                }
            })
            .collect();
        let cpu_to_pri = (0..topology.nr_cpus())
            .map(|_| AtomicU8::new(INVALID_LEVEL))
            .collect();
        Self {
            topology,
            layout,
            words,
            vectors,
            cpu_to_pri,
            node_cpus,
        }
    }

    /// The topology given at construction.
    #[must_use]
    pub fn topology(&self) -> NumaTopology {
        self.topology
    }

    /// The bitmap layout.
    #[must_use]
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// CPU count.
    #[must_use]
    pub fn nr_cpus(&self) -> u32 {
        self.topology.nr_cpus()
    }

    fn mask_copy_of(&self, cpu: u32) -> usize {
        match self.layout {
            Layout::Shared => 0,
            Layout::PerNode => self.topology.node_of(cpu).unwrap_or(0) as usize,
        }
    }

    /// `cpupri_set`: move `cpu` to level `new_pri` (`None` = INVALID, i.e. not
    /// eligible for routing). See the type's concurrency contract.
    ///
    /// Ordering, as in the kernel: the new level's bit is set, then a full
    /// barrier, then its count is incremented, so a searcher that sees the
    /// count sees the bit. The old level is only dropped after the new one
    /// is visible (barrier, decrement count, barrier, clear bit), so a
    /// searcher scanning upwards while a CPU's priority rises sees the CPU at
    /// one level or the other, never at neither.
    pub fn set(&self, cpu: u32, new_pri: Option<CpuPri>) -> Result<(), CpupriError> {
        let slot = self
            .cpu_to_pri
            .get(cpu as usize)
            .ok_or(CpupriError::CpuOutOfRange {
                cpu,
                nr_cpus: self.nr_cpus(),
            })?;
        let new_level = new_pri.map_or(INVALID_LEVEL, CpuPri::level);
        // Only the CPU's single writer stores here, so a relaxed load reads
        // its own last store.
        let old_level = slot.load(Ordering::Relaxed);
        if new_level == old_level {
            return Ok(());
        }
        let (word, bit, copy) = (word_of(cpu), bit_of(cpu), self.mask_copy_of(cpu));
        let mut added = false;
        if new_level != INVALID_LEVEL {
            let vector = &self.vectors[new_level as usize];
            vector.masks.0[copy]
                .word(word)
                .fetch_or(bit, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            vector.count.0.fetch_add(1, Ordering::Relaxed);
            added = true;
        }
        if old_level != INVALID_LEVEL {
            let vector = &self.vectors[old_level as usize];
            if added {
                fence(Ordering::SeqCst);
            }
            vector.count.0.fetch_sub(1, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            vector.masks.0[copy]
                .word(word)
                .fetch_and(!bit, Ordering::Relaxed);
        }
        slot.store(new_level, Ordering::Relaxed);
        Ok(())
    }

    /// `cpupri_find` without a fitness callback, searching from node 0; see
    /// [`Cpupri::find_from_node`].
    pub fn find(
        &self,
        task_pri: CpuPri,
        allowed: &CpuMask,
        out_lowest: &mut CpuMask,
    ) -> Option<u32> {
        self.find_from_node(0, task_pri, allowed, out_lowest)
    }

    /// Scan levels `0..task_pri` from the lowest; at the first level whose
    /// count is non-zero and whose bitmap holds an allowed CPU, fill
    /// `out_lowest` with the allowed CPUs at that level and return the lowest
    /// of them. Returns `None` with `out_lowest` empty when no level below
    /// the task's qualifies.
    ///
    /// The bitmap is read twice per qualifying level, as in the kernel (an
    /// availability test, then the AND into `out_lowest`); if a concurrent
    /// `set` empties it in between, the level is skipped. With
    /// [`Layout::PerNode`] the availability test visits nodes starting at
    /// `start_node` (the searching CPU's node; taken modulo the node count),
    /// and `out_lowest` is the AND of every node's bitmap.
    pub fn find_from_node(
        &self,
        start_node: u32,
        task_pri: CpuPri,
        allowed: &CpuMask,
        out_lowest: &mut CpuMask,
    ) -> Option<u32> {
        out_lowest.clear();
        for vector in &self.vectors[..usize::from(task_pri.level())] {
            let count = vector.count.0.load(Ordering::Relaxed);
            // smp_rmb(): read the count before the bitmap. A stale non-zero
            // count only costs a wasted bitmap scan; a zero count with bits
            // set only happens while the CPU is leaving the level.
            fence(Ordering::Acquire);
            if count == 0 || !self.has_allowed_cpu(vector, allowed, start_node) {
                continue;
            }
            self.and_level_into(vector, allowed, out_lowest);
            if let Some(cpu) = out_lowest.first() {
                return Some(cpu);
            }
        }
        None
    }

    fn has_allowed_cpu(&self, vector: &PriorityVector, allowed: &CpuMask, start_node: u32) -> bool {
        let masks = &vector.masks.0;
        match self.layout {
            Layout::Shared => (0..self.words)
                .any(|w| allowed.word(w) & masks[0].word(w).load(Ordering::Relaxed) != 0),
            Layout::PerNode => {
                let nodes = masks.len();
                (0..nodes).any(|i| {
                    let node = (start_node as usize + i) % nodes;
                    let own = &self.node_cpus[node];
                    (0..self.words).any(|w| {
                        allowed.word(w) & masks[node].word(w).load(Ordering::Relaxed) & own.word(w)
                            != 0
                    })
                })
            }
        }
    }

    fn and_level_into(&self, vector: &PriorityVector, allowed: &CpuMask, out: &mut CpuMask) {
        let masks = &vector.masks.0;
        for w in 0..self.words {
            let level_word = masks
                .iter()
                .fold(u64::MAX, |acc, m| acc & m.word(w).load(Ordering::Relaxed));
            out.set_word(w, allowed.word(w) & level_word);
        }
    }

    /// Each CPU's current level as seen by a relaxed read (`None` =
    /// INVALID). Exact when no `set` is running.
    #[must_use]
    pub fn cpu_to_pri_snapshot(&self) -> Vec<Option<CpuPri>> {
        self.cpu_to_pri
            .iter()
            .map(|level| CpuPri::new(level.load(Ordering::Relaxed)))
            .collect()
    }

    /// The count of `level` (relaxed read).
    #[must_use]
    pub fn count(&self, level: CpuPri) -> i32 {
        self.vectors[usize::from(level.level())]
            .count
            .0
            .load(Ordering::Relaxed)
    }

    /// Check, with no `set` running, that each level's count and bitmaps
    /// agree with `cpu_to_pri`: the count equals the number of CPUs at the
    /// level, and every node bitmap holds exactly its own node's CPUs at the
    /// level plus (per-node layout) all other nodes' CPUs.
    pub fn check_quiescent(&self) -> Result<(), CpupriViolation> {
        let levels = self.cpu_to_pri_snapshot();
        for (level, vector) in self.vectors.iter().enumerate() {
            let at_level = CpuMask::from_cpus(
                (0..self.nr_cpus())
                    .filter(|&c| levels[c as usize].map(CpuPri::level) == Some(level as u8)),
            )
            .unwrap_or_default();
            let count = vector.count.0.load(Ordering::Relaxed);
            if i64::from(count) != i64::from(at_level.count()) {
                return Err(CpupriViolation::CountMismatch {
                    level: level as u8,
                    count,
                    cpus_at_level: at_level.count(),
                });
            }
            for (copy, bitmap) in vector.masks.0.iter().enumerate() {
                let expected = match self.layout {
                    Layout::Shared => at_level.clone(),
                    Layout::PerNode => {
                        let own = &self.node_cpus[copy];
                        at_level
                            .and(own)
                            .or(&CpuMask::first_n(self.nr_cpus()).and(&complement(own, self.words)))
                    }
                };
                for w in 0..self.words {
                    let actual = bitmap.word(w).load(Ordering::Relaxed);
                    let wrong = actual ^ expected.word(w);
                    if wrong != 0 {
                        let cpu = w as u32 * u64::BITS + wrong.trailing_zeros();
                        return Err(CpupriViolation::BitMismatch {
                            level: level as u8,
                            mask_copy: copy as u32,
                            cpu,
                            bit_set: actual & bit_of(cpu) != 0,
                        });
                    }
                }
            }
        }
        Ok(())
    }
}

/// The complement of `mask` over the first `words` words.
fn complement(mask: &CpuMask, words: usize) -> CpuMask {
    let mut out = CpuMask::new();
    for w in 0..words {
        out.set_word(w, !mask.word(w));
    }
    out
}

/// A disagreement found by [`Cpupri::check_quiescent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CpupriViolation {
    /// A level's count differs from the number of CPUs at that level.
    #[error("level {level}: count {count} but {cpus_at_level} CPUs are at that level")]
    CountMismatch {
        /// The level.
        level: u8,
        /// Its count.
        count: i32,
        /// CPUs whose `cpu_to_pri` is that level.
        cpus_at_level: u32,
    },
    /// A bitmap bit has the wrong value.
    #[error(
        "level {level}, bitmap {mask_copy}: bit of cpu {cpu} is wrong (currently set: {bit_set})"
    )]
    BitMismatch {
        /// The level.
        level: u8,
        /// Which bitmap (always 0 for the shared layout, else the node).
        mask_copy: u32,
        /// The CPU whose bit is wrong.
        cpu: u32,
        /// The bit's current value.
        bit_set: bool,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_constants_and_prio_conversion() {
        assert_eq!(CPUPRI_NR_PRIORITIES, 101);
        assert_eq!(CpuPri::from_task_prio(0), CpuPri::new(99));
        assert_eq!(CpuPri::from_task_prio(98), CpuPri::new(1));
        assert_eq!(CpuPri::from_task_prio(99), Some(CpuPri::NORMAL));
        assert_eq!(CpuPri::from_task_prio(100), Some(CpuPri::HIGHER));
        assert_eq!(CpuPri::from_task_prio(101), None);
        assert_eq!(CpuPri::new(101), None);
        assert_eq!(CpuPri::rt(0), None);
        assert_eq!(CpuPri::rt(99).map(CpuPri::level), Some(99));
        assert_eq!(CpuPri::HIGHER.to_string(), "HIGHER");
        assert_eq!(CpuPri::rt(5).unwrap().to_string(), "RT5");
    }

    #[test]
    fn topology_blocks_are_contiguous_and_balanced() {
        let topo = NumaTopology::new(10, 3).unwrap();
        let nodes: Vec<u32> = (0..10).map(|c| topo.node_of(c).unwrap()).collect();
        assert_eq!(nodes, vec![0, 0, 0, 0, 1, 1, 1, 2, 2, 2]);
        for n in 0..3 {
            let cpus: Vec<u32> = topo.cpus_of_node(n).iter().collect();
            assert!(cpus.iter().all(|&c| topo.node_of(c) == Some(n)), "{cpus:?}");
        }
        let total: u32 = (0..3).map(|n| topo.cpus_of_node(n).count()).sum();
        assert_eq!(total, 10);
        assert_eq!(topo.node_of(10), None);
        assert!(NumaTopology::new(0, 1).is_err());
        assert!(NumaTopology::new(4, 5).is_err());
        assert!(NumaTopology::new(MAX_CPUS + 1, 1).is_err());
    }

    #[test]
    fn bitmaps_do_not_share_cache_lines() {
        assert_eq!(
            std::mem::align_of::<CacheAligned<[AtomicU64; WORDS_PER_LINE]>>(),
            64
        );
        assert_eq!(std::mem::size_of::<CacheAligned<AtomicI32>>(), 64);
        let map = Cpupri::new(NumaTopology::new(8, 2).unwrap(), Layout::PerNode);
        let a = map.vectors[0].masks.0[0].word(0) as *const AtomicU64 as usize;
        let b = map.vectors[0].masks.0[1].word(0) as *const AtomicU64 as usize;
        assert_eq!(a % 64, 0);
        assert_eq!(b % 64, 0);
        assert_ne!(a / 64, b / 64);
    }

    #[test]
    fn find_picks_the_lowest_level_with_an_allowed_cpu() {
        for layout in [Layout::Shared, Layout::PerNode] {
            let map = Cpupri::new(NumaTopology::new(130, 3).unwrap(), layout);
            let rt = |p| CpuPri::rt(p);
            map.set(0, rt(50)).unwrap();
            map.set(70, Some(CpuPri::NORMAL)).unwrap();
            map.set(129, Some(CpuPri::NORMAL)).unwrap();
            map.set(5, rt(10)).unwrap();
            map.check_quiescent().unwrap();
            let mut out = CpuMask::new();
            let all = CpuMask::first_n(130);
            assert_eq!(map.find(rt(60).unwrap(), &all, &mut out), Some(70));
            assert_eq!(out, CpuMask::from_cpus([70, 129]).unwrap());
            let no_normal = CpuMask::from_cpus([0, 5, 6]).unwrap();
            assert_eq!(map.find(rt(60).unwrap(), &no_normal, &mut out), Some(5));
            assert_eq!(map.find(rt(10).unwrap(), &no_normal, &mut out), None);
            assert!(out.is_empty());
            assert_eq!(map.find(CpuPri::NORMAL, &all, &mut out), None);
            // Moving a CPU clears its old level.
            map.set(70, rt(20)).unwrap();
            map.set(129, None).unwrap();
            map.check_quiescent().unwrap();
            assert_eq!(map.count(CpuPri::NORMAL), 0);
            assert_eq!(
                map.find_from_node(2, rt(60).unwrap(), &all, &mut out),
                Some(5)
            );
            assert_eq!(
                map.set(130, None),
                Err(CpupriError::CpuOutOfRange {
                    cpu: 130,
                    nr_cpus: 130
                })
            );
        }
    }
}
