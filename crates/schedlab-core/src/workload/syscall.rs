//! The `syscall` workload (seeds 001 and 003): `threads` threads each make `calls` system calls of
//! one kind in a tight loop, as real system calls every time (nothing a libc could answer from a
//! cache): `getpid` (`syscall(SYS_getpid)`), `getrlimit` (prlimit64 on RLIMIT_NOFILE, rump's
//! "rlimit syscalls in a tight loop"), `write-devnull` (30-byte writes to /dev/null, Jiny's
//! file.go) and `read-devzero` (30-byte reads from /dev/zero). Each thread opens its own
//! descriptor, so threads do not contend on one open file's reference count.
//!
//! `cpus` pins thread i to the i-th CPU listed (`0,0`: two threads time-sharing CPU 0, seed 003's
//! "virtual unicpu" as the host kernel sees it; `0,1`: one CPU each).
//!
//! Verification: every call's result is checked (the pid, the limit read before the run, the byte
//! count, zero bytes read), and every thread must report all its calls done.
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::tasks::{TaskBudget, TaskLaunch, TaskMode};
use super::definition::{field, Choice, Param, ParamKind, WorkloadParams};
use super::definition::{IterationInfo, IterationOutput, Workload};
use crate::cpu_list::CpuPerTask;
use crate::metric::{Better, MetricDef};
use crate::sys::{self, task_code, AsFd, OwnedFd, TaskCode};
use crate::{Error, Result};

pub const NSEC_PER_CALL: MetricDef = MetricDef::primary("nsec_per_call", "nsec", Better::Lower);
/// All threads' calls over the wall time: the threads' count over `nsec_per_call`, as long as
/// the threads ran side by side.
pub const CALLS_PER_SEC: MetricDef =
    MetricDef::primary("calls_per_sec", "calls/sec", Better::Higher).reciprocal_of(NSEC_PER_CALL);
const METRICS: &[MetricDef] = &[NSEC_PER_CALL, CALLS_PER_SEC];

/// Bytes per read or write, as Jiny's file.go writes.
pub const IO_BYTES: usize = 30;

/// Which system call the threads make.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SyscallKind {
    Getpid,
    Getrlimit,
    WriteDevnull,
    ReadDevzero,
}

impl SyscallKind {
    pub const ALL: [SyscallKind; 4] = [
        SyscallKind::Getpid,
        SyscallKind::Getrlimit,
        SyscallKind::WriteDevnull,
        SyscallKind::ReadDevzero,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SyscallKind::Getpid => "getpid",
            SyscallKind::Getrlimit => "getrlimit",
            SyscallKind::WriteDevnull => "write-devnull",
            SyscallKind::ReadDevzero => "read-devzero",
        }
    }

    /// One call, for the estimate: measured on a 2-vCPU VM (release build, one thread).
    fn estimate_call_sec(self) -> f64 {
        match self {
            SyscallKind::Getpid | SyscallKind::Getrlimit => 0.17e-6,
            SyscallKind::WriteDevnull | SyscallKind::ReadDevzero => 0.21e-6,
        }
    }

    fn device(self) -> Option<&'static str> {
        match self {
            SyscallKind::WriteDevnull => Some("/dev/null"),
            SyscallKind::ReadDevzero => Some("/dev/zero"),
            SyscallKind::Getpid | SyscallKind::Getrlimit => None,
        }
    }
}

impl Choice for SyscallKind {
    const ALL: &'static [Self] = &SyscallKind::ALL;

