//! Memory mappings of our own: the zero-page matrices of the wakeup workload and the anonymous
//! shared mapping that forked tasks inherit. Part of the audited OS layer (`crate::sys`).
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
        use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
        let bytes = words
            .max(1)
            .checked_mul(8)
            .ok_or_else(|| io::Error::from_raw_os_error(libc::ENOMEM))?;
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing aliases nothing.
        let ptr = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                bytes,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE,
            )?
        };
        let ptr = std::ptr::NonNull::new(ptr.cast::<u64>())
            .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(ZeroPageWords { ptr, words })
    }

    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        // SAFETY: the mapping holds at least `words` u64s, is page-aligned, reads as zeros (valid
        // u64s) until written, and is borrowed mutably through `self` only.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.words) }
    }
}

impl Drop for ZeroPageWords {
    fn drop(&mut self) {
        // SAFETY: ptr and the byte length describe exactly the mapping made in `new`.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.words.max(1) * 8) };
    }
}

/// An anonymous `MAP_SHARED` read-write mapping, zero-filled; made before fork, the parent and its
/// children see the same pages (futex words in it work across processes). Unmapped on drop.
#[derive(Debug)]
pub struct SharedMapping {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory owned by this value; what is stored in it and how it is
// synchronised (atomics only) is up to the users of `as_ptr`.
unsafe impl Send for SharedMapping {}
// SAFETY: as above; `&SharedMapping` only hands out the raw pointer.
unsafe impl Sync for SharedMapping {}

impl SharedMapping {
    /// Maps `len` bytes (rounded up to whole pages by the kernel), page-aligned and zeroed.
    pub fn new(len: usize) -> io::Result<Self> {
        use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
        let len = len.max(1);
        // SAFETY: a fresh anonymous mapping at an address of the kernel's choosing aliases nothing.
        let ptr = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
            )?
        };
        let ptr = std::ptr::NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(SharedMapping { ptr, len })
    }

    /// The start of the mapping (page-aligned).
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for SharedMapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len describe exactly the mapping made in `new`, unmapped only here.
        let _ = unsafe { rustix::mm::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}
