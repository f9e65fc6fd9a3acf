//! The cached-CPU scheduler (NetBSD's rump scheduler since 2010): a lock-free fast path back onto
//! the CPU an lwp last ran on, a per-CPU lock, a single migration and a per-CPU condition
//! variable on the slow path.
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Condvar, Mutex};

use super::{
    lock, wait, Lwp, Padded, StateError, Variant, VcpuData, VirtualKernel, BUSY, MAX_VCPUS, NO_LWP,
    WANTED,
};

/// One virtual CPU (`struct rumpcpu`) on cache lines of its own: the word the fast path swaps,
/// the slow path's lock with the count of waiters it guards, their condition variable, and the
/// CPU's data.
#[derive(Debug, Default)]
#[repr(align(128))]
struct RumpCpu {
    /// The lwp that last ran here (free), [`BUSY`] or [`WANTED`] (held).
    prevlwp: AtomicU32,
    /// `rcpu_wanted`: threads sleeping on `cv` for this CPU.
    wanted: Mutex<u32>,
    cv: Condvar,
    data: VcpuData,
}

/// The cached-CPU scheduler.
#[derive(Debug)]
pub struct Cached {
    cpus: Box<[RumpCpu]>,
    /// The round-robin migration target (`nextcpu`), shared by every slow path.
    next_cpu: Padded<AtomicU32>,
}

impl Cached {
    /// A kernel of `vcpus` CPUs (1 to [`MAX_VCPUS`]), every one free and run on by nobody yet.
    pub fn new(vcpus: usize) -> Self {
        let vcpus = vcpus.clamp(1, MAX_VCPUS);
        Cached {
            cpus: (0..vcpus).map(|_| RumpCpu::default()).collect(),
            next_cpu: Padded(AtomicU32::new(0)),
        }
    }

    /// `getnextcpu()`: the next CPU round-robin.
    fn next_cpu(&self) -> usize {
        let next = self
            .next_cpu
            .0
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_add(1);
        next as usize % self.cpus.len()
    }
}

impl VirtualKernel for Cached {
    fn variant(&self) -> Variant {
        Variant::Cached
    }

    fn vcpus(&self) -> usize {
        self.cpus.len()
    }

    /// `rump_schedule_cpu_interlock` without an interlock.
    #[inline]
    fn schedule(&self, lwp: &mut Lwp) -> usize {
        lwp.check_outside();
        let mut v = lwp.target;
        // The fast path: we ran here last and nobody since, so the line is ours already.
        if self.cpus[v]
            .prevlwp
            .compare_exchange(lwp.id, BUSY, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            lwp.stats.fast += 1;
            lwp.cpu = Some(v);
            return v;
        }
        self.slow_path(lwp, &mut v);
        lwp.target = v;
        lwp.cpu = Some(v);
        v
    }

    /// `rump_unschedule_cpu1` without an interlock.
    #[inline]
    fn unschedule(&self, lwp: &mut Lwp) {
        let Some(v) = lwp.give_back() else {
            return;
        };
        let cpu = &self.cpus[v];
        // Release the CPU, remembering who ran here (membar_exit, then the swap).
        let old = cpu.prevlwp.swap(lwp.id, Ordering::Release);
        if old == BUSY {
            return;
        }
        if old != WANTED {
            lwp.stats.anomalies += 1;
            return;
        }
        // The "snailpath": someone marked it wanted; wake whoever sleeps for it.
        lwp.stats.wakes += 1;
        let wanted = lock(&cpu.wanted);
        if *wanted > 0 {
            cpu.cv.notify_all();
        }
    }

    fn vcpu(&self, vcpu: usize) -> &VcpuData {
        &self.cpus[vcpu].data
    }

    fn check_quiescent(&self) -> Result<(), StateError> {
        for (v, cpu) in self.cpus.iter().enumerate() {
            let prev = cpu.prevlwp.load(Ordering::SeqCst);
            if prev == BUSY || prev == WANTED {
                let what = if prev == BUSY { "busy" } else { "wanted" };
                return Err(StateError(format!(
                    "cached: vCPU {v} is still marked {what} with every thread out of the kernel"
                )));
            }
            let waiting = *lock(&cpu.wanted);
            if waiting != 0 {
                return Err(StateError(format!(
                    "cached: vCPU {v} counts {waiting} waiters with every thread out of the kernel"
                )));
            }
            if cpu.data.holder.load(Ordering::SeqCst) != NO_LWP {
                return Err(StateError(format!("cached: vCPU {v} names a holder")));
            }
        }
        Ok(())
    }
}