    fn name(self) -> &'static str {
        self.as_str()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SyscallParams {
    /// Threads calling at once.
    pub threads: u64,
    /// System calls per thread per iteration.
    pub calls: u64,
    pub kind: SyscallKind,
    /// Pin thread i to the i-th CPU of the list.
    #[serde(skip_serializing_if = "Option::is_none", alias = "pin")]
    pub cpus: Option<CpuPerTask>,
}

impl Default for SyscallParams {
    fn default() -> Self {
        SyscallParams {
            threads: 1,
            calls: 1_000_000,
            kind: SyscallKind::Getpid,
            cpus: None,
        }
    }
}

impl WorkloadParams for SyscallParams {
    const NAME: &'static str = "syscall";
    const SUMMARY: &'static str = "threads making raw system calls in a tight loop: getpid, \
getrlimit, /dev/null writes, /dev/zero reads (seeds 001 and 003)";
    const PARAMS: &'static [Param<Self>] = &[
        Param::new(field!(threads), "threads", ParamKind::Count { min: 1, max: 4_096 })
            .value("T")
            .help("Threads calling at once.")
            .details("Threads calling at once (1 to 4,096).")
            .task_count(),
        Param::new(field!(calls), "calls", ParamKind::Count { min: 1, max: 10_000_000_000 })
            .value("N")
            .help("System calls per thread per iteration.")
            .details("Calls per thread per iteration (1 to 10^10).")
            .work_size(),
        Param::new(
            field!(kind),
            "kind",
            ParamKind::Choice(&[
                ("getpid", "syscall(SYS_getpid)"),
                ("getrlimit", "prlimit64 reading RLIMIT_NOFILE"),
                ("write-devnull", "30-byte writes to /dev/null"),
                ("read-devzero", "30-byte reads from /dev/zero"),
            ]),
        )
        .value("KIND")
        .help("The system call made.")
            .details("`getpid`; `getrlimit` (RLIMIT_NOFILE through prlimit64, what getrlimit is today); `write-devnull` (30-byte writes to /dev/null); `read-devzero` (30-byte reads from /dev/zero)."),
        Param::new(field!(cpus), "pin", ParamKind::Text)
            .aliases(&["cpus"])
            .value("CPU,...")
            .help("Pin thread i to the i-th CPU listed, one per thread (`0,0`: two threads on CPU 0; `0,1`: apart).")
            .details("Pin thread i to the i-th CPU listed, one CPU per thread, repeats allowed: with `--threads 2`, `0,0` time-shares CPU 0 (seed 003's \"virtual unicpu\", as the host sees it) and `0,1` gives each thread a CPU of its own."),
    ];

    fn check_rules(&self) -> Result<()> {
        let Some(cpus) = &self.cpus else {
            return Ok(());
        };
        cpus.check_allowed("cpus")?;
        let listed = cpus.as_slice().len() as u64;
        if listed != self.threads {
            return Err(Error::param(
                "cpus",
                format!(
                    "names {listed} CPUs for {} threads: give one CPU per thread (or --threads {listed})",
                    self.threads
                ),
            ));
        }
        Ok(())
    }

    /// Each thread of a device kind opens the device once.
    fn task_budget(&self) -> TaskBudget {
        let threads = TaskBudget::tasks(self.threads, "threads", "use fewer --threads");
        match self.kind.device() {
            Some(_) => threads.holding(self.threads),
            None => threads,
        }
    }

    fn case_name(&self) -> String {
        let mut name = format!(
            "syscall:{} threads={} calls={}",
            self.kind.as_str(),
            self.threads,
            self.calls
        );
        if let Some(cpus) = &self.cpus {
            name.push_str(&format!(" cpus={cpus}"));
        }
        name
    }


    /// Threads beyond the CPUs (or pinned to one CPU) queue behind each other.
    fn estimate_sec(&self) -> f64 {
        let rounds = match &self.cpus {
            Some(cpus) => {
                let list = cpus.as_slice();
                list.iter()
                    .map(|c| list.iter().filter(|d| *d == c).count())
                    .max()
                    .unwrap_or(1) as f64
            }
            None => {
                let cpus = u64::from(crate::fingerprint::online_cpu_count());
                self.threads.div_ceil(cpus) as f64
            }
        };
        rounds * self.calls as f64 * self.kind.estimate_call_sec()
    }

    fn metric_lists(&self) -> &'static [&'static [MetricDef]] {
        &[METRICS]
    }

    fn build(&self) -> Result<Box<dyn Workload>> {
        Ok(Box::new(SyscallWorkload::new(self.clone())))
    }
}

/// What a thread reports: calls completed and its own time for them.
#[derive(Default)]
struct ThreadReport {
    calls: AtomicU64,
    elapsed_ns: AtomicU64,
}

/// What every call must return, read once before the run.
#[derive(Clone, Copy)]
struct Expected {
    pid: i64,
    nofile: u64,
}

