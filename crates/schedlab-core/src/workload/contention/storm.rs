//! `futex-wake-storm`: one waker wakes every task sleeping on one futex, over and over; wakes
//! and waits must balance exactly.
use std::sync::atomic::Ordering;

use super::config::Config;
use super::task::{finish, op_loop, Failure, Reason, TaskCtx};
use crate::sys::{self, TaskCode};
use crate::workload::tasks::TaskLaunch;
use crate::{Error, Result};

/// A futex waiter: sleeps on the storm's word while it holds the value last seen, counting the
/// wake-ups (a FUTEX_WAIT that returned 0; one that found the word changed is no op).
pub(super) fn storm_waiter_task(ctx: &TaskCtx) -> TaskCode {
    let (storm, slot) = (&ctx.shared().storm, ctx.slot());
    let mut ops = 0u64;
    let result = (|| loop {
        let seen = storm.word.load(Ordering::SeqCst);
        if ctx.stopping() {
            return Ok(());
        }
        match sys::futex_wait_in(&storm.word, seen, ctx.scope) {
            Ok(true) => {
                ops += 1;
                slot.ops.store(ops, Ordering::Relaxed);
            }
            Ok(false) => {}
            Err(e) => return Err(Failure::call(Reason::FutexWait, &e)),
        }
    })();
    let code = finish(ctx, ops, result);
    storm.exited.fetch_add(1, Ordering::SeqCst);
    code
}

/// The waker: bumps the word and wakes every sleeper, one op per FUTEX_WAKE call, summing the
/// wake-ups the kernel reports. Told to stop, it goes on waking (yielding between calls) until
/// every waiter has left, so none sleeps forever and every wake-up counted is one reported.
pub(super) fn storm_waker_task(ctx: &TaskCtx, waiters: u32) -> TaskCode {
    let (storm, slot) = (&ctx.shared().storm, ctx.slot());
    let mut woken = 0u64;
    let wake = |woken: &mut u64| {
        storm.word.fetch_add(1, Ordering::SeqCst);
        let n = sys::futex_wake_in(&storm.word, i32::MAX as u32, ctx.scope)
            .map_err(|e| Failure::call(Reason::FutexWake, &e))?;
        *woken += n as u64;
        Ok(())
    };
    let mut calls = 0;
    let mut result = op_loop(ctx, &mut calls, || wake(&mut woken));
    while storm.exited.load(Ordering::SeqCst) < waiters {
        if let Err(failure) = wake(&mut woken) {
            result = result.and(Err(failure));
            break;
        }
        let _ = sys::raw_sched_yield();
    }
    slot.woken.store(woken, Ordering::SeqCst);
    finish(ctx, calls, result)
}

/// After every task has ended: every waiter left, and the wake-ups the waiters counted are the
/// ones the waker's calls reported.
pub(super) fn check_storm(woken: u64, received: u64, exited: u32, waiters: u32) -> Result<()> {
    if exited != waiters {
        return Err(Error::failed(format!(
            "{exited} of {waiters} futex waiters left"
        )));
    }
    if woken != received {
        return Err(Error::failed(format!(
            "wakes and waits do not balance: FUTEX_WAKE reported {woken} tasks woken, the \
             waiters counted {received} wake-ups"
        )));
    }
    Ok(())
}

/// Starts the waiters, then the one waker.
pub(super) fn spawn_storm(cfg: &Config, launch: &mut TaskLaunch, ctx: &dyn Fn(usize) -> TaskCtx) -> Result<()> {
    for me in 0..cfg.workers {
        let ctx = ctx(me);
        launch.spawn(cfg.task_name(me), move || storm_waiter_task(&ctx))?;
    }
    let (ctx, waiters) = (ctx(cfg.workers), cfg.workers as u32);
    launch.spawn(cfg.task_name(cfg.workers), move || storm_waker_task(&ctx, waiters))?;
    Ok(())
}
