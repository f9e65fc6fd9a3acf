//! Real-time scheduling for the timer-latency workload: a thread's policy and priority
//! (sched_setscheduler on the calling thread), whether this process may take a policy at all
//! (tried on a throw-away thread, so no task of the run ever holds it), a thread's nice value,
//! and sleeping to an absolute CLOCK_MONOTONIC deadline (clock_nanosleep with TIMER_ABSTIME, as
//! cyclictest sleeps). Part of the audited OS layer (`crate::sys`).
//!
//! sched_setscheduler is `syscall(SYS_sched_setscheduler)` with pid 0, the calling thread: musl's
//! wrapper fails with ENOSYS on purpose (see the module's note), and Linux applies it to one
//! thread, which is what is wanted. A policy dies with its thread: nothing here changes the
//! process's other threads, and nothing survives the thread that took it.
use std::io;

/// SCHED_OTHER, the fair class (EEVDF).
pub const POLICY_OTHER: i32 = libc::SCHED_OTHER;
/// SCHED_FIFO.
pub const POLICY_FIFO: i32 = libc::SCHED_FIFO;
/// SCHED_RR.
pub const POLICY_RR: i32 = libc::SCHED_RR;

/// Gives the calling thread `policy` at `priority` (1 to 99 for FIFO and RR, 0 for OTHER).
pub fn set_current_thread_policy(policy: i32, priority: u32) -> io::Result<()> {
    // The kernel's struct sched_param is one int; musl's libc type adds SCHED_SPORADIC fields the
    // kernel never reads, so the int is passed as is, the same on glibc and musl.
    let param: libc::c_int = priority as libc::c_int;
    // SAFETY: pid 0 is the calling thread; `param` is the kernel's sched_param, read only.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_setscheduler,
            0,
            policy,
            &param as *const libc::c_int,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Whether a thread of this process may take `policy` at `priority` now: tried on a thread of its
/// own that ends right after, so the answer costs no task its policy. Fails with what the kernel
/// said (EPERM without CAP_SYS_NICE or a high enough RLIMIT_RTPRIO, or where the cgroup's
/// real-time bandwidth is 0).
pub fn try_policy(policy: i32, priority: u32) -> io::Result<()> {
    std::thread::Builder::new()
        .name("schedlab rt try".into())
        .spawn(move || set_current_thread_policy(policy, priority))?
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the trial thread panicked")))
}

/// Sets the calling thread's nice value (setpriority on its thread id: Linux keeps nice per
/// thread). Lowering it needs CAP_SYS_NICE.
pub fn set_current_thread_nice(nice: i32) -> io::Result<()> {
    let tid = super::current_tid();
    // SAFETY: setpriority takes only integers; `tid` is the calling thread's id.
    let rc = unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Sleeps until CLOCK_MONOTONIC reads `deadline_ns` (clock_nanosleep, TIMER_ABSTIME), returning at
/// once when it has passed. A signal ends the sleep early with `ErrorKind::Interrupted`; the caller
/// sleeps again to the same deadline.
#[inline]
pub fn sleep_until_ns(deadline_ns: u64) -> io::Result<()> {
    rustix::thread::clock_nanosleep_absolute(
        rustix::thread::ClockId::Monotonic,
        &super::time::timespec_of_ns(deadline_ns),
    )
    .map_err(io::Error::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_absolute_sleep_ends_at_its_deadline_and_a_past_one_at_once() {
        let start = super::super::monotonic_ns();
        sleep_until_ns(start + 2_000_000).unwrap();
        assert!(super::super::monotonic_ns() >= start + 2_000_000);
        let before = super::super::monotonic_ns();
        sleep_until_ns(start).unwrap();
        // A deadline in the past returns without sleeping (a generous bound: a loaded machine).
        assert!(super::super::monotonic_ns() - before < 1_000_000_000);
    }

    #[test]
    fn a_trial_leaves_the_caller_as_it_was() {
        let before = super::super::current_sched_policy().unwrap();
        // OTHER at priority 0 is allowed to everyone; FIFO 100 to no one.
        try_policy(POLICY_OTHER, 0).unwrap();
        let err = try_policy(POLICY_FIFO, 100).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EINVAL), "{err}");
        assert_eq!(super::super::current_sched_policy().unwrap(), before);
    }
}
