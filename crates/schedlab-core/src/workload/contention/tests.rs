//! `contention`'s tests: every testcase run briefly as threads and processes, its checks made to
//! fail, and its parameters' rules and names.
use super::calls::*;
use super::locks::*;
use super::metrics::*;
use super::pipes::*;
use super::run::*;
use super::storm::*;
use super::task::*;
use super::*;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::metric::Measurement;
use crate::latency;
use crate::sys::{self, task_code, AsFd, FutexScope, PthreadMutex, SharedValue};
use crate::workload::definition::{IterationInfo, IterationOutput, Workload};

/// A short run: 150 ms measured after a 20 ms warm-up, small sizes.
fn config(testcase: Testcase, tasks: usize, mode: TaskMode) -> Config {
    Config {
        testcase,
        workers: tasks,
        helpers: usize::from(matches!(
            testcase,
            Testcase::PipeWriters | Testcase::FutexWakeStorm
        )),
        mode,
        warmup_ns: 20_000_000,
        duration_ns: 150_000_000,
        map_bytes: 1 << 20,
        work: 50,
        write_bytes: 24,
        sample_every: 4,
        map_only: false,
        file_per_task: false,
    }
}

fn run(config: Config) -> Result<IterationOutput> {
    ContentionWorkload::new(config).run_iteration(IterationInfo::FIRST)
}

use crate::metric::value_of as value;

/// The metrics are there as declared, and agree with each other (no speed is asserted).
/// Runs one iteration that must succeed, checks its metrics against the declared schema and
/// the task counts, and returns them.
fn run_checked(cfg: Config, tasks: usize) -> Vec<Measurement> {
    let m = run(cfg).unwrap().measurements;
    check_metrics(&ContentionWorkload::new(cfg), &m, tasks);
    m
}

fn check_metrics(workload: &ContentionWorkload, m: &[Measurement], tasks: usize) {
    assert!(crate::metric::check_declared(workload.metrics(), m).is_empty(), "{m:?}");
    let total = value(m, "ops_per_sec");
    assert!(total > 0.0);
    let per_task = value(m, "mean_task_ops_per_sec");
    assert!((per_task * tasks as f64 - total).abs() / total < 1e-9);
    let (min, max) = (value(m, "min_task_ops_per_sec"), value(m, "max_task_ops_per_sec"));
    // Equal counts give equal rates, up to rounding.
    let slack = per_task * 1e-12;
    assert!(min <= per_task + slack && per_task <= max + slack, "{m:?}");
    let jain = value(m, "jain_fairness_index");
    assert!(jain > 0.0 && jain <= 1.0 + 1e-12, "{jain}");
}

#[test]
fn kernel_baselines_run_as_threads_and_processes() {
    for testcase in [Testcase::Getppid, Testcase::SchedYield] {
        for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = config(testcase, tasks, mode);
            run_checked(cfg, tasks);
        }
    }
}

#[test]
fn mappings_are_made_touched_and_unmapped_by_threads_and_processes() {
    for testcase in [Testcase::Mmap, Testcase::PageFault] {
        for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
            let cfg = config(testcase, tasks, mode);
            run_checked(cfg, tasks);
        }
    }
}

#[test]
fn map_only_maps_and_unmaps_untouched() {
    for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
        let cfg = Config {
            map_only: true,
            ..config(Testcase::Mmap, tasks, mode)
        };
        run_checked(cfg, tasks);
    }
    check_map_address(8 << 20, 4096).unwrap();
    for wrong in [0, (8 << 20) + 64] {
        let err = check_map_address(wrong, 4096).unwrap_err();
        assert_eq!(err, Failure::check(Reason::MisalignedMap));
    }
}

