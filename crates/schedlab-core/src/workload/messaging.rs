//! The `messaging` workload (alias `hackbench`), the class of hackbench and `perf bench sched
//! messaging`: `groups` groups of `fds` senders and `fds` receivers; every sender writes `loops`
//! messages of `datasize` bytes to every receiver of its group over AF_UNIX stream sockets (or
//! pipes). The clock starts when every task is ready and stops when all have finished and been
//! reaped, as hackbench's does. Each receiver must get exactly fds × loops messages.
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode, OWN_DESCRIPTORS};
use super::definition::{field, ComparisonLabel, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::metric::{ns_to_sec, Better, MetricDef};
use crate::sys::{self, task_code, AsFd, OwnedFd, TaskCode};
use crate::{Error, Result};

pub const TIME_SEC: MetricDef = MetricDef::primary("time_sec", "sec", Better::Lower);
const METRICS: &[MetricDef] = &[TIME_SEC];

/// A message between two tasks on this 2-vCPU VM, for the estimate: AF_UNIX sockets, pipes; and
/// the start of each task.
const SOCKET_MESSAGE_SEC: f64 = 1.2e-6;
const PIPE_MESSAGE_SEC: f64 = 0.5e-6;
const TASK_START_SEC: f64 = 1e-3;
/// Buffers across all tasks; beyond this a run is more likely a typo than an experiment.
const MAX_TOTAL_BUFFER_BYTES: u64 = 4 * 1024 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MessagingParams {
    pub groups: u64,
    /// Senders and receivers per group (each group has this many of each).
    pub fds: u64,
    /// Messages each sender writes to each receiver.
    pub loops: u64,
    /// Bytes per message.
    pub datasize: u64,
    /// Pipes instead of AF_UNIX stream sockets.
    pub pipe: bool,
    /// Threads instead of processes.
    #[serde(alias = "threaded")]
    pub threads: bool,
}

impl Default for MessagingParams {
    fn default() -> Self {
        MessagingParams {
            groups: 10,
            fds: 20,
            loops: 100,
            datasize: 100,
            pipe: false,
            threads: false,
        }
    }
}

const MESSAGING_REFERENCE: &str = "hackbench's flags (-g -f -l -s -p -T -P, short or long) and \
perf bench sched messaging's (-g/--group, -l/--nr_loops, -t/--thread, -p/--pipe) are taken as \
spelt there, with their meaning; hackbench's -F/--fifo and -i/--inet are refused, with the \
reason (docs/cli.md).";

impl WorkloadParams for MessagingParams {
    const NAME: &'static str = "messaging";
    const ALIASES: &'static [&'static str] = &["hackbench"];
    const SUMMARY: &'static str = "groups of senders and receivers over sockets or pipes \
(hackbench, perf bench sched messaging)";
    const REFERENCE_NOTE: Option<&'static str> = Some(MESSAGING_REFERENCE);
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(groups), "groups", ParamKind::Count { min: 1, max: 10_000 })
            .short('g')
            .aliases(&["group"])
            .value("G")
            .help("Number of groups.")
            .details("Groups (1 to 10,000).")
            .task_count(),
        Param::new(field!(fds), "fds", ParamKind::Count { min: 1, max: 1_000 })
            .short('f')
            .value("F")
            .help("Senders and receivers per group.")
            .details("Senders and receivers per group (1 to 1,000)."),
        Param::new(field!(loops), "loops", ParamKind::Count { min: 1, max: 1_000_000_000 })
            .short('l')
            .aliases(&["nr_loops"])
            .value("L")
            .help("Messages each sender sends to each receiver.")
            .details("Messages each sender writes to each receiver.")
            .work_size(),
        Param::new(field!(datasize), "datasize", ParamKind::Count { min: 1, max: 16 << 20 })
            .short('s')
            .value("BYTES")
            .size()
            .help("Bytes per message.")
            .details("Bytes per message (1 to 16 MiB)."),
        Param::new(field!(pipe), "pipe", ParamKind::Switch)
            .short('p')
            .help("Use pipes instead of AF_UNIX stream sockets.")
            .details("Pipes instead of AF_UNIX stream sockets."),
        Param::new(field!(threads), "threaded", ParamKind::Switch)
            .short('T')
            .short_aliases(&['t'])
            .aliases(&["threads", "thread"])
            .help("Use threads instead of processes (the last of -T and -P wins, as in hackbench).")
            .details("Threads instead of processes."),
        Param::without_field("process", "process", ParamKind::SwitchOff { of: "threads" })
            .short('P')
            .aliases(&["processes"])
            .help("Use processes (the default; hackbench's -P).")
            .details("Processes (hackbench's `-P`); the last of `-T` and `-P` wins, as in hackbench."),
        Param::without_field(
            "fifo",
            "fifo",
            ParamKind::Refused {
                tool: "hackbench",
                takes_value: false,
                why: "schedlab's parent never switches to SCHED_FIFO; its tasks run under the caller's policy",
            },
        )
        .short('F'),
        Param::without_field(
            "inet",
            "inet",
            ParamKind::Refused {
                tool: "hackbench",
                takes_value: false,
                why: "messaging has no TCP-over-loopback channel, only AF_UNIX sockets and pipes (-p)",
            },
        )
        .short('i'),
    ];

    fn check_rules(&self) -> Result<()> {
        let buffers = self.task_count() * self.datasize;
        if buffers > MAX_TOTAL_BUFFER_BYTES {
            return Err(Error::invalid(format!(
                "{} tasks × --datasize {} needs {} MiB of message buffers; the limit is {} MiB",
                self.task_count(),
                self.datasize,
                buffers >> 20,
                MAX_TOTAL_BUFFER_BYTES >> 20
            )));
        }
        Ok(())
    }

    fn task_budget(&self) -> TaskBudget {
        TaskBudget::tasks(self.task_count(), "tasks", "use fewer groups or fds")
            .holding(self.descriptors_needed())
    }

    fn case_name(&self) -> String {
        format!(
            "messaging:{}-{} fds={} groups={} loops={} datasize={}",
            TaskMode::from_threads_flag(self.threads).as_str(),
            self.transport(),
            self.fds,
            self.groups,
            self.loops,
            self.datasize
        )
    }


    fn estimate_sec(&self) -> f64 {
        let per_message = if self.pipe {
            PIPE_MESSAGE_SEC
        } else {
            SOCKET_MESSAGE_SEC
        };
        let (groups, fds) = (self.groups as f64, self.fds as f64);
        groups * fds * fds * self.loops as f64 * per_message + self.task_count() as f64 * TASK_START_SEC
    }

    /// schedtests' columns: `process-sockets-20` and `10-groups`.
    fn comparison_label(&self, _case_name: &str) -> ComparisonLabel {
        ComparisonLabel {
            short: format!(
                "{}-{}-{}",
                TaskMode::from_threads_flag(self.threads).as_str(),
                self.transport(),
                self.fds
            ),
            load: format!("{}-groups", self.groups),
        }
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(MessagingWorkload::new(self.clone())?))
    }
}

