//! The `fanout` workload, seed 001's server.go: a dispatcher thread and `workers` worker threads,
//! each worker with a bounded request channel and a bounded reply channel (capacity 0 is a
//! rendezvous, like Go's unbuffered channels). Each round the dispatcher sends one message to
//! every worker, writes 30 bytes to /dev/null once per worker (as server.go's main loop does), and
//! collects every reply. Per message a worker writes 30 bytes to /dev/null, burns `work` loop
//! iterations and replies. Go multiplexes goroutines on GOMAXPROCS threads; here every worker is
//! an OS thread, so each hand-off is a real thread wake-up.
//!
//! Verification: a message carries (round, worker); the reply must be that message's own
//! transform, checked by the dispatcher for every message, and the total checksum (server.go's
//! "Final total") must equal its closed form, so every message was processed exactly once.
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use super::work_units::burn;
use super::definition::{field, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::metric::{Better, MetricDef};
use crate::sys::{self, task_code, AsFd, OwnedFd, TaskCode};
use crate::{Error, Result};

pub const USEC_PER_ROUND: MetricDef = MetricDef::primary("usec_per_round", "usec", Better::Lower);
/// The round's time over its 2 × workers handoffs.
pub const USEC_PER_HANDOFF: MetricDef =
    MetricDef::primary("usec_per_handoff", "usec", Better::Lower).multiple_of(USEC_PER_ROUND);
const METRICS: &[MetricDef] = &[USEC_PER_ROUND, USEC_PER_HANDOFF];

/// For the estimate, measured on a 2-vCPU VM (release build, 50 workers, 200 rounds): one
/// message's hand-off to a worker and back with its /dev/null writes, and one loop iteration of
/// work.
const HANDOFF_SEC: f64 = 15e-6;
const WORK_UNIT_SEC: f64 = 1e-9;
/// Bytes per /dev/null write, as server.go writes.
const WRITE_BYTES: usize = 30;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FanoutParams {
    /// Worker threads.
    pub workers: u64,
    /// Rounds per iteration; each sends one message to every worker and collects every reply.
    pub rounds: u64,
    /// Loop iterations of work per message in a worker.
    pub work: u64,
    /// Messages each channel holds before a send blocks (0: a rendezvous, as Go's unbuffered
    /// channels).
    pub capacity: u64,
}

impl Default for FanoutParams {
    fn default() -> Self {
        FanoutParams {
            workers: 50,
            rounds: 2_000,
            work: 1_000,
            capacity: 0,
        }
    }
}

impl WorkloadParams for FanoutParams {
    const NAME: &'static str = "fanout";
    const SUMMARY: &'static str = "a dispatcher and worker threads over bounded channels, one \
/dev/null write per message (seed 001's server.go)";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(workers), "workers", ParamKind::Count { min: 1, max: 4_096 })
            .value("W")
            .help("Worker threads.")
            .details("Worker threads (1 to 4,096).")
            .task_count(),
        Param::new(field!(rounds), "rounds", ParamKind::Count { min: 1, max: 1_000_000_000 })
            .value("R")
            .help("Rounds per iteration (one message to and one reply from every worker).")
            .details("Rounds per iteration (1 to 10^9).")
            .work_size(),
        Param::new(field!(work), "work", ParamKind::Count { min: 0, max: 100_000_000 })
            .value("K")
            .help("Loop iterations of work per message in a worker.")
            .details("Loop iterations of work per message in a worker (0 to 10^8)."),
        Param::new(field!(capacity), "capacity", ParamKind::Count { min: 0, max: 1_000_000 })
            .value("C")
            .help("Messages a channel holds before a send blocks (0: rendezvous, like Go's unbuffered).")
            .details("Messages a channel holds before a send blocks; 0 is a rendezvous, like Go's unbuffered channels (0 to 10^6)."),
    ];

    fn check_rules(&self) -> Result<()> {
        if self
            .rounds
            .checked_mul(self.workers)
            .is_none_or(|m| m > u64::MAX / 4)
        {
            return Err(Error::invalid("--rounds × --workers is too large"));
        }
        Ok(())
    }

    /// The dispatcher and every worker, each with /dev/null open.
    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(self.workers + 1, "threads", "use fewer --workers")
            .holding(self.workers + 1)
    }

    fn case_name(&self) -> String {
        format!(
            "fanout workers={} rounds={} work={} capacity={}",
            self.workers, self.rounds, self.work, self.capacity
        )
    }


    /// Every message is handed over and back through the dispatcher, one at a time.
    fn estimate_sec(&self) -> f64 {
        let messages = self.rounds as f64 * self.workers as f64;
        messages * (HANDOFF_SEC + self.work as f64 * WORK_UNIT_SEC)
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(FanoutWorkload::new(self.clone())))
    }
}

/// The message of `round` for `worker`: unique per (round, worker).
fn message(round: u64, worker: u64, workers: u64) -> u64 {
    round * workers + worker
}

