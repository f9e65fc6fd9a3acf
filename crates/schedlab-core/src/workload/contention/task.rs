//! What every task of `contention` shares and does: the zero-filled block of shared memory (the
//! main thread's phase word, the locks' words, one slot of counters per task), the op loop that
//! counts ops into the task's slot, and how a task records why it failed.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;

use crate::sys::{self, task_code, FutexScope, SharedValue, TaskCode};

/// The most tasks of a testcase.
pub const MAX_TASKS: u64 = 4_096;
/// Counter slots in the shared block: every task has one, helpers (pipe readers) included.
pub(super) const SLOTS: usize = 2 * MAX_TASKS as usize;

/// What the tasks are doing, as the main thread says it: warming up (0, the zero-filled start),
/// measured, or told to stop.
pub(super) const MEASURE: u32 = 1;

pub(super) const STOP: u32 = 2;

sys::process_shared! {
    /// The main thread's word to the tasks, on a cache line of its own that the tasks only read
    /// until one fails.
    #[repr(C, align(128))]
    pub(super) struct Control {
        pub(super) phase: AtomicU32,
        /// Tasks that failed.
        pub(super) failed: AtomicU32,
    }
}

sys::process_shared! {
    /// The user-space locks' words, on a cache line of their own: `word` is tas's flag,
    /// futex-mutex's state and mcs's tail (the id of the last task queued, 0 for none); ticket's
    /// next ticket and the one served share the line, as in the kernel's old ticket spinlocks.
    /// What the critical section checks lies on the same line, as a lock embedded in the data it
    /// guards (pthread-mutex's lies beside the C library's mutex instead).
    #[repr(C, align(128))]
    pub(super) struct LockWords {
        pub(super) word: AtomicU32,
        pub(super) next_ticket: AtomicU32,
        pub(super) serving: AtomicU32,
        pub(super) guarded: Guarded,
    }
}

sys::process_shared! {
    /// What every critical section checks and changes. A user-space lock's lies on the lock's
    /// cache line, so a hand-over moves one line between CPUs, not two (with two, pthread-mutex
    /// at 4 threads on 2 CPUs ran at 0.63-0.75 of will-it-scale's pthread_mutex1, whose op
    /// touches only the mutex); fcntl-lock's, whose lock is the kernel's, on a line of its own
    /// ([`GuardedLine`]).
    #[derive(Default)]
    #[repr(C)]
    pub(super) struct Guarded {
        /// The id (task + 1) of the task inside, 0 when none is.
        pub(super) holder: AtomicU32,
        /// Incremented inside every critical section by a plain load and store.
        pub(super) counter: AtomicU64,
    }
}

sys::process_shared! {
    /// A critical section's words on a cache line of their own.
    #[repr(C, align(128))]
    pub(super) struct GuardedLine {
        pub(super) guarded: Guarded,
    }
}

sys::process_shared! {
    /// futex-wake-storm's futex word, which the waker bumps before every wake, and the waiters
    /// that have left.
    #[repr(C, align(128))]
    pub(super) struct Storm {
        pub(super) word: AtomicU32,
        pub(super) exited: AtomicU32,
    }
}

sys::process_shared! {
    /// One task's counters, on two cache lines of its own (adjacent-line prefetchers pair lines)
    /// so no task's counting disturbs another's, and the critical section of its own file on
    /// two more.
    #[repr(C, align(128))]
    pub(super) struct Slot {
        /// Ops so far, stored after every op, read by the main thread around the window.
        pub(super) ops: AtomicU64,
        /// Ops when the task ended.
        pub(super) total: AtomicU64,
        /// Why the task failed ([`Reason`]), 0 if it did not, and the errno of a failed call.
        pub(super) failure: AtomicU32,
        pub(super) errno: AtomicU32,
        /// The result of the critical sections' work, stored so no optimiser drops it.
        pub(super) sink: AtomicU64,
        /// A pipe reader's bytes read and the wrapping sum of the writer ids of its records.
        pub(super) bytes: AtomicU64,
        pub(super) ids: AtomicU64,
        /// The storm's waker: tasks its FUTEX_WAKE calls reported woken.
        pub(super) woken: AtomicU64,
        /// The task's MCS queue node: whether it must still wait, and its successor's id.
        pub(super) mcs_waiting: AtomicU32,
        pub(super) mcs_next: AtomicU32,
        /// `fcntl-lock --file-per-task`: the critical section of the task's own file.
        pub(super) own_file: GuardedLine,
    }
}

sys::process_shared! {
    /// Everything the tasks share, in a zero-filled mapping that forked tasks inherit.
    #[repr(C)]
    pub(super) struct Shared {
        pub(super) control: Control,
        pub(super) lock: LockWords,
        /// `fcntl-lock`'s critical section, of the one file all tasks lock.
        pub(super) file: GuardedLine,
        pub(super) storm: Storm,
        pub(super) slots: [Slot; SLOTS],
    }
}

/// Why a task failed: a call that returned an error (with its errno), or a check of the
/// testcase's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(super) enum Reason {
    Getppid = 1,
    SchedYield,
    Mmap,
    Munmap,
    RecordLock,
    RecordUnlock,
    PipeWrite,
    PipeRead,
    FutexWait,
    FutexWake,
    MutexLock,
    MutexUnlock,
    WrongParent,
    PageLost,
    TwoHolders,
    SplitRecord,
    UnknownWriter,
    PipeCreate,
    WrongByte,
    MisalignedMap,
}