#[test]
fn pipe_loopback_reads_back_its_own_byte() {
    for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
        let cfg = config(Testcase::PipeLoopback, tasks, mode);
        run_checked(cfg, tasks);
    }
    let (read, write) = sys::pipe().unwrap();
    loopback_once(read.as_fd(), write.as_fd(), 7).unwrap();
    // A byte left behind is read before the one just written: the check sees it.
    sys::write_full(write.as_fd(), &[9]).unwrap();
    let stale = loopback_once(read.as_fd(), write.as_fd(), 10).unwrap_err();
    assert_eq!(stale, Failure::check(Reason::WrongByte));
    assert!(Reason::WrongByte.describe(0).contains("another byte"));
    // EPIPE needs every read end closed, and a child another test forks meanwhile holds a
    // copy of this one until it exits: then the write succeeds. So fresh pipes are tried
    // until a write meets no reader, each read from a pipe whose write end is closed, which
    // answers EOF (a wrong byte) instead of blocking for ever as a live write end would.
    drop((read, write));
    let broken = (0..1000).find_map(|_| {
        let (read, write) = sys::pipe().unwrap();
        drop(read);
        let (at_eof, closed) = sys::pipe().unwrap();
        drop(closed);
        let failure = loopback_once(at_eof.as_fd(), write.as_fd(), 1).unwrap_err();
        (failure.reason != Reason::WrongByte).then_some(failure)
    });
    assert_eq!(
        broken.map(|f| f.reason),
        Some(Reason::PipeWrite),
        "EPIPE: nobody reads"
    );
}

#[test]
fn file_per_task_locks_check_every_tasks_own_section() {
    for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
        let cfg = Config {
            file_per_task: true,
            ..config(Testcase::FcntlLock, tasks, mode)
        };
        run_checked(cfg, tasks);
    }
    let cfg = Config {
        file_per_task: true,
        ..config(Testcase::FcntlLock, 2, TaskMode::Threads)
    };
    let block = SharedValue::<Shared>::new().unwrap();
    for (slot, n) in block.slots.iter().zip([3, 5]) {
        slot.own_file.guarded.counter.store(n, Ordering::SeqCst);
    }
    check_own_sections(&cfg, &block.slots[..2], &[3, 5]).unwrap();
    let err = check_own_sections(&cfg, &block.slots[..2], &[3, 6])
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("fcntl-lock task 1's own file: the counter"), "{err}");
    assert!(err.contains("1 updates were lost"), "{err}");
}

#[test]
fn fcntl_locks_exclude_threads_and_processes() {
    for (mode, tasks) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
        let cfg = config(Testcase::FcntlLock, tasks, mode);
        run_checked(cfg, tasks);
    }
}

#[test]
fn pipe_readers_drain_every_writers_records() {
    for (mode, writers, readers) in [(TaskMode::Threads, 3, 2), (TaskMode::Process, 2, 1)] {
        let cfg = Config {
            helpers: readers,
            ..config(Testcase::PipeWriters, writers, mode)
        };
        run_checked(cfg, writers);
    }
}

#[test]
fn pipe_readers_catch_split_and_foreign_records_and_miscounts() {
    let block = Arc::new(SharedValue::<Shared>::new().unwrap());
    let reader = |bytes: &[u8], record: usize| {
        let (read, write) = sys::pipe().unwrap();
        sys::write_full(write.as_fd(), bytes).unwrap();
        drop(write);
        let ctx = TaskCtx {
            block: Arc::clone(&block),
            me: 2,
            scope: FutexScope::Private,
        };
        pipe_reader_task(&ctx, Arc::new(read), vec![0; 64], record, 2)
    };
    let mut good = [0u8; 16];
    good[0] = 1;
    good[8] = 2;
    assert_eq!(reader(&good, 8), task_code::OK);
    assert_eq!(block.slots[2].bytes.load(Ordering::SeqCst), 16);
    assert_eq!(block.slots[2].ids.load(Ordering::SeqCst), 3);
    assert_eq!(reader(&good[..12], 8), task_code::VERIFY_FAILED, "split");
    assert_eq!(block.slots[2].failure.load(Ordering::SeqCst), Reason::SplitRecord as u32);
    good[8] = 3;
    assert_eq!(reader(&good, 8), task_code::VERIFY_FAILED, "writer 3 of 2");
    assert_eq!(block.slots[2].failure.load(Ordering::SeqCst), Reason::UnknownWriter as u32);

    check_pipe(&[2, 1], 3 * 8, 2 + 2, 8).unwrap();
    let err = check_pipe(&[2, 1], 2 * 8, 3, 8).unwrap_err().to_string();
    assert!(err.contains("wrote 24 bytes, the readers read 16"), "{err}");
    let err = check_pipe(&[2, 1], 3 * 8, 5, 8).unwrap_err().to_string();
    assert!(err.contains("do not add up"), "{err}");
}