/// What a worker replies to message `m`.
fn reply_of(m: u64) -> u64 {
    m.wrapping_mul(2).wrapping_add(1)
}

/// The sum of every reply of a run: Σ (2m + 1) over m in 0..n = n², mod 2^64.
fn expected_total(rounds: u64, workers: u64) -> u64 {
    let n = rounds * workers;
    n.wrapping_mul(n)
}

/// What the dispatcher and the workers report after the run.
#[derive(Default)]
struct Report {
    total: AtomicU64,
    replies: AtomicU64,
    /// Messages each worker processed.
    processed: Vec<AtomicU64>,
}

fn worker(
    requests: Receiver<u64>,
    replies: SyncSender<u64>,
    devnull: OwnedFd,
    work: u64,
    processed: &AtomicU64,
) -> TaskCode {
    let bytes = [b'w'; WRITE_BYTES];
    let mut sink = 0u64;
    let mut count = 0u64;
    // The dispatcher closing the request channel ends the worker; on any failure the worker
    // returns, dropping its reply sender, which ends the dispatcher's wait for it.
    let code = loop {
        let Ok(m) = requests.recv() else {
            break task_code::OK;
        };
        match sys::write_once(devnull.as_fd(), &bytes) {
            Ok(WRITE_BYTES) => {}
            Ok(_) => break task_code::SHORT_COUNT,
            Err(e) => break task_code::from_io_error(&e),
        }
        sink = burn(work, sink);
        if replies.send(reply_of(m)).is_err() {
            break task_code::SHORT_COUNT;
        }
        count += 1;
    };
    black_box(sink);
    processed.store(count, Ordering::SeqCst);
    code
}

fn dispatcher(
    requests: Vec<SyncSender<u64>>,
    replies: Vec<Receiver<u64>>,
    devnull: OwnedFd,
    rounds: u64,
    report: &Report,
) -> TaskCode {
    let workers = requests.len() as u64;
    let bytes = [b'd'; WRITE_BYTES];
    let mut total = 0u64;
    let mut received = 0u64;
    let code = (|| -> std::result::Result<(), TaskCode> {
        for round in 0..rounds {
            for (w, channel) in requests.iter().enumerate() {
                channel
                    .send(message(round, w as u64, workers))
                    .map_err(|_| task_code::SHORT_COUNT)?;
            }
            for _ in 0..workers {
                match sys::write_once(devnull.as_fd(), &bytes) {
                    Ok(WRITE_BYTES) => {}
                    Ok(_) => return Err(task_code::SHORT_COUNT),
                    Err(e) => return Err(task_code::from_io_error(&e)),
                }
            }
            for (w, channel) in replies.iter().enumerate() {
                let reply = channel.recv().map_err(|_| task_code::SHORT_COUNT)?;
                if reply != reply_of(message(round, w as u64, workers)) {
                    return Err(task_code::VERIFY_FAILED);
                }
                total = total.wrapping_add(reply);
                received += 1;
            }
        }
        Ok(())
    })();
    report.total.store(total, Ordering::SeqCst);
    report.replies.store(received, Ordering::SeqCst);
    // Dropping the request senders (when this returns) ends every worker's loop.
    match code {
        Ok(()) => task_code::OK,
        Err(c) => c,
    }
}

pub struct FanoutWorkload {
    params: FanoutParams,
}

impl FanoutWorkload {
    pub fn new(params: FanoutParams) -> Self {
        FanoutWorkload { params }
    }
}

fn open_devnull(who: &str) -> Result<OwnedFd> {
    sys::open_device("/dev/null")
        .map_err(|e| Error::failed(format!("cannot open /dev/null for {who}: {e}")))
}

impl Workload for FanoutWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let p = &self.params;
        let workers = p.workers as usize;
        sys::raise_open_files_limit();
        let report = Arc::new(Report {
            total: AtomicU64::new(0),
            replies: AtomicU64::new(0),
            processed: (0..workers).map(|_| AtomicU64::new(0)).collect(),
        });
        let mut request_senders = Vec::with_capacity(workers);
        let mut reply_receivers = Vec::with_capacity(workers);
        let mut launch = TaskLaunch::new(TaskMode::Threads)?;
        for w in 0..workers {
            let (request_tx, request_rx) = sync_channel::<u64>(p.capacity as usize);
            let (reply_tx, reply_rx) = sync_channel::<u64>(p.capacity as usize);
            request_senders.push(request_tx);
            reply_receivers.push(reply_rx);
            let devnull = open_devnull(&format!("worker {w}"))?;
            let (work, report) = (p.work, Arc::clone(&report));
            launch.spawn(format!("fanout worker {w}"), move || {
                worker(request_rx, reply_tx, devnull, work, &report.processed[w])
            })?;
        }
        let devnull = open_devnull("the dispatcher")?;
        let (rounds, r) = (p.rounds, Arc::clone(&report));
        launch.spawn("fanout dispatcher", move || {
            dispatcher(request_senders, reply_receivers, devnull, rounds, &r)
        })?;
        let start = launch.start()?;
        let stop = launch.wait_all()?;
        drop(launch);
        verify(&report, p)?;
        let elapsed_ns = stop.saturating_sub(start).max(1) as f64;
        let handoffs = 2.0 * p.rounds as f64 * p.workers as f64;
        Ok(vec![
            USEC_PER_ROUND.value(elapsed_ns / 1_000.0 / p.rounds as f64),
            USEC_PER_HANDOFF.value(elapsed_ns / 1_000.0 / handoffs),
        ]
        .into())
    }
}

