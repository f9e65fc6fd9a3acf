//! Clocks and sleeping: CLOCK_MONOTONIC and CLOCK_REALTIME in nanoseconds, nanosleep with and
//! without resuming after signals, and the serialised time-stamp counter. Part of the audited OS
//! layer (`crate::sys`).

/// CLOCK_MONOTONIC in nanoseconds (rustix reads it through the vDSO, whatever the libc).
pub fn monotonic_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Wall-clock time in nanoseconds since the Unix epoch, for run start and end stamps.
pub fn realtime_ns() -> i64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
    ts.tv_sec * 1_000_000_000 + ts.tv_nsec
}

/// CPU time of the calling thread in nanoseconds (CLOCK_THREAD_CPUTIME_ID: a system call, as no
/// vDSO serves the CPU clocks). Unlike getrusage(RUSAGE_THREAD) it includes the time since the
/// scheduler last accounted the running thread, so it is exact to the call.
pub fn thread_cpu_ns() -> u64 {
    let ts = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Clock ticks per second (USER_HZ), the unit of /proc/stat's times: 100 on nearly every
/// architecture, but the kernel's ABI says to ask.
pub fn clock_ticks_per_sec() -> f64 {
    // SAFETY: sysconf only reads a system value.
    let ticks = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if ticks > 0 {
        ticks as f64
    } else {
        100.0
    }
}

pub(super) fn timespec_of_ns(ns: u64) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as i64,
    }
}

/// Sleeps `ns` nanoseconds, resuming after signals (usleep as a worker thread uses it).
pub fn sleep_ns(ns: u64) {
    let mut request = timespec_of_ns(ns);
    while let rustix::thread::NanosleepRelativeResult::Interrupted(left) =
        rustix::thread::nanosleep(&request)
    {
        request = left;
    }
}

/// Sleeps up to `ns` nanoseconds but returns early when a signal arrives (handlers are installed
/// without SA_RESTART); returns the nanoseconds left, 0 after a full sleep.
pub fn sleep_interruptible_ns(ns: u64) -> u64 {
    match rustix::thread::nanosleep(&timespec_of_ns(ns)) {
        rustix::thread::NanosleepRelativeResult::Interrupted(left) => {
            (left.tv_sec.max(0) as u64) * 1_000_000_000 + left.tv_nsec.max(0) as u64
        }
        _ => 0,
    }
}

/// Whether [`tsc_serialized`] reads the x86 time-stamp counter (else it reads the monotonic clock).
pub const HAS_TSC: bool = cfg!(target_arch = "x86_64");

/// The time-stamp counter read between two `lfence`s, so earlier instructions have finished and
/// later ones have not started (x86_64); elsewhere CLOCK_MONOTONIC in ns. See [`HAS_TSC`].
#[inline]
pub fn tsc_serialized() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_lfence, _rdtsc};
        // SAFETY: lfence and rdtsc exist on every x86_64 CPU and only read the counter.
        unsafe {
            _mm_lfence();
            let t = _rdtsc();
            _mm_lfence();
            t
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        monotonic_ns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monotonic_clock_advances() {
        let a = monotonic_ns();
        let b = monotonic_ns();
        assert!(b >= a);
    }

    #[test]
    fn thread_cpu_clock_counts_this_threads_work() {
        let before = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..2_000_000u64 {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        assert!(thread_cpu_ns() > before, "{x}");
    }
}
