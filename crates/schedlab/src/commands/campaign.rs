//! `schedlab campaign`: a per-boot kernel A/B campaign. `start` records the plan (two kernel
//! releases, an even number of boots in ABBA order, what to run on each boot) in the database;
//! `next`, run once after each boot (e.g. from a boot-time unit), runs this boot's slot if the
//! running kernel is the one the slot expects, and says which kernel to boot next. State lives in
//! the database, so the campaign resumes after every reboot; schedlab never reboots a machine
//! unless `next --reboot-cmd` tells it how. A `--vm` campaign boots its kernels in QEMU guests
//! instead: `run` boots every remaining slot in turn ([`crate::vm`]), each failed boot recorded
//! with the console's tail, and the same slots, labels and pairs come out of it.
use std::path::PathBuf;
use std::process::ExitCode;

use serde::{Deserialize, Serialize};

use schedlab_core::experiment::{arm_label, AbbaSlot};
use schedlab_core::plan::{CaseSpec, RunPlan, MAX_LABEL_CHARS};
use schedlab_core::record::{Arm, ExperimentTag, RunStatus};
use schedlab_core::suite::Suite;
use schedlab_core::sys;
use schedlab_core::words;
use schedlab_core::words::check_printable;
use schedlab_core::workload::Topology;
use schedlab_store::{Experiment, ExperimentKind, Store};

use crate::cli::{
    AccelArg, CampaignAction, CampaignArgs, CampaignNextArgs, CampaignRunArgs, CampaignStartArgs,
    CampaignStatusArgs, OnOff, PlanOptions, PresetArg,
};
use crate::daemon::Daemons;
use crate::failure::Failure;
use crate::output::{emit_line, say};
use crate::plan::{plan_from_parts, with_co_runners};
use crate::progress::ProgressLine;
use crate::session::{plan_for_visit, MeasuredRun, Session, Storage};
use crate::shell::run_shell_command;
use crate::store_path::{db_location, open_reader, open_writer};
use crate::vm::accel::{self, AccelChoice};
use crate::vm::boot::{arm_name, boot_slot, Boot, SlotEnd, SlotRequest};
use crate::vm::{guest_binary, parse_vcpu_pins, pinned_cpus, VmArm, VmSpec};
use schedlab_core::vm::qemu::{Accel, NumaLayout};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CampaignSpec {
    pub a_kernel: String,
    pub b_kernel: String,
    pub boots: u32,
    pub plan: RunPlan,
    /// Set for a campaign whose kernels boot in QEMU guests (`--vm`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vm: Option<VmSpec>,
    /// The daemons run beside each boot's run (`--a-daemon`, `--b-daemon`), when any is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemons: Option<Daemons>,
}

/// One finished boot of the campaign.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub arm: Arm,
    pub run_id: i64,
    pub boot_id: String,
    pub kernel: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CampaignState {
    pub slots: Vec<Slot>,
    /// Every boot of a guest that failed, oldest first (a `--vm` campaign's).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<FailedSlot>,
}

/// A guest's boot that did not complete its slot: why, the run it began (if it said hello) and
/// the last lines of its console.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedSlot {
    pub slot: u32,
    pub arm: Arm,
    pub at_ns: i64,
    pub reason: String,
    pub run_id: Option<i64>,
    pub console_tail: Vec<String>,
}

/// What `next` should do on this boot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Finished,
    /// This boot already ran a slot; the next one needs a reboot.
    AlreadyRan {
        slot: u32,
        next_kernel: String,
    },
    WrongKernel {
        slot: u32,
        arm: Arm,
        wanted: String,
        running: String,
    },
    Run {
        slot: u32,
        arm: Arm,
        round: u32,
    },
}

impl CampaignSpec {
    fn kernel(&self, arm: Arm) -> &str {
        match arm {
            Arm::A => &self.a_kernel,
            Arm::B => &self.b_kernel,
        }
    }

    /// Decides this boot's step from the campaign's progress and the running kernel and boot.
    pub fn next_step(&self, state: &CampaignState, kernel: &str, boot_id: &str) -> Step {
        let slot = state.slots.len() as u32;
        if slot >= self.boots {
            return Step::Finished;
        }
        let AbbaSlot { arm, round } = AbbaSlot::of(slot);
        if let Some(done) = state.slots.iter().position(|s| s.boot_id == boot_id) {
            return Step::AlreadyRan {
                slot: done as u32,
                next_kernel: self.kernel(arm).to_string(),
            };
        }
        if kernel != self.kernel(arm) {
            return Step::WrongKernel {
                slot,
                arm,
                wanted: self.kernel(arm).to_string(),
                running: kernel.to_string(),
            };
        }
        Step::Run { slot, arm, round }
    }
}

pub fn campaign(args: &CampaignArgs) -> Result<ExitCode, Failure> {
    match &args.action {
        CampaignAction::Start(a) => start(a),
        CampaignAction::Next(a) => next(a),
        CampaignAction::Run(a) => run(a),
        CampaignAction::Status(a) => status(a),
    }
}

