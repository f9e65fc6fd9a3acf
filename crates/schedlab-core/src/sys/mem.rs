//! Memory of our own: the zero-page matrices of the wakeup workload, values in an anonymous shared
//! mapping that forked tasks inherit (with the `ProcessShared` types that may live there), and
//! the transfer buffers two threads take turns to fill. Part of the audited OS layer (`crate::sys`).
use std::io;

/// `u64` words in a private anonymous mapping of their own: zero-filled on first touch, and
/// pages that are only ever read stay mapped to the kernel's shared zero page, as with schbench's
/// untouched malloc'd matrices (a heap allocation may hand back memory that was touched before).
pub struct ZeroPageWords {
    ptr: std::ptr::NonNull<u64>,
    words: usize,
}

// SAFETY: the mapping is plain memory owned by this value alone; `&mut self` guards writes.
unsafe impl Send for ZeroPageWords {}

impl ZeroPageWords {
    /// Maps `words` u64s (at least one page); fails with ENOMEM where the memory cannot be had.
    pub fn new(words: usize) -> io::Result<Self> {
        let bytes = words
            .max(1)
            .checked_mul(8)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        let ptr = map_anonymous(bytes, rustix::mm::MapFlags::PRIVATE)?.cast::<u64>();
        Ok(ZeroPageWords { ptr, words })
    }

