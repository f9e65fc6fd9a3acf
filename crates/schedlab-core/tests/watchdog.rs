//! The iteration watchdog through the runner, in a test process of its own: its deadline flag and
//! signal are process-wide, and a thread the watchdog gives up on stays stuck until the process
//! ends, so these tests must not share a process with others.
use schedlab_core::plan::RunPlan;
use schedlab_core::record::RunStatus;
use schedlab_core::runner::{execute, NoSink, RunOutcome, Silent};
use schedlab_core::workload::fake::{FakeParams, StallIn};
use schedlab_core::workload::tasks::live_task_threads;
use schedlab_core::workload::WorkloadSpec;

fn stalling(stall_in: StallIn, value_usec: f64) -> WorkloadSpec {
    WorkloadSpec::Fake(FakeParams {
        value_usec,
        stall_at: Some(1),
        stall_in: Some(stall_in),
        ..Default::default()
    })
}

fn fine() -> WorkloadSpec {
    WorkloadSpec::Fake(FakeParams {
        value_usec: 3.0,
        ..Default::default()
    })
}

/// A case whose second iteration stalls in `stall_in`, then a fine case: two measured iterations
/// each after a warm-up, a 0.5 s deadline, `--keep-going`.
fn stall_then_fine(stall_in: StallIn, value_usec: f64) -> RunOutcome {
    let plan = RunPlan::new(
        None,
        None,
        2,
        1,
        vec![stalling(stall_in, value_usec), fine()],
    )
    .unwrap()
    .with_iteration_timeout_sec(0.5)
    .unwrap()
    .with_keep_going(true);
    execute(&plan, &mut NoSink, &mut Silent)
}

/// One test, run in order: the process-wide state must not be shared by tests running at once.
#[test]
fn deadlines_name_the_stuck_task_stop_it_and_keep_going_only_when_nothing_is_left() {
    // A stopped process: named, killed, and the next case runs.
    let outcome = stall_then_fine(StallIn::Process, 1.0);
    assert_eq!(outcome.status, RunStatus::Partial);
    let case_error = outcome.cases[0].error.clone().unwrap();
    assert!(
        case_error.contains("no result within 0.5 s"),
        "{case_error}"
    );
    assert!(
        case_error.contains("fake worker 1 (pid ") && case_error.contains("stopped"),
        "{case_error}"
    );
    assert!(!case_error.contains("fake worker 0"), "{case_error}");
    assert_eq!(outcome.cases[0].iterations.len(), 1, "the warm-up is kept");
    assert_eq!(
        outcome.cases[1].iterations.len(),
        3,
        "--keep-going ran the next case"
    );

    // A thread waiting for a wake-up that never comes cannot be killed: the run ends there.
    let outcome = stall_then_fine(StallIn::Thread, 2.0);
    assert_eq!(outcome.status, RunStatus::Failed);
    let error = outcome.error.unwrap().to_string();
    assert!(error.contains("fake worker 1 (tid "), "{error}");
    assert!(error.contains("blocked"), "{error}");
    assert!(error.contains("despite --keep-going"), "{error}");
    assert_eq!(outcome.cases[1].iterations.len(), 0);
    assert_eq!(live_task_threads(), 1, "the stuck thread is counted");
}