impl MessagingParams {
    pub fn task_count(&self) -> u64 {
        self.groups * self.fds * 2
    }

    fn transport(&self) -> &'static str {
        if self.pipe {
            "pipe"
        } else {
            "sockets"
        }
    }

    /// The channels' descriptors open at once: processes need one group's in the parent at a
    /// time; threads keep every group's open in the one process.
    pub fn descriptors_needed(&self) -> u64 {
        let per_group = self.fds * 2;
        if self.threads {
            per_group * self.groups
        } else {
            per_group
        }
    }
}

pub struct MessagingWorkload {
    params: MessagingParams,
}

impl MessagingWorkload {
    pub fn new(params: MessagingParams) -> Result<Self> {
        let limit = sys::raise_open_files_limit();
        if let Some(soft) = limit.soft {
            let descriptors = params.descriptors_needed() + OWN_DESCRIPTORS;
            if descriptors > soft {
                return Err(Error::invalid(format!(
                    "this run needs about {descriptors} open descriptors but RLIMIT_NOFILE is \
                     {soft}"
                )));
            }
        }
        Ok(MessagingWorkload { params })
    }
}

/// One group's channels: receiver r reads `receive[r]`; every sender writes to all of `send`.
struct GroupChannels {
    receive: Vec<OwnedFd>,
    send: Vec<OwnedFd>,
}

impl GroupChannels {
    fn open(fds: u64, pipe: bool) -> Result<Self> {
        let mut receive = Vec::with_capacity(fds as usize);
        let mut send = Vec::with_capacity(fds as usize);
        for _ in 0..fds {
            let pair = if pipe {
                sys::pipe()
            } else {
                sys::unix_stream_pair()
            };
            let (r, w) = pair.map_err(|e| channel_error(&e))?;
            receive.push(r);
            send.push(w);
        }
        Ok(GroupChannels { receive, send })
    }
}

