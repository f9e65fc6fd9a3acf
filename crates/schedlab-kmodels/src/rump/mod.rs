//! The rump kernel's scheduler (seed 003): host threads entering and leaving a virtual kernel at
//! every system call, each needing one of the kernel's virtual CPUs while inside. A rump kernel
//! schedules CPUs onto threads, not threads onto CPUs (the host scheduler already chose the
//! thread), and does it at every entry and exit, so the cost of taking and giving back a virtual
//! CPU is paid on every system call.
//!
//! Two schedulers, as NetBSD's `sys/rump/librump/rumpkern/scheduler.c` had them:
//!
//! - [`Freelist`]: the old one. One global list of free virtual CPUs under one lock with one
//!   condition variable: entering takes the lock and the first free CPU (sleeping while none is
//!   free), leaving takes the lock, puts the CPU back at the head and signals a sleeper. Every
//!   system call of every thread writes the lock's cache line twice, and the CPUs change hands in
//!   LIFO order, so their data moves between host CPUs too: the "cache crisis with multiple host
//!   threads trying to schedule a virtual CPU simultaneously".
//! - [`Cached`]: the one that replaced it. Each lwp remembers the CPU it last ran on; entering
//!   tries to take that CPU back with one compare-and-swap of the CPU's `prevlwp` word from the
//!   lwp itself to BUSY, on a cache line only this thread has touched since, with no lock ("the
//!   fast path"). When another lwp ran there since, or the CPU is busy, the slow path takes the
//!   CPU's own lock, marks it WANTED, migrates once to the next CPU round-robin, and otherwise
//!   waits on the CPU's condition variable. Leaving swaps the lwp back into `prevlwp`, and takes the
//!   lock to wake waiters only when it finds WANTED there.
//!
//! Inside the kernel a thread runs a system call's body on its CPU's data ([`VcpuData`]): a
//! holder word and a count of system calls, written with plain loads and stores, which is what a
//! kernel's per-CPU data costs a CPU's holder (nothing shared) and what catches two holders of one
//! CPU after the fact (a lost count, or a foreign holder seen). [`Occupancy`] checks exactly, after
//! every operation: every thread inside holds one CPU, no CPU is held twice.
//!
//! Like the rest of this crate: no clocks and no threads of its own; the workload that times it
//! (`schedlab run rump`) starts the host threads. Sleeping for a CPU uses `std::sync`'s mutex and
//! condition variable, futex-based on Linux as the pthread ones rumpuser uses.
//!
//! ```
//! use schedlab_kmodels::rump::{syscall, Cached, Lwp, VirtualKernel};
//!
//! let kernel = Cached::new(2);
//! let mut lwp = Lwp::new(1).expect("a valid lwp id");
//! assert!(syscall(&kernel, &mut lwp));
//! assert!(syscall(&kernel, &mut lwp));
//! // The first entry took the slow path; the second found its cached CPU free.
//! assert_eq!((lwp.stats.locked, lwp.stats.fast), (1, 1));
//! assert_eq!(kernel.vcpu(lwp.target()).syscalls(), 2);
//! kernel.check_quiescent()?;
//! # Ok::<(), schedlab_kmodels::rump::StateError>(())
//! ```

mod cached;
mod check;
mod freelist;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

pub use cached::Cached;
pub use check::{checked_syscall, Occupancy, Violation};
pub use freelist::Freelist;

/// The most virtual CPUs a kernel may have (rump's `MAXCPUS` is far lower; this bounds memory).
pub const MAX_VCPUS: usize = 4_096;

/// Which scheduler.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    Cached,
    Freelist,
}

impl Variant {
    pub const ALL: [Variant; 2] = [Variant::Cached, Variant::Freelist];

    pub fn name(self) -> &'static str {
        match self {
            Variant::Cached => "cached",
            Variant::Freelist => "freelist",
        }
    }
}