fn start(args: &CampaignStartArgs) -> Result<ExitCode, Failure> {
    // Its runs are labelled NAME-a and NAME-b, so a name that makes good labels is one that is
    // printable and leaves room for the suffix (it cannot be all digits with it).
    check_printable(&args.name)
        .map_err(|why| Failure::bad_input(format!("the campaign name {why}")))?;
    check_name_leaves_room(
        &args.name,
        &arm_label("", Arm::A),
        "its runs are labelled NAME-a and NAME-b",
    )?;
    let vm = args.vm || args.preset.is_some();
    let daemons = args.daemons.daemons();
    daemons.validate()?;
    check_flags_fit_kind(args, vm, &daemons)?;
    let suite = suite_of(args);
    let plan = plan_from_parts(suite.as_ref(), args.workload.as_ref(), &args.plan, None)?;
    if args.preset.is_some() {
        check_name_leaves_room(
            &args.name,
            "-load-a",
            "the preset's host load labels its runs NAME-load-a and NAME-load-b",
        )?;
    }
    if plan.label.is_some() {
        return Err(Failure::bad_input(
            "a campaign labels its runs NAME-a and NAME-b; --jobname does not apply",
        ));
    }
    let (vm, accel_note, plan) = if vm {
        let (vm, note) = vm_spec(args, &plan)?;
        let nodes = vm.numa.as_ref().map_or(1, |numa| numa.nodes.len());
        let guest = Topology::new(vm.vcpus, u32::try_from(nodes).unwrap_or(u32::MAX));
        let plan = for_guests(plan, suite.as_ref(), &args.plan, &guest)?;
        (Some(vm), note, plan)
    } else {
        (None, None, plan)
    };
    let spec = CampaignSpec {
        a_kernel: vm
            .as_ref()
            .map_or(args.a_kernel.clone(), |v| v.a.release.clone()),
        b_kernel: vm
            .as_ref()
            .map_or(args.b_kernel.clone(), |v| v.b.release.clone()),
        boots: args.boots,
        plan,
        vm,
        daemons: daemons.any().then_some(daemons),
    };
    store_new(args, &spec)?;
    announce(args, &spec, accel_note)
}

/// Fails unless the campaign's name leaves room in a run's label for `suffix`, which `labelled`
/// explains.
fn check_name_leaves_room(name: &str, suffix: &str, labelled: &str) -> Result<(), Failure> {
    let longest = MAX_LABEL_CHARS - suffix.chars().count();
    if name.chars().count() > longest {
        return Err(Failure::bad_input(format!(
            "the campaign name is longer than {longest} characters ({labelled})"
        )));
    }
    Ok(())
}

/// Refuses flags that do not fit the kind of campaign: daemons or two runs of one kernel for a
/// `--vm` campaign's arms, guest options for a reboot campaign.
fn check_flags_fit_kind(
    args: &CampaignStartArgs,
    vm: bool,
    daemons: &Daemons,
) -> Result<(), Failure> {
    if vm && daemons.any() {
        return Err(Failure::bad_input(
            "--a-daemon and --b-daemon run beside a boot's run on this machine; a --vm campaign's \
             runs are in its guests",
        ));
    }
    if !vm {
        if let Some(flag) = vm_flag_given(args) {
            return Err(Failure::bad_input(format!(
                "{flag} is a guest option: it needs --vm"
            )));
        }
    }
    if args.a_kernel == args.b_kernel && !vm {
        return Err(Failure::bad_input(
            "--a-kernel and --b-kernel are the same release; a campaign compares two kernels (use `schedlab ab` for settings)",
        ));
    }
    Ok(())
}

/// The suite the campaign runs: the one given, or a preset's when neither a suite nor a workload
/// is.
fn suite_of(args: &CampaignStartArgs) -> Option<String> {
    match (args.preset, &args.suite, &args.workload) {
        (Some(PresetArg::VcpuPreempt), None, None) => Some(VCPU_PREEMPT_SUITE.to_string()),
        _ => args.suite.clone(),
    }
}

/// Stores the planned campaign, with no slot done yet.
fn store_new(args: &CampaignStartArgs, spec: &CampaignSpec) -> Result<(), Failure> {
    let mut store = open_writer(&db_location(&args.db)?)?;
    store.create_experiment(&Experiment {
        id: None,
        kind: ExperimentKind::Campaign,
        name: args.name.clone(),
        spec: to_value(spec)?,
        state: to_value(&CampaignState::default())?,
        status: RunStatus::Running,
        created_at_ns: sys::realtime_ns(),
    })?;
    Ok(())
}