fn channel_error(e: &std::io::Error) -> Error {
    if e.raw_os_error() == Some(libc::EMFILE) || e.raw_os_error() == Some(libc::ENFILE) {
        let soft = sys::open_files_limit()
            .soft
            .map_or("unlimited".into(), |v| v.to_string());
        Error::failed(format!(
            "cannot open another descriptor: {e} (RLIMIT_NOFILE = {soft}, see also fs.file-max)"
        ))
    } else {
        Error::failed(format!("cannot create a channel: {e}"))
    }
}

fn receive_all(channel: &OwnedFd, buffer: &mut [u8], messages: u64) -> TaskCode {
    for _ in 0..messages {
        match sys::read_full(channel.as_fd(), buffer) {
            Ok(true) => {}
            Ok(false) => return task_code::SHORT_COUNT,
            Err(e) => return task_code::from_io_error(&e),
        }
    }
    task_code::OK
}

fn send_all(channels: &[OwnedFd], message: &[u8], loops: u64) -> TaskCode {
    for _ in 0..loops {
        for channel in channels {
            if let Err(e) = sys::write_full(channel.as_fd(), message) {
                return task_code::from_io_error(&e);
            }
        }
    }
    task_code::OK
}

impl Workload for MessagingWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let p = &self.params;
        let mut launch = TaskLaunch::new(TaskMode::from_threads_flag(p.threads))?;
        let datasize = p.datasize as usize;
        let messages_per_receiver = p.fds * p.loops;
        for group in 0..p.groups {
            let channels = Arc::new(GroupChannels::open(p.fds, p.pipe)?);
            for r in 0..p.fds as usize {
                let channels = Arc::clone(&channels);
                let mut buffer = vec![0u8; datasize];
                launch.spawn(format!("receiver {r} of group {group}"), move || {
                    receive_all(&channels.receive[r], &mut buffer, messages_per_receiver)
                })?;
            }
            for s in 0..p.fds {
                let channels = Arc::clone(&channels);
                let message = vec![b'x'; datasize];
                let loops = p.loops;
                launch.spawn(format!("sender {s} of group {group}"), move || {
                    send_all(&channels.send, &message, loops)
                })?;
            }
            // For processes the parent's copies close here, group by group, keeping its
            // descriptor count at one group's worth; threads hold their own references.
        }
        let start = launch.start()?;
        let stop = launch.wait_all()?;
        Ok(vec![TIME_SEC.value(ns_to_sec(stop.saturating_sub(start)))].into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Measurement;

    fn run(params: MessagingParams) -> Result<Vec<Measurement>> {
        let mut w = MessagingWorkload::new(params)?;
        Ok(w.run_iteration(IterationInfo::FIRST)?
        .measurements)
    }

    #[test]
    fn every_mode_and_transport_completes() {
        for (pipe, threads) in [(false, false), (true, false), (false, true), (true, true)] {
            let params = MessagingParams {
                groups: 2,
                fds: 3,
                loops: 20,
                datasize: 100,
                pipe,
                threads,
            };
            let m = run(params).unwrap();
            assert_eq!(m[0].name, "time_sec");
            assert!(m[0].value > 0.0);
        }
    }

    #[test]
    fn receiver_reports_short_count() {
        let (r, w) = sys::unix_stream_pair().unwrap();
        sys::write_full(w.as_fd(), &[0u8; 150]).unwrap();
        drop(w);
        let mut buf = vec![0u8; 100];
        assert_eq!(receive_all(&r, &mut buf, 2), task_code::SHORT_COUNT);
    }

    #[test]
    fn receiver_accepts_exact_count() {
        let (r, w) = sys::pipe().unwrap();
        sys::write_full(w.as_fd(), &[0u8; 300]).unwrap();
        let mut buf = vec![0u8; 100];
        assert_eq!(receive_all(&r, &mut buf, 3), task_code::OK);
    }

    #[test]
    fn rejects_absurd_sizes() {
        let p = MessagingParams {
            datasize: 1 << 30,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().to_string().contains("--datasize"));
        let p = MessagingParams {
            groups: 10_000,
            fds: 1_000,
            datasize: 1000,
            ..Default::default()
        };
        assert!(p.validate().is_err());
        let p = MessagingParams {
            groups: 0,
            ..Default::default()
        };
        assert!(p.validate().unwrap_err().to_string().contains("--groups"));
    }

    #[test]
    fn case_name_spells_out_every_parameter() {
        let name = MessagingParams::default().case_name();
        assert_eq!(
            name,
            "messaging:process-sockets fds=20 groups=10 loops=100 datasize=100"
        );
    }
}