#[test]
fn futex_wakes_and_waits_balance() {
    for (mode, waiters) in [(TaskMode::Threads, 3), (TaskMode::Process, 2)] {
        let cfg = config(Testcase::FutexWakeStorm, waiters, mode);
        let m = run_checked(cfg, waiters);
        assert!(value(&m, "wake_calls_per_sec") > 0.0);
    }
    check_storm(7, 7, 3, 3).unwrap();
    let err = check_storm(7, 6, 3, 3).unwrap_err().to_string();
    assert!(err.contains("reported 7 tasks woken, the waiters counted 6"), "{err}");
    assert!(check_storm(7, 7, 2, 3).is_err());
    // The waker is one of the --tasks.
    let p = ContentionParams {
        testcase: Testcase::FutexWakeStorm,
        tasks: 4,
        ..Default::default()
    };
    let cfg = p.config();
    assert_eq!((cfg.workers, cfg.helpers), (3, 1));
    assert_eq!(cfg.task_name(3), "futex waker");
}

const USER_LOCKS: [Testcase; 5] = [
    Testcase::Tas,
    Testcase::Ticket,
    Testcase::Mcs,
    Testcase::PthreadMutex,
    Testcase::FutexMutex,
];

#[test]
fn user_space_locks_exclude_and_report_their_latencies() {
    for testcase in USER_LOCKS {
        // More threads than this machine's 2 CPUs, so holders are preempted.
        let cfg = config(testcase, 4, TaskMode::Threads);
        let workload = ContentionWorkload::new(cfg);
        let started = std::time::Instant::now();
        let output = run(cfg).unwrap_or_else(|e| panic!("{testcase:?}: {e}"));
        let whole_run_ns = started.elapsed().as_nanos() as f64;
        let m = &output.measurements;
        check_metrics(&workload, m, 4);
        // One critical section in 4 is timed and one probed (`sample_every` 4): a quarter
        // of the ops in the window each, give or take one per task. The rate is over the
        // window's true length, which a loaded machine stretches past the nominal one but
        // never past the whole call's, so the ops counted from it over the nominal length
        // are a floor and over the whole call a ceiling; the two counts, taken from the
        // same ops, agree with each other whatever the stretch.
        let ops_at_least = value(m, "ops_per_sec") * cfg.duration_ns as f64 / 1e9;
        let ops_at_most = value(m, "ops_per_sec") * whole_run_ns / 1e9;
        let samples = value(m, "lock_samples_count");
        let probes = value(m, "holder_off_cpu_probes_count");
        for taken in [samples, probes] {
            let floor = ops_at_least / 4.0;
            let ceiling = ops_at_most / 4.0;
            assert!(taken >= floor - 4.0 - 0.3 * floor, "{testcase:?} {m:?}");
            assert!(taken <= ceiling + 4.0 + 0.3 * ceiling, "{testcase:?} {m:?}");
        }
        assert!(
            (samples - probes).abs() <= 4.0 + 0.1 * samples.max(probes),
            "{testcase:?} {m:?}"
        );
        if samples == 0.0 {
            continue;
        }
        for lock in ["acquire", "hold"] {
            let p50 = value(m, &format!("{lock}_p50_nsec"));
            let p99 = value(m, &format!("{lock}_p99_nsec"));
            assert!(p50 <= p99 && p99 <= value(m, &format!("{lock}_max_nsec")), "{m:?}");
        }
        if probes > 0.0 {
            let pct = value(m, "holder_off_cpu_pct");
            assert!((0.0..=100.0).contains(&pct), "{m:?}");
        }
        let names: Vec<&str> = output.attachments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, [ACQUIRE_ATTACHMENT, HOLD_ATTACHMENT]);
        let acquire = latency::decode(&output.attachments[0].data).unwrap();
        assert_eq!(acquire.len() as f64, samples);
    }
}