/// The lines saying what was planned and what to run next.
fn announce(
    args: &CampaignStartArgs,
    spec: &CampaignSpec,
    accel_note: Option<String>,
) -> Result<ExitCode, Failure> {
    if let Some(vm) = &spec.vm {
        emit_line(format_args!(
            "campaign {} planned: {} guest boots in ABBA order, A = {}, B = {}; {}.",
            args.name,
            args.boots,
            describe_arm(&vm.a),
            describe_arm(&vm.b),
            describe_guests(vm)
        ))?;
        if let Some(note) = accel_note {
            emit_line(format_args!("{note}."))?;
        }
        emit_line(format_args!(
            "Run it with `schedlab campaign run {}`.",
            args.name
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    emit_line(format_args!(
        "campaign {} planned: {} boots in ABBA order, A = {}, B = {}.\nBoot kernel {} and run `schedlab campaign next {}` after each boot.",
        args.name, args.boots, args.a_kernel, args.b_kernel, args.a_kernel, args.name
    ))?;
    Ok(ExitCode::SUCCESS)
}

/// The first guest option given, for a campaign without --vm.
fn vm_flag_given(args: &CampaignStartArgs) -> Option<&'static str> {
    [
        ("--a-append", args.a_append.is_some()),
        ("--b-append", args.b_append.is_some()),
        ("--vcpus", args.vcpus.is_some()),
        ("--memory", args.memory.is_some()),
        ("--numa", args.numa.is_some()),
        ("--accel", args.accel.is_some()),
        ("--a-steal-time", args.a_steal_time.is_some()),
        ("--b-steal-time", args.b_steal_time.is_some()),
        ("--boot-timeout", args.boot_timeout.is_some()),
        ("--guest-timeout", args.guest_timeout.is_some()),
        ("--retries", args.retries.is_some()),
        ("--qemu", args.qemu.is_some()),
        ("--pin-vcpus", args.pin_vcpus.is_some()),
        ("--a-pin-vcpus", args.a_pin_vcpus.is_some()),
        ("--b-pin-vcpus", args.b_pin_vcpus.is_some()),
        ("--host-load", args.host_load.is_some()),
        ("--a-host-load", args.a_host_load.is_some()),
        ("--b-host-load", args.b_host_load.is_some()),
    ]
    .into_iter()
    .find(|(_, given)| *given)
    .map(|(flag, _)| flag)
}

const MAX_VCPUS: u32 = 255;
const MIN_MEMORY_MIB: u64 = 128;
const MAX_MEMORY_MIB: u64 = 1 << 20;
const MAX_RETRIES: u32 = 10;
/// A running guest's longest silence without --iteration-timeout: longer than the guest's own
/// deadline of an iteration whose workload has no estimate (600 s), which it reports.
const DEFAULT_SILENCE_SEC: u64 = 660;

/// The plan with a suite's counts relative to the CPUs and nodes (`2x`, `50%`, `1n`) counted on
/// the guests' vCPUs and NUMA nodes, where they run, instead of this machine's; in the order the
/// plan runs its cases.
/// (A workload's flags on the command line were counted on this machine's CPUs as they were read.)
fn for_guests(
    plan: RunPlan,
    suite: Option<&String>,
    options: &PlanOptions,
    guest: &Topology,
) -> Result<RunPlan, Failure> {
    let Some(name) = suite else {
        return Ok(plan);
    };
    let mut guests = Suite::load_on(name, guest)?;
    if let Some(factor) = options.scale {
        guests = guests.scaled(factor)?;
    }
    let guests = with_co_runners(guests, &options.background)?;
    let cases = guests
        .cases
        .into_iter()
        .zip(guests.backgrounds)
        .map(|(workload, background)| CaseSpec::new(workload)?.beside(background))
        .collect::<Result<Vec<_>, _>>()?;
    let seed = plan.order_seed;
    let plan = RunPlan {
        cases,
        order_seed: None,
        ..plan
    };
    Ok(match seed {
        Some(seed) => plan.shuffled(seed),
        None => plan,
    })
}

/// The built-in suite of `--preset vcpu-preempt`.
const VCPU_PREEMPT_SUITE: &str = "vcpu-preempt";

/// What `--preset vcpu-preempt` sets (seed 000): a 4-vCPU guest on the first two host CPUs this
/// process may use (vCPUs 0 and 2 on one, 1 and 3 on the other) beside a host load on the same
/// two CPUs: `perf bench sched pipe`'s ping-pong between them, run by this schedlab as runs
/// labelled NAME-load-a and NAME-load-b, so its throughput is stored and comparable too.
struct Preset {
    vcpus: u32,
    memory_mib: u64,
    pins: Vec<u32>,
    load: String,
}

fn vcpu_preempt_preset() -> Result<Preset, Failure> {
    let allowed = allowed_cpus()?;
    let [c0, c1, ..] = allowed[..] else {
        return Err(Failure::bad_input(
            "--preset vcpu-preempt puts 4 vCPUs on 2 host CPUs, and this process may use only one",
        ));
    };
    Ok(Preset {
        vcpus: 4,
        // The suite's mmap and page-fault cases map 128 MiB in each of 2x the vCPUs' tasks.
        memory_mib: 2048,
        pins: vec![c0, c1, c0, c1],
        load: format!(
            "exec \"$SCHEDLAB\" run --label \"$SCHEDLAB_CAMPAIGN-load-$SCHEDLAB_ARM\" \
             --iterations 100000 --warmup 0 --quiet pipe --loops 20000 --pin {c0},{c1}"
        ),
    })
}

/// The host CPUs this process may use, which vCPU pins must be among.
fn allowed_cpus() -> Result<Vec<u32>, Failure> {
    sys::allowed_cpus()
        .map_err(|e| Failure::failed(format!("cannot read the CPUs this process may use: {e}")))
}

/// The guests of a `--vm` campaign, from its flags, and the line to print about the accelerator.
fn vm_spec(args: &CampaignStartArgs, plan: &RunPlan) -> Result<(VmSpec, Option<String>), Failure> {
    let preset = match args.preset {
        Some(PresetArg::VcpuPreempt) => Some(vcpu_preempt_preset()?),
        None => None,
    };
    let vcpus = args.vcpus.or(preset.as_ref().map(|p| p.vcpus)).unwrap_or(2);
    if !(1..=MAX_VCPUS).contains(&vcpus) {
        return Err(Failure::bad_input(format!(
            "--vcpus must be 1 to {MAX_VCPUS}, not {vcpus}"
        )));
    }
    let memory_mib = match &args.memory {
        Some(text) => parse_memory_mib(text)?,
        None => preset.as_ref().map_or(1024, |p| p.memory_mib),
    };
    let numa = numa_layout(args.numa.as_deref(), vcpus, memory_mib)?;
    let retries = args.retries.unwrap_or(1);
    if retries > MAX_RETRIES {
        return Err(Failure::bad_input(format!(
            "--retries must be 0 to {MAX_RETRIES}, not {retries}"
        )));
    }
    let silence_default = plan
        .iteration_timeout_ms
        .map_or(DEFAULT_SILENCE_SEC, |ms| ms.div_ceil(1000) + 60);
    let boot_timeout_sec = timeout_sec("--boot-timeout", args.boot_timeout, 120)?;
    let silence_timeout_sec = timeout_sec("--guest-timeout", args.guest_timeout, silence_default)?;
    let (a, b) = arms(args, vcpus, preset.as_ref())?;
    let (accel, note) = accel_for(args.accel, &a, &b)?;
    let qemu = args
        .qemu
        .clone()
        .unwrap_or_else(|| "qemu-system-x86_64".to_string());
    accel::qemu_version(&qemu)?;
    Ok((
        VmSpec {
            accel,
            vcpus,
            memory_mib,
            numa,
            a,
            b,
            qemu,
            boot_timeout_sec,
            silence_timeout_sec,
            retries,
        },
        note,
    ))
}

/// `--numa` over the guests' vCPUs, with at least 64 MiB of their memory on each node.
fn numa_layout(
    text: Option<&str>,
    vcpus: u32,
    memory_mib: u64,
) -> Result<Option<NumaLayout>, Failure> {
    let Some(text) = text else {
        return Ok(None);
    };
    let numa = NumaLayout::parse(text, vcpus).map_err(Failure::bad_input)?;
    if memory_mib < numa.nodes.len() as u64 * 64 {
        return Err(Failure::bad_input(format!(
            "--memory {memory_mib}M leaves less than 64 MiB to each of the {} NUMA nodes",
            numa.nodes.len()
        )));
    }
    Ok(Some(numa))
}

/// A guest timeout's seconds (`--boot-timeout`, `--guest-timeout`): 1 s to a week, or `default`.
fn timeout_sec(flag: &str, given: Option<u64>, default: u64) -> Result<u64, Failure> {
    match given {
        Some(0) => Err(Failure::bad_input(format!(
            "{flag} must be at least 1 second"
        ))),
        Some(sec) if sec > 7 * 24 * 3600 => {
            Err(Failure::bad_input(format!("{flag} must be at most a week")))
        }
        Some(sec) => Ok(sec),
        None => Ok(default),
    }
}

/// One arm's own guest flags (`--a-...` or `--b-...`), each beside its name for messages.
struct ArmFlags<'a> {
    kernel: (&'static str, &'a str),
    append: (&'static str, &'a Option<String>),
    steal_time: Option<OnOff>,
    pin_vcpus: (&'static str, &'a Option<String>),
    host_load: (&'static str, &'a Option<String>),
}

impl<'a> ArmFlags<'a> {
    fn of(args: &'a CampaignStartArgs, arm: Arm) -> Self {
        match arm {
            Arm::A => ArmFlags {
                kernel: ("--a-kernel", &args.a_kernel),
                append: ("--a-append", &args.a_append),
                steal_time: args.a_steal_time,
                pin_vcpus: ("--a-pin-vcpus", &args.a_pin_vcpus),
                host_load: ("--a-host-load", &args.a_host_load),
            },
            Arm::B => ArmFlags {
                kernel: ("--b-kernel", &args.b_kernel),
                append: ("--b-append", &args.b_append),
                steal_time: args.b_steal_time,
                pin_vcpus: ("--b-pin-vcpus", &args.b_pin_vcpus),
                host_load: ("--b-host-load", &args.b_host_load),
            },
        }
    }

    /// The arm's kernel image, with its command line and steal time; no pins or host load yet.
    fn read_image(&self) -> Result<VmArm, Failure> {
        let (flag, text) = self.append;
        let append = text.as_deref().unwrap_or("").trim().to_string();
        if append.chars().any(|c| c.is_control()) {
            return Err(Failure::bad_input(format!(
                "{flag} holds a control character; a kernel command line is one line"
            )));
        }
        let (flag, path) = self.kernel;
        let steal_time = self.steal_time != Some(OnOff::Off);
        VmArm::read(flag, std::path::Path::new(path), append, steal_time)
    }
}

/// Resolves an arm's vCPU pins and host load: its own flag, else the flag for both arms, else the
/// preset's.
struct ArmDefaults<'a> {
    vcpus: u32,
    allowed: Vec<u32>,
    pin_vcpus: &'a Option<String>,
    host_load: &'a Option<String>,
    preset: Option<&'a Preset>,
}

