//! Descriptors: pipes and socket pairs, the workloads' full reads and writes through libc, poll,
//! opening devices, and files for open-file-description record locks. Part of the audited OS
//! layer (`crate::sys`).
use std::io;

use rustix::event::{PollFd, PollFlags};
use rustix::fd::{AsRawFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;

pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?)
}

/// A connected pair of AF_UNIX stream sockets, as hackbench uses by default.
pub fn unix_stream_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    use rustix::net::{socketpair, AddressFamily, SocketFlags, SocketType};
    Ok(socketpair(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` means end of stream came first.
///
/// The workloads' data path goes through the C library's `read`/`write`, not rustix's raw system
/// calls, on purpose: hackbench and perf bench call libc, and measured side by side here
/// (`hackbench -g 4 -l 1000`) the raw calls made every mode 15-20 % faster with the same number
/// of system calls — a difference in the call path, not in the scheduler, that would make
/// schedlab's figures incomparable with theirs.
pub fn read_full(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<bool> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &mut buf[done..];
        // SAFETY: `rest` is a valid, writable buffer of `rest.len()` bytes for the call.
        let n = unsafe { libc::read(fd.as_raw_fd(), rest.as_mut_ptr().cast(), rest.len()) };
        match n {
            0 => return Ok(false),
            n if n > 0 => done += n as usize,
            _ => {
                let err = io::Error::last_os_error();
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(err);
                }
            }
        }
    }
    Ok(true)
}

/// Writes all of `buf`, finishing short writes as hackbench does (through libc: see
/// [`read_full`]).
pub fn write_full(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        let rest = &buf[done..];
        // SAFETY: `rest` is a valid buffer of `rest.len()` bytes for the call.
        let n = unsafe { libc::write(fd.as_raw_fd(), rest.as_ptr().cast(), rest.len()) };
        if n >= 0 {
            done += n as usize;
        } else {
            let err = io::Error::last_os_error();
            if err.kind() != io::ErrorKind::Interrupted {
                return Err(err);
            }
        }
    }
    Ok(())
}

/// One read that reports EINTR instead of retrying, so a waiting main thread can notice signals.
pub fn read_interruptible(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    Ok(rustix::io::read(fd, buf)?)
}

/// Waits until `fd` is readable or `timeout_ms` passes; `Ok(false)` on timeout or EINTR.
pub fn poll_readable(fd: BorrowedFd<'_>, timeout_ms: Option<u32>) -> io::Result<bool> {
    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
    let timeout = timeout_ms.map(|ms| rustix::time::Timespec {
        tv_sec: i64::from(ms / 1000),
        tv_nsec: i64::from(ms % 1000) * 1_000_000,
    });
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(n) => Ok(n > 0),
        Err(Errno::INTR) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Waits until `fd` is readable (or writable, with `writable`) or `stop` is readable, or
/// `timeout_ns` passes (`None`: no timeout): whether each was ready; both false on timeout or
/// EINTR, after which callers look at the clock again.
pub fn poll_with_stop(
    fd: BorrowedFd<'_>,
    writable: bool,
    stop: BorrowedFd<'_>,
    timeout_ns: Option<u64>,
) -> io::Result<(bool, bool)> {
    let want = if writable {
        PollFlags::OUT
    } else {
        PollFlags::IN
    };
    let mut fds = [PollFd::new(&fd, want), PollFd::new(&stop, PollFlags::IN)];
    let timeout = timeout_ns.map(super::time::timespec_of_ns);
    match rustix::event::poll(&mut fds, timeout.as_ref()) {
        Ok(_) => Ok((!fds[0].revents().is_empty(), !fds[1].revents().is_empty())),
        Err(Errno::INTR) => Ok((false, false)),
        Err(e) => Err(e.into()),
    }
}

/// Makes reads and writes on `fd` return EAGAIN (`io::ErrorKind::WouldBlock`) instead of waiting.
pub fn set_nonblocking(fd: BorrowedFd<'_>) -> io::Result<()> {
    use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
    let flags = fcntl_getfl(fd)?;
    Ok(fcntl_setfl(fd, flags | OFlags::NONBLOCK)?)
}

/// Asks for a pipe buffer of `bytes` (F_SETPIPE_SZ); returns the size the kernel gave, which
/// `/proc/sys/fs/pipe-max-size` bounds for users without CAP_SYS_RESOURCE.
pub fn set_pipe_size(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<usize> {
    Ok(rustix::pipe::fcntl_setpipe_size(fd, bytes)?)
}

/// A new anonymous file in memory (memfd_create, close-on-exec): what a forked task writes its
/// results into for the parent to read after it has exited.
pub fn memfd(name: &str) -> io::Result<OwnedFd> {
    use rustix::fs::{memfd_create, MemfdFlags};
    Ok(memfd_create(name, MemfdFlags::CLOEXEC)?)
}

/// Opens a device such as `/dev/null` or `/dev/zero` read-write, close-on-exec.
pub fn open_device(path: &str) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    Ok(rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// One write(2) system call (no retry of short writes: each call is what is being counted).
#[inline]
pub fn write_once(fd: BorrowedFd<'_>, buf: &[u8]) -> io::Result<usize> {
    Ok(rustix::io::write(fd, buf)?)
}

/// `count` open file descriptions of one new, unnamed file (a memfd, opened again through
/// `/proc/self/fd` for each), so each holder of one owns its own open-file-description locks.
pub fn lock_file_descriptions(count: usize) -> io::Result<Vec<OwnedFd>> {
    use rustix::fs::{memfd_create, MemfdFlags, Mode, OFlags};
    let file = memfd_create("schedlab-record-locks", MemfdFlags::CLOEXEC)?;
    let path = format!("/proc/self/fd/{}", file.as_raw_fd());
    (0..count)
        .map(|_| {
            Ok(rustix::fs::open(
                path.as_str(),
                OFlags::RDWR | OFlags::CLOEXEC,
                Mode::empty(),
            )?)
        })
        .collect()
}

/// What [`ofd_record_lock`] does to its byte range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordLock {
    /// Take a write (exclusive) lock, waiting while another open file description holds one.
    Write,
    Unlock,
}

/// fcntl(F_OFD_SETLKW) on `len` bytes from `start`: an open-file-description record lock (Linux
/// 3.15), owned by the open file rather than the process, so two threads of one process with
/// their own descriptions exclude each other as two processes do. Waits while the range is held
/// elsewhere; a signal's EINTR retries. rustix has only whole-file process-owned locks.
pub fn ofd_record_lock(fd: BorrowedFd<'_>, start: u64, len: u64, op: RecordLock) -> io::Result<()> {
    // SAFETY: an all-zero flock is a valid value (and l_pid must be 0 for OFD locks).
    let mut lock: libc::flock = unsafe { std::mem::zeroed() };
    lock.l_type = match op {
        RecordLock::Write => libc::F_WRLCK,
        RecordLock::Unlock => libc::F_UNLCK,
    } as _;
    lock.l_whence = libc::SEEK_SET as _;
    lock.l_start = start as _;
    lock.l_len = len as _;
    loop {
        // SAFETY: `fd` is open for the call and `lock` a valid flock the kernel only reads.
        let rc = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_OFD_SETLKW, &lock) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::Interrupted {
            return Err(err);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fd::AsFd;

    #[test]
    fn pipe_round_trip_full_reads() {
        let (r, w) = pipe().unwrap();
        write_full(w.as_fd(), b"abcd").unwrap();
        let mut buf = [0u8; 4];
        assert!(read_full(r.as_fd(), &mut buf).unwrap());
        assert_eq!(&buf, b"abcd");
        drop(w);
        assert!(!read_full(r.as_fd(), &mut buf).unwrap());
    }

    #[test]
    fn a_poll_sees_data_the_stop_or_neither() {
        let (r, w) = pipe().unwrap();
        let (stop_r, stop_w) = pipe().unwrap();
        assert_eq!(
            poll_with_stop(r.as_fd(), false, stop_r.as_fd(), Some(1_000_000)).unwrap(),
            (false, false)
        );
        assert_eq!(
            poll_with_stop(w.as_fd(), true, stop_r.as_fd(), Some(0)).unwrap(),
            (true, false)
        );
        write_full(stop_w.as_fd(), b"x").unwrap();
        assert_eq!(
            poll_with_stop(r.as_fd(), false, stop_r.as_fd(), None).unwrap(),
            (false, true)
        );
        set_nonblocking(r.as_fd()).unwrap();
        let mut buf = [0u8; 1];
        let err = read_interruptible(r.as_fd(), &mut buf).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert!(set_pipe_size(w.as_fd(), 1 << 16).unwrap() >= 1 << 16);
        let file = memfd("schedlab-test").unwrap();
        assert_eq!(write_once(file.as_fd(), b"abc").unwrap(), 3);
    }

    #[test]
    fn record_locks_belong_to_the_open_file_description() {
        let files = lock_file_descriptions(2).unwrap();
        ofd_record_lock(files[0].as_fd(), 0, 1, RecordLock::Write).unwrap();
        // The other description of the same file must wait: F_OFD_GETLK shows the conflict
        // without blocking.
        // SAFETY: as in `ofd_record_lock`.
        let mut probe: libc::flock = unsafe { std::mem::zeroed() };
        probe.l_type = libc::F_WRLCK as _;
        probe.l_len = 1;
        // SAFETY: a valid descriptor and flock, which F_OFD_GETLK fills in.
        let rc = unsafe { libc::fcntl(files[1].as_raw_fd(), libc::F_OFD_GETLK, &mut probe) };
        assert_eq!(rc, 0);
        assert_eq!(
            i32::from(probe.l_type),
            libc::F_WRLCK,
            "held by the first description"
        );
        ofd_record_lock(files[0].as_fd(), 0, 1, RecordLock::Unlock).unwrap();
        ofd_record_lock(files[1].as_fd(), 0, 1, RecordLock::Write).unwrap();
        ofd_record_lock(files[1].as_fd(), 0, 1, RecordLock::Unlock).unwrap();
    }
}
