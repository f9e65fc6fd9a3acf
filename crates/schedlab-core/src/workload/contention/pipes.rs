//! The pipe testcases: `pipe-writers` (many writers, `--readers` readers, one pipe, records
//! checked whole and summed) and `pipe-loopback` (a pipe of each task's own, will-it-scale's
//! pipe1).
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::config::Config;
use super::task::{finish, op_loop, Failure, Reason, TaskCtx};
use crate::sys::{self, AsFd, OwnedFd, TaskCode};
use crate::workload::tasks::TaskLaunch;
use crate::{Error, Result};

/// The most bytes per pipe write: PIPE_BUF, so that the kernel keeps a write whole.
pub(super) const MAX_WRITE_BYTES: usize = 4_096;
/// Bytes a pipe reader asks for per read (the default pipe capacity), rounded down to records.
pub(super) const READ_BYTES: usize = 64 * 1024;

/// A pipe writer: one record (its id, then filler) per write, through the C library's write as
/// will-it-scale's tests call it. Its end of the pipe closes when it returns.
pub(super) fn pipe_writer_task(ctx: &TaskCtx, pipe: Arc<OwnedFd>, bytes: usize) -> TaskCode {
    let mut record = [0xa5u8; MAX_WRITE_BYTES];
    record[..8].copy_from_slice(&(ctx.me as u64 + 1).to_ne_bytes());
    let record = &record[..bytes];
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        sys::write_full(pipe.as_fd(), record).map_err(|e| Failure::call(Reason::PipeWrite, &e))
    });
    finish(ctx, ops, result)
}

/// A pipe reader: reads until every writer has closed its end, checking that each read holds
/// whole records of known writers, and keeps the bytes and the sum of the writer ids. `buf` is
/// a whole number of records, allocated before the start.
pub(super) fn pipe_reader_task(
    ctx: &TaskCtx,
    pipe: Arc<OwnedFd>,
    mut buf: Vec<u8>,
    bytes: usize,
    writers: u64,
) -> TaskCode {
    let slot = ctx.slot();
    let (mut reads, mut total, mut ids) = (0u64, 0u64, 0u64);
    let result = (|| loop {
        let n = match sys::read_interruptible(pipe.as_fd(), &mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(Failure::call(Reason::PipeRead, &e)),
        };
        if n % bytes != 0 {
            return Err(Failure::check(Reason::SplitRecord));
        }
        for record in buf[..n].chunks_exact(bytes) {
            let id = u64::from_ne_bytes(record[..8].try_into().expect("8 bytes"));
            if id == 0 || id > writers {
                return Err(Failure::check(Reason::UnknownWriter));
            }
            ids = ids.wrapping_add(id);
        }
        total += n as u64;
        reads += 1;
        slot.ops.store(reads, Ordering::Relaxed);
    })();
    drop(pipe);
    slot.bytes.store(total, Ordering::SeqCst);
    slot.ids.store(ids, Ordering::SeqCst);
    finish(ctx, reads, result)
}

/// pipe1: the task writes one byte into a pipe of its own and reads it back, so nobody waits and
/// nothing wakes; through the C library's write and read, as will-it-scale's test calls them.
/// The byte rotates op by op (and starts at the task's id), so a byte that went astray or a read
/// of a stale one shows.
pub(super) fn pipe_loopback_task(ctx: &TaskCtx) -> TaskCode {
    let mut ops = 0;
    let result = sys::pipe()
        .map_err(|e| Failure::call(Reason::PipeCreate, &e))
        .and_then(|(read, write)| {
            let mut tag = ctx.me as u8;
            op_loop(ctx, &mut ops, || {
                tag = tag.wrapping_add(1);
                loopback_once(read.as_fd(), write.as_fd(), tag)
            })
        });
    finish(ctx, ops, result)
}

/// One byte through a pipe and back, checked.
#[inline(always)]
pub(super) fn loopback_once(
    read: sys::BorrowedFd<'_>,
    write: sys::BorrowedFd<'_>,
    tag: u8,
) -> std::result::Result<(), Failure> {
    sys::write_full(write, &[tag]).map_err(|e| Failure::call(Reason::PipeWrite, &e))?;
    let mut back = [0u8; 1];
    match sys::read_full(read, &mut back) {
        Ok(true) if back[0] == tag => Ok(()),
        Ok(_) => Err(Failure::check(Reason::WrongByte)),
        Err(e) => Err(Failure::call(Reason::PipeRead, &e)),
    }
}


/// After every task has ended: the readers read every byte the writers wrote, and the writer ids
/// they summed are those of the writes counted (writer w's records carry w + 1).
pub(super) fn check_pipe(writes: &[u64], read_bytes: u64, read_ids: u64, bytes: usize) -> Result<()> {
    let written: u64 = writes.iter().sum::<u64>() * bytes as u64;
    if read_bytes != written {
        return Err(Error::failed(format!(
            "the writers wrote {written} bytes, the readers read {read_bytes}"
        )));
    }
    let ids = writes
        .iter()
        .enumerate()
        .fold(0u64, |sum, (w, &n)| sum.wrapping_add(n.wrapping_mul(w as u64 + 1)));
    if read_ids != ids {
        return Err(Error::failed(format!(
            "the records read do not add up to the writes counted per writer (writer ids sum to \
             {read_ids:#x}, expected {ids:#x})"
        )));
    }
    Ok(())
}

/// Starts the `pipe-writers` writers, then their readers, all on one pipe.
pub(super) fn spawn_pipe_writers(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    let (read, write) =
        sys::pipe().map_err(|e| Error::failed(format!("cannot create a pipe: {e}")))?;
    let (read, write) = (Arc::new(read), Arc::new(write));
    let bytes = cfg.write_bytes;
    for me in 0..cfg.workers {
        let (ctx, write) = (ctx(me), Arc::clone(&write));
        launch.spawn(cfg.task_name(me), move || pipe_writer_task(&ctx, write, bytes))?;
    }
    // Only the writers hold the write end from here (a forked reader inherits none), so the
    // readers see the end of the stream once the last writer has returned.
    drop(write);
    let writers = cfg.workers as u64;
    for me in cfg.workers..cfg.all_tasks() {
        let (ctx, read) = (ctx(me), Arc::clone(&read));
        let buf = vec![0u8; READ_BYTES / bytes * bytes];
        launch.spawn(cfg.task_name(me), move || {
            pipe_reader_task(&ctx, read, buf, bytes, writers)
        })?;
    }
    Ok(())
}

pub(super) fn spawn_pipe_loopback(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    for me in 0..cfg.workers {
        let ctx = ctx(me);
        launch.spawn(cfg.task_name(me), move || pipe_loopback_task(&ctx))?;
    }
    Ok(())
}
