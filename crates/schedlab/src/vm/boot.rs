//! One slot of a VM campaign: a working folder with the initramfs (the static schedlab as
//! `/init` and the slot's job), QEMU started on the arm's kernel, and the guest's messages read
//! from its results port as they come and stored at once — the run begins when the guest says
//! hello with its fingerprint, each iteration is stored as the guest finishes it, the run ends
//! with the guest's `end`. A guest that never says hello within the boot deadline, goes silent
//! for longer than the silence deadline, refuses its job or sends a damaged message is stopped
//! (QEMU's process group ended, as every command schedlab runs: SIGTERM, then SIGKILL, and killed
//! with schedlab however schedlab dies), and the slot fails with the console's tail. A stop
//! signal ends the guest the same way and the run `interrupted`. An arm's host load runs from
//! before QEMU starts until the guest has ended, and one that ends first fails the slot; pinned
//! vCPUs keep QEMU to their host CPUs (inherited from the thread that starts it) and, under KVM,
//! each vCPU thread (named by QEMU's debug-threads) to its own.
use std::cell::RefCell;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use schedlab_core::cpu_list::CpuList;
use schedlab_core::estimate;
use schedlab_core::fingerprint::{Fingerprint, GuestOrigin};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{Arm, ExperimentTag, RunStatus};
use schedlab_core::sys::{self, ChildExit, CommandError};
use schedlab_core::vm::initramfs::write_initramfs;
use schedlab_core::vm::protocol::{
    DamagedFrame, FrameReader, GuestFacts, GuestJob, GuestMessage, WireAttachment, PROTOCOL,
};
use schedlab_core::vm::qemu::{command_line, shell_words, Accel, Machine};
use schedlab_store::Store;

use super::{guest_hostname, pinned_cpus, VmArm, VmSpec};
use crate::failure::Failure;
use crate::session::host_history;

pub use crate::child::{console_tail, describe_exit};
/// How long a guest that reported its end may take to power off before QEMU is stopped.
const POWER_OFF_GRACE_NS: u64 = 30_000_000_000;
/// How long a host load gets to end after SIGTERM (a schedlab run stores its end) before SIGKILL.
const LOAD_GRACE_NS: u64 = 10_000_000_000;

/// What every slot of one `campaign run` shares.
pub struct Boot<'a> {
    pub campaign: &'a str,
    pub spec: &'a VmSpec,
    /// The static schedlab, which becomes the guest's `/init`.
    pub init: &'a [u8],
    pub host: &'a Fingerprint,
    pub qemu_version: &'a str,
    /// What a host load gets as $SCHEDLAB_DB: the campaign's `--db`, when it was given (else
    /// the load finds the database as `campaign run` did, in its environment or by default).
    pub db: Option<std::ffi::OsString>,
}

/// One slot to boot.
pub struct SlotRequest<'a> {
    pub slot: u32,
    pub tag: ExperimentTag,
    pub plan: &'a RunPlan,
}

/// How a slot ended.
#[derive(Debug)]
pub enum SlotEnd {
    /// The guest ran the plan to its end and said so.
    Complete {
        run_id: i64,
        boot_id: String,
        kernel: String,
        boot_ms: u64,
        total_ms: u64,
    },
    /// Anything else: no hello, a deadline, a refusal, a run that did not complete. `run_id` is
    /// the run the guest began, if it said hello.
    Failed {
        reason: String,
        run_id: Option<i64>,
        console_tail: Vec<String>,
        /// Whether booting the slot again may go otherwise: not when the guest's schedlab refused
        /// the job (a plan that does not fit the guest, a binary of another version) or the
        /// guest runs another kernel than the image names.
        retry: bool,
    },
    /// A stop signal ended the guest (and its run).
    Interrupted { signal: i32 },
}

/// Why the host stops a guest before QEMU exits by itself.
enum Stop {
    Interrupted(i32),
    Deadline(String),
    Refused(String),
    Damaged(String),
    /// The host load ended before the guest did.
    LoadEnded(String),
    /// The guest reported its end and did not power off in time: nothing is lost.
    PoweredOffLate,
    Store(Failure),
}

