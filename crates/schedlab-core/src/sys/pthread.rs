//! The C library's pthread mutex, for the contention workload to measure the lock C programs take
//! (glibc's or musl's, whichever schedlab is linked with; the fingerprint names it). Rust's
//! `std::sync::Mutex` is a futex lock of Rust's own, not this one. Part of the audited OS layer
//! (`crate::sys`).
use std::cell::UnsafeCell;
use std::io;
use std::marker::PhantomData;

/// A default (normal, process-private) pthread mutex, as `PTHREAD_MUTEX_INITIALIZER` makes it
/// (will-it-scale's pthread_mutex tests). It lives in a box of its own, since a pthread mutex must
/// not move once used. Only a [`PthreadGuard`] unlocks it, so it is never unlocked by a thread
/// that does not hold it.
pub struct PthreadMutex {
    inner: Box<UnsafeCell<libc::pthread_mutex_t>>,
}

// SAFETY: a pthread mutex is made to be shared between threads; every access goes through the
// C library's own synchronisation.
unsafe impl Send for PthreadMutex {}
// SAFETY: as above.
unsafe impl Sync for PthreadMutex {}

impl Default for PthreadMutex {
    fn default() -> Self {
        PthreadMutex::new()
    }
}

impl PthreadMutex {
    pub fn new() -> Self {
        PthreadMutex {
            inner: Box::new(UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER)),
        }
    }

    /// pthread_mutex_lock: waits until this thread holds the mutex. An error is the C library's
    /// (a default mutex has none to give, but the code is checked).
    pub fn lock(&self) -> io::Result<PthreadGuard<'_>> {
        // SAFETY: the mutex is initialised and pinned in its box for as long as `self` lives.
        let rc = unsafe { libc::pthread_mutex_lock(self.inner.get()) };
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
        let rc = unsafe { libc::pthread_mutex_unlock(self.inner.get()) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(())
    }
}

impl Drop for PthreadMutex {
    fn drop(&mut self) {
        // SAFETY: `&mut self` means no guard (which borrows the mutex) is alive, so it is
        // unlocked; destroying an unlocked default mutex is defined.
        unsafe { libc::pthread_mutex_destroy(self.inner.get()) };
    }
}

/// The holding of a [`PthreadMutex`] by the thread that locked it; unlocks when dropped, or by
/// [`PthreadGuard::unlock`], which reports the result.
pub struct PthreadGuard<'a> {
    mutex: &'a PthreadMutex,
    /// Unlocking from another thread is undefined for a default mutex: a guard stays put.
    not_send: PhantomData<*const ()>,
}

impl PthreadGuard<'_> {
    pub fn unlock(self) -> io::Result<()> {
        let mutex = self.mutex;
        std::mem::forget(self);
        mutex.unlock_held()
    }
}

impl Drop for PthreadGuard<'_> {
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
}