/// The timed loop of one thread. Results are checked on every call (a compare and a branch the
/// predictor always gets right).
fn call_loop(
    kind: SyscallKind,
    calls: u64,
    fd: Option<&OwnedFd>,
    expected: Expected,
    report: &ThreadReport,
) -> TaskCode {
    let mut buf = [0u8; IO_BYTES];
    let start = sys::monotonic_ns();
    let mut done = 0u64;
    let code = (|| -> std::result::Result<(), TaskCode> {
        match (kind, fd) {
            (SyscallKind::Getpid, _) => {
                for _ in 0..calls {
                    if sys::raw_getpid() != expected.pid {
                        return Err(task_code::VERIFY_FAILED);
                    }
                    done += 1;
                }
            }
            (SyscallKind::Getrlimit, _) => {
                for _ in 0..calls {
                    match sys::raw_getrlimit_nofile() {
                        Ok(v) if v == expected.nofile => {}
                        Ok(_) => return Err(task_code::VERIFY_FAILED),
                        Err(e) => return Err(task_code::from_io_error(&e)),
                    }
                    done += 1;
                }
            }
            (SyscallKind::WriteDevnull, Some(fd)) => {
                buf.fill(b'x');
                for _ in 0..calls {
                    match sys::write_once(fd.as_fd(), &buf) {
                        Ok(IO_BYTES) => {}
                        Ok(_) => return Err(task_code::SHORT_COUNT),
                        Err(e) => return Err(task_code::from_io_error(&e)),
                    }
                    done += 1;
                }
            }
            (SyscallKind::ReadDevzero, Some(fd)) => {
                for _ in 0..calls {
                    buf[0] = 1;
                    buf[IO_BYTES - 1] = 1;
                    match sys::read_interruptible(fd.as_fd(), &mut buf) {
                        Ok(IO_BYTES) if buf[0] == 0 && buf[IO_BYTES - 1] == 0 => {}
                        Ok(IO_BYTES) => return Err(task_code::VERIFY_FAILED),
                        Ok(_) => return Err(task_code::SHORT_COUNT),
                        Err(e) => return Err(task_code::from_io_error(&e)),
                    }
                    done += 1;
                }
            }
            (SyscallKind::WriteDevnull | SyscallKind::ReadDevzero, None) => {
                return Err(task_code::SHORT_COUNT)
            }
        }
        Ok(())
    })();
    let stop = sys::monotonic_ns();
    report.calls.store(done, Ordering::SeqCst);
    report
        .elapsed_ns
        .store(stop.saturating_sub(start), Ordering::SeqCst);
    match code {
        Ok(()) => task_code::OK,
        Err(c) => c,
    }
}

pub struct SyscallWorkload {
    params: SyscallParams,
}

impl SyscallWorkload {
    pub fn new(params: SyscallParams) -> Self {
        SyscallWorkload { params }
    }
}