/// Boots `request`'s slot and stores what its guest reports into `store`.
pub fn boot_slot(
    store: &mut dyn Store,
    boot: &Boot<'_>,
    request: &SlotRequest<'_>,
) -> Result<SlotEnd, Failure> {
    let arm = boot.spec.arm(request.tag.arm);
    arm.check_unchanged()?;
    let work = tempfile::Builder::new()
        .prefix("schedlab-vm-")
        .tempdir()
        .map_err(|e| Failure::failed(format!("cannot make a working folder for the guest: {e}")))?;
    let hostname = guest_hostname(&boot.host.hostname, boot.spec.accel);
    let plan = expected_plan(store, &hostname, request.plan)?;
    let paths = Paths::in_folder(work.path());
    let job = GuestJob {
        protocol: PROTOCOL,
        schedlab_version: schedlab_core::VERSION.to_string(),
        hostname,
        plan: plan.clone(),
    };
    write_guest_initramfs(boot.init, &job, &paths.initrd)?;
    let name = qemu_name(boot.campaign, request.slot);
    let argv = command_line(&machine(boot.spec, arm, &name, &paths));
    let confined = arm.pin_vcpus.as_deref().map(pinned_cpus);
    let origin = guest_origin(boot, arm, &argv, confined.as_ref());
    let load = match &arm.host_load {
        Some(command) => Some(start_load(boot, request, command, &paths.load_log)?),
        None => None,
    };
    // QEMU inherits the CPUs of the thread that starts it (and so does its reaper); this thread
    // gets its own back once QEMU is gone.
    let restore = match &confined {
        Some(cpus) => Some(confine_this_thread(cpus)?),
        None => None,
    };
    let started_ns = sys::monotonic_ns();
    let guest = RefCell::new(Guest {
        store,
        plan,
        tag: request.tag,
        origin,
        expected_release: &arm.release,
        results: paths.results.clone(),
        file: None,
        reader: FrameReader::default(),
        started_ns,
        last_heard_ns: started_ns,
        boot_timeout_ns: boot.spec.boot_timeout_sec.saturating_mul(1_000_000_000),
        silence_ns: boot.spec.silence_timeout_sec.saturating_mul(1_000_000_000),
        run: None,
        ended: None,
        stop: None,
        load,
        load_log: paths.load_log.clone(),
        vcpu_pins: arm
            .pin_vcpus
            .clone()
            .filter(|_| boot.spec.accel == Accel::Kvm),
        vcpus_pinned: false,
        marker: paths.initrd.display().to_string(),
    });
    let qemu = sys::run_command(&argv, &|| guest.borrow_mut().tick());
    if let Some(before) = restore {
        let _ = sys::set_current_thread_cpus(&before);
    }
    let mut guest = guest.into_inner();
    if let Some(load) = guest.load.take() {
        load.stop(LOAD_GRACE_NS);
    }
    // What the guest wrote just before QEMU exited.
    guest.pump();
    let total_ms = (sys::monotonic_ns() - started_ns) / 1_000_000;
    let exited = qemu_exit(qemu, &mut guest.stop, &boot.spec.qemu)?;
    guest.finish(exited, total_ms, &paths.console)
}

/// The slot's plan with the times its cases are expected to take on the guest's host name.
fn expected_plan(
    store: &mut dyn Store,
    hostname: &str,
    plan: &RunPlan,
) -> Result<RunPlan, Failure> {
    let measured = host_history(store, hostname, &plan.cases)?;
    Ok(RunPlan {
        expected_sec: estimate::expectations(&plan.cases, &measured),
        ..plan.clone()
    })
}

/// Writes the guest's initramfs: the static schedlab as `/init` and its job.
fn write_guest_initramfs(init: &[u8], job: &GuestJob, path: &Path) -> Result<(), Failure> {
    let job_json = serde_json::to_vec(job)
        .map_err(|e| Failure::failed(format!("cannot encode the guest's job: {e}")))?;
    let mut initrd = Vec::with_capacity(init.len() + job_json.len() + 4096);
    write_initramfs(&mut initrd, init, &job_json)
        .and_then(|()| std::fs::write(path, &initrd))
        .map_err(|e| {
            Failure::failed(format!(
                "cannot write the initramfs {}: {e}",
                path.display()
            ))
        })
}