    /// Where the mapping starts, read without touching it.
    pub fn address(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: the mapping holds at least `words` u64s, is page-aligned, reads as zeros (valid
        // u64s) until written, and is borrowed mutably through `self` only.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words) }
    }

    /// Unmaps the words now and says whether munmap succeeded (dropping unmaps too, but cannot
    /// report a failure).
    pub fn unmap(self) -> io::Result<()> {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: ptr and the byte length describe exactly the mapping made in `new`; the
        // ManuallyDrop keeps `Drop` from unmapping it a second time, and `self` is consumed, so no
        // slice of it is left.
        unsafe { rustix::mm::munmap(this.ptr.as_ptr().cast(), this.words.max(1) * 8) }?;
        Ok(())
    }
}

/// A fresh read-write anonymous mapping of `len` bytes (> 0), zero-filled, page-aligned.
fn map_anonymous(len: usize, flags: rustix::mm::MapFlags) -> io::Result<std::ptr::NonNull<u8>> {
    use rustix::mm::{mmap_anonymous, ProtFlags};
    // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing aliases nothing.
    let ptr = unsafe {
        mmap_anonymous(
            std::ptr::null_mut(),
            len,
            ProtFlags::READ | ProtFlags::WRITE,
            flags,
        )?
    };
    std::ptr::NonNull::new(ptr.cast::<u8>())
        .ok_or_else(|| io::Error::other("mmap returned a null mapping"))
}

/// The size of a page in bytes (4 KiB on x86_64; 4, 16 or 64 KiB on arm64).
pub fn page_size() -> usize {
    // SAFETY: sysconf only reads a system value.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size)
        .ok()
        .filter(|&s| s > 0)
        .unwrap_or(4096)
}

impl Drop for ZeroPageWords {
    fn drop(&mut self) {
        // SAFETY: ptr and the byte length describe exactly the mapping made in `new`.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.words.max(1) * 8) };
    }
}

/// An anonymous `MAP_SHARED` read-write mapping, zero-filled; made before fork, the parent and its
/// children see the same pages (futex words in it work across processes). Unmapped on drop. Only
/// [`SharedValue`] looks inside, through a type that may live there.
#[derive(Debug)]
struct SharedMapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; what is stored in it and how it is
// synchronised (atomics only) is up to `SharedValue`, its one user.
unsafe impl Send for SharedMapping {}
// SAFETY: as above; `&SharedMapping` only hands out the raw pointer.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps `len` bytes (rounded up to whole pages by the kernel), page-aligned and zeroed.
    fn new(len: usize) -> io::Result<Self> {
        let len = len.max(1);
        let ptr = map_anonymous(len, rustix::mm::MapFlags::SHARED)?;
        Ok(SharedMapping { ptr, len })
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len describe exactly the mapping made in `new`, unmapped only here.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// The smallest page Linux uses on any architecture: a fresh mapping is aligned at least this much.
const MIN_PAGE_BYTES: usize = 4096;

/// Types that may live in memory shared with forked tasks ([`SharedValue`]): all-zero bytes are a
/// valid value, and every change goes through atomics, so there is nothing in them that points
/// into one process's private memory for another process to follow.
///
/// # Safety
/// Only for atomic integers, arrays of `ProcessShared` values, and structs whose every field is
/// `ProcessShared`; declare such a struct with [`process_shared!`], which checks its fields.
pub unsafe trait ProcessShared: Sync {}

macro_rules! process_shared_atomics {
    ($($atomic:ty),*) => {
        // SAFETY: zero is a valid value of every atomic integer, and atomics hold no pointers.
        $(unsafe impl ProcessShared for $atomic {})*
    };
}

process_shared_atomics!(
    std::sync::atomic::AtomicBool,
    std::sync::atomic::AtomicU8,
    std::sync::atomic::AtomicU16,
    std::sync::atomic::AtomicU32,
    std::sync::atomic::AtomicU64,
    std::sync::atomic::AtomicUsize,
    std::sync::atomic::AtomicI8,
    std::sync::atomic::AtomicI16,
    std::sync::atomic::AtomicI32,
    std::sync::atomic::AtomicI64,
    std::sync::atomic::AtomicIsize
);

// SAFETY: an array of zero-valid, atomics-only values is itself one (zero bytes, no padding).
unsafe impl<T: ProcessShared, const N: usize> ProcessShared for [T; N] {}

/// Declares a struct (named fields or a tuple struct, with its attributes) that may live in a
/// [`SharedValue`]: the struct as written, plus its [`ProcessShared`] impl, which compiles only
/// when every field is `ProcessShared` itself. This is how a workload gets that impl without
/// writing `unsafe` of its own.
macro_rules! process_shared {
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident {
            $($(#[$field_attr:meta])* $field_vis:vis $field:ident : $ty:ty),* $(,)?
        }
    ) => {
        $(#[$attr])*
        $vis struct $name {
            $($(#[$field_attr])* $field_vis $field: $ty,)*
        }
        $crate::sys::process_shared!(@impl $name: $($ty),*);
    };
    (
        $(#[$attr:meta])*
        $vis:vis struct $name:ident ( $($(#[$field_attr:meta])* $field_vis:vis $ty:ty),* $(,)? );
    ) => {
        $(#[$attr])*
        $vis struct $name ( $($(#[$field_attr])* $field_vis $ty,)* );
        $crate::sys::process_shared!(@impl $name: $($ty),*);
    };
    (@impl $name:ident: $($ty:ty),*) => {
        const _: () = {
            const fn field_is_process_shared<T: $crate::sys::ProcessShared>() {}
            $(field_is_process_shared::<$ty>();)*
        };
        // SAFETY: every field is `ProcessShared` (the checks above compile only then), so all-zero
        // bytes are a valid value of the struct (padding included) and it changes only through
        // atomics.
        #[allow(unsafe_code)]
        unsafe impl $crate::sys::ProcessShared for $name {}
    };
}
pub(crate) use process_shared;

/// One `T` in an anonymous shared mapping of its own, zero-filled: made before fork, the parent and
/// its children (and any threads) see and change the same value. Unmapped on drop.
pub struct SharedValue<T: ProcessShared> {
    map: SharedMapping,
    value: std::marker::PhantomData<T>,
}

impl<T: ProcessShared> SharedValue<T> {
    /// Maps a zeroed `T` (at least one page).
    pub fn new() -> io::Result<Self> {
        const { assert!(std::mem::align_of::<T>() <= MIN_PAGE_BYTES) };
        Ok(SharedValue {
            map: SharedMapping::new(std::mem::size_of::<T>())?,
            value: std::marker::PhantomData,
        })
    }
}

impl<T: ProcessShared> std::ops::Deref for SharedValue<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: the mapping is page-aligned (enough for `T`, checked in `new`), holds at least
        // size_of::<T>() bytes, was zero-filled at creation (a valid `T`, as `T: ProcessShared`)
        // and is only ever changed through `T`'s atomics; it lives as long as `self`.
        unsafe { &*self.map.ptr.as_ptr().cast::<T>() }
    }
}

/// A byte buffer two threads take turns to fill, handed from one to the other by synchronisation
/// outside it (the wakeup workload's pipe mode: a worker and its message thread, through the wake
/// list and the worker's futex). Plain memset-speed writes, not atomics, as schbench's memset.
///
/// Crate-private because [`TransferBuffer::fill`] is sound only under that hand-over: it is a safe
/// call whose callers promise never to overlap.
pub(crate) struct TransferBuffer {
    bytes: Box<[std::cell::UnsafeCell<u8>]>,
}

// SAFETY: access is handed over between exactly two threads by operations that order every
// access (see `fill`); no two accesses overlap in time.
unsafe impl Sync for TransferBuffer {}

impl TransferBuffer {
    pub(crate) fn new(len: usize) -> Self {
        TransferBuffer {
            bytes: (0..len).map(|_| std::cell::UnsafeCell::new(0)).collect(),
        }
    }

    /// Sets every byte to `value` (a memset) after checking that the first and last bytes hold
    /// `expect` (what the other side last wrote; `None` skips the check). Returns whether the
    /// check passed.
    ///
    /// Only the current owner may call this. In the wakeup workload: the worker between being
    /// woken (its futex consumed with SeqCst) and pushing itself onto the wake list (SeqCst), the
    /// message thread between taking the list (SeqCst) and posting the worker (SeqCst). Those
    /// operations order the accesses, so they never race.
    #[inline]
    pub(crate) fn fill(&self, expect: Option<u8>, value: u8) -> bool {
        let len = self.bytes.len();
        if len == 0 {
            return true;
        }
        let base = std::cell::UnsafeCell::raw_get(self.bytes.as_ptr());
        // SAFETY: `base` points at `len` bytes we own; the caller is the buffer's current owner
        // (see above), so no other thread reads or writes them meanwhile.
        unsafe {
            let ok = match expect {
                Some(e) => *base == e && *base.add(len - 1) == e,
                None => true,
            };
            std::ptr::write_bytes(base, value, len);
            ok
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_page_words_are_zero_writable_and_unmap() {
        let page_words = page_size() / 8;
        let mut words = ZeroPageWords::new(3 * page_words).unwrap();
        let slice = words.as_mut_slice();
        assert!(slice.iter().all(|&w| w == 0));
        slice[2 * page_words] = 7;
        assert_eq!(slice[2 * page_words], 7);
        words.unmap().unwrap();
        assert!(page_size().is_power_of_two() && page_size() >= 4096);
    }

    #[test]
    fn transfer_buffer_checks_the_other_side() {
        let b = TransferBuffer::new(4096);
        assert!(b.fill(None, 2));
        assert!(!b.fill(Some(1), 1), "still holds the worker's 2s");
        assert!(b.fill(Some(1), 2));
        assert!(TransferBuffer::new(0).fill(Some(9), 1));
    }
}