impl ArmDefaults<'_> {
    fn pins(&self, own: &ArmFlags) -> Result<Option<Vec<u32>>, Failure> {
        let (vcpus, allowed) = (self.vcpus, &self.allowed);
        match (own.pin_vcpus, self.pin_vcpus) {
            ((flag, Some(text)), _) => parse_vcpu_pins(flag, text, vcpus, allowed).map(Some),
            ((_, None), Some(text)) => {
                parse_vcpu_pins("--pin-vcpus", text, vcpus, allowed).map(Some)
            }
            // The preset's pins are for its 4 vCPUs; another --vcpus leaves them out.
            ((_, None), None) => Ok(self
                .preset
                .filter(|p| p.pins.len() == vcpus as usize)
                .map(|p| p.pins.clone())),
        }
    }

    fn load(&self, own: &ArmFlags) -> Result<Option<String>, Failure> {
        let (flag, own) = own.host_load;
        let text = own
            .clone()
            .or_else(|| self.host_load.clone())
            .or_else(|| self.preset.map(|p| p.load.clone()));
        match text {
            Some(text) if text.trim().is_empty() || text.chars().any(char::is_control) => {
                Err(Failure::bad_input(format!(
                    "{flag} must be one line of shell command, not {text:?}"
                )))
            }
            other => Ok(other),
        }
    }
}

/// The two arms of a `--vm` campaign: their images, then their pins, then their host loads.
fn arms(
    args: &CampaignStartArgs,
    vcpus: u32,
    preset: Option<&Preset>,
) -> Result<(VmArm, VmArm), Failure> {
    let (a_flags, b_flags) = (ArmFlags::of(args, Arm::A), ArmFlags::of(args, Arm::B));
    let mut a = a_flags.read_image()?;
    let mut b = b_flags.read_image()?;
    let defaults = ArmDefaults {
        vcpus,
        allowed: allowed_cpus()?,
        pin_vcpus: &args.pin_vcpus,
        host_load: &args.host_load,
        preset,
    };
    a.pin_vcpus = defaults.pins(&a_flags)?;
    b.pin_vcpus = defaults.pins(&b_flags)?;
    a.host_load = defaults.load(&a_flags)?;
    b.host_load = defaults.load(&b_flags)?;
    // Seed 000 on one image: the arms differ in steal time, unless the flags say otherwise.
    if preset.is_some() && a.sha256 == b.sha256 && args.b_steal_time.is_none() {
        b.steal_time = false;
    }
    Ok((a, b))
}

