//! The C library's pthread mutex, for the contention workload to measure the lock C programs take
//! (glibc's or musl's, whichever schedlab is linked with; the fingerprint names it). Rust's
//! `std::sync::Mutex` is a futex lock of Rust's own, not this one. Part of the audited OS layer
//! (`crate::sys`).
use std::cell::UnsafeCell;
use std::io;
use std::marker::PhantomData;

/// A default (normal, process-private) pthread mutex, as `PTHREAD_MUTEX_INITIALIZER` makes it
/// (will-it-scale's pthread_mutex tests), and data `T` on the same cache line: a critical section
/// that touches only the mutex and its data moves one line between CPUs per hand-over, as
/// will-it-scale's op (which touches only the mutex) does. Both live in a box of their own, since a
/// pthread mutex must not move once used. Only a [`PthreadGuard`] unlocks it, so it is never
/// unlocked by a thread that does not hold it. The mutex does not guard `data`: `T` is shared
/// as `&T` at any time, and a caller that wants exclusion (atomics read and written under the lock)
/// takes the lock itself.
pub struct PthreadMutex<T = ()> {
    inner: Box<WithData<T>>,
}

/// The mutex first, its data after it; aligned to a pair of cache lines (adjacent-line
/// prefetchers pair them) so no other allocation shares them.
#[repr(C, align(128))]
struct WithData<T> {
    mutex: UnsafeCell<libc::pthread_mutex_t>,
    data: T,
}

// SAFETY: a pthread mutex is made to be shared between threads; every access to it goes through
// the C library's own synchronisation. The data is moved with the box only if `T` may be.
unsafe impl<T: Send> Send for PthreadMutex<T> {}
// SAFETY: as above; the data is only ever lent out as `&T`, which `T: Sync` allows to share.
unsafe impl<T: Sync> Sync for PthreadMutex<T> {}

impl Default for PthreadMutex {
    fn default() -> Self {
        PthreadMutex::new()
    }
}

impl PthreadMutex {
    pub fn new() -> Self {
        PthreadMutex::with_data(())
    }
}

impl<T> PthreadMutex<T> {
    pub fn with_data(data: T) -> Self {
        PthreadMutex {
            inner: Box::new(WithData {
                mutex: UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER),
                data,
            }),
        }
    }

    /// The data on the mutex's cache line.
    pub fn data(&self) -> &T {
        &self.inner.data
    }

    /// pthread_mutex_lock: waits until this thread holds the mutex. An error is the C library's
    /// (a default mutex has none to give, but the code is checked).
    pub fn lock(&self) -> io::Result<PthreadGuard<'_, T>> {
        // SAFETY: the mutex is initialised and pinned in its box for as long as `self` lives.
        let rc = unsafe { libc::pthread_mutex_lock(self.inner.mutex.get()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(PthreadGuard {
            mutex: self,
            not_send: PhantomData,
        })
    }

    /// Only a guard calls this, on the thread that locked.
    fn unlock_held(&self) -> io::Result<()> {
        // SAFETY: called only by the guard of this thread's lock (guards are not Send), so the
        // calling thread holds the mutex, as pthread_mutex_unlock requires.
        let rc = unsafe { libc::pthread_mutex_unlock(self.inner.mutex.get()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }
}

impl<T> Drop for PthreadMutex<T> {
    fn drop(&mut self) {
        // SAFETY: `&mut self` means no guard (which borrows the mutex) is alive, so it is
        // unlocked; destroying an unlocked default mutex is defined.
        unsafe { libc::pthread_mutex_destroy(self.inner.mutex.get()) };
    }
}

/// The holding of a [`PthreadMutex`] by the thread that locked it; unlocks when dropped, or by
/// [`PthreadGuard::unlock`], which reports the result.
pub struct PthreadGuard<'a, T = ()> {
    mutex: &'a PthreadMutex<T>,
    /// Unlocking from another thread is undefined for a default mutex: a guard stays put.
    not_send: PhantomData<*const ()>,
}

impl<T> PthreadGuard<'_, T> {
    pub fn unlock(self) -> io::Result<()> {
        let mutex = self.mutex;
        std::mem::forget(self);
        mutex.unlock_held()
    }
}

impl<T> Drop for PthreadGuard<'_, T> {
    fn drop(&mut self) {
        let _ = self.mutex.unlock_held();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;

    #[test]
    fn the_mutex_excludes_and_unlocks() {
        let mutex = Arc::new(PthreadMutex::new());
        let inside = Arc::new(AtomicU64::new(0));
        let handles: Vec<_> = (0..3)
            .map(|_| {
                let (mutex, inside) = (Arc::clone(&mutex), Arc::clone(&inside));
                std::thread::spawn(move || {
                    for _ in 0..2_000 {
                        let guard = mutex.lock().unwrap();
                        assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders");
                        inside.fetch_sub(1, Ordering::SeqCst);
                        guard.unlock().unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        drop(mutex.lock().unwrap());
        mutex.lock().unwrap().unlock().unwrap();
    }

    #[test]
    fn small_data_shares_the_mutex_cache_line() {
        let mutex = PthreadMutex::with_data([AtomicU64::new(0), AtomicU64::new(0)]);
        let start = mutex.inner.mutex.get() as usize;
        let end = mutex.data() as *const _ as usize + std::mem::size_of::<[AtomicU64; 2]>();
        assert_eq!(start % 128, 0, "the mutex starts a line");
        assert!(
            end - start <= 64,
            "mutex and data span {} bytes",
            end - start
        );
        mutex.data()[1].store(7, Ordering::Relaxed);
        mutex.lock().unwrap().unlock().unwrap();
        assert_eq!(mutex.data()[1].load(Ordering::Relaxed), 7);
    }
}