/// What one lwp's entries and exits did, counted by the scheduler as it goes (plain counters in
/// the lwp, which only its own thread touches).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LwpStats {
    /// Entries that took the cached CPU back with one compare-and-swap, no lock.
    pub fast: u64,
    /// Entries that took a lock: every entry of the freelist, the cached scheduler's slow path.
    pub locked: u64,
    /// Slow-path moves to another CPU (cached).
    pub migrations: u64,
    /// Times the lwp slept on a condition variable for a CPU.
    pub waits: u64,
    /// Exits that took a lock to wake threads waiting for the CPU (cached: WANTED was set;
    /// freelist: someone slept on the list).
    pub wakes: u64,
    /// Exits that found a state the algorithm never leaves (a CPU released that was not marked
    /// busy, an exit without a CPU): a broken scheduler; zero in every correct run.
    pub anomalies: u64,
}

impl LwpStats {
    /// The sum of two lwps' counts.
    pub fn add(&mut self, other: &LwpStats) {
        self.fast += other.fast;
        self.locked += other.locked;
        self.migrations += other.migrations;
        self.waits += other.waits;
        self.wakes += other.wakes;
        self.anomalies += other.anomalies;
    }
}

/// A light-weight process: one host thread's identity in the rump kernel, with the CPU it holds
/// while inside and the one it last ran on (`l_cpu` and `l_target_cpu`).
#[derive(Clone, Debug)]
pub struct Lwp {
    id: u32,
    target: usize,
    cpu: Option<usize>,
    pub stats: LwpStats,
}

impl Lwp {
    /// The lwp with this id: from 1 up to (not including) the two words the cached scheduler
    /// reserves for BUSY and WANTED. Every lwp starts targeting CPU 0, where the kernel booted.
    pub fn new(id: u32) -> Option<Lwp> {
        (id != NO_LWP && id < WANTED).then_some(Lwp {
            id,
            target: 0,
            cpu: None,
            stats: LwpStats::default(),
        })
    }

    pub fn id(&self) -> u32 {
        self.id
    }

    /// The CPU held while inside the kernel.
    pub fn cpu(&self) -> Option<usize> {
        self.cpu
    }

    /// The CPU an entry tries first (the last one run on).
    pub fn target(&self) -> usize {
        self.target
    }

    /// Counts an entry by an lwp already inside, which no correct caller makes.
    #[inline]
    fn check_outside(&mut self) {
        if self.cpu.is_some() {
            self.stats.anomalies += 1;
        }
    }

    /// The CPU an exiting lwp gives back; an exit without one is counted as an anomaly.
    #[inline]
    fn give_back(&mut self) -> Option<usize> {
        let cpu = self.cpu.take();
        if cpu.is_none() {
            self.stats.anomalies += 1;
        }
        cpu
    }
}

/// `prevlwp` of a CPU no lwp has run on; no lwp has id 0.
pub(crate) const NO_LWP: u32 = 0;
/// `prevlwp` of a CPU someone holds (`RCPULWP_BUSY`).
pub(crate) const BUSY: u32 = u32::MAX;
/// `prevlwp` of a held CPU someone waits for (`RCPULWP_WANTED`).
pub(crate) const WANTED: u32 = u32::MAX - 1;

/// A virtual CPU's own data, on the CPU's cache line: what a system call's body touches.
#[derive(Debug, Default)]
pub struct VcpuData {
    holder: AtomicU32,
    syscalls: AtomicU64,
}

impl VcpuData {
    /// A system call's body on this CPU by `lwp`: the holder word read (nobody) and written, the
    /// count incremented, the holder read back (itself) and cleared, all as plain loads and stores
    /// (the scheduler's acquire and release order them). Whether `lwp` was alone on the CPU.
    #[inline]
    pub fn run_syscall(&self, lwp: u32) -> bool {
        let before = self.holder.load(Ordering::Relaxed);
        self.holder.store(lwp, Ordering::Relaxed);
        let count = self.syscalls.load(Ordering::Relaxed);
        self.syscalls.store(count + 1, Ordering::Relaxed);
        let after = self.holder.load(Ordering::Relaxed);
        self.holder.store(NO_LWP, Ordering::Relaxed);
        before == NO_LWP && after == lwp
    }

