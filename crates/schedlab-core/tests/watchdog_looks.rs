//! The watchdog's looks before the deadline, in a test process of its own (its timers, flags and
//! signals are process-wide): a process stopped with a real SIGSTOP ends the wait at the first
//! look, named, long before the deadline; a healthy process that outlasts several looks does not.
use std::time::{Duration, Instant};

use schedlab_core::sys::{self, task_code, Watchdog};
use schedlab_core::workload::tasks::{TaskLaunch, TaskMode};
use schedlab_core::Error;

const SEC: u64 = 1_000_000_000;

/// One test, run in order: the process-wide state must not be shared by tests running at once.
#[test]
fn a_look_ends_the_wait_for_a_stopped_process_and_only_for_one() {
    let mut watchdog = Watchdog::for_current_thread().unwrap();

    // Healthy: a process that sleeps through five looks finishes, and nothing expired.
    let mut launch = TaskLaunch::new(TaskMode::Process).unwrap();
    launch
        .spawn("sleeper", || {
            sys::sleep_ns(SEC / 2);
            task_code::OK
        })
        .unwrap();
    watchdog.arm(60 * SEC, Some(SEC / 10)).unwrap();
    launch.start().unwrap();
    let waited = launch.wait_all();
    watchdog.disarm().unwrap();
    waited.unwrap();
    drop(launch);

    // Stopped: a worker in SIGSTOP beside one that would run for a minute. The first look that
    // finds it ends the wait (two looks 0.2 s apart, then SIGTERM and up to 1 s of grace).
    let mut launch = TaskLaunch::new(TaskMode::Process).unwrap();
    launch
        .spawn("stopper", || {
            let _ = sys::stop_self();
            task_code::OK
        })
        .unwrap();
    launch
        .spawn("runner-up", || {
            sys::sleep_ns(60 * SEC);
            task_code::OK
        })
        .unwrap();
    let began = Instant::now();
    watchdog.arm(60 * SEC, Some(SEC / 5)).unwrap();
    launch.start().unwrap();
    let waited = launch.wait_all();
    let expired = sys::deadline_expired();
    watchdog.disarm().unwrap();
    let took = began.elapsed();
    let text = match waited {
        Err(Error::TimedOut(text)) => text,
        other => panic!("the stopped process went unnoticed: {other:?}"),
    };
    assert!(!expired, "the deadline passed: {text}");
    assert!(took < Duration::from_secs(10), "took {took:?}: {text}");
    assert!(text.contains("stopper (pid "), "{text}");
    assert!(text.contains(", stopped)"), "{text}");
    assert!(text.contains("every task was stopped"), "{text}");
    // The stopped one is named first.
    assert!(
        text.find("stopper").unwrap() < text.find("runner-up").unwrap_or(usize::MAX),
        "{text}"
    );
}
