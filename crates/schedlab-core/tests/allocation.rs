//! Timed loops do not allocate. A counting global allocator sees every allocation of an
//! iteration, in this process and in the processes it forks (the count lives in a shared
//! mapping); an iteration with 10 times the work (twice the seconds, for the workloads timed by
//! the clock) must make no more allocations than a small one. An allocation per operation would
//! add thousands, and a buffer that doubles as it fills at least one reallocation.
//! Allocations outside the loops (tasks, buffers, results) are the same for both sizes, and so is
//! std's thread-start bookkeeping as long as a case starts few threads: its map of every thread's
//! stack guard allocates nodes as the order of insertion splits them, which varies beyond about
//! ten threads, so every case here runs at most eight tasks.
//!
//! One process of its own: the count is process-wide, so the cases run one after another in one
//! test. Workloads not here: `fake` has no tasks or loop, and `external`'s program is another
//! executable, whose allocations are its own.
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

use schedlab_core::workload::definition::IterationInfo;
use schedlab_core::workload::WorkloadSpec;
use serde_json::{json, Value};

/// Where allocations are counted until `share_the_count` moves the count into a shared mapping.
static PRIVATE_COUNT: AtomicU64 = AtomicU64::new(0);
static COUNT: AtomicPtr<AtomicU64> = AtomicPtr::new(&PRIVATE_COUNT as *const _ as *mut _);

struct CountingAllocator;

fn count_one() {
    // SAFETY: COUNT points at a static or at a mapping that is never unmapped.
    unsafe { &*COUNT.load(Ordering::Relaxed) }.fetch_add(1, Ordering::Relaxed);
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc(layout)
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        System.alloc_zeroed(layout)
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        System.realloc(ptr, layout, new_size)
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout)
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Moves the count into an anonymous shared mapping, so that forked tasks add to it.
fn share_the_count() {
    // SAFETY: a fresh anonymous mapping of one page, never unmapped; its zeroed first eight bytes
    // are a valid, suitably aligned AtomicU64.
    let page = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            4096,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
            rustix::mm::MapFlags::SHARED,
        )
    }
    .expect("mmap");
    COUNT.store(page.cast(), Ordering::SeqCst);
}

fn allocations() -> u64 {
    // SAFETY: as in count_one.
    unsafe { &*COUNT.load(Ordering::SeqCst) }.load(Ordering::SeqCst)
}

/// The allocations of one measured iteration of `spec`, built beforehand.
fn allocations_in_iteration(spec: &WorkloadSpec) -> u64 {
    let mut workload = spec.build().expect("build");
    let before = allocations();
    workload
        .run_iteration(IterationInfo {
            index: 1,
            warmup: false,
        })
        .unwrap_or_else(|e| panic!("{}: {e}", spec.case_name()));
    allocations() - before
}

fn with(base: &Value, key: &str, value: Value) -> WorkloadSpec {
    let mut spec = base.clone();
    spec[key] = value;
    serde_json::from_value(spec).unwrap_or_else(|e| panic!("{base}: {e}"))
}

/// A case: the workload's spec, the key that sets its work, a small and a large value, and how
/// many more allocations the large one may make (0 but where a workload's subject allocates on
/// first use, see `fanout`).
struct Case {
    spec: Value,
    work: &'static str,
    small: Value,
    large: Value,
    first_use: u64,
}

fn by_count(spec: Value, work: &'static str) -> Case {
    Case {
        spec,
        work,
        small: 1_000.into(),
        large: 10_000.into(),
        first_use: 0,
    }
}

/// Workloads timed by the clock: seconds, as few as they take. Those that keep latency
/// histograms serialize them after the window, into buffers that grow with what the histograms
/// hold, and a longer run may reach one more rare value and take one more growth (131 against
/// 132 allocations, once in many runs): two are allowed for that, far below one per op.
fn by_seconds(spec: Value, work: &'static str) -> Case {
    let histograms = spec["workload"] == "wakeup"
        || ["tas", "ticket", "mcs", "pthread-mutex", "futex-mutex"]
            .iter()
            .any(|t| spec["testcase"] == *t);
    Case {
        spec,
        work,
        small: 1.into(),
        large: 2.into(),
        first_use: if histograms { 2 } else { 0 },
    }
}