/// The machine QEMU makes for one of `spec`'s guests on `arm`'s kernel.
fn machine<'a>(spec: &'a VmSpec, arm: &'a VmArm, name: &'a str, paths: &'a Paths) -> Machine<'a> {
    Machine {
        qemu: &spec.qemu,
        name,
        accel: spec.accel,
        vcpus: spec.vcpus,
        memory_mib: spec.memory_mib,
        numa: spec.numa.as_ref(),
        steal_time: arm.steal_time,
        kernel: &arm.image,
        initrd: &paths.initrd,
        append: &arm.append,
        console: &paths.console,
        results: &paths.results,
    }
}

/// The host's side of the fingerprint of a guest QEMU starts with `argv`.
fn guest_origin(
    boot: &Boot<'_>,
    arm: &VmArm,
    argv: &[String],
    confined: Option<&CpuList>,
) -> GuestOrigin {
    GuestOrigin {
        accelerator: boot.spec.accel.to_string(),
        qemu_version: boot.qemu_version.to_string(),
        qemu_command: shell_words(argv),
        kernel_image: arm.image.display().to_string(),
        kernel_image_sha256: arm.sha256.clone(),
        append: arm.append.clone(),
        vcpus: boot.spec.vcpus,
        memory_mib: boot.spec.memory_mib,
        numa: boot.spec.numa.as_ref().map(|n| n.describe()),
        steal_time: (boot.spec.accel == Accel::Kvm).then_some(arm.steal_time),
        host_cpus: confined.map(ToString::to_string),
        host_load: arm.host_load.clone(),
        host: Box::new(boot.host.clone()),
        ..GuestOrigin::default()
    }
}

/// Keeps this thread (and so the QEMU it starts) to `cpus`; returns the CPUs it had before.
fn confine_this_thread(cpus: &CpuList) -> Result<Vec<u32>, Failure> {
    let before = sys::allowed_cpus()
        .map_err(|e| Failure::failed(format!("cannot read this thread's CPUs: {e}")))?;
    sys::set_current_thread_cpus(cpus.as_slice())
        .map_err(|e| Failure::failed(format!("cannot keep QEMU to host CPUs {cpus}: {e}")))?;
    Ok(before)
}

/// QEMU's exit and stderr when it exited by itself; a wait that went wrong becomes the reason
/// `stop` holds (unless it holds one already), and QEMU that could not start, a failure.
fn qemu_exit(
    qemu: Result<sys::CommandRun, CommandError>,
    stop: &mut Option<Stop>,
    qemu_path: &str,
) -> Result<Option<(ChildExit, Vec<u8>)>, Failure> {
    match qemu {
        Ok(run) => Ok(Some((run.exit, run.stderr))),
        Err(CommandError::Stopped { .. }) => Ok(None),
        Err(CommandError::Spawn(e)) => {
            Err(Failure::bad_input(format!("cannot start {qemu_path}: {e}")))
        }
        Err(CommandError::TooMuchOutput) => {
            stop.get_or_insert(Stop::Damaged(format!(
                "QEMU printed more than {} MiB",
                sys::MAX_OUTPUT_BYTES >> 20
            )));
            Ok(None)
        }
        Err(CommandError::Io(e)) => {
            // QEMU's group is ended whatever the wait saw; the run it may have begun ends failed.
            stop.get_or_insert(Stop::Damaged(format!("waiting for QEMU failed: {e}")));
            Ok(None)
        }
    }
}

/// Starts an arm's host load, with what it is told of the slot in its environment.
fn start_load(
    boot: &Boot<'_>,
    request: &SlotRequest<'_>,
    command: &str,
    log: &Path,
) -> Result<sys::Background, Failure> {
    use std::ffi::OsString;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::failed(format!("cannot find this schedlab's path: {e}")))?;
    let mut env: Vec<(&str, OsString)> = vec![
        ("SCHEDLAB", exe.into_os_string()),
        ("SCHEDLAB_CAMPAIGN", boot.campaign.into()),
        ("SCHEDLAB_ARM", request.tag.arm.as_str().into()),
        ("SCHEDLAB_SLOT", (request.slot + 1).to_string().into()),
    ];
    if let Some(db) = &boot.db {
        env.push(("SCHEDLAB_DB", db.clone()));
    }
    let argv = ["sh".to_string(), "-c".to_string(), command.to_string()];
    sys::Background::start(&argv, &env, log)
        .map_err(|e| Failure::failed(format!("cannot start the host load `{command}`: {e:?}")))
}

