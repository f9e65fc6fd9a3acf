//! The synchronisation schbench is built from, in safe Rust over atomics and the futex wrappers
//! of `sys`: a post/wait futex pair, the lock-free wake list workers push themselves onto, the
//! open-loop request queue, and the per-CPU lock with the migration penalty. Pipe mode's transfer
//! buffers, which these hand over between a worker and its message thread, are
//! `sys::TransferBuffer`.
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};

use crate::sys;

/// The futex word of a thread that is (about to be) asleep.
pub const BLOCKED: u32 = 0;
/// The futex word of a thread that has been posted (or is running).
pub const RUNNING: u32 = 1;

/// schbench's fpost: if the owner is blocked, mark it running and wake it. Returns whether this
/// call did the wake (the caller stamps the wake time before calling, see `post_stamped`).
#[inline]
pub fn post(futex: &AtomicU32) -> bool {
    if futex
        .compare_exchange(BLOCKED, RUNNING, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        // A failed wake can only be EFAULT/EINVAL on a valid atomic, which cannot happen.
        let _ = sys::futex_wake(futex, 1);
        true
    } else {
        false
    }
}

/// schbench's fwait: sleeps until posted, then consumes the post (RUNNING → BLOCKED).
#[inline]
pub fn wait(futex: &AtomicU32) {
    loop {
        if futex
            .compare_exchange(RUNNING, BLOCKED, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
        let _ = sys::futex_wait(futex, BLOCKED, None);
    }
}

/// Like [`wait`], but gives up after `timeout_ns`; returns whether it was posted.
#[inline]
pub fn wait_timeout(futex: &AtomicU32, timeout_ns: u64) -> bool {
    if futex
        .compare_exchange(RUNNING, BLOCKED, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
    {
        return true;
    }
    let _ = sys::futex_wait(futex, BLOCKED, Some(timeout_ns));
    futex
        .compare_exchange(RUNNING, BLOCKED, Ordering::SeqCst, Ordering::SeqCst)
        .is_ok()
}

/// A message thread's list of workers waiting to be woken, as schbench's cmpxchg list: workers
/// push themselves (index + 1 in `head`, the link in their own `next`), the message thread takes
/// the whole list at once. Push-only plus take-all is free of the ABA problem. Both are SeqCst so
/// that, with the SeqCst futex operations around them, a message thread that marks itself blocked
/// and then finds the list empty cannot miss a worker that pushed itself and then saw it running.
pub struct WakeList {
    head: AtomicU32,
}

impl WakeList {
    pub fn new() -> Self {
        WakeList {
            head: AtomicU32::new(0),
        }
    }

    /// Pushes worker `index` whose link word is `next`.
    #[inline]
    pub fn push(&self, index: usize, next: &AtomicU32) {
        let me = index as u32 + 1;
        let mut old = self.head.load(Ordering::Relaxed);
        loop {
            next.store(old, Ordering::Relaxed);
            match self
                .head
                .compare_exchange_weak(old, me, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(current) => old = current,
            }
        }
    }

    /// Takes the whole list; walk it with [`WakeList::first`] and the workers' `next` words.
    #[inline]
    pub fn take(&self) -> u32 {
        self.head.swap(0, Ordering::SeqCst)
    }

    /// The worker index a list word names, or `None` at the end.
    #[inline]
    pub fn first(word: u32) -> Option<usize> {
        word.checked_sub(1).map(|i| i as usize)
    }
}

/// One worker's queue of pending requests in open-loop mode: a single-producer (its message
/// thread), single-consumer (the worker) ring of arrival times, preallocated.
pub struct RequestQueue {
    slots: Box<[AtomicU64]>,
    head: AtomicU64,
    tail: AtomicU64,
}

impl RequestQueue {
    pub fn new(capacity: usize) -> Self {
        RequestQueue {
            slots: (0..capacity).map(|_| AtomicU64::new(0)).collect(),
            head: AtomicU64::new(0),
            tail: AtomicU64::new(0),
        }
    }

    /// Producer side: queues `arrival_ns`; `false` when the queue is full.
    #[inline]
    pub fn push(&self, arrival_ns: u64) -> bool {
        let tail = self.tail.load(Ordering::Relaxed);
        let head = self.head.load(Ordering::Acquire);
        if tail - head >= self.slots.len() as u64 {
            return false;
        }
        self.slots[(tail % self.slots.len() as u64) as usize].store(arrival_ns, Ordering::Relaxed);
        self.tail.store(tail + 1, Ordering::Release);
        true
    }

    /// Consumer side: the oldest queued arrival time.
    #[inline]
    pub fn pop(&self) -> Option<u64> {
        let head = self.head.load(Ordering::Relaxed);
        let tail = self.tail.load(Ordering::Acquire);
        if head == tail {
            return None;
        }
        let value = self.slots[(head % self.slots.len() as u64) as usize].load(Ordering::Relaxed);
        self.head.store(head + 1, Ordering::Release);
        Some(value)
    }

    pub fn len(&self) -> u64 {
        self.tail.load(Ordering::Acquire) - self.head.load(Ordering::Acquire)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One CPU's lock, on its own cache line.
#[repr(align(64))]
pub struct CpuLock(AtomicBool);

impl CpuLock {
    pub fn new() -> Self {
        CpuLock(AtomicBool::new(false))
    }
}

/// schbench's lock_this_cpu: spin (with the CPU's pause hint) on a trylock of the lock of the CPU
/// we run on; if we were migrated while spinning, release it and start over. This is the
/// "preemption penalty": a thread preempted or migrated mid-request pays for it.
///
/// Unlike schbench, a spinner gives up (`None`) once `give_up` is set: when the iteration stops,
/// hundreds of workers on a few CPUs would otherwise spin behind preempted holders for a minute
/// (schbench `-m 20 -t 20` on 2 CPUs takes 74 s for a 2-s run) before they can be joined. The
/// check is a load in a loop that only waits, so the measured window is unchanged.
pub fn lock_this_cpu<'a>(locks: &'a [CpuLock], give_up: &AtomicBool) -> Option<&'a CpuLock> {
    loop {
        let cpu = sys::current_cpu();
        let lock = &locks[cpu % locks.len()];
        while lock
            .0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            if give_up.load(Ordering::Relaxed) {
                return None;
            }
            std::hint::spin_loop();
        }
        if sys::current_cpu() == cpu {
            return Some(lock);
        }
        lock.0.store(false, Ordering::Release);
    }
}

pub fn unlock(lock: &CpuLock) {
    lock.0.store(false, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn post_then_wait_returns_at_once() {
        let f = AtomicU32::new(BLOCKED);
        assert!(post(&f));
        assert!(!post(&f), "a second post finds it running");
        wait(&f);
        assert_eq!(f.load(Ordering::SeqCst), BLOCKED);
        assert!(!wait_timeout(&f, 1_000_000));
    }

    #[test]
    fn wait_sleeps_until_posted_by_another_thread() {
        let f = Arc::new(AtomicU32::new(BLOCKED));
        let g = Arc::clone(&f);
        let t = std::thread::spawn(move || wait(&g));
        std::thread::sleep(std::time::Duration::from_millis(20));
        post(&f);
        t.join().unwrap();
    }

    #[test]
    fn wake_list_takes_everyone_pushed() {
        let list = WakeList::new();
        let links: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(0)).collect();
        for i in [2, 0, 3] {
            list.push(i, &links[i]);
        }
        let mut word = list.take();
        let mut seen = Vec::new();
        while let Some(i) = WakeList::first(word) {
            seen.push(i);
            word = links[i].load(Ordering::Relaxed);
        }
        assert_eq!(seen, [3, 0, 2], "last pushed comes first, as in schbench");
        assert_eq!(list.take(), 0);
    }

    #[test]
    fn request_queue_is_fifo_and_bounded() {
        let q = RequestQueue::new(3);
        assert!(q.push(1) && q.push(2) && q.push(3));
        assert!(!q.push(4));
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop(), Some(1));
        assert!(q.push(4));
        assert_eq!(
            (q.pop(), q.pop(), q.pop(), q.pop()),
            (Some(2), Some(3), Some(4), None)
        );
        assert!(q.is_empty());
    }

    #[test]
    fn cpu_lock_is_exclusive_and_released() {
        let locks: Vec<CpuLock> = (0..4).map(|_| CpuLock::new()).collect();
        let go_on = AtomicBool::new(false);
        let held = lock_this_cpu(&locks, &go_on).unwrap();
        assert!(held.0.load(Ordering::SeqCst));
        unlock(held);
        assert!(locks.iter().all(|l| !l.0.load(Ordering::SeqCst)));
    }

    /// A waiter behind a holder that never lets go leaves once told to stop.
    #[test]
    fn a_spinner_gives_up_when_told_to_stop() {
        let locks = Arc::new(vec![CpuLock::new()]);
        let stop = Arc::new(AtomicBool::new(false));
        let held = lock_this_cpu(&locks, &stop).unwrap();
        let (l, s) = (Arc::clone(&locks), Arc::clone(&stop));
        let spinner = std::thread::spawn(move || lock_this_cpu(&l, &s).is_none());
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(!spinner.is_finished(), "it spins while the lock is held");
        stop.store(true, Ordering::Relaxed);
        assert!(spinner.join().unwrap(), "it gave up without the lock");
        assert!(held.0.load(Ordering::SeqCst), "the holder keeps it");
    }
}
