//! The global-freelist scheduler (NetBSD's rump scheduler before 2010): one list of free CPUs
//! under one lock and one condition variable for every host thread.
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};

use super::{lock, wait, Lwp, Padded, StateError, Variant, VcpuData, VirtualKernel, MAX_VCPUS};

/// The list and its sleepers, under `schedmtx`.
#[derive(Debug)]
struct FreeList {
    /// Free CPUs; the head (`LIST_FIRST`) is the last element.
    free: Vec<usize>,
    /// Threads sleeping on the condition variable for a CPU.
    waiters: u32,
}

/// The global-freelist scheduler.
#[derive(Debug)]
pub struct Freelist {
    /// `schedmtx` with the list and `schedcv`, on cache lines of their own.
    shared: Padded<(Mutex<FreeList>, Condvar)>,
    cpus: Box<[Padded<VcpuData>]>,
}

impl Freelist {
    /// A kernel of `vcpus` CPUs (1 to [`MAX_VCPUS`]), all on the list, CPU 0 at its head.
    pub fn new(vcpus: usize) -> Self {
        let vcpus = vcpus.clamp(1, MAX_VCPUS);
        Freelist::with_free_list(vcpus, &(0..vcpus).rev().collect::<Vec<_>>())
    }

    /// A kernel of `vcpus` CPUs whose list starts as `list`, head last: a correct list holds
    /// every CPU once; one holding a CPU twice (a doubled `LIST_INSERT_HEAD`) is a fault to plant
    /// for the checkers ([`crate::rump::Occupancy`], [`VirtualKernel::check_quiescent`]). CPUs
    /// outside `0..vcpus` are dropped.
    pub fn with_free_list(vcpus: usize, list: &[usize]) -> Self {
        let vcpus = vcpus.clamp(1, MAX_VCPUS);
        let mut free = Vec::with_capacity(list.len() + vcpus);
        free.extend(list.iter().copied().filter(|&v| v < vcpus));
        Freelist {
            shared: Padded((Mutex::new(FreeList { free, waiters: 0 }), Condvar::new())),
            cpus: (0..vcpus).map(|_| Padded(VcpuData::default())).collect(),
        }
    }
}

impl VirtualKernel for Freelist {
    fn variant(&self) -> Variant {
        Variant::Freelist
    }

    fn vcpus(&self) -> usize {
        self.cpus.len()
    }

    /// `rump_schedule_cpu`: the lock, the first free CPU (sleeping while there is none).
    #[inline]
    fn schedule(&self, lwp: &mut Lwp) -> usize {
        lwp.check_outside();
        lwp.stats.locked += 1;
        let (list, cv) = &self.shared.0;
        let mut state = lock(list);
        let v = loop {
            if let Some(v) = state.free.pop() {
                break v;
            }
            state.waiters += 1;
            lwp.stats.waits += 1;
            state = wait(cv, state);
            state.waiters -= 1;
        };
        drop(state);
        lwp.target = v;
        lwp.cpu = Some(v);
        v
    }

    /// `rump_unschedule_cpu`: the lock, the CPU back at the head, a sleeper signalled (glibc's
    /// pthread_cond_signal makes no system call without one; neither does this).
    #[inline]
    fn unschedule(&self, lwp: &mut Lwp) {
        let Some(v) = lwp.give_back() else {
            return;
        };
        let (list, cv) = &self.shared.0;
        let mut state = lock(list);
        // Never beyond its capacity (the list's start plus every CPU): no allocation.
        if state.free.len() < state.free.capacity() {
            state.free.push(v);
        } else {
            lwp.stats.anomalies += 1;
        }
        if state.waiters > 0 {
            lwp.stats.wakes += 1;
            cv.notify_one();
        }
    }

    fn vcpu(&self, vcpu: usize) -> &VcpuData {
        &self.cpus[vcpu].0
    }

    fn check_quiescent(&self) -> Result<(), StateError> {
        let state = lock(&self.shared.0 .0);
        if state.waiters != 0 {
            return Err(StateError(format!(
                "freelist: {} waiters counted with every thread out of the kernel",
                state.waiters
            )));
        }
        let mut free = state.free.clone();
        free.sort_unstable();
        if free != (0..self.cpus.len()).collect::<Vec<_>>() {
            return Err(StateError(format!(
                "freelist: with every thread out of the kernel the list holds {free:?}, not \
                 every one of the {} vCPUs once",
                self.cpus.len()
            )));
        }
        for (v, cpu) in self.cpus.iter().enumerate() {
            if cpu.0.holder.load(Ordering::SeqCst) != super::NO_LWP {
                return Err(StateError(format!("freelist: vCPU {v} names a holder")));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rump::syscall;

    #[test]
    fn cpus_come_off_the_head_and_go_back_on_it() {
        let kernel = Freelist::new(3);
        let (mut a, mut b) = (Lwp::new(1).unwrap(), Lwp::new(2).unwrap());
        assert_eq!(kernel.schedule(&mut a), 0);
        assert_eq!(kernel.schedule(&mut b), 1);
        kernel.unschedule(&mut b);
        kernel.unschedule(&mut a);
        // LIFO: the CPU given back last is the next one handed out, whoever asks.
        assert_eq!(kernel.schedule(&mut b), 0);
        kernel.unschedule(&mut b);
        assert!(syscall(&kernel, &mut a));
        assert_eq!((a.stats.locked, a.stats.fast, b.stats.locked), (2, 0, 2));
        kernel.check_quiescent().unwrap();
    }

    #[test]
    fn a_doubled_entry_fails_the_quiescent_check() {
        let kernel = Freelist::with_free_list(2, &[0, 0]);
        let err = kernel.check_quiescent().unwrap_err();
        assert!(err.0.contains("[0, 0]"), "{err}");
        assert!(Freelist::with_free_list(2, &[1, 0])
            .check_quiescent()
            .is_ok());
    }
}