/// The QEMU whose command line names `marker` (the slot's initramfs, in its own folder).
fn find_qemu(marker: &str) -> Option<i32> {
    sys::dir_names("/proc").into_iter().find_map(|name| {
        let pid: i32 = name.parse().ok()?;
        let comm = sys::read_text(&format!("/proc/{pid}/comm"))?;
        let cmdline = sys::read_text(&format!("/proc/{pid}/cmdline"))?;
        (comm.starts_with("qemu-system") && cmdline.contains(marker)).then_some(pid)
    })
}

/// QEMU's vCPU threads, `(vCPU, thread id)`, by the names debug-threads gives them (`CPU 3/KVM`).
fn vcpu_threads(qemu: i32) -> Vec<(usize, i32)> {
    sys::dir_names(&format!("/proc/{qemu}/task"))
        .into_iter()
        .filter_map(|tid| {
            let comm = sys::read_text(&format!("/proc/{qemu}/task/{tid}/comm"))?;
            Some((vcpu_of(&comm)?, tid.parse().ok()?))
        })
        .collect()
}

/// The vCPU a QEMU thread runs under KVM, by its name (`CPU 3/KVM`); TCG's one thread (`ALL
/// CPUs/TCG`) and QEMU's other threads run none of their own.
fn vcpu_of(comm: &str) -> Option<usize> {
    comm.trim()
        .strip_prefix("CPU ")?
        .strip_suffix("/KVM")?
        .parse()
        .ok()
}

/// The files of a slot's working folder.
struct Paths {
    initrd: PathBuf,
    console: PathBuf,
    results: PathBuf,
    /// What the arm's host load prints.
    load_log: PathBuf,
}

impl Paths {
    fn in_folder(dir: &Path) -> Self {
        Paths {
            initrd: dir.join("initramfs.cpio"),
            console: dir.join("console.log"),
            results: dir.join("results"),
            load_log: dir.join("load.log"),
        }
    }
}

/// The guest's name in QEMU (`-name`, and so in `ps`): the campaign's, in characters QEMU's
/// option syntax takes as they are.
fn qemu_name(campaign: &str, slot: u32) -> String {
    let plain: String = campaign
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("schedlab-{plain}-slot{}", slot + 1)
}

/// The run the guest began.
struct BegunRun {
    id: i64,
    boot_id: String,
    kernel: String,
    boot_ms: u64,
}

/// What the host knows of a guest while QEMU runs it.
struct Guest<'s, 'a> {
    store: &'s mut dyn Store,
    plan: RunPlan,
    tag: ExperimentTag,
    /// The host's side of the runs' fingerprint; the guest's facts and boot time join it.
    origin: GuestOrigin,
    expected_release: &'a str,
    results: PathBuf,
    file: Option<File>,
    reader: FrameReader,
    started_ns: u64,
    last_heard_ns: u64,
    boot_timeout_ns: u64,
    silence_ns: u64,
    run: Option<BegunRun>,
    ended: Option<(RunStatus, Option<String>)>,
    stop: Option<Stop>,
    load: Option<sys::Background>,
    load_log: PathBuf,
    /// Each vCPU's host CPU, to pin under KVM (`None` under TCG or unpinned).
    vcpu_pins: Option<Vec<u32>>,
    vcpus_pinned: bool,
    /// What QEMU's command line holds and no other process's does.
    marker: String,
}

impl Guest<'_, '_> {
    /// Called whenever the wait for QEMU wakes (at least five times a second): reads what the
    /// guest sent, and says whether QEMU must be stopped.
    fn tick(&mut self) -> bool {
        if self.stop.is_none() {
            self.pump();
        }
        if self.stop.is_none() {
            self.pin_vcpus();
        }
        if let (None, None, Some(load)) = (&self.stop, &self.ended, &mut self.load) {
            if let Some(exit) = load.exited() {
                let said = console_tail(&self.load_log);
                self.stop = Some(Stop::LoadEnded(format!(
                    "the host load ended ({}) before the guest did{}",
                    describe_exit(exit),
                    said.last()
                        .map(|l| format!("; it said: {l}"))
                        .unwrap_or_default()
                )));
            }
        }
        if self.stop.is_none() {
            self.stop = self.overdue();
        }
        self.stop.is_some()
    }

