//! schedlab as the `/init` of a guest that `campaign run` booted: mount what the kernel offers,
//! read the job the host put in the initramfs, say hello with this guest's fingerprint on the
//! results port, run the plan with the same runner as on a host, reporting each iteration as it
//! finishes, say how it ended, and power off. Whatever goes wrong is said on the console (the
//! host keeps its tail) and, when the port is open, as a message; the guest always powers off,
//! since PID 1 must never exit (the kernel would panic).
use std::io::Write;

use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::plan::CaseSpec;
use schedlab_core::record::IterationRecord;
use schedlab_core::runner::{self, Progress, RunObserver, RunSink};
use schedlab_core::sys::{self, OwnedFd};
use schedlab_core::vm::initramfs::JOB_PATH;
use schedlab_core::vm::protocol::{GuestFacts, GuestJob, GuestMessage, PROTOCOL, RESULTS_PORT};

/// Whether this process is a guest's init: PID 1, started as `/init` (the kernel's `rdinit=`),
/// with a job beside it. A container that runs schedlab as its PID 1 names it otherwise.
pub fn is_guest_init() -> bool {
    std::process::id() == 1
        && std::env::args_os().next().is_some_and(|a| a == "/init")
        && std::path::Path::new("/").join(JOB_PATH).exists()
}

/// The guest's life; never returns.
pub fn main() -> ! {
    if let Err(why) = run() {
        console(format_args!("schedlab guest: {why}"));
    }
    sys::power_off()
}

/// A line on the console (init's standard error is /dev/console).
fn console(args: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{args}");
}

/// The results port.
struct Port(OwnedFd);

impl Port {
    fn send(&self, message: &GuestMessage) -> Result<(), String> {
        sys::write_full(sys::AsFd::as_fd(&self.0), message.frame().as_bytes())
            .map_err(|e| format!("cannot write to {RESULTS_PORT}: {e}"))
    }
}

fn run() -> Result<(), String> {
    let missing = sys::mount_guest_filesystems().map_err(|e| e.to_string())?;
    for what in missing {
        console(format_args!("schedlab guest: not mounted: {what}"));
    }
    let port = Port(
        sys::open_serial_raw(RESULTS_PORT)
            .map_err(|e| format!("cannot open the results port {RESULTS_PORT}: {e}"))?,
    );
    let result = run_job(&port);
    if let Err(reason) = &result {
        // The host learns why at once instead of at its deadline.
        let _ = port.send(&GuestMessage::Refused {
            reason: reason.clone(),
        });
    }
    let _ = sys::drain_serial(&port.0);
    result
}

fn run_job(port: &Port) -> Result<(), String> {
    let path = format!("/{JOB_PATH}");
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {path}: {e}"))?;
    let job: GuestJob =
        serde_json::from_str(&text).map_err(|e| format!("cannot read the job {path}: {e}"))?;
    if job.protocol != PROTOCOL || job.schedlab_version != schedlab_core::VERSION {
        return Err(format!(
            "the host's schedlab {} (protocol {}) sent this job; this guest binary is schedlab {} \
             (protocol {PROTOCOL}): build the static binary from the same source",
            job.schedlab_version,
            job.protocol,
            schedlab_core::VERSION
        ));
    }
    sys::set_hostname(&job.hostname).map_err(|e| format!("cannot set the host name: {e}"))?;
    // Each case checked and named again here, on the machine that runs it: its limits on tasks,
    // and the defaults it takes from the machine (cpupri's NUMA nodes), are the guest's.
    let mut plan = job.plan;
    plan.cases = plan
        .cases
        .iter()
        .map(|case| CaseSpec::new(case.workload.clone())?.beside(case.background.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("the plan does not fit this guest: {e}"))?;
    let (signature, kvm_features) = sys::hypervisor_cpuid();
    let facts = GuestFacts {
        hypervisor_signature: signature,
        kvm_steal_time: kvm_features.map(|f| f & sys::KVM_FEATURE_STEAL_TIME != 0),
    };
    let fingerprint = Fingerprint::collect();
    console(format_args!(
        "schedlab guest: {} on {} vCPUs, {} NUMA nodes; running {}",
        fingerprint.kernel_release,
        fingerprint.online_cpu_count,
        fingerprint.numa_nodes,
        schedlab_core::words::counted(plan.cases.len(), "case")
    ));
    port.send(&GuestMessage::Hello {
        fingerprint: Box::new(fingerprint),
        facts,
        case_names: plan.cases.iter().map(|c| c.name.clone()).collect(),
    })?;
    let mut sink = PortSink { port, lost: None };
    let outcome = runner::execute(&plan, &mut sink, &mut ConsoleProgress);
    if let Some(lost) = sink.lost {
        return Err(lost);
    }
    console(format_args!(
        "schedlab guest: the run ended {}",
        outcome.status.as_str()
    ));
    port.send(&GuestMessage::End {
        status: outcome.status,
        error: outcome.error.as_ref().map(ToString::to_string),
    })
}

/// The runner's sink: each iteration and case failure goes to the host as it comes.
struct PortSink<'a> {
    port: &'a Port,
    /// The first write that failed: the host hears nothing more, so the run is not worth going on.
    lost: Option<String>,
}

impl RunSink for PortSink<'_> {
    fn record_iteration(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        iteration: &IterationRecord,
    ) -> Result<(), String> {
        let sent = self
            .port
            .send(&GuestMessage::iteration(case_index, iteration));
        if let Err(e) = &sent {
            self.lost.get_or_insert(e.clone());
        }
        sent
    }

    fn record_case_failure(
        &mut self,
        case_index: usize,
        _case: &CaseSpec,
        message: &str,
    ) -> Result<(), String> {
        self.port.send(&GuestMessage::CaseFailure {
            case_index,
            message: message.to_string(),
        })
    }
}

/// A line on the console as each case starts, outside any timed window: the console's tail then
/// says where a guest that died was.
struct ConsoleProgress;

impl RunObserver for ConsoleProgress {
    fn iteration_starting(&mut self, progress: &Progress<'_>) {
        if progress.iteration.index == 0 {
            console(format_args!(
                "schedlab guest: case {} of {}: {}",
                progress.case_index + 1,
                progress.case_count,
                progress.case.name
            ));
        }
    }

    fn case_failed(&mut self, case: &CaseSpec, _skipped: u32, message: &str) {
        console(format_args!(
            "schedlab guest: {} failed: {message}",
            case.name
        ));
    }
}