#[test]
fn sample_every_0_times_and_probes_nothing() {
    let cfg = Config {
        sample_every: 0,
        work: 0,
        ..config(Testcase::PthreadMutex, 3, TaskMode::Threads)
    };
    let m = run_checked(cfg, 3);
    assert_eq!(value(&m, "lock_samples_count"), 0.0);
    assert_eq!(value(&m, "holder_off_cpu_probes_count"), 0.0);
    assert!(m.iter().all(|m| m.name != "acquire_p50_nsec" && m.name != "holder_off_cpu_pct"));
    let p = ContentionParams {
        testcase: Testcase::PthreadMutex,
        sample_every: 0,
        ..Default::default()
    };
    p.validate().unwrap();
}

#[test]
fn every_lock_is_free_again_after_each_section() {
    // One thread taking each lock many times with nobody else: the counter is exact, the
    // section always finds itself alone, and the lock is left free.
    for testcase in USER_LOCKS {
        let block = SharedValue::<Shared>::new().unwrap();
        let (shared, control) = (&*block, &block.control);
        let pthread = PthreadMutex::with_data(Guarded::default());
        let guarded = match testcase {
            Testcase::PthreadMutex => pthread.data(),
            _ => &shared.lock.guarded,
        };
        let mut sink = 0;
        for _ in 0..1_000 {
            let section = || assert!(guarded_section(guarded, 1, 3, &mut sink));
            let word = &shared.lock.word;
            match testcase {
                Testcase::Tas => Tas { flag: word, control }.critical(0, section),
                Testcase::Ticket => Ticket {
                    words: &shared.lock,
                    control,
                }
                .critical(0, section),
                Testcase::Mcs => Mcs {
                    tail: word,
                    slots: &shared.slots,
                    control,
                }
                .critical(0, section),
                Testcase::PthreadMutex => Pthread(&pthread).critical(0, section),
                _ => FutexMutex {
                    word,
                    scope: FutexScope::Private,
                }
                .critical(0, section),
            }
            .unwrap();
        }
        assert_eq!(guarded.counter.load(Ordering::SeqCst), 1_000, "{testcase:?}");
        let free = match testcase {
            Testcase::Ticket => {
                shared.lock.next_ticket.load(Ordering::SeqCst)
                    == shared.lock.serving.load(Ordering::SeqCst)
            }
            _ => shared.lock.word.load(Ordering::SeqCst) == 0,
        };
        assert!(free, "{testcase:?}");
    }
}

#[test]
fn lock_output_quantiles_and_probes() {
    let mut a = LockTiming::new(4);
    let mut b = LockTiming::new(4);
    for v in 1..=100 {
        latency::record(&mut a.acquire, v);
        latency::record(&mut b.hold, 1_000 + v);
    }
    latency::record(&mut b.acquire, 5_000);
    (a.probes, a.off_cpu, b.probes) = (3, 1, 1);
    let (m, attachments) = lock_output(vec![a, b]);
    assert!(crate::metric::check_declared(LOCK_METRICS, &m)
        .iter()
        .all(|b| matches!(b, crate::metric::Breach::Missing(_))));
    assert_eq!(value(&m, "acquire_p50_nsec"), 51.0);
    // Beyond 2,048 ns a value is kept to 3 significant digits.
    assert!((value(&m, "acquire_max_nsec") - 5_000.0).abs() <= 5.0);
    assert_eq!(value(&m, "hold_p50_nsec"), 1_050.0);
    assert_eq!(value(&m, "lock_samples_count"), 101.0);
    assert_eq!(value(&m, "holder_off_cpu_pct"), 25.0);
    assert_eq!(value(&m, "holder_off_cpu_probes_count"), 4.0);
    assert_eq!(attachments.len(), 2);
    // No probe, no percentage; no sample, no quantile.
    let (m, _) = lock_output(vec![LockTiming::new(4)]);
    assert!(m.iter().all(|m| m.name != "holder_off_cpu_pct" && m.name != "acquire_p50_nsec"));
    assert_eq!(value(&m, "lock_samples_count"), 0.0);
}