fn cases() -> Vec<Case> {
    let mut cases = vec![
        by_count(json!({"workload": "pipe"}), "loops"),
        by_count(json!({"workload": "pipe", "threaded": true}), "loops"),
    ];
    for (threaded, pipe) in [(false, false), (true, false), (false, true), (true, true)] {
        cases.push(Case {
            small: 40.into(),
            large: 400.into(),
            ..by_count(
                json!({"workload": "messaging", "groups": 1, "fds": 2,
                       "threaded": threaded, "pipe": pipe}),
                "loops",
            )
        });
    }
    for wait in ["block", "spin", "adaptive"] {
        for processes in [false, true] {
            cases.push(by_count(
                json!({"workload": "semaphore", "wait": wait, "processes": processes, "work": 100}),
                "items",
            ));
        }
    }
    for kind in ["getpid", "getrlimit", "write-devnull", "read-devzero"] {
        cases.push(by_count(
            json!({"workload": "syscall", "kind": kind, "threads": 2}),
            "calls",
        ));
    }
    for capacity in [0, 4] {
        let workers = 4;
        cases.push(Case {
            small: 100.into(),
            large: 1_000.into(),
            // std's channels allocate a waiter entry the first time each side of a channel waits
            // (two channels per worker) and a waiting context per thread on its first wait: part
            // of the channel cost fanout measures, once per iteration and never per message.
            first_use: 2 * 2 * workers + workers + 1,
            ..by_count(
                json!({"workload": "fanout", "workers": workers, "capacity": capacity}),
                "rounds",
            )
        });
    }
    // Not `--check` or `--equivalence`: their replays come after the timed loop (which is the
    // plain variants') and keep a snapshot of the heap per op to report a broken one.
    for variant in ["orig", "bugfix", "fast"] {
        cases.push(by_count(
            json!({"workload": "cpudl", "variant": variant}),
            "ops",
        ));
    }
    for layout in ["shared", "per-node"] {
        cases.push(by_count(
            json!({"workload": "cpupri", "layout": layout, "threads": 2, "nodes": 2}),
            "ops",
        ));
    }
    for mode in [json!({}), json!({"pipe": 4096}), json!({"rps": 2000})] {
        let mut spec = json!({"workload": "wakeup", "message_threads": 1, "workers": 2,
                              "warmup_sec": 0});
        spec.as_object_mut()
            .unwrap()
            .extend(mode.as_object().unwrap().clone());
        cases.push(by_seconds(spec, "runtime"));
    }
    // One testcase of each kind of loop: a system call, a kernel path that maps memory, a pipe
    // with readers, a storm of wake-ups, sampled critical sections of a user-space lock and of
    // the C library's mutex, and a lock across processes.
    for (testcase, processes) in [
        ("getppid", false),
        ("page-fault", false),
        ("pipe-writers", false),
        ("futex-wake-storm", false),
        ("mcs", false),
        ("pthread-mutex", false),
        ("fcntl-lock", true),
    ] {
        cases.push(by_seconds(
            json!({"workload": "contention", "testcase": testcase, "tasks": 2,
                   "processes": processes, "warmup_sec": 0}),
            "duration",
        ));
    }
    // Every kind of phase, in forked tasks: a longer window, no more allocations. Each task
    // serializes its two histograms after the window, and each group's are serialized for the
    // run, into buffers that may grow once more when they hold more: two per histogram.
    let scenario = json!({
        "workload": "scenario",
        "group": [
            {"name": "ticker", "phases": [{"timer": "2ms"}, {"run": "100us"}, {"wake": "waiter"},
                                          {"send": "reader"}, {"spin": "10us"}]},
            {"name": "waiter", "count": 2,
             "phases": ["wait", {"lock": "m"}, {"syscall": "getppid"}, {"unlock": "m"},
                        {"barrier": "b"}]},
            {"name": "reader",
             "phases": ["recv", {"lock": "m"}, "yield", {"unlock": "m"}, {"barrier": "b"},
                        {"sleep": "100us"}]},
        ],
    });
    cases.push(Case {
        spec: scenario,
        work: "duration",
        small: "300ms".into(),
        large: "600ms".into(),
        first_use: 2 * 2 * (4 + 3),
    });
    cases
}

#[test]
fn an_iteration_with_more_work_makes_no_more_allocations() {
    share_the_count();
    // The count must see a forked child's allocations, or the process cases would prove nothing.
    let before = allocations();
    // SAFETY: the child only allocates and leaves with _exit; the parent waits for it.
    let child = unsafe { libc::fork() };
    if child == 0 {
        std::hint::black_box(Box::new(1u64));
        // SAFETY: _exit ends the child without running the parent's exit handlers.
        unsafe { libc::_exit(0) };
    }
    assert!(child > 0, "fork failed");
    // SAFETY: waits for the child just forked.
    assert_eq!(
        unsafe { libc::waitpid(child, std::ptr::null_mut(), 0) },
        child
    );
    assert!(
        allocations() > before,
        "a forked child's allocation was not counted"
    );

    let mut failures = Vec::new();
    for case in cases() {
        let small = with(&case.spec, case.work, case.small.clone());
        let large = with(&case.spec, case.work, case.large.clone());
        // Small first: whatever is allocated once per process lands there, not in the large one.
        let small_count = allocations_in_iteration(&small);
        let large_count = allocations_in_iteration(&large);
        let line = format!(
            "{}: {small_count} allocations at {} = {}, {large_count} at {}",
            small.case_name(),
            case.work,
            case.small,
            case.large
        );
        eprintln!("{line}");
        if large_count > small_count + case.first_use {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "more work, more allocations:\n{}",
        failures.join("\n")
    );
}