impl Reason {
    const ALL: [Reason; 20] = [
        Reason::Getppid,
        Reason::SchedYield,
        Reason::Mmap,
        Reason::Munmap,
        Reason::RecordLock,
        Reason::RecordUnlock,
        Reason::PipeWrite,
        Reason::PipeRead,
        Reason::FutexWait,
        Reason::FutexWake,
        Reason::MutexLock,
        Reason::MutexUnlock,
        Reason::WrongParent,
        Reason::PageLost,
        Reason::TwoHolders,
        Reason::SplitRecord,
        Reason::UnknownWriter,
        Reason::PipeCreate,
        Reason::WrongByte,
        Reason::MisalignedMap,
    ];

    pub(super) fn of(code: u32) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| *r as u32 == code)
    }

    /// The call that failed, for reasons that are a failed call.
    pub(super) fn call(self) -> Option<&'static str> {
        match self {
            Reason::Getppid => Some("getppid"),
            Reason::SchedYield => Some("sched_yield"),
            Reason::Mmap => Some("mmap"),
            Reason::Munmap => Some("munmap"),
            Reason::RecordLock => Some("fcntl(F_OFD_SETLKW, F_WRLCK)"),
            Reason::RecordUnlock => Some("fcntl(F_OFD_SETLKW, F_UNLCK)"),
            Reason::PipeWrite => Some("write to the pipe"),
            Reason::PipeRead => Some("read from the pipe"),
            Reason::FutexWait => Some("FUTEX_WAIT"),
            Reason::FutexWake => Some("FUTEX_WAKE"),
            Reason::MutexLock => Some("pthread_mutex_lock"),
            Reason::MutexUnlock => Some("pthread_mutex_unlock"),
            Reason::PipeCreate => Some("pipe"),
            Reason::WrongParent
            | Reason::WrongByte
            | Reason::MisalignedMap
            | Reason::PageLost
            | Reason::TwoHolders
            | Reason::SplitRecord
            | Reason::UnknownWriter => None,
        }
    }

    pub(super) fn describe(self, errno: i32) -> String {
        if let Some(call) = self.call() {
            return format!(
                "{call} failed: {}",
                std::io::Error::from_raw_os_error(errno)
            );
        }
        match self {
            Reason::WrongParent => {
                "getppid returned another pid than the task's parent".to_string()
            }
            Reason::PageLost => {
                "a page of its mapping did not hold what the task wrote there".to_string()
            }
            Reason::TwoHolders => "another task was inside the critical section with it: the \
                                   lock let two holders in"
                .to_string(),
            Reason::SplitRecord => {
                "a read returned part of a record: a write was split or interleaved".to_string()
            }
            Reason::UnknownWriter => "a record carried no writer's id".to_string(),
            Reason::WrongByte => {
                "its own pipe gave back another byte than the one it wrote".to_string()
            }
            Reason::MisalignedMap => "mmap returned an address that is not page-aligned".to_string(),
            _ => unreachable!("calls are described above"),
        }
    }
}

/// A task's failure, as it records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Failure {
    pub(super) reason: Reason,
    pub(super) errno: i32,
}

impl Failure {
    pub(super) fn check(reason: Reason) -> Self {
        Failure { reason, errno: 0 }
    }

    pub(super) fn call(reason: Reason, e: &std::io::Error) -> Self {
        Failure {
            reason,
            errno: e.raw_os_error().unwrap_or(0),
        }
    }

    pub(super) fn code(self) -> TaskCode {
        if self.reason.call().is_some() {
            task_code::ERRNO_BASE.saturating_add(self.errno.clamp(0, 190) as u8)
        } else {
            task_code::VERIFY_FAILED
        }
    }
}

/// What a task knows: the run, the shared block and its own slot.
#[derive(Clone)]
pub(super) struct TaskCtx {
    pub(super) block: Arc<SharedValue<Shared>>,
    pub(super) me: usize,
    /// Of the futexes in the shared block.
    pub(super) scope: FutexScope,
}

impl TaskCtx {
    pub(super) fn shared(&self) -> &Shared {
        &self.block
    }

    pub(super) fn slot(&self) -> &Slot {
        &self.block.slots[self.me]
    }

    pub(super) fn stopping(&self) -> bool {
        self.shared().control.phase.load(Ordering::Relaxed) == STOP
    }
}

/// Runs `op` until the main thread says stop, counting ops into the task's slot: one relaxed
/// load of the shared phase and one relaxed store to the task's own cache line per op, as
/// will-it-scale's `(*iterations)++` on its per-task line.
#[inline(always)]
pub(super) fn op_loop(
    ctx: &TaskCtx,
    ops: &mut u64,
    mut op: impl FnMut() -> std::result::Result<(), Failure>,
) -> std::result::Result<(), Failure> {
    let slot = ctx.slot();
    while !ctx.stopping() {
        op()?;
        *ops += 1;
        slot.ops.store(*ops, Ordering::Relaxed);
    }
    Ok(())
}

/// Stores the task's total and, on failure, why; a failure stops every task.
pub(super) fn finish(ctx: &TaskCtx, ops: u64, result: std::result::Result<(), Failure>) -> TaskCode {
    let shared = ctx.shared();
    let slot = ctx.slot();
    slot.total.store(ops, Ordering::SeqCst);
    match result {
        Ok(()) => task_code::OK,
        Err(failure) => {
            slot.errno.store(failure.errno as u32, Ordering::SeqCst);
            slot.failure
                .store(failure.reason as u32, Ordering::SeqCst);
            shared.control.failed.fetch_add(1, Ordering::SeqCst);
            shared.control.phase.store(STOP, Ordering::SeqCst);
            // Whoever sleeps on a futex wakes and sees the stop.
            shared.storm.word.fetch_add(1, Ordering::SeqCst);
            let _ = sys::futex_wake_in(&shared.storm.word, i32::MAX as u32, ctx.scope);
            failure.code()
        }
    }
}