impl Workload for SyscallWorkload {
    fn metrics(&self) -> &'static [MetricDef] {
        METRICS
    }

    fn run_iteration(&mut self, _info: IterationInfo) -> Result<IterationOutput> {
        let p = &self.params;
        let expected = Expected {
            pid: sys::raw_getpid(),
            nofile: sys::raw_getrlimit_nofile()
                .map_err(|e| Error::failed(format!("getrlimit failed before the run: {e}")))?,
        };
        if p.kind.device().is_some() {
            sys::raise_open_files_limit();
        }
        let reports: Arc<Vec<ThreadReport>> =
            Arc::new((0..p.threads).map(|_| ThreadReport::default()).collect());
        let mut launch = TaskLaunch::new(TaskMode::Threads)?;
        for t in 0..p.threads as usize {
            let fd = match p.kind.device() {
                Some(path) => Some(sys::open_device(path).map_err(|e| {
                    Error::failed(format!("cannot open {path} for thread {t}: {e}"))
                })?),
                None => None,
            };
            let (kind, calls, reports) = (p.kind, p.calls, Arc::clone(&reports));
            let cpu = p.cpus.as_ref().and_then(|cpus| cpus.as_slice().get(t).copied());
            launch.spawn(format!("syscall {t}"), move || {
                if let Some(cpu) = cpu {
                    if sys::pin_current_thread(cpu).is_err() {
                        return task_code::AFFINITY_FAILED;
                    }
                }
                call_loop(kind, calls, fd.as_ref(), expected, &reports[t])
            })?;
        }
        let start = launch.start()?;
        let stop = launch.wait_all()?;
        drop(launch);
        let mut per_call_ns = 0.0;
        for (t, r) in reports.iter().enumerate() {
            let done = r.calls.load(Ordering::SeqCst);
            if done != p.calls {
                return Err(Error::failed(format!(
                    "syscall thread {t} made {done} of {} calls",
                    p.calls
                )));
            }
            per_call_ns += r.elapsed_ns.load(Ordering::SeqCst) as f64 / p.calls as f64;
        }
        let elapsed_ns = stop.saturating_sub(start).max(1);
        let total_calls = p.calls as f64 * p.threads as f64;
        Ok(vec![
            NSEC_PER_CALL.value(per_call_ns / p.threads as f64),
            CALLS_PER_SEC.value(total_calls * 1e9 / elapsed_ns as f64),
        ]
        .into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::Measurement;

    /// The measurements of one iteration of valid `params`.
    fn measured(params: SyscallParams) -> Vec<Measurement> {
        params.validate().unwrap();
        SyscallWorkload::new(params)
            .run_iteration(IterationInfo::FIRST)
            .unwrap()
            .measurements
    }

    #[test]
    fn every_kind_runs_and_reports() {
        for kind in SyscallKind::ALL {
            for threads in [1, 3] {
                let params = SyscallParams {
                    threads,
                    calls: 2_000,
                    kind,
                    cpus: None,
                };
                let m = measured(params);
                assert_eq!(m[0].name, "nsec_per_call");
                assert!(m[0].value > 0.0, "{kind:?}");
                assert!(m[1].value > 0.0, "{kind:?}");
            }
        }
    }

    #[test]
    fn pinned_threads_run_on_one_cpu_and_apart() {
        let allowed = crate::cpu_list::CpuList::allowed().unwrap();
        let first = allowed.as_slice()[0];
        let last = *allowed.as_slice().last().unwrap();
        for cpus in [vec![first, first], vec![first, last]] {
            let params = SyscallParams {
                threads: 2,
                calls: 2_000,
                kind: SyscallKind::Getrlimit,
                cpus: Some(CpuPerTask(cpus.clone())),
            };
            params.validate().unwrap();
            assert!(params
                .case_name()
                .ends_with(&format!(" cpus={first},{}", cpus[1])));
            let m = measured(params);
            assert!(m[0].value > 0.0);
        }
        let err = SyscallParams {
            threads: 3,
            cpus: Some(CpuPerTask(vec![first, first])),
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.contains("names 2 CPUs for 3 threads"), "{err}");
        let err = SyscallParams {
            threads: 1,
            cpus: Some(CpuPerTask(vec![100_000])),
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.contains("not online or not allowed"), "{err}");
    }

    #[test]
    fn a_wrong_answer_fails_the_thread() {
        let report = ThreadReport::default();
        let wrong = Expected {
            pid: sys::raw_getpid() + 1,
            nofile: 0,
        };
        let code = call_loop(SyscallKind::Getpid, 10, None, wrong, &report);
        assert_eq!(code, task_code::VERIFY_FAILED);
        assert_eq!(report.calls.load(Ordering::SeqCst), 0);
        let code = call_loop(SyscallKind::Getrlimit, 10, None, wrong, &report);
        assert_eq!(code, task_code::VERIFY_FAILED);
    }

    #[test]
    fn raw_calls_answer_like_the_libc_ones() {
        assert_eq!(sys::raw_getpid(), i64::from(std::process::id()));
        assert_eq!(
            Some(sys::raw_getrlimit_nofile().unwrap()),
            sys::open_files_limit().soft.or(Some(u64::MAX))
        );
    }

    #[test]
    fn kinds_parse_and_bad_input_names_the_flag() {
        for kind in SyscallKind::ALL {
            let read: SyscallKind = serde_json::from_value(kind.as_str().into()).unwrap();
            assert_eq!(read, kind);
        }
        assert!(serde_json::from_value::<SyscallKind>("fork".into()).is_err());
        let err = SyscallParams {
            threads: 0,
            ..Default::default()
        }
        .validate()
        .unwrap_err()
        .to_string();
        assert!(err.contains("--threads"), "{err}");
        assert!(SyscallParams {
            calls: 0,
            ..Default::default()
        }
        .validate()
        .is_err());
        let back: SyscallParams = toml::from_str("kind = \"write-devnull\"\nthreads = 2").unwrap();
        assert_eq!(back.kind, SyscallKind::WriteDevnull);
    }
}