/// The accelerator the guests boot under (`--accel`) and the line to print about it, which says
/// what TCG does to the arms' settings; refuses two arms that would boot alike.
fn accel_for(
    given: Option<AccelArg>,
    a: &VmArm,
    b: &VmArm,
) -> Result<(Accel, Option<String>), Failure> {
    let choice = match given.unwrap_or(AccelArg::Auto) {
        AccelArg::Auto => AccelChoice::Auto,
        AccelArg::Kvm => AccelChoice::Kvm,
        AccelArg::Tcg => AccelChoice::Tcg,
    };
    let (accel, mut note) = accel::resolve(choice)?;
    let same_image = a.sha256 == b.sha256;
    if same_image && a.same_settings(b) {
        return Err(Failure::bad_input(
            "the two arms boot the same kernel image with the same settings; give them different \
             kernels, or set them apart with --a-append/--b-append, --a-steal-time/--b-steal-time, \
             --a-pin-vcpus/--b-pin-vcpus or --a-host-load/--b-host-load",
        ));
    }
    let only_steal_time = same_image
        && a.steal_time != b.steal_time
        && a.same_settings(&VmArm {
            steal_time: a.steal_time,
            ..b.clone()
        });
    if only_steal_time && accel == Accel::Tcg {
        note = Some(format!(
            "{}; the arms differ only in KVM's steal time, which TCG does not have: both boot \
             alike (an A/A campaign)",
            note.unwrap_or_default()
        ));
    }
    if accel == Accel::Tcg && (a.pin_vcpus.is_some() || b.pin_vcpus.is_some()) {
        note = Some(format!(
            "{}; under TCG one host thread runs every vCPU, so --pin-vcpus keeps QEMU to its host \
             CPUs but cannot place each vCPU",
            note.unwrap_or_default()
        ));
    }
    Ok((accel, note))
}

/// `--memory`: MiB (`1024`), or with a unit (`512M`, `2G`, `1T`).
fn parse_memory_mib(text: &str) -> Result<u64, Failure> {
    let bad = || {
        Failure::bad_input(format!(
            "--memory takes MiB or a size with a unit (512M, 2G), from {MIN_MEMORY_MIB}M to 1T, not {text:?}"
        ))
    };
    let text = text.trim();
    let (number, factor) = match text.char_indices().last() {
        Some((at, 'M' | 'm')) => (&text[..at], 1),
        Some((at, 'G' | 'g')) => (&text[..at], 1024),
        Some((at, 'T' | 't')) => (&text[..at], 1024 * 1024),
        _ => (text, 1),
    };
    let mib = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(bad)?;
    if !(MIN_MEMORY_MIB..=MAX_MEMORY_MIB).contains(&mib) {
        return Err(bad());
    }
    Ok(mib)
}

/// An arm of a `--vm` campaign: its release, image and what sets it apart.
fn describe_arm(arm: &VmArm) -> String {
    let mut text = format!("{} ({})", arm.release, arm.image.display());
    if !arm.append.is_empty() {
        text.push_str(&format!(" with '{}'", arm.append));
    }
    if !arm.steal_time {
        text.push_str(" without steal time");
    }
    if let Some(pins) = &arm.pin_vcpus {
        let listed: Vec<String> = pins.iter().map(u32::to_string).collect();
        text.push_str(&format!(
            ", vCPUs on host CPUs {} ({})",
            listed.join(","),
            pinned_cpus(pins)
        ));
    }
    if let Some(load) = &arm.host_load {
        text.push_str(&format!(", beside host load `{load}`"));
    }
    text
}

/// The guests of a `--vm` campaign in words.
fn describe_guests(vm: &VmSpec) -> String {
    let mut text = format!(
        "guests under {} with {} vCPUs and {} MiB",
        vm.accel, vm.vcpus, vm.memory_mib
    );
    if let Some(numa) = &vm.numa {
        text.push_str(&format!(
            " on {} NUMA nodes ({})",
            numa.nodes.len(),
            numa.describe()
        ));
    }
    text
}

fn to_value<T: Serialize>(value: &T) -> Result<serde_json::Value, Failure> {
    serde_json::to_value(value)
        .map_err(|e| Failure::failed(format!("cannot encode the campaign: {e}")))
}

fn load(
    store: &dyn Store,
    name: &str,
) -> Result<(Experiment, CampaignSpec, CampaignState), Failure> {
    let experiment = store
        .experiment(ExperimentKind::Campaign, name)?
        .ok_or_else(|| {
            Failure::bad_input(format!(
                "no campaign named {name:?} (see `schedlab campaign start`)"
            ))
        })?;
    let (spec, state) = decode(&experiment)?;
    Ok((experiment, spec, state))
}

/// A stored campaign's plan and progress.
fn decode(experiment: &Experiment) -> Result<(CampaignSpec, CampaignState), Failure> {
    let name = &experiment.name;
    let corrupt =
        |e: serde_json::Error| Failure::failed(format!("campaign {name} is unreadable: {e}"));
    let spec: CampaignSpec = serde_json::from_value(experiment.spec.clone()).map_err(corrupt)?;
    let state: CampaignState = serde_json::from_value(experiment.state.clone()).map_err(corrupt)?;
    Ok((spec, state))
}

