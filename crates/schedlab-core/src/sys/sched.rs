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

/// The kernel's policy numbers (include/uapi/linux/sched.h).
pub mod policy {
    pub const OTHER: u32 = 0;
    pub const FIFO: u32 = 1;
    pub const RR: u32 = 2;
    pub const BATCH: u32 = 3;
    pub const IDLE: u32 = 5;
    pub const DEADLINE: u32 = 6;
}

/// A task's scheduling attributes, as it asks sched_setattr for them and as sched_getattr reads
/// them back ([`SchedPolicy`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SchedRequest {
    /// The kernel's number (0 SCHED_OTHER, 1 FIFO, 2 RR, 3 BATCH, 5 IDLE, 6 DEADLINE, 7 EXT); the
    /// fingerprint names it.
    pub policy: u32,
    /// -20 to 19; what SCHED_OTHER and SCHED_BATCH weigh by (the kernel reports it for every
    /// policy).
    pub nice: i32,
    /// 1 to 99 under SCHED_FIFO and SCHED_RR, else 0.
    pub rt_priority: u32,
    /// SCHED_DEADLINE's reservation, nanoseconds. Under the fair policies `runtime_ns` is the
    /// task's EEVDF slice (kernel 6.12 on; 0 before, and 0 asked for keeps the default slice).
    pub runtime_ns: u64,
    pub deadline_ns: u64,
    pub period_ns: u64,
}

/// Sets the calling thread's policy with sched_setattr, with SCHED_FLAG_RESET_ON_FORK, so that
/// nothing it might start inherits a real-time or deadline policy: the policy dies with the task.
pub fn set_current_sched(request: &SchedRequest) -> io::Result<()> {
    let mut attr = SchedAttr {
        size: std::mem::size_of::<SchedAttr>() as u32,
        sched_policy: request.policy,
        sched_flags: SCHED_FLAG_RESET_ON_FORK,
        sched_nice: request.nice,
        sched_priority: request.rt_priority,
        sched_runtime: request.runtime_ns,
        sched_deadline: request.deadline_ns,
        sched_period: request.period_ns,
        ..SchedAttr::default()
    };
    // SAFETY: pid 0 is the calling thread; `attr` is a valid sched_attr of the size it says, which
    // the kernel only reads; flags must be 0.
    let rc = unsafe { libc::syscall(libc::SYS_sched_setattr, 0, &mut attr as *mut SchedAttr, 0) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// What the kernel makes of `request` on this machine, asked before anything runs: a thread of
/// its own sets it on itself, reads back what took effect and exits, so the policy dies with it.
/// The error is sched_setattr's: EPERM without the privilege (CAP_SYS_NICE, RLIMIT_RTPRIO or
/// RLIMIT_NICE), EBUSY when SCHED_DEADLINE's admission test refuses the bandwidth, EINVAL for
/// parameters the kernel does not take.
pub fn probe_sched(request: SchedRequest) -> io::Result<SchedPolicy> {
    let thread = super::signal::with_interrupts_blocked(|| {
        std::thread::Builder::new()
            .name("schedlab-probe".into())
            .spawn(move || {
                set_current_sched(&request)?;
                current_sched_policy()
            })
    })?;
    thread
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("the probe thread panicked")))
}

/// What sched_getattr says of the calling thread: its attributes and whether they reset on fork.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedPolicy {
    pub attr: SchedRequest,
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
        attr: SchedRequest {
            policy: attr.sched_policy,
            nice: attr.sched_nice,
            rt_priority: attr.sched_priority,
            runtime_ns: attr.sched_runtime,
            deadline_ns: attr.sched_deadline,
            period_ns: attr.sched_period,
        },
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
            assert_eq!(before.attr.rt_priority, 0, "{before:?}");
            let nice = (before.attr.nice + 3).min(19);
            set_own_policy(3, nice).unwrap();
            let after = current_sched_policy().unwrap();
            assert_eq!(
                (after.attr.policy, after.attr.nice, after.attr.rt_priority),
                (3, nice, 0)
            );
            // A runtime of 0 asks for no custom slice, so the fair slice stays as it was.
            assert_eq!(after.attr.runtime_ns, before.attr.runtime_ns);
            assert_eq!((after.attr.deadline_ns, after.attr.period_ns), (0, 0));
            assert!(!after.reset_on_fork);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_probe_reports_what_took_effect_and_leaves_this_thread_alone() {
        let before = current_sched_policy().unwrap();
        let nice = (before.attr.nice + 2).min(19);
        let batch = SchedRequest {
            policy: policy::BATCH,
            nice,
            ..SchedRequest::default()
        };
        let got = probe_sched(batch).unwrap();
        assert_eq!((got.attr.policy, got.attr.nice), (policy::BATCH, nice));
        assert!(got.reset_on_fork, "{got:?}");
        assert_eq!(current_sched_policy().unwrap(), before);
        let fifo = SchedRequest {
            policy: policy::FIFO,
            rt_priority: 1,
            ..SchedRequest::default()
        };
        match probe_sched(fifo) {
            Ok(got) => assert_eq!((got.attr.policy, got.attr.rt_priority), (policy::FIFO, 1)),
            // Without CAP_SYS_NICE or an RLIMIT_RTPRIO.
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}"),
        }
        // Priority 100 is no FIFO priority, whoever asks.
        let bad = SchedRequest {
            rt_priority: 100,
            ..fifo
        };
        assert_eq!(
            probe_sched(bad).unwrap_err().raw_os_error(),
            Some(libc::EINVAL)
        );
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