    /// Pins each vCPU thread to its host CPU, once QEMU has made them all.
    fn pin_vcpus(&mut self) {
        let Some(pins) = self.vcpu_pins.as_ref().filter(|_| !self.vcpus_pinned) else {
            return;
        };
        let Some(qemu) = find_qemu(&self.marker) else {
            return;
        };
        let threads = vcpu_threads(qemu);
        if threads.len() < pins.len() {
            return;
        }
        for (vcpu, tid) in threads {
            let Some(&cpu) = pins.get(vcpu) else { continue };
            if let Err(e) = sys::set_thread_cpus(tid, &[cpu]) {
                self.stop = Some(Stop::Refused(format!(
                    "cannot pin vCPU {vcpu} (QEMU thread {tid}) to host CPU {cpu}: {e}"
                )));
                return;
            }
        }
        self.vcpus_pinned = true;
    }

    fn overdue(&self) -> Option<Stop> {
        if let Some(signal) = sys::interrupt_signal() {
            return Some(Stop::Interrupted(signal));
        }
        let now = sys::monotonic_ns();
        let secs = |ns: u64| ns / 1_000_000_000;
        match (&self.run, &self.ended) {
            (None, _) if now - self.started_ns > self.boot_timeout_ns => {
                Some(Stop::Deadline(format!(
                    "the guest said nothing in the {} s after QEMU started (the boot deadline): \
                     it did not boot, or panicked or hung before schedlab ran",
                    secs(self.boot_timeout_ns)
                )))
            }
            (Some(_), None) if now - self.last_heard_ns > self.silence_ns => {
                Some(Stop::Deadline(format!(
                    "the guest went silent for {} s (the silence deadline, --guest-timeout) in \
                     the middle of its run: its kernel hung or panicked",
                    secs(self.silence_ns)
                )))
            }
            (_, Some(_)) if now - self.last_heard_ns > POWER_OFF_GRACE_NS => {
                Some(Stop::PoweredOffLate)
            }
            _ => None,
        }
    }

    /// Reads the results port's new bytes and stores each whole message.
    fn pump(&mut self) {
        if self.file.is_none() {
            // QEMU creates it as it starts.
            self.file = File::open(&self.results).ok();
        }
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let mut bytes = Vec::new();
        if let Err(e) = file.read_to_end(&mut bytes) {
            self.stop = Some(Stop::Damaged(format!(
                "cannot read the guest's results port: {e}"
            )));
            return;
        }
        if bytes.is_empty() {
            return;
        }
        self.last_heard_ns = sys::monotonic_ns();
        self.reader.push(&bytes);
        while self.stop.is_none() {
            let Some(message) = self.reader.next_message() else {
                break;
            };
            if let Err(stop) = self.take(message) {
                self.stop = Some(stop);
            }
        }
    }

    /// Stores one of the guest's messages, or says why the guest must be stopped.
    fn take(&mut self, message: Result<GuestMessage, DamagedFrame>) -> Result<(), Stop> {
        let message = message.map_err(|DamagedFrame(why)| {
            Stop::Damaged(format!("the guest sent a damaged message ({why})"))
        })?;
        match (message, self.run.as_ref().map(|run| run.id)) {
            (
                GuestMessage::Hello {
                    fingerprint,
                    facts,
                    case_names,
                },
                None,
            ) => self.begin(*fingerprint, facts, case_names),
            (GuestMessage::Hello { .. }, Some(_)) => {
                Err(Stop::Damaged("the guest said hello twice".into()))
            }
            (GuestMessage::Refused { reason }, _) => Err(Stop::Refused(format!(
                "the guest's schedlab refused the job: {reason}"
            ))),
            (_, None) => Err(Stop::Damaged(
                "the guest reported results before saying hello".into(),
            )),
            (_, Some(_)) if self.ended.is_some() => Err(Stop::Damaged(
                "the guest reported more after the end of its run".into(),
            )),
            (
                GuestMessage::Iteration {
                    case_index,
                    iteration,
                    attachments,
                },
                Some(run_id),
            ) => {
                self.check_case(case_index)?;
                let iteration =
                    WireAttachment::restore(*iteration, &attachments).map_err(Stop::Damaged)?;
                self.store
                    .record_iteration(run_id, case_index, &iteration)
                    .map_err(store_failed)
            }
            (
                GuestMessage::CaseFailure {
                    case_index,
                    message,
                },
                Some(run_id),
            ) => {
                self.check_case(case_index)?;
                self.store
                    .record_case_failure(run_id, case_index, &message)
                    .map_err(store_failed)
            }
            (GuestMessage::End { status, error }, Some(run_id)) => self.end(run_id, status, error),
        }
    }

