//! The `pipe` workload, the class of `perf bench sched pipe`: two tasks and two pipes; a 4-byte
//! token goes over and comes back `loops` times. One op is one round trip. Each side checks that
//! the token it receives is the one it expects, so a lost or reordered message fails the run.
use serde::{Deserialize, Serialize};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use super::definition::{field, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::metric::{Better, MetricDef};
use crate::cpu_list::CpuPair;
use crate::sys::{self, task_code, AsFd, OwnedFd, TaskCode};
use crate::{Error, Result};

pub const USEC_PER_OP: MetricDef = MetricDef::primary("usec_per_op", "usec", Better::Lower);
pub const OPS_PER_SEC: MetricDef =
    MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher).reciprocal_of(USEC_PER_OP);
const METRICS: &[MetricDef] = &[USEC_PER_OP, OPS_PER_SEC];

/// A round trip between processes on this 2-vCPU VM, for the estimate (threads: 5 µs).
const PROCESS_ROUND_TRIP_SEC: f64 = 7e-6;
const THREAD_ROUND_TRIP_SEC: f64 = 5e-6;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PipeParams {
    /// Round trips per iteration.
    pub loops: u64,
    /// Two threads of one process instead of two processes.
    #[serde(alias = "threaded")]
    pub threads: bool,
    /// Pin the two tasks: `[0, 0]` puts both on CPU 0, `[0, 1]` apart.
    #[serde(skip_serializing_if = "Option::is_none", alias = "pin")]
    pub cpus: Option<CpuPair>,
}

impl Default for PipeParams {
    fn default() -> Self {
        PipeParams {
            loops: 1_000_000,
            threads: false,
            cpus: None,
        }
    }
}

const PIPE_REFERENCE: &str = "perf bench sched pipe's -l/--loop and -T/--threaded are taken as \
spelt there; its -G/--cgroups is refused, with the reason (docs/cli.md).";

impl WorkloadParams for PipeParams {
    const NAME: &'static str = "pipe";
    const SUMMARY: &'static str =
        "two tasks ping-pong a 4-byte token over two pipes (perf bench sched pipe)";
    const REFERENCE_NOTE: Option<&'static str> = Some(PIPE_REFERENCE);
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(loops), "loops", ParamKind::Count { min: 1, max: 10_000_000_000 })
            .short('l')
            .aliases(&["loop"])
            .value("N")
            .help("Round trips per iteration.")
            .details("Round trips per iteration (1 to 10^10).")
            .work_size(),
        Param::new(field!(threads), "threaded", ParamKind::Switch)
            .short('T')
            .aliases(&["threads"])
            .help("Use two threads instead of two processes.")
            .details("Two threads of one process instead of two processes."),
        Param::new(field!(cpus), "pin", ParamKind::Text)
            .aliases(&["cpus"])
            .value("A,B")
            .help("Pin the two tasks to CPUs A and B (`0,0`: both on CPU 0; `0,1`: apart).")
            .details("Pin the two tasks: `0,0` both on CPU 0, `0,1` apart."),
        Param::without_field(
            "cgroups",
            "cgroups",
            ParamKind::Refused {
                tool: "perf bench sched pipe",
                takes_value: true,
                why: "schedlab does not move its tasks into cgroups; start schedlab inside the cgroup",
            },
        )
        .short('G')
        .value("SEND,RECV"),
    ];

    fn check_rules(&self) -> Result<()> {
        match self.cpus {
            Some(cpus) => cpus.check_allowed("cpus"),
            None => Ok(()),
        }
    }

    /// Ping and pong, each holding its ends of the two pipes.
    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(2, "tasks", "").holding(4)
    }

    fn case_name(&self) -> String {
        let mode = TaskMode::from_threads_flag(self.threads).as_str();
        let mut name = format!("pipe:{mode} loops={}", self.loops);
        if let Some(cpus) = self.cpus {
            name.push_str(&format!(" cpus={cpus}"));
        }
        name
    }


    fn estimate_sec(&self) -> f64 {
        let per_trip = if self.threads {
            THREAD_ROUND_TRIP_SEC
        } else {
            PROCESS_ROUND_TRIP_SEC
        };
        self.loops as f64 * per_trip
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(PipeWorkload::new(self.clone())))
    }
}

pub struct PipeWorkload {
    params: PipeParams,
}

impl PipeWorkload {
    pub fn new(params: PipeParams) -> Self {
        PipeWorkload { params }
    }
}