#[test]
fn a_second_holder_is_caught_inside_and_lost_updates_after() {
    let block = SharedValue::<Shared>::new().unwrap();
    let mut sink = 0;
    assert!(guarded_section(&block.file.guarded, 1, 10, &mut sink));
    assert_eq!(block.file.guarded.counter.load(Ordering::SeqCst), 1);
    // Task 2 is inside (its id is in the holder word) when task 0 enters.
    block.file.guarded.holder.store(3, Ordering::SeqCst);
    assert!(!guarded_section(&block.file.guarded, 1, 10, &mut sink));
    check_guarded(2, 0, 2).unwrap();
    let err = check_guarded(1, 0, 2).unwrap_err().to_string();
    assert!(err.contains("1 updates were lost, so two tasks held the lock"), "{err}");
    let err = check_guarded(2, 3, 2).unwrap_err().to_string();
    assert!(err.contains("task 2 still shows as inside"), "{err}");
}

/// A "lock" that lets everyone in, run by the real loop: the holder word catches it.
struct NoLock;

impl CriticalLock for NoLock {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        section();
        Ok(())
    }
}

#[test]
fn a_lock_that_excludes_nobody_fails_loudly() {
    let block = SharedValue::<Shared>::new().unwrap();
    // Another task is inside for good: the first section sees it.
    block.file.guarded.holder.store(2, Ordering::SeqCst);
    let ctx = TaskCtx {
        block: Arc::new(block),
        me: 0,
        scope: FutexScope::Private,
    };
    let mut ops = 0;
    let result = lock_loop::<_, false>(&ctx, &NoLock, &ctx.shared().file.guarded, 10, &mut ops, None);
    assert_eq!(result, Err(Failure::check(Reason::TwoHolders)));
    assert_eq!(ops, 1, "the section ran and counts");
    assert_eq!(finish(&ctx, ops, result), task_code::VERIFY_FAILED);
    let err = ContentionWorkload::new(config(Testcase::FcntlLock, 2, TaskMode::Threads))
        .why_failed(ctx.shared())
        .unwrap()
        .to_string();
    assert!(err.contains("task 0 failed: another task was inside the critical section with it"), "{err}");
}

/// A "lock" that lets everyone in and ends the run after `stop_after` sections.
struct StopAfter<'a> {
    control: &'a Control,
    sections: std::cell::Cell<u64>,
    stop_after: u64,
}

impl CriticalLock for StopAfter<'_> {
    fn critical(&self, _me: usize, section: impl FnOnce()) -> std::result::Result<(), Failure> {
        section();
        self.sections.set(self.sections.get() + 1);
        if self.sections.get() == self.stop_after {
            self.control.phase.store(STOP, Ordering::SeqCst);
        }
        Ok(())
    }
}

/// `--work 0` leaves the holder word out of the critical section: the counter alone, checked
/// against the acquisitions after the run, stands for exclusion, so it counts every one.
#[test]
fn an_empty_critical_section_counts_every_acquisition() {
    let block = SharedValue::<Shared>::new().unwrap();
    let ctx = TaskCtx {
        block: Arc::new(block),
        me: 0,
        scope: FutexScope::Private,
    };
    let lock = StopAfter {
        control: &ctx.shared().control,
        sections: std::cell::Cell::new(0),
        stop_after: 1000,
    };
    let guarded = &ctx.shared().file.guarded;
    let mut ops = 0;
    let result = lock_loop::<_, false>(&ctx, &lock, guarded, 0, &mut ops, None);
    assert_eq!(result, Ok(()));
    assert_eq!(ops, 1000);
    let counter = guarded.counter.load(Ordering::SeqCst);
    check_guarded(counter, guarded.holder.load(Ordering::SeqCst), ops).unwrap();
    // One update fewer than the acquisitions is two holders at once.
    assert!(check_guarded(counter - 1, 0, ops).is_err());
}

