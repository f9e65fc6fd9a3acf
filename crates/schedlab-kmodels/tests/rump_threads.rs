//! The rump schedulers under real host threads: every system call of every thread checked as it
//! happens (one CPU per thread inside, none held twice), with more threads than virtual CPUs so
//! that slow paths, migrations and sleeps happen; and a planted double assignment caught.
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use schedlab_kmodels::rump::{
    checked_syscall, Cached, Freelist, Lwp, LwpStats, Occupancy, Violation, VirtualKernel,
};

/// `threads` threads making `ops` checked system calls each, stopping all at the first
/// violation (or at `until`); the first violation, or every lwp's counts.
fn checked_run(
    kernel: &dyn VirtualKernel,
    threads: u32,
    ops: u64,
    until: Instant,
) -> Result<Vec<LwpStats>, Violation> {
    let occupancy = Occupancy::new(kernel.vcpus());
    let stop = AtomicBool::new(false);
    let results: Vec<Result<LwpStats, Violation>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..=threads)
            .map(|id| {
                let (occupancy, stop) = (&occupancy, &stop);
                scope.spawn(move || {
                    let mut lwp = Lwp::new(id).unwrap();
                    for i in 0..ops {
                        if stop.load(Ordering::Relaxed) || (i % 1024 == 0 && Instant::now() > until)
                        {
                            break;
                        }
                        if let Err(v) = checked_syscall(kernel, &mut lwp, occupancy) {
                            stop.store(true, Ordering::Relaxed);
                            return Err(v);
                        }
                    }
                    Ok(lwp.stats)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    results.into_iter().collect()
}

#[test]
fn both_schedulers_keep_their_promises_under_contention() {
    let until = Instant::now() + Duration::from_secs(120);
    for (vcpus, threads) in [(1, 3), (2, 2), (2, 5), (3, 4)] {
        let kernels: [Box<dyn VirtualKernel>; 2] =
            [Box::new(Cached::new(vcpus)), Box::new(Freelist::new(vcpus))];
        for kernel in kernels {
            let ops = 20_000;
            let stats = checked_run(kernel.as_ref(), threads, ops, until)
                .unwrap_or_else(|v| panic!("{:?} {vcpus}/{threads}: {v}", kernel.variant()));
            let mut all = LwpStats::default();
            stats.iter().for_each(|s| all.add(s));
            assert_eq!(all.anomalies, 0);
            assert_eq!(all.fast + all.locked, kernel.syscalls());
            if Instant::now() < until {
                assert_eq!(kernel.syscalls(), ops * u64::from(threads));
            }
            kernel.check_quiescent().unwrap();
        }
    }
}

#[test]
fn a_planted_double_assignment_is_caught_under_real_threads() {
    // CPU 0 on the freelist twice and CPU 1 not at all: two threads inside at once hold one CPU.
    // On one host CPU that needs a preemption inside the kernel; the bound is generous.
    let until = Instant::now() + Duration::from_secs(60);
    let kernel = Freelist::with_free_list(2, &[0, 0]);
    match checked_run(&kernel, 2, u64::MAX, until) {
        Err(Violation::HeldTwice { vcpu: 0, .. }) => {}
        other => panic!("the double assignment went unnoticed: {other:?}"),
    }
}