fn next(args: &CampaignNextArgs) -> Result<ExitCode, Failure> {
    let mut session = Session::open(Storage::ExistingFile(db_location(&args.db)?))?;
    let (experiment, spec, mut state) = load(session.store(), &args.name)?;
    if spec.vm.is_some() {
        return Err(Failure::bad_input(format!(
            "campaign {} boots its kernels in QEMU guests: run `schedlab campaign run {}`",
            args.name, args.name
        )));
    }
    let experiment_id = experiment.id.unwrap_or_default();
    let fingerprint = session.fingerprint().clone();
    let step = spec.next_step(&state, &fingerprint.kernel_release, &fingerprint.boot_id);
    let Some((slot, arm, round)) = slot_of_this_boot(&args.name, step)? else {
        return finished(&args.name);
    };
    let plan = probed(args, slot_plan(&spec, &args.name, slot, arm))?;
    let mut progress = ProgressLine::new(args.quiet);
    let tag = ExperimentTag {
        experiment_id,
        arm,
        round,
    };
    let measured = measure_slot(
        &mut session,
        spec.daemons.as_ref(),
        &plan,
        tag,
        &mut progress,
    )?;
    progress.finish();
    // A failed slot stays open: the next boot of the same kernel runs it again.
    let run_id = measured.completed()?;
    let slot_done = Slot {
        arm,
        run_id,
        boot_id: fingerprint.boot_id.clone(),
        kernel: fingerprint.kernel_release,
    };
    if record_slot(
        session.store_mut(),
        experiment_id,
        &spec,
        &mut state,
        slot_done,
    )? {
        emit_line(format_args!(
            "campaign {}: slot {} of {} done (run {run_id}); the campaign is complete. Compare with:\n  schedlab compare {} {}",
            args.name, slot + 1, spec.boots, arm_label(&args.name, Arm::A), arm_label(&args.name, Arm::B)
        ))?;
        return Ok(ExitCode::SUCCESS);
    }
    boot_next(args, &spec, slot, run_id)
}

/// The slot this boot runs (its number, arm and round), or `None` when the campaign is complete;
/// refuses a boot that ran a slot already or runs another kernel than the slot's.
fn slot_of_this_boot(name: &str, step: Step) -> Result<Option<(u32, Arm, u32)>, Failure> {
    match step {
        Step::Finished => Ok(None),
        Step::AlreadyRan { slot, next_kernel } => Err(Failure::bad_input(format!(
            "this boot already ran slot {} of campaign {name}; reboot into {next_kernel} for the next one",
            slot + 1,
        ))),
        Step::WrongKernel {
            slot,
            arm,
            wanted,
            running,
        } => Err(Failure::bad_input(format!(
            "slot {} of campaign {name} is arm {} and wants kernel {wanted}, but this boot runs {running}; boot {wanted} and run `schedlab campaign next {name}` again",
            slot + 1,
            arm.as_str().to_uppercase(),
        ))),
        Step::Run { slot, arm, round } => Ok(Some((slot, arm, round))),
    }
}

/// The plan of one slot: the campaign's cases in this visit's order, labelled with its arm.
fn slot_plan(spec: &CampaignSpec, name: &str, slot: u32, arm: Arm) -> RunPlan {
    let mut plan = plan_for_visit(&spec.plan, slot);
    plan.label = Some(arm_label(name, arm));
    plan
}

/// The slot's plan with the probes `next --explain`/`--profile` ask for on this boot.
fn probed(args: &CampaignNextArgs, plan: RunPlan) -> Result<RunPlan, Failure> {
    if args.probes.explain.is_none() && !args.probes.profile {
        return Ok(plan);
    }
    let (explain, profile) = (
        args.probes.explain.unwrap_or(plan.explain),
        args.probes.profile || plan.profile,
    );
    let plan = plan.with_probes(explain, profile)?;
    crate::session::check_probes(&plan)?;
    Ok(plan)
}

/// Runs a reboot campaign's slot on this machine, beside its arm's daemon when it has one.
fn measure_slot(
    session: &mut Session,
    daemons: Option<&Daemons>,
    plan: &RunPlan,
    tag: ExperimentTag,
    progress: &mut ProgressLine,
) -> Result<MeasuredRun, Failure> {
    let Some(daemons) = daemons else {
        return session.measure(plan, Some(tag), progress);
    };
    let mut daemon = daemons.start(tag.arm.as_str())?;
    session.refresh_fingerprint();
    let measured =
        session.measure_guarded(plan, Some(tag), progress, &mut |when| daemon.check(when))?;
    daemon.stop();
    Ok(measured)
}

/// Adds a finished slot to the campaign's progress and stores it; true when it was the last.
fn record_slot(
    store: &mut dyn Store,
    experiment_id: i64,
    spec: &CampaignSpec,
    state: &mut CampaignState,
    slot: Slot,
) -> Result<bool, Failure> {
    state.slots.push(slot);
    let finished = state.slots.len() as u32 >= spec.boots;
    let status = if finished {
        RunStatus::Complete
    } else {
        RunStatus::Running
    };
    store.update_experiment(experiment_id, &to_value(state)?, status)?;
    Ok(finished)
}