    /// Begins the run the guest said hello for, in the guest's own names for the plan's cases.
    fn begin(
        &mut self,
        mut fingerprint: Fingerprint,
        facts: GuestFacts,
        case_names: Vec<String>,
    ) -> Result<(), Stop> {
        self.pin_vcpus();
        self.check_hello(&fingerprint, &case_names)?;
        // The run stores the cases as the guest named them (see GuestMessage::Hello).
        for (case, name) in self.plan.cases.iter_mut().zip(case_names) {
            case.name = name;
        }
        let boot_ms = (sys::monotonic_ns() - self.started_ns) / 1_000_000;
        fingerprint.guest = Some(GuestOrigin {
            hypervisor_signature: facts.hypervisor_signature,
            kvm_steal_time: facts.kvm_steal_time,
            vcpu_pins: self.vcpu_pins.as_ref().map(|pins| {
                pins.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            }),
            boot_ms,
            ..self.origin.clone()
        });
        let id = self
            .store
            .begin_run(&self.plan, &fingerprint, sys::realtime_ns())
            .map_err(store_failed)?;
        self.store.tag_run(id, self.tag).map_err(store_failed)?;
        self.run = Some(BegunRun {
            id,
            boot_id: fingerprint.boot_id,
            kernel: fingerprint.kernel_release,
            boot_ms,
        });
        Ok(())
    }

    /// Refuses a hello from a guest whose vCPUs are not pinned as asked or that runs another
    /// kernel than the image's, and one that names another number of cases than the plan's.
    fn check_hello(&self, fingerprint: &Fingerprint, case_names: &[String]) -> Result<(), Stop> {
        if let (Some(_), false) = (&self.vcpu_pins, self.vcpus_pinned) {
            return Err(Stop::Refused(
                "the guest booted before its vCPU threads could be pinned (QEMU names \
                 them `CPU N/KVM`; none were found)"
                    .into(),
            ));
        }
        if fingerprint.kernel_release != self.expected_release {
            return Err(Stop::Refused(format!(
                "the guest runs kernel {}, but the image's header says {}",
                fingerprint.kernel_release, self.expected_release
            )));
        }
        if case_names.len() != self.plan.cases.len() {
            return Err(Stop::Damaged(format!(
                "the guest named {} cases of a plan of {}",
                case_names.len(),
                self.plan.cases.len()
            )));
        }
        Ok(())
    }

    /// Stores the end of the run the guest reported.
    fn end(&mut self, run_id: i64, status: RunStatus, error: Option<String>) -> Result<(), Stop> {
        if matches!(status, RunStatus::Running | RunStatus::Abandoned) {
            return Err(Stop::Damaged(format!(
                "the guest ended its run `{}`",
                status.as_str()
            )));
        }
        self.store
            .finish_run(run_id, status, sys::realtime_ns(), error.as_deref())
            .map_err(store_failed)?;
        self.ended = Some((status, error));
        Ok(())
    }

    fn check_case(&self, case_index: usize) -> Result<(), Stop> {
        if case_index >= self.plan.cases.len() {
            return Err(Stop::Damaged(format!(
                "the guest reported case {case_index} of a plan of {}",
                self.plan.cases.len()
            )));
        }
        Ok(())
    }

