//! System calls made as such on every call, never answered from a libc cache, for the syscall
//! and contention workloads to count. Part of the audited OS layer (`crate::sys`).
use std::io;

/// getpid as a real system call every time (`syscall(SYS_getpid)`, never a libc cache).
#[inline]
pub fn raw_getpid() -> i64 {
    // SAFETY: getpid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getpid) }
}

/// getppid as a real system call every time (will-it-scale's getppid1).
#[inline]
pub fn raw_getppid() -> i64 {
    // SAFETY: getppid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_getppid) }
}

/// sched_yield as a system call, its result checked (will-it-scale asserts it is 0).
#[inline]
pub fn raw_sched_yield() -> io::Result<()> {
    // SAFETY: sched_yield takes no arguments and touches no memory of ours.
    let rc = unsafe { libc::syscall(libc::SYS_sched_yield) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// getrlimit(RLIMIT_NOFILE) as a real system call: prlimit64(0, RLIMIT_NOFILE, NULL, &old), which
/// is what getrlimit is on current kernels and libcs; returns the soft limit.
#[inline]
pub fn raw_getrlimit_nofile() -> io::Result<u64> {
    let mut old = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    let null: *const libc::rlimit64 = std::ptr::null();
    // SAFETY: pid 0 is the caller, the new limit is NULL (read only) and `old` is a valid pointer.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0,
            libc::RLIMIT_NOFILE,
            null,
            &mut old as *mut libc::rlimit64,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(old.rlim_cur)
}