/// Says which kernel the next slot wants, and reboots into it when `--reboot-cmd` says how.
fn boot_next(
    args: &CampaignNextArgs,
    spec: &CampaignSpec,
    slot: u32,
    run_id: i64,
) -> Result<ExitCode, Failure> {
    let next_kernel = spec.kernel(AbbaSlot::of(slot + 1).arm).to_string();
    emit_line(format_args!(
        "campaign {}: slot {} of {} done (run {run_id}); next: boot kernel {next_kernel} and run `schedlab campaign next {}`",
        args.name, slot + 1, spec.boots, args.name
    ))?;
    if let Some(command) = &args.reboot_cmd {
        std::env::set_var("SCHEDLAB_NEXT_KERNEL", &next_kernel);
        run_shell_command("--reboot-cmd", command)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `campaign run`: boots every remaining slot of a `--vm` campaign in a QEMU guest, in ABBA
/// order, storing the guests' runs as they arrive. A slot whose guest fails is booted again up to
/// `--retries` times, then the campaign stops (exit 1) with the slot open, as a failed boot
/// leaves it in a reboot campaign; `campaign run` again goes on from there.
fn run(args: &CampaignRunArgs) -> Result<ExitCode, Failure> {
    let mut session = Session::open(Storage::ExistingFile(db_location(&args.db)?))?;
    let (experiment, spec, state) = load(session.store(), &args.name)?;
    let experiment_id = experiment.id.unwrap_or_default();
    let Some(vm) = &spec.vm else {
        return Err(Failure::bad_input(format!(
            "campaign {} reboots this machine into its kernels: run `schedlab campaign next {}` \
                 after each boot (`campaign run` boots the kernels of a --vm campaign in guests)",
            args.name, args.name
        )));
    };
    if state.slots.len() as u32 >= spec.boots {
        return finished(&args.name);
    }
    let (binary, init) = guest_binary(args.guest_binary.as_deref())?;
    let qemu_version = accel::qemu_version(&vm.qemu)?;
    check_accel(&args.name, vm.accel)?;
    if !args.quiet {
        say(format_args!(
            "campaign {}: {}; /init is {} ({} MiB)",
            args.name,
            describe_guests(vm),
            binary.display(),
            init.len() >> 20
        ));
    }
    let host = session.fingerprint().clone();
    let boot = Boot {
        campaign: &args.name,
        spec: vm,
        init: &init,
        host: &host,
        qemu_version: &qemu_version,
        db: args.db.db.clone().map(PathBuf::into_os_string),
    };
    let mut guests = GuestRun {
        name: &args.name,
        quiet: args.quiet,
        experiment_id,
        spec: &spec,
        vm,
        state,
        failed_here: 0,
    };
    while (guests.state.slots.len() as u32) < spec.boots {
        session.check_interrupted()?;
        let slot = guests.state.slots.len() as u32;
        guests.boot(&mut session, &boot, slot)?;
    }
    finished(&args.name)
}

/// Refuses a campaign's KVM guests where KVM cannot be had, and says why its guests run under
/// TCG.
fn check_accel(name: &str, accel: Accel) -> Result<(), Failure> {
    match accel {
        Accel::Kvm => {
            if let Some(why) = accel::kvm_unusable() {
                return Err(Failure::bad_input(format!(
                    "campaign {name} boots its guests with KVM, but {why}"
                )));
            }
        }
        Accel::Tcg => {
            let why = accel::kvm_unusable().map_or("as the campaign asked".to_string(), |why| {
                format!("since {why}")
            });
            say(format_args!(
                "campaign {name}: guests under tcg, {why}; {}.",
                accel::TCG_IS_FOR
            ));
        }
    }
    Ok(())
}

/// A `--vm` campaign under way in `campaign run`: its progress, stored after every boot.
struct GuestRun<'a> {
    name: &'a str,
    quiet: bool,
    experiment_id: i64,
    spec: &'a CampaignSpec,
    vm: &'a VmSpec,
    state: CampaignState,
    /// Failed boots of the open slot in this `campaign run`.
    failed_here: u32,
}

impl GuestRun<'_> {
    /// Boots `slot` in a guest and records how it ended; an error stops the campaign.
    fn boot(&mut self, session: &mut Session, boot: &Boot, slot: u32) -> Result<(), Failure> {
        let AbbaSlot { arm, round } = AbbaSlot::of(slot);
        let plan = slot_plan(self.spec, self.name, slot, arm);
        let tag = ExperimentTag {
            experiment_id: self.experiment_id,
            arm,
            round,
        };
        let where_ = format!(
            "slot {} of {} ({})",
            slot + 1,
            self.spec.boots,
            arm_name(arm)
        );
        if !self.quiet {
            say(format_args!(
                "{where_}: booting {} under {}",
                self.vm.arm(arm).release,
                self.vm.accel
            ));
        }
        let request = SlotRequest {
            slot,
            tag,
            plan: &plan,
        };
        match boot_slot(session.store_mut(), boot, &request)? {
            SlotEnd::Complete {
                run_id,
                boot_id,
                kernel,
                boot_ms,
                total_ms,
            } => {
                let done = Slot {
                    arm,
                    run_id,
                    boot_id,
                    kernel,
                };
                self.completed(session.store_mut(), &where_, done, boot_ms, total_ms)
            }
            SlotEnd::Failed {
                reason,
                run_id,
                console_tail,
                retry,
            } => {
                let failure = FailedSlot {
                    slot,
                    arm,
                    at_ns: sys::realtime_ns(),
                    reason,
                    run_id,
                    console_tail,
                };
                self.failed(session.store_mut(), &where_, failure, retry)
            }
            SlotEnd::Interrupted { signal } => {
                Err(Failure::from(schedlab_core::Error::Interrupted(signal)))
            }
        }
    }

    /// Records a slot its guest ran to the end.
    fn completed(
        &mut self,
        store: &mut dyn Store,
        where_: &str,
        done: Slot,
        boot_ms: u64,
        total_ms: u64,
    ) -> Result<(), Failure> {
        let (run_id, kernel) = (done.run_id, done.kernel.clone());
        self.failed_here = 0;
        record_slot(store, self.experiment_id, self.spec, &mut self.state, done)?;
        emit_line(format_args!(
            "{where_}: run {run_id} complete; guest {kernel} booted in {:.1} s, {:.1} s in all",
            boot_ms as f64 / 1e3,
            total_ms as f64 / 1e3
        ))
    }

    /// Records a failed boot of a slot; an error when booting it again would not help or its
    /// retries are spent.
    fn failed(
        &mut self,
        store: &mut dyn Store,
        where_: &str,
        failure: FailedSlot,
        retry: bool,
    ) -> Result<(), Failure> {
        let slot = failure.slot;
        let run = failure
            .run_id
            .map(|id| format!(" (run {id})"))
            .unwrap_or_default();
        let reason = failure.reason.clone();
        self.state.failures.push(failure);
        store.update_experiment(
            self.experiment_id,
            &to_value(&self.state)?,
            RunStatus::Running,
        )?;
        self.failed_here += 1;
        emit_line(format_args!("{where_}: failed{run}: {reason}"))?;
        let name = self.name;
        if !retry {
            return Err(Failure::failed(format!(
                "slot {} of campaign {name} cannot run as planned (booting it again would not \
                 help); plan a campaign that fits its guests",
                slot + 1,
            )));
        }
        if self.failed_here > self.vm.retries {
            return Err(Failure::failed(format!(
                "slot {} of campaign {name} failed {}; its console is in `schedlab campaign \
                     status {name}`, and `schedlab campaign run {name}` boots it again",
                slot + 1,
                words::counted(self.failed_here as usize, "time"),
            )));
        }
        Ok(())
    }
}

