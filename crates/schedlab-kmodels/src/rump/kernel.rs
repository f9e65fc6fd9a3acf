//! What both schedulers share: the virtual CPU's data, the lwp that enters the kernel, the trait
//! a scheduler implements, one system call through it, and the locking helpers.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

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
    pub(crate) id: u32,
    pub(crate) target: usize,
    pub(crate) cpu: Option<usize>,
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
    pub(crate) fn check_outside(&mut self) {
        if self.cpu.is_some() {
            self.stats.anomalies += 1;
        }
    }

    /// The CPU an exiting lwp gives back; an exit without one is counted as an anomaly.
    #[inline]
    pub(crate) fn give_back(&mut self) -> Option<usize> {
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
    pub(crate) holder: AtomicU32,
    pub(crate) syscalls: AtomicU64,
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
