//! Descriptors: pipes and socket pairs, the workloads' full reads and writes through libc, poll,
//! and opening devices. Part of the audited OS layer (`crate::sys`).
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
}