    /// How the slot ended, once QEMU is gone (`exited`: its exit and stderr when it exited by
    /// itself); a run the guest began and did not end is ended here, as failed or interrupted.
    fn finish(
        mut self,
        exited: Option<(ChildExit, Vec<u8>)>,
        total_ms: u64,
        console: &Path,
    ) -> Result<SlotEnd, Failure> {
        if let (Some(run), Some((RunStatus::Complete, _))) = (&self.run, &self.ended) {
            return Ok(SlotEnd::Complete {
                run_id: run.id,
                boot_id: run.boot_id.clone(),
                kernel: run.kernel.clone(),
                boot_ms: run.boot_ms,
                total_ms,
            });
        }
        let stop = self.stop.take();
        let retry = !matches!(stop, Some(Stop::Refused(_)));
        let reason = match (&self.ended, stop) {
            (Some((status, error)), _) => format!(
                "the guest's run ended {}{}",
                status.as_str(),
                error.as_ref().map(|e| format!(": {e}")).unwrap_or_default()
            ),
            (None, Some(Stop::Interrupted(signal))) => {
                self.end_run(
                    RunStatus::Interrupted,
                    &schedlab_core::Error::Interrupted(signal).to_string(),
                )?;
                return Ok(SlotEnd::Interrupted { signal });
            }
            (None, Some(Stop::Store(failure))) => {
                // The store failed; whether it takes the run's end is not up to us any more.
                let _ = self.end_run(RunStatus::Failed, &failure.message);
                return Err(failure);
            }
            (
                None,
                Some(
                    Stop::Deadline(why)
                    | Stop::Refused(why)
                    | Stop::Damaged(why)
                    | Stop::LoadEnded(why),
                ),
            ) => why,
            (None, Some(Stop::PoweredOffLate)) | (None, None) => {
                let (exit, stderr) = exited.unwrap_or((ChildExit::Code(-1), Vec::new()));
                let said = String::from_utf8_lossy(&stderr);
                let said = said.lines().find(|l| !l.trim().is_empty());
                format!(
                    "QEMU exited ({}) before the guest reported the end of its run{}",
                    describe_exit(exit),
                    said.map(|l| format!(": {}", l.trim())).unwrap_or_default()
                )
            }
        };
        if self.ended.is_none() {
            self.end_run(RunStatus::Failed, &reason)?;
        }
        Ok(SlotEnd::Failed {
            reason,
            run_id: self.run.as_ref().map(|r| r.id),
            console_tail: console_tail(console),
            retry,
        })
    }

    /// Ends the run the guest began and did not end.
    fn end_run(&mut self, status: RunStatus, error: &str) -> Result<(), Failure> {
        if let Some(run) = &self.run {
            self.store
                .finish_run(run.id, status, sys::realtime_ns(), Some(error))?;
        }
        Ok(())
    }
}

/// The store failed: the slot fails with it.
fn store_failed(e: schedlab_store::StoreError) -> Stop {
    Stop::Store(Failure::from(e))
}

/// Which arm a slot is, for messages.
pub fn arm_name(arm: Arm) -> String {
    arm.as_str().to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kvm_vcpu_threads_are_told_by_name() {
        assert_eq!(vcpu_of("CPU 3/KVM\n"), Some(3));
        assert_eq!(vcpu_of("CPU 0/KVM"), Some(0));
        assert_eq!(vcpu_of("ALL CPUs/TCG"), None);
        assert_eq!(vcpu_of("CPU 1/TCG"), None);
        assert_eq!(vcpu_of("qemu-system-x86"), None);
    }

    #[test]
    fn qemu_names_keep_to_plain_characters() {
        assert_eq!(qemu_name("sched fix,2", 0), "schedlab-sched_fix_2-slot1");
    }

    #[test]
    fn the_console_tail_is_its_last_printable_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("console.log");
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!("[ {i}.0] line {i}\r\n"));
        }
        text.push_str("Kernel panic - not syncing: \x1b[0mNo working init found\r\n\r\n\n");
        std::fs::write(&path, text).unwrap();
        let tail = console_tail(&path);
        assert_eq!(tail.len(), crate::child::CONSOLE_TAIL_LINES);
        assert_eq!(
            tail.last().unwrap(),
            "Kernel panic - not syncing: [0mNo working init found"
        );
        assert_eq!(tail[0], "[ 61.0] line 61");
        assert!(console_tail(&dir.path().join("none")).is_empty());
    }
}
