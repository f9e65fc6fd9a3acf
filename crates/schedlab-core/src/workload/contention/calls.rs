//! The system-call and memory testcases: `getppid`, `sched-yield`, `mmap` (with `--map-only`,
//! will-it-scale's mmap1) and `page-fault`.
use std::hint::black_box;
use std::sync::atomic::Ordering;

use super::config::Config;
use super::task::{finish, op_loop, Failure, Reason, TaskCtx};
use crate::sys::{self, TaskCode, ZeroPageWords};
use crate::workload::tasks::{TaskLaunch, TaskMode};
use crate::Result;

pub(super) fn getppid_task(ctx: &TaskCtx, parent: Option<i64>) -> TaskCode {
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        let ppid = sys::raw_getppid();
        match parent {
            _ if ppid < 0 => Err(Failure::call(
                Reason::Getppid,
                &std::io::Error::last_os_error(),
            )),
            Some(parent) if ppid != parent => Err(Failure::check(Reason::WrongParent)),
            _ => Ok(()),
        }
    });
    finish(ctx, ops, result)
}

pub(super) fn sched_yield_task(ctx: &TaskCtx) -> TaskCode {
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        sys::raw_sched_yield().map_err(|e| Failure::call(Reason::SchedYield, &e))
    });
    finish(ctx, ops, result)
}

/// A fresh mapping of `words` u64s, its first word written and read back, then unmapped: the touch
/// makes every op take a page fault and its munmap zap a page (with threads, a TLB flush on every
/// CPU running the process), where mmap1 maps and unmaps only.
pub(super) fn mmap_task(ctx: &TaskCtx, words: usize) -> TaskCode {
    let mut ops = 0;
    let tag = ctx.me as u64 + 1;
    let result = op_loop(ctx, &mut ops, || {
        let mut map = ZeroPageWords::new(words).map_err(|e| Failure::call(Reason::Mmap, &e))?;
        let first = black_box(map.as_mut_slice());
        first[0] = tag;
        if black_box(&first[..1])[0] != tag {
            return Err(Failure::check(Reason::PageLost));
        }
        map.unmap().map_err(|e| Failure::call(Reason::Munmap, &e))
    });
    finish(ctx, ops, result)
}

/// mmap1 exactly: a fresh mapping of `words` u64s, unmapped untouched. Without a touch, what
/// shows the kernel made a mapping is its address (page-aligned) and munmap's success; a read
/// would map the zero page, a fault and a page-table entry that mmap1 never has.
pub(super) fn map_only_task(ctx: &TaskCtx, words: usize, page: usize) -> TaskCode {
    let mut ops = 0;
    let result = op_loop(ctx, &mut ops, || {
        let map = ZeroPageWords::new(words).map_err(|e| Failure::call(Reason::Mmap, &e))?;
        check_map_address(map.address(), page)?;
        map.unmap().map_err(|e| Failure::call(Reason::Munmap, &e))
    });
    finish(ctx, ops, result)
}

pub(super) fn check_map_address(address: usize, page: usize) -> std::result::Result<(), Failure> {
    if address == 0 || !address.is_multiple_of(page) {
        return Err(Failure::check(Reason::MisalignedMap));
    }
    Ok(())
}

/// page_fault1: map `pages` pages, write the first word of each (one op per page, counted as it
/// goes, so the window reads whole faults), check three of them, unmap. The stop flag is read
/// once per mapping, so a task ends at most one mapping after being told.
pub(super) fn page_fault_task(ctx: &TaskCtx, pages: usize, page_words: usize) -> TaskCode {
    let slot = ctx.slot();
    let mut ops = 0u64;
    let result = (|| {
        let mut round = 0u64;
        while !ctx.stopping() {
            let mut map = ZeroPageWords::new(pages * page_words)
                .map_err(|e| Failure::call(Reason::Mmap, &e))?;
            // Distinct per task, round and page, and never 0 (an untouched page).
            let tag = |page: usize| (ctx.me as u64 + 1) << 48 | (round & 0xffff) << 32 | page as u64;
            let words = map.as_mut_slice();
            for page in 0..pages {
                words[page * page_words] = tag(page);
                ops += 1;
                slot.ops.store(ops, Ordering::Relaxed);
            }
            let words = black_box(words);
            for page in [0, pages - 1, round as usize % pages] {
                if words[page * page_words] != tag(page) {
                    return Err(Failure::check(Reason::PageLost));
                }
            }
            map.unmap().map_err(|e| Failure::call(Reason::Munmap, &e))?;
            round += 1;
        }
        Ok(())
    })();
    finish(ctx, ops, result)
}

/// Starts the `getppid` tasks. A forked task's parent is this process, for as long as it lives
/// (tasks die with it); threads share this process's parent, which can change (a shell that
/// exits hands a nohup'ed run to init), so a thread only checks for a pid.
pub(super) fn spawn_getppid(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    let parent = match cfg.mode {
        TaskMode::Process => Some(sys::raw_getpid()),
        TaskMode::Threads => None,
    };
    for me in 0..cfg.workers {
        let ctx = ctx(me);
        launch.spawn(cfg.task_name(me), move || getppid_task(&ctx, parent))?;
    }
    Ok(())
}

pub(super) fn spawn_sched_yield(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    for me in 0..cfg.workers {
        let ctx = ctx(me);
        launch.spawn(cfg.task_name(me), move || sched_yield_task(&ctx))?;
    }
    Ok(())
}

/// Starts the `mmap` tasks, which with `--map-only` touch nothing.
pub(super) fn spawn_mmap(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    let (words, page) = ((cfg.map_bytes / 8).max(1), sys::page_size());
    for me in 0..cfg.workers {
        let ctx = ctx(me);
        if cfg.map_only {
            launch.spawn(cfg.task_name(me), move || map_only_task(&ctx, words, page))?;
        } else {
            launch.spawn(cfg.task_name(me), move || mmap_task(&ctx, words))?;
        }
    }
    Ok(())
}

pub(super) fn spawn_page_fault(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    let page = sys::page_size();
    let pages = (cfg.map_bytes / page).max(1);
    for me in 0..cfg.workers {
        let ctx = ctx(me);
        launch.spawn(cfg.task_name(me), move || page_fault_task(&ctx, pages, page / 8))?;
    }
    Ok(())
}