#[test]
fn a_failed_call_names_the_task_and_the_reason() {
    let block = Arc::new(SharedValue::<Shared>::new().unwrap());
    let cfg = config(Testcase::Getppid, 2, TaskMode::Threads);
    let ctx = TaskCtx {
        block: Arc::clone(&block),
        me: 1,
        scope: FutexScope::Private,
    };
    // A parent the task does not have: the first call fails the check.
    let code = getppid_task(&ctx, Some(sys::raw_getpid() + 7));
    assert_eq!(code, task_code::VERIFY_FAILED);
    assert_eq!(block.control.phase.load(Ordering::SeqCst), STOP, "it stops the rest");
    assert_eq!(block.slots[1].total.load(Ordering::SeqCst), 0);
    let err = ContentionWorkload::new(cfg)
        .why_failed(&block)
        .unwrap()
        .to_string();
    assert_eq!(
        err,
        "contention getppid: getppid task 1 failed: getppid returned another pid than the \
         task's parent"
    );
    let call = Failure::call(Reason::SchedYield, &std::io::Error::from_raw_os_error(22));
    assert_eq!(call.code(), task_code::ERRNO_BASE + 22);
    assert!(Reason::SchedYield.describe(22).starts_with("sched_yield failed: Invalid"));
}

#[test]
fn counters_that_go_backwards_fail() {
    let window = Window {
        ns: 1,
        start: vec![5, 10],
        end: vec![9, 12],
    };
    check_counts(&window, &[9, 13]).unwrap();
    assert_eq!(window.ops(), [4, 2]);
    let err = check_counts(&window, &[9, 11]).unwrap_err().to_string();
    assert!(err.contains("task 1's op counter went backwards"), "{err}");
}

#[test]
fn jain_index_of_known_inputs() {
    assert_eq!(jain_index(&[5, 5, 5, 5]), Some(1.0));
    assert_eq!(jain_index(&[8, 0, 0, 0]), Some(0.25));
    // (1+2+3)² / (3·(1+4+9)) = 36/42.
    assert!((jain_index(&[1, 2, 3]).unwrap() - 36.0 / 42.0).abs() < 1e-12);
    assert_eq!(jain_index(&[7]), Some(1.0));
    assert_eq!(jain_index(&[0, 0]), None);
    assert_eq!(jain_index(&[]), None);
}

#[test]
fn a_window_without_ops_fails() {
    let err = rate_metrics(&[0, 0], 1_000_000_000).unwrap_err().to_string();
    assert!(err.contains("no task completed an op"), "{err}");
    let m = rate_metrics(&[3, 1], 500_000_000).unwrap();
    assert_eq!(value(&m, "ops_per_sec"), 8.0);
    assert_eq!(value(&m, "min_task_ops_per_sec"), 2.0);
    assert_eq!(value(&m, "max_task_ops_per_sec"), 6.0);
    assert_eq!(value(&m, "jain_fairness_index"), 16.0 / 20.0);
}

