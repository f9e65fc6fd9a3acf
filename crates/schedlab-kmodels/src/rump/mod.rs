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
mod kernel;

pub use cached::Cached;
pub use check::{checked_syscall, Occupancy, Violation};
pub use freelist::Freelist;
pub(crate) use kernel::{lock, wait, Padded, BUSY, NO_LWP, WANTED};
pub use kernel::{syscall, Lwp, LwpStats, StateError, Variant, VcpuData, VirtualKernel, MAX_VCPUS};

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
    use std::sync::atomic::Ordering;

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
