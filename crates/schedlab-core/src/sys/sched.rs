//! The calling thread's scheduling policy and its parameters (nice, real-time priority, deadline
//! reservation), for the fingerprint: `chrt -f 50 schedlab run …` or `nice -n 19 schedlab run …`
//! change what every task of the run measures, and the tasks inherit them. Part of the audited
//! OS layer (`crate::sys`).
//!
//! One sched_getattr system call, made as `syscall(SYS_sched_getattr)` on purpose: glibc wraps it
//! only since 2.41, musl never, and musl's sched_getscheduler/sched_getparam fail with ENOSYS by
//! design (Linux applies them to one thread, POSIX to the process), so no libc call would work in
//! both builds.
use std::io;

/// The kernel's `struct sched_attr` (include/uapi/linux/sched/types.h) up to the utilisation
/// clamps (SCHED_ATTR_SIZE_VER1, 56 bytes). A kernel with a longer struct copies what fits.
#[repr(C)]
#[derive(Default)]
struct SchedAttr {
    size: u32,
    sched_policy: u32,
    sched_flags: u64,
    sched_nice: i32,
    sched_priority: u32,
    sched_runtime: u64,
    sched_deadline: u64,
    sched_period: u64,
    sched_util_min: u32,
    sched_util_max: u32,
}

/// SCHED_FLAG_RESET_ON_FORK: children start under SCHED_OTHER with nice 0 instead of inheriting.
const SCHED_FLAG_RESET_ON_FORK: u64 = 0x01;

/// What sched_getattr says of the calling thread. `policy` is the kernel's number (0 SCHED_OTHER,
/// 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE, 7 EXT); the fingerprint names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedPolicy {
    pub policy: u32,
    /// -20 to 19; what SCHED_OTHER and SCHED_BATCH weigh by (the kernel reports it for every
    /// policy).
    pub nice: i32,
    /// 1 to 99 under SCHED_FIFO and SCHED_RR, else 0.
    pub rt_priority: u32,
    /// SCHED_DEADLINE's reservation, nanoseconds. Under the fair policies `runtime_ns` is the
    /// task's EEVDF slice (kernel 6.12 on; 0 before), which sched_setattr may also set.
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
    pub reset_on_fork: bool,
}

/// The calling thread's policy; an error where the kernel has no sched_getattr (before 3.14) or a
/// seccomp filter refuses it, which the fingerprint records as unknown.
pub fn current_sched_policy() -> io::Result<SchedPolicy> {
    let mut attr = SchedAttr::default();
    let size = std::mem::size_of::<SchedAttr>() as u32;
    // SAFETY: pid 0 is the calling thread; `attr` is a valid, writable sched_attr of `size`
    // bytes, which is all the kernel writes; flags must be 0.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sched_getattr,
            0,
            &mut attr as *mut SchedAttr,
            size,
            0,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(SchedPolicy {
        policy: attr.sched_policy,
        nice: attr.sched_nice,
        rt_priority: attr.sched_priority,
        runtime_ns: attr.sched_runtime,
        deadline_ns: attr.sched_deadline,
        period_ns: attr.sched_period,
        reset_on_fork: attr.sched_flags & SCHED_FLAG_RESET_ON_FORK != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// sched_setattr on the calling thread, as a test sets a policy any user may choose.
    fn set_own_policy(policy: u32, nice: i32) -> io::Result<()> {
        let mut attr = SchedAttr {
            size: std::mem::size_of::<SchedAttr>() as u32,
            sched_policy: policy,
            sched_nice: nice,
            ..SchedAttr::default()
        };
        // SAFETY: pid 0 is the calling thread; `attr` is a valid sched_attr of the size it says.
        let rc =
            unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &mut attr as *mut SchedAttr, 0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    #[test]
    fn reads_a_policy_the_thread_was_given() {
        // A thread of its own, so the test's other threads keep their policy: SCHED_BATCH and a
        // higher nice are allowed to every user.
        std::thread::spawn(|| {
            let before = current_sched_policy().unwrap();
            assert_eq!(before.rt_priority, 0, "{before:?}");
            let nice = (before.nice + 3).min(19);
            set_own_policy(3, nice).unwrap();
            let after = current_sched_policy().unwrap();
            assert_eq!((after.policy, after.nice, after.rt_priority), (3, nice, 0));
            // A runtime of 0 asks for no custom slice, so the fair slice stays as it was.
            assert_eq!(after.runtime_ns, before.runtime_ns);
            assert_eq!((after.deadline_ns, after.period_ns), (0, 0));
            assert!(!after.reset_on_fork);
        })
        .join()
        .unwrap();
    }

    /// Why the call above is a raw system call: musl's wrappers refuse on purpose.
    #[cfg(target_env = "musl")]
    #[test]
    fn musls_sched_getscheduler_is_enosys() {
        // SAFETY: pid 0 is the caller; the call takes no pointer.
        let rc = unsafe { libc::sched_getscheduler(0) };
        assert_eq!(rc, -1);
        assert_eq!(
            io::Error::last_os_error().raw_os_error(),
            Some(libc::ENOSYS)
        );
    }
}