#[test]
fn bad_parameters_name_their_flag() {
    let bad = |p: ContentionParams, flag: &str| {
        let err = p.validate().unwrap_err();
        assert!(err.is_invalid_input());
        assert!(err.to_string().contains(flag), "{err}");
    };
    let zero_tasks = ContentionParams {
        tasks: 0,
        ..Default::default()
    };
    bad(zero_tasks, "--tasks");
    let too_many = ContentionParams {
        tasks: MAX_TASKS + 1,
        ..Default::default()
    };
    bad(too_many, "--tasks");
    let no_time = ContentionParams {
        duration: 0,
        ..Default::default()
    };
    bad(no_time, "--duration");
    let long_warmup = ContentionParams {
        warmup_sec: MAX_SECONDS + 1,
        ..Default::default()
    };
    bad(long_warmup, "--warmup-sec");
    let no_section = ContentionParams {
        testcase: Testcase::Mmap,
        work: 7,
        ..Default::default()
    };
    bad(
        no_section,
        "--work applies to fcntl-lock and the user-space locks only, not mmap",
    );
    let unsampled = ContentionParams {
        testcase: Testcase::FcntlLock,
        sample_every: 3,
        ..Default::default()
    };
    bad(unsampled, "--sample-every applies to the user-space locks only");
    let every_one = ContentionParams {
        testcase: Testcase::Mcs,
        sample_every: 1,
        ..Default::default()
    };
    bad(every_one, "--sample-every");
    let forked_lock = ContentionParams {
        testcase: Testcase::Ticket,
        processes: true,
        ..Default::default()
    };
    bad(forked_lock, "--processes is not for ticket");
    let no_pipe = ContentionParams {
        readers: 2,
        ..Default::default()
    };
    bad(no_pipe, "--readers applies to pipe-writers only, not getppid");
    let torn = ContentionParams {
        testcase: Testcase::PipeWriters,
        write_bytes: MAX_WRITE_BYTES as u64 + 1,
        ..Default::default()
    };
    bad(torn, "--write-bytes");
    let lonely = ContentionParams {
        testcase: Testcase::FutexWakeStorm,
        tasks: 1,
        ..Default::default()
    };
    bad(lonely, "--tasks must be at least 2 for futex-wake-storm");
    let absurd_work = ContentionParams {
        testcase: Testcase::FcntlLock,
        work: MAX_WORK + 1,
        ..Default::default()
    };
    bad(absurd_work, "--work");
    let not_mapping = ContentionParams {
        map_kib: 64,
        ..Default::default()
    };
    bad(not_mapping, "--map-kib applies to mmap and page-fault only, not getppid");
    let too_much = ContentionParams {
        testcase: Testcase::PageFault,
        tasks: MAX_TASKS,
        map_kib: MAX_MAP_KIB,
        ..Default::default()
    };
    bad(too_much, "--map-kib");
    // mmap never touches more than a page, so its mappings need only address space.
    ContentionParams {
        testcase: Testcase::Mmap,
        tasks: 64,
        map_kib: MAX_MAP_KIB,
        ..Default::default()
    }
    .validate()
    .unwrap();
    let mapped_elsewhere = ContentionParams {
        testcase: Testcase::PageFault,
        map_only: true,
        ..Default::default()
    };
    bad(mapped_elsewhere, "--map-only applies to mmap only, not page-fault");
    let shared_pipe_file = ContentionParams {
        testcase: Testcase::PipeLoopback,
        file_per_task: true,
        ..Default::default()
    };
    bad(shared_pipe_file, "--file-per-task applies to fcntl-lock only, not pipe-loopback");
    let loopback_records = ContentionParams {
        testcase: Testcase::PipeLoopback,
        write_bytes: 8,
        ..Default::default()
    };
    bad(loopback_records, "--write-bytes applies to pipe-writers only");
    assert!(serde_json::from_value::<Testcase>("fork".into()).is_err());
    ContentionParams::default().validate().unwrap();
}

#[test]
fn names_scaling_and_suite_text() {
    let p = ContentionParams {
        testcase: Testcase::SchedYield,
        tasks: 8,
        processes: true,
        ..Default::default()
    };
    assert_eq!(
        p.case_name(),
        "contention:sched-yield process tasks=8 duration=5 warmup=1"
    );
    assert_eq!(p.scaled(0.5).unwrap().duration, 3);
    let mapping = ContentionParams {
        testcase: Testcase::PageFault,
        map_kib: 4096,
        ..Default::default()
    };
    assert_eq!(
        mapping.case_name(),
        "contention:page-fault threads tasks=2 duration=5 warmup=1 map-kib=4096"
    );
    let exact = ContentionParams {
        testcase: Testcase::Mmap,
        map_only: true,
        ..Default::default()
    };
    assert!(exact.case_name().ends_with(" map-kib=131072 map-only"), "{}", exact.case_name());
    let lock1 = ContentionParams {
        testcase: Testcase::FcntlLock,
        file_per_task: true,
        work: 0,
        ..Default::default()
    };
    assert!(lock1.case_name().ends_with(" file-per-task work=0"), "{}", lock1.case_name());
    assert_eq!(p.scaled(0.01).unwrap().duration, 1);
    assert_eq!(p.estimate_sec(), 6.0);
    let label = p.comparison_label(&p.case_name());
    assert_eq!((label.short.as_str(), label.load.as_str()), ("sched-yield-process", "8-tasks"));
    let text = toml::to_string(&p).unwrap();
    let back: ContentionParams = toml::from_str(&text).unwrap();
    assert_eq!(back, p);
    for testcase in Testcase::ALL {
        let read: Testcase = serde_json::from_value(testcase.as_str().into()).unwrap();
        assert_eq!(read, testcase);
    }
}