/// Side 0 sends token i and expects i back; side 1 expects i and returns it.
fn ping_side(send: &OwnedFd, receive: &OwnedFd, loops: u64, cpu: Option<u32>) -> TaskCode {
    if let Some(cpu) = cpu {
        if sys::pin_current_thread(cpu).is_err() {
            return task_code::AFFINITY_FAILED;
        }
    }
    let mut buf = [0u8; 4];
    for i in 0..loops {
        let token = (i as u32).to_ne_bytes();
        if let Err(e) = sys::write_full(send.as_fd(), &token) {
            return task_code::from_io_error(&e);
        }
        match sys::read_full(receive.as_fd(), &mut buf) {
            Ok(true) if buf == token => {}
            Ok(true) => return task_code::VERIFY_FAILED,
            Ok(false) => return task_code::SHORT_COUNT,
            Err(e) => return task_code::from_io_error(&e),
        }
    }
    task_code::OK
}

fn pong_side(receive: &OwnedFd, send: &OwnedFd, loops: u64, cpu: Option<u32>) -> TaskCode {
    if let Some(cpu) = cpu {
        if sys::pin_current_thread(cpu).is_err() {
            return task_code::AFFINITY_FAILED;
        }
    }
    let mut buf = [0u8; 4];
    for i in 0..loops {
        match sys::read_full(receive.as_fd(), &mut buf) {
            Ok(true) if buf == (i as u32).to_ne_bytes() => {}
            Ok(true) => return task_code::VERIFY_FAILED,
            Ok(false) => return task_code::SHORT_COUNT,
            Err(e) => return task_code::from_io_error(&e),
        }
        if let Err(e) = sys::write_full(send.as_fd(), &buf) {
            return task_code::from_io_error(&e);
        }
    }
    task_code::OK
}

impl Workload for PipeWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let pipe = || sys::pipe().map_err(|e| Error::failed(format!("cannot create a pipe: {e}")));
        let (forward_read, forward_write) = pipe()?;
        let (back_read, back_write) = pipe()?;
        let loops = self.params.loops;
        let [cpu0, cpu1] = match self.params.cpus {
            Some(CpuPair([a, b])) => [Some(a), Some(b)],
            None => [None, None],
        };
        let mut launch = TaskLaunch::new(TaskMode::from_threads_flag(self.params.threads))?;
        launch.spawn("pipe ping", move || {
            ping_side(&forward_write, &back_read, loops, cpu0)
        })?;
        launch.spawn("pipe pong", move || {
            pong_side(&forward_read, &back_write, loops, cpu1)
        })?;
        let start = launch.start()?;
        let stop = launch.wait_all()?;
        let elapsed_ns = stop.saturating_sub(start).max(1);
        let usec_per_op = elapsed_ns as f64 / 1_000.0 / loops as f64;
        Ok(vec![
            USEC_PER_OP.value(usec_per_op),
            OPS_PER_SEC.value(loops as f64 * 1e9 / elapsed_ns as f64),
        ]
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Measurement;

    fn run(params: PipeParams) -> Vec<Measurement> {
        let mut w = PipeWorkload::new(params);
        w.run_iteration(IterationInfo::FIRST)
        .unwrap()
        .measurements
    }

    #[test]
    fn processes_complete_and_report_both_metrics() {
        let m = run(PipeParams {
            loops: 2_000,
            threads: false,
            cpus: None,
        });
        assert_eq!(m.len(), 2);
        assert_eq!(m[0].name, "usec_per_op");
        assert!(m[0].value > 0.0);
        let implied = 1e6 / m[0].value;
        assert!((implied - m[1].value).abs() / implied < 1e-9);
    }

    #[test]
    fn threads_complete() {
        let m = run(PipeParams {
            loops: 2_000,
            threads: true,
            cpus: None,
        });
        assert!(m[1].value > 0.0);
    }

    #[test]
    fn pinned_to_one_cpu() {
        let cpu = sys::allowed_cpus().unwrap()[0];
        run(PipeParams {
            loops: 500,
            threads: true,
            cpus: Some(CpuPair([cpu, cpu])),
        });
    }

    #[test]
    fn ping_detects_a_wrong_token() {
        let (fr, fw) = sys::pipe().unwrap();
        let (br, bw) = sys::pipe().unwrap();
        // The peer answers with a token other than the one sent.
        sys::write_full(bw.as_fd(), &99u32.to_ne_bytes()).unwrap();
        assert_eq!(ping_side(&fw, &br, 1, None), task_code::VERIFY_FAILED);
        drop(fr);
    }

    #[test]
    fn pong_detects_a_closed_stream() {
        let (fr, fw) = sys::pipe().unwrap();
        let (_br, bw) = sys::pipe().unwrap();
        drop(fw);
        assert_eq!(pong_side(&fr, &bw, 3, None), task_code::SHORT_COUNT);
    }

    #[test]
    fn rejects_bad_parameters() {
        assert!(PipeParams {
            loops: 0,
            ..Default::default()
        }
        .validate()
        .is_err());
        let err = PipeParams {
            cpus: Some(CpuPair([0, 100_000])),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(err.to_string().contains("CPU 100000"));
    }
}
