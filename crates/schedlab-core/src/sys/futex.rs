//! Futexes on an `AtomicU32`: the private wait and wake of one process's threads, and the same in
//! either scope for words in memory shared across processes. Part of the audited OS layer
//! (`crate::sys`).
use std::io;

use rustix::io::Errno;

use super::time::timespec_of_ns;

/// FUTEX_WAIT_PRIVATE: sleeps while `word` holds `expected`; returns on a wake, a changed value,
/// a signal or the timeout (callers re-check their condition, as with any futex).
///
/// Never inlined, like `futex_wake`, so that the wakeup workload pays what schbench (through
/// glibc's `syscall()`) and real programs pay: after the syscall, a `ret` through a
/// return-stack-buffer entry the kernel has overwritten meanwhile. With an inlined syscall that
/// mispredict disappears; on a KVM guest with the spectre_v2 (RSB filling) and SRSO mitigations it
/// was about 1.1 µs of a 5 µs pipe-mode round trip, and schedlab read 1.1-1.2x schbench's rate.
#[inline(never)]
pub fn futex_wait(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    timeout_ns: Option<u64>,
) -> io::Result<()> {
    use rustix::thread::futex;
    let timeout = timeout_ns.map(timespec_of_ns);
    match futex::wait(word, futex::Flags::PRIVATE, expected, timeout.as_ref()) {
        Ok(()) | Err(Errno::AGAIN) | Err(Errno::INTR) | Err(Errno::TIMEDOUT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// FUTEX_WAKE_PRIVATE: wakes up to `count` threads sleeping on `word`; returns how many woke.
/// Never inlined, for the reason given at `futex_wait`.
#[inline(never)]
pub fn futex_wake(word: &std::sync::atomic::AtomicU32, count: u32) -> io::Result<usize> {
    use rustix::thread::futex;
    Ok(futex::wake(word, futex::Flags::PRIVATE, count)?)
}

/// Whether a futex word is used by the threads of one process (FUTEX_PRIVATE_FLAG, as glibc's
/// non-pshared semaphores) or by several processes over a shared mapping (no private flag).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FutexScope {
    Private,
    Shared,
}

impl FutexScope {
    fn flags(self) -> rustix::thread::futex::Flags {
        match self {
            FutexScope::Private => rustix::thread::futex::Flags::PRIVATE,
            FutexScope::Shared => rustix::thread::futex::Flags::empty(),
        }
    }
}

/// FUTEX_WAIT in either scope, no timeout: `Ok(true)` after sleeping until a wake, `Ok(false)` when
/// `word` no longer held `expected` (EAGAIN) or a signal interrupted (callers re-check either way).
/// Never inlined, for the reason given at `futex_wait`.
#[inline(never)]
pub fn futex_wait_in(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    scope: FutexScope,
) -> io::Result<bool> {
    match rustix::thread::futex::wait(word, scope.flags(), expected, None) {
        Ok(()) => Ok(true),
        Err(Errno::AGAIN) | Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// FUTEX_WAKE in either scope: wakes up to `count` tasks sleeping on `word`; returns how many woke.
/// Never inlined, for the reason given at `futex_wait`.
#[inline(never)]
pub fn futex_wake_in(
    word: &std::sync::atomic::AtomicU32,
    count: u32,
    scope: FutexScope,
) -> io::Result<usize> {
    Ok(rustix::thread::futex::wake(word, scope.flags(), count)?)
}

/// FUTEX_WAIT in either scope with an optional timeout (relative, nanoseconds): `Ok(true)` after
/// sleeping until a wake, `Ok(false)` when `word` no longer held `expected`, a signal interrupted
/// or the timeout passed (callers re-check their condition and the clock).
#[inline(never)]
pub fn futex_wait_until_in(
    word: &std::sync::atomic::AtomicU32,
    expected: u32,
    scope: FutexScope,
    timeout_ns: Option<u64>,
) -> io::Result<bool> {
    let timeout = timeout_ns.map(timespec_of_ns);
    match rustix::thread::futex::wait(word, scope.flags(), expected, timeout.as_ref()) {
        Ok(()) => Ok(true),
        Err(Errno::AGAIN) | Err(Errno::INTR) | Err(Errno::TIMEDOUT) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