fn verify(report: &Report, p: &FanoutParams) -> Result<()> {
    let replies = report.replies.load(Ordering::SeqCst);
    let expected_replies = p.rounds * p.workers;
    if replies != expected_replies {
        return Err(Error::failed(format!(
            "fanout: the dispatcher got {replies} of {expected_replies} replies"
        )));
    }
    for (w, processed) in report.processed.iter().enumerate() {
        let n = processed.load(Ordering::SeqCst);
        if n != p.rounds {
            return Err(Error::failed(format!(
                "fanout: worker {w} processed {n} messages, expected {}",
                p.rounds
            )));
        }
    }
    let total = report.total.load(Ordering::SeqCst);
    let expected = expected_total(p.rounds, p.workers);
    if total != expected {
        return Err(Error::failed(format!(
            "fanout checksum mismatch: total {total}, expected {expected}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(params: FanoutParams) -> Result<IterationOutput> {
        params.validate().unwrap();
        FanoutWorkload::new(params).run_iteration(IterationInfo::FIRST)
    }

    #[test]
    fn every_message_is_processed_once_and_the_checksum_matches() {
        for capacity in [0, 1, 4] {
            let m = run(FanoutParams {
                workers: 7,
                rounds: 60,
                work: 100,
                capacity,
            })
            .unwrap()
            .measurements;
            assert_eq!(m[0].name, "usec_per_round");
            // A round is 2 × workers hand-offs.
            let ratio = m[0].value / m[1].value;
            assert!((ratio - 14.0).abs() < 1e-9, "{ratio}");
        }
    }

    #[test]
    fn checksum_closed_form_matches_the_sum() {
        for (rounds, workers) in [(1, 1), (3, 5), (100, 50)] {
            let mut sum = 0u64;
            for r in 0..rounds {
                for w in 0..workers {
                    sum = sum.wrapping_add(reply_of(message(r, w, workers)));
                }
            }
            assert_eq!(sum, expected_total(rounds, workers));
        }
    }

    #[test]
    fn dispatcher_rejects_a_wrong_reply_and_workers_end() {
        // One worker that answers wrongly: the dispatcher must fail with VERIFY_FAILED.
        let (request_tx, request_rx) = sync_channel::<u64>(0);
        let (reply_tx, reply_rx) = sync_channel::<u64>(0);
        let liar = std::thread::spawn(move || {
            while let Ok(m) = request_rx.recv() {
                if reply_tx.send(reply_of(m) + 1).is_err() {
                    break;
                }
            }
        });
        let report = Report {
            total: AtomicU64::new(0),
            replies: AtomicU64::new(0),
            processed: vec![AtomicU64::new(0)],
        };
        let devnull = sys::open_device("/dev/null").unwrap();
        let code = dispatcher(vec![request_tx], vec![reply_rx], devnull, 5, &report);
        assert_eq!(code, task_code::VERIFY_FAILED);
        liar.join().unwrap();
    }

    #[test]
    fn verification_names_the_missing_work() {
        let p = FanoutParams {
            workers: 2,
            rounds: 3,
            ..Default::default()
        };
        let report = Report {
            total: AtomicU64::new(expected_total(3, 2)),
            replies: AtomicU64::new(6),
            processed: vec![AtomicU64::new(3), AtomicU64::new(2)],
        };
        let err = verify(&report, &p).unwrap_err().to_string();
        assert!(err.contains("worker 1 processed 2"), "{err}");
        report.processed[1].store(3, Ordering::SeqCst);
        verify(&report, &p).unwrap();
        report.total.store(1, Ordering::SeqCst);
        assert!(verify(&report, &p)
            .unwrap_err()
            .to_string()
            .contains("checksum"));
    }

    #[test]
    fn rejects_bad_parameters() {
        for (p, flag) in [
            (
                FanoutParams {
                    workers: 0,
                    ..Default::default()
                },
                "--workers",
            ),
            (
                FanoutParams {
                    rounds: 0,
                    ..Default::default()
                },
                "--rounds",
            ),
            (
                FanoutParams {
                    capacity: 1_000_001,
                    ..Default::default()
                },
                "--capacity",
            ),
        ] {
            let err = p.validate().unwrap_err().to_string();
            assert!(err.contains(flag), "{err}");
        }
    }
}
