//! What a scenario's tasks share: one [`Common`] block (the start, the end, the mutexes and
//! barriers) and one [`TaskSlot`] per task (its wake-ups, the messages sent to it, and what it
//! reports at its end), each in an anonymous shared mapping made before the tasks are forked, so
//! that every task and the parent see the same words. Only atomics live here; futex words are
//! waited on process-shared.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::spec::{MAX_BARRIERS, MAX_MUTEXES, MAX_PHASES};
use crate::sys::{self, FutexScope};

/// Set in a wake-up word or a barrier's generation when the run is told to stop: a waiter sees
/// its word change and leaves.
pub const STOP_BIT: u32 = 1 << 31;

/// No end: the tasks run until their loops are done or they are told to stop.
pub const NO_END: u64 = u64::MAX;

/// Where a task is, or where it failed (`slot.stage`).
pub mod stage {
    pub const SETTING_AFFINITY: u32 = 1;
    pub const CALIBRATING: u32 = 2;
    pub const JOINING_CGROUP: u32 = 3;
    pub const SETTING_POLICY: u32 = 8;
    pub const READY: u32 = 4;
    pub const RUNNING: u32 = 5;
    pub const REPORTING: u32 = 6;
    pub const DONE: u32 = 7;
    /// Failed in phase `stage - PHASE`.
    pub const PHASE: u32 = 100;
}

sys::process_shared! {
    /// Drepper's three-state futex mutex ("Futexes Are Tricky", mutex3) and what checks it: the
    /// holder (task index + 1, 0 when free) and the acquisitions, counted inside with a plain
    /// load and store, so a lost exclusion shows as a count short of the lock phases done.
    #[repr(C, align(64))]
    pub struct FutexMutex {
        pub word: AtomicU32,
        pub holder: AtomicU32,
        pub acquisitions: AtomicU64,
    }
}

impl FutexMutex {
    pub fn lock(&self) -> std::io::Result<()> {
        let mut c = match self.word.compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed) {
            Ok(_) => return Ok(()),
            Err(c) => c,
        };
        if c != 2 {
            c = self.word.swap(2, Ordering::Acquire);
        }
        while c != 0 {
            sys::futex_wait_in(&self.word, 2, FutexScope::Shared)?;
            c = self.word.swap(2, Ordering::Acquire);
        }
        Ok(())
    }

    pub fn unlock(&self) -> std::io::Result<()> {
        if self.word.fetch_sub(1, Ordering::Release) != 1 {
            self.word.store(0, Ordering::Release);
            sys::futex_wake_in(&self.word, 1, FutexScope::Shared)?;
        }
        Ok(())
    }
}

sys::process_shared! {
    /// A reusable barrier: the last of `parties` to arrive resets the count, stamps the time and
    /// moves the generation on, which wakes the others.
    #[repr(C, align(64))]
    pub struct SharedBarrier {
        pub arrived: AtomicU32,
        pub generation: AtomicU32,
        pub released_ns: AtomicU64,
    }
}

sys::process_shared! {
    /// The scenario's shared state.
    #[repr(C)]
    pub struct Common {
        /// Tasks set up and waiting for the start (a futex word the parent waits on).
        pub ready: AtomicU32,
        /// 0 until the parent starts the run (a futex word the tasks wait on).
        pub go: AtomicU32,
        /// When the tasks start (all at once: CLOCK_MONOTONIC, ns) and when their loops end
        /// ([`NO_END`]: when told to stop).
        pub start_ns: AtomicU64,
        pub end_ns: AtomicU64,
        /// Tasks still in their loops: each waits for the last before it writes its results, so
        /// that none does so beside a task still measuring.
        pub running: AtomicU32,
        /// The first task that failed, as its index + 1.
        pub failed: AtomicU32,
        pub mutexes: [FutexMutex; MAX_MUTEXES],
        pub barriers: [SharedBarrier; MAX_BARRIERS],
    }
}

sys::process_shared! {
    /// One task's words: what others give it (wake-ups, messages), and its report.
    #[repr(C, align(64))]
    pub struct TaskSlot {
        /// Wake-ups posted and not yet taken, with [`STOP_BIT`]; the futex word of `wait`.
        pub tokens: AtomicU32,
        /// Whether the task is (about to be) asleep on `tokens`, so wakers call FUTEX_WAKE only
        /// then.
        pub waiting: AtomicU32,
        /// When the last wake-up was posted.
        pub wake_stamp_ns: AtomicU64,
        /// Wake-ups posted to it, and messages (with the sum of their tags) sent to it.
        pub posted: AtomicU64,
        pub sent: AtomicU64,
        pub sent_tags: AtomicU64,
        /// What a work unit costs where the task runs, picoseconds, and what a run costs besides
        /// its units, nanoseconds (its calibration).
        pub unit_ps: AtomicU64,
        pub fixed_ns: AtomicU64,
        /// Set once the calibration above is there (a futex word its group's tasks wait on).
        pub calibrated: AtomicU32,
        /// Where it is ([`stage`]), and the errno of a failed system call.
        pub stage: AtomicU32,
        pub errno: AtomicU32,
        /// Its report, written once at the end of its loops.
        pub loops: AtomicU64,
        pub done: [AtomicU64; MAX_PHASES],
        pub cpu_ns: AtomicU64,
        pub span_ns: AtomicU64,
        pub run_units: AtomicU64,
        pub run_requested_ns: AtomicU64,
        pub run_cpu_ns: AtomicU64,
        pub run_wall_ns: AtomicU64,
        pub periods: AtomicU64,
        pub missed: AtomicU64,
        pub taken: AtomicU64,
        pub received: AtomicU64,
        pub received_tags: AtomicU64,
        /// The work loops' result, stored so no optimiser may drop them.
        pub sink: AtomicU64,
    }
}

impl TaskSlot {
    /// Records where the task failed and why; the parent names it.
    pub fn fail(&self, stage: u32, error: &std::io::Error) {
        self.stage.store(stage, Ordering::SeqCst);
        let errno = error.raw_os_error().unwrap_or(0).max(0) as u32;
        self.errno.store(errno, Ordering::SeqCst);
    }
}