/// The line of a campaign whose slots are all done.
fn finished(name: &str) -> Result<ExitCode, Failure> {
    emit_line(format_args!(
        "campaign {name} is complete; compare with:\n  schedlab compare {} {}",
        arm_label(name, Arm::A),
        arm_label(name, Arm::B)
    ))?;
    Ok(ExitCode::SUCCESS)
}

fn status(args: &CampaignStatusArgs) -> Result<ExitCode, Failure> {
    let store = open_reader(&db_location(&args.db)?)?;
    let Some(name) = &args.name else {
        return list(&*store);
    };
    let (experiment, spec, state) = load(&*store, name)?;
    emit_line(format_args!("{}", headline(&experiment, &spec, &state)))?;
    if let Some(vm) = &spec.vm {
        emit_line(format_args!("  {}", describe_guests(vm)))?;
        emit_line(format_args!("  A: {}", describe_arm(&vm.a)))?;
        emit_line(format_args!("  B: {}", describe_arm(&vm.b)))?;
    }
    for slot in 0..spec.boots {
        let arm = AbbaSlot::of(slot).arm;
        match state.slots.get(slot as usize) {
            Some(s) => emit_line(format_args!(
                "  slot {:>3}  {}  run {:<6} kernel {}  boot {}",
                slot + 1,
                arm.as_str().to_uppercase(),
                s.run_id,
                s.kernel,
                s.boot_id
            ))?,
            None => emit_line(format_args!(
                "  slot {:>3}  {}  pending (kernel {})",
                slot + 1,
                arm.as_str().to_uppercase(),
                spec.kernel(arm)
            ))?,
        }
    }
    for failure in &state.failures {
        emit_line(format_args!(
            "  slot {:>3}  {}  failed boot{}: {}",
            failure.slot + 1,
            arm_name(failure.arm),
            failure
                .run_id
                .map(|id| format!(" (run {id})"))
                .unwrap_or_default(),
            failure.reason
        ))?;
        for line in &failure.console_tail {
            emit_line(format_args!(
                " \
                 | {line}"
            ))?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A campaign in one line: its name, status, progress and kernels.
fn headline(experiment: &Experiment, spec: &CampaignSpec, state: &CampaignState) -> String {
    format!(
        "campaign {} · {} · {} of {} boots done · A = {} · B = {} · {} per boot",
        experiment.name,
        experiment.status.as_str(),
        state.slots.len(),
        spec.boots,
        spec.a_kernel,
        spec.b_kernel,
        words::counted(spec.plan.cases.len(), "case")
    )
}

/// `campaign status` with no name: every campaign's headline, newest first.
fn list(store: &dyn Store) -> Result<ExitCode, Failure> {
    let campaigns = store.experiments(ExperimentKind::Campaign)?;
    if campaigns.is_empty() {
        emit_line(format_args!(
            "no campaigns stored (see `schedlab campaign start --help`)"
        ))?;
    }
    for experiment in &campaigns {
        let (spec, state) = decode(experiment)?;
        emit_line(format_args!("{}", headline(experiment, &spec, &state)))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_core::workload::fake::FakeParams;
    use schedlab_core::workload::WorkloadSpec;

    fn spec() -> CampaignSpec {
        let plan = RunPlan::new(
            None,
            None,
            1,
            0,
            vec![WorkloadSpec::Fake(FakeParams::default())],
        )
        .unwrap();
        CampaignSpec {
            a_kernel: "6.1-a".into(),
            b_kernel: "6.1-b".into(),
            boots: 4,
            plan,
            vm: None,
            daemons: None,
        }
    }

    fn slot(arm: Arm, boot: &str) -> Slot {
        Slot {
            arm,
            run_id: 1,
            boot_id: boot.into(),
            kernel: String::new(),
        }
    }

    #[test]
    fn next_step_checks_kernel_and_boot() {
        let spec = spec();
        let run = |slot, arm, round| Step::Run { slot, arm, round };
        let mut state = CampaignState::default();
        assert_eq!(spec.next_step(&state, "6.1-a", "boot1"), run(0, Arm::A, 0));
        assert!(matches!(
            spec.next_step(&state, "6.1-b", "boot1"),
            Step::WrongKernel { slot: 0, .. }
        ));
        state.slots.push(slot(Arm::A, "boot1"));
        assert_eq!(
            spec.next_step(&state, "6.1-a", "boot1"),
            Step::AlreadyRan {
                slot: 0,
                next_kernel: "6.1-b".into()
            }
        );
        assert_eq!(spec.next_step(&state, "6.1-b", "boot2"), run(1, Arm::B, 0));
        state.slots.push(slot(Arm::B, "boot2"));
        assert_eq!(spec.next_step(&state, "6.1-b", "boot3"), run(2, Arm::B, 1));
        state.slots.push(slot(Arm::B, "boot3"));
        state.slots.push(slot(Arm::A, "boot4"));
        assert_eq!(spec.next_step(&state, "6.1-a", "boot5"), Step::Finished);
    }
}