    /// System calls run on this CPU so far.
    pub fn syscalls(&self) -> u64 {
        self.syscalls.load(Ordering::SeqCst)
    }
}

/// A scheduler's state that should not be there once every thread has left.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct StateError(pub String);

/// A rump kernel's CPU scheduler: `rump_schedule` and `rump_unschedule`.
pub trait VirtualKernel: Send + Sync {
    fn variant(&self) -> Variant;

    fn vcpus(&self) -> usize;

    /// Enters the kernel: a CPU for `lwp`, which must hold none; sleeps while none can be had.
    fn schedule(&self, lwp: &mut Lwp) -> usize;

    /// Leaves the kernel: gives back the CPU `lwp` holds.
    fn unschedule(&self, lwp: &mut Lwp);

    /// CPU `vcpu`'s data.
    fn vcpu(&self, vcpu: usize) -> &VcpuData;

    /// With every thread out of the kernel: every CPU free, nobody marked waiting, and (freelist)
    /// every CPU on the list once.
    fn check_quiescent(&self) -> Result<(), StateError>;

    /// System calls run on all CPUs.
    fn syscalls(&self) -> u64 {
        (0..self.vcpus()).map(|v| self.vcpu(v).syscalls()).sum()
    }
}

/// One system call: enter, run the body on the CPU got, leave. Whether the lwp was alone on its
/// CPU (see [`VcpuData::run_syscall`]).
#[inline]
pub fn syscall<K: VirtualKernel + ?Sized>(kernel: &K, lwp: &mut Lwp) -> bool {
    let vcpu = kernel.schedule(lwp);
    let alone = kernel.vcpu(vcpu).run_syscall(lwp.id);
    kernel.unschedule(lwp);
    alone
}

/// A value on cache lines of its own (128 bytes: adjacent-line prefetch pairs 64-byte lines).
#[derive(Debug, Default)]
#[repr(align(128))]
pub(crate) struct Padded<T>(pub T);

/// A lock that a panicking holder cannot make unusable: the models' state stays checkable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

pub(crate) fn wait<'a, T>(cv: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    cv.wait(guard).unwrap_or_else(PoisonError::into_inner)
}

/// The scheduler of `variant` with `vcpus` CPUs (1 to [`MAX_VCPUS`]), for callers that choose at
/// run time; the timed loop should use the concrete types.
pub fn build(variant: Variant, vcpus: usize) -> Box<dyn VirtualKernel> {
    match variant {
        Variant::Cached => Box::new(Cached::new(vcpus)),
        Variant::Freelist => Box::new(Freelist::new(vcpus)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lwp_ids_exclude_the_reserved_words() {
        assert!(Lwp::new(NO_LWP).is_none());
        assert!(Lwp::new(WANTED).is_none());
        assert!(Lwp::new(BUSY).is_none());
        assert_eq!(Lwp::new(WANTED - 1).map(|l| l.id()), Some(WANTED - 1));
    }

    #[test]
    fn a_syscall_body_sees_a_second_holder() {
        let data = VcpuData::default();
        assert!(data.run_syscall(3));
        data.holder.store(7, Ordering::Relaxed);
        assert!(!data.run_syscall(3));
        assert_eq!(data.syscalls(), 2);
    }

    #[test]
    fn both_variants_by_name() {
        for variant in Variant::ALL {
            let kernel = build(variant, 3);
            assert_eq!((kernel.variant(), kernel.vcpus()), (variant, 3));
            let mut lwp = Lwp::new(1).unwrap();
            for _ in 0..10 {
                assert!(syscall(kernel.as_ref(), &mut lwp));
            }
            assert_eq!(kernel.syscalls(), 10);
            kernel.check_quiescent().unwrap();
        }
        assert_eq!(Variant::Freelist.name(), "freelist");
    }
}