impl Cached {
    /// The slow path: under the CPU's lock, mark it WANTED; take it if it was free, else migrate
    /// once to the next CPU, else sleep until its holder leaves. `v` ends as the CPU taken.
    #[cold]
    fn slow_path(&self, lwp: &mut Lwp, v: &mut usize) {
        lwp.stats.locked += 1;
        let mut may_migrate = self.cpus.len() > 1;
        let mut cpu = &self.cpus[*v];
        let mut wanted = lock(&cpu.wanted);
        loop {
            let old = cpu.prevlwp.swap(WANTED, Ordering::AcqRel);
            // Free (an lwp's id, or nobody's): claim it. Only the holder of this lock writes
            // WANTED over a free CPU, and nobody else but a holder releasing writes at all, so the
            // exchange fails only in a broken model.
            if old != BUSY
                && old != WANTED
                && cpu
                    .prevlwp
                    .compare_exchange(WANTED, BUSY, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
            if may_migrate {
                may_migrate = false;
                lwp.stats.migrations += 1;
                drop(wanted);
                *v = self.next_cpu();
                cpu = &self.cpus[*v];
                wanted = lock(&cpu.wanted);
                continue;
            }
            *wanted += 1;
            lwp.stats.waits += 1;
            wanted = wait(&cpu.cv, wanted);
            *wanted -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rump::syscall;

    #[test]
    fn an_lwp_keeps_its_cpu_on_the_fast_path() {
        let kernel = Cached::new(4);
        let mut lwp = Lwp::new(5).unwrap();
        for _ in 0..100 {
            assert!(syscall(&kernel, &mut lwp));
        }
        assert_eq!(lwp.stats.locked, 1, "only the first entry is slow");
        assert_eq!(lwp.stats.fast, 99);
        assert_eq!(lwp.stats.anomalies, 0);
        assert_eq!(kernel.vcpu(0).syscalls(), 100);
        kernel.check_quiescent().unwrap();
    }

    #[test]
    fn a_second_lwp_migrates_off_a_busy_cpu_and_then_stays() {
        let kernel = Cached::new(2);
        let (mut a, mut b) = (Lwp::new(1).unwrap(), Lwp::new(2).unwrap());
        assert_eq!(kernel.schedule(&mut a), 0);
        // CPU 0 is busy: b marks it wanted, migrates to CPU 1 and takes it.
        assert_eq!(kernel.schedule(&mut b), 1);
        assert_eq!((b.stats.migrations, b.stats.waits), (1, 0));
        kernel.unschedule(&mut b);
        // a finds CPU 0 wanted on the way out: the lock path that wakes waiters.
        kernel.unschedule(&mut a);
        assert_eq!(a.stats.wakes, 1);
        for _ in 0..10 {
            assert!(syscall(&kernel, &mut a));
            assert!(syscall(&kernel, &mut b));
        }
        assert_eq!((a.target(), b.target()), (0, 1));
        assert_eq!((a.stats.fast, b.stats.fast), (10, 10));
        kernel.check_quiescent().unwrap();
    }

    #[test]
    fn another_lwp_on_a_cpu_sends_the_owner_down_the_slow_path() {
        let kernel = Cached::new(1);
        let (mut a, mut b) = (Lwp::new(1).unwrap(), Lwp::new(2).unwrap());
        assert!(syscall(&kernel, &mut a));
        assert!(syscall(&kernel, &mut b));
        assert!(syscall(&kernel, &mut a));
        // One CPU: never a migration; each entry after the other lwp is a locked one.
        assert_eq!(
            (a.stats.locked, a.stats.fast, a.stats.migrations),
            (2, 0, 0)
        );
        assert!(syscall(&kernel, &mut a));
        assert_eq!(a.stats.fast, 1);
    }

    #[test]
    fn a_stuck_busy_mark_is_reported() {
        let kernel = Cached::new(2);
        let mut a = Lwp::new(1).unwrap();
        kernel.schedule(&mut a);
        let err = kernel.check_quiescent().unwrap_err();
        assert!(err.0.contains("vCPU 0 is still marked busy"), "{err}");
        kernel.unschedule(&mut a);
        kernel.check_quiescent().unwrap();
        // Leaving without a CPU is an anomaly, not a crash.
        kernel.unschedule(&mut a);
        assert_eq!(a.stats.anomalies, 1);
    }
}
