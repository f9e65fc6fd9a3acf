//! A `--vm` campaign's guests from `campaign start`'s flags: their vCPUs, memory and NUMA nodes,
//! timeouts and retries, each arm's image and settings (its own flag, else the flag for both arms,
//! else `--preset`'s), and the accelerator, decided once here.
use schedlab_core::plan::RunPlan;
use schedlab_core::record::Arm;
use schedlab_core::sys;
use schedlab_core::vm::qemu::{Accel, NumaLayout};

use crate::cli::{AccelArg, CampaignStartArgs, OnOff, PresetArg};
use crate::failure::Failure;
use crate::vm::accel::{self, AccelChoice};
use crate::vm::{parse_vcpu_pins, pinned_cpus, VmArm, VmSpec};

const MAX_VCPUS: u32 = 255;
const MIN_MEMORY_MIB: u64 = 128;
const MAX_MEMORY_MIB: u64 = 1 << 20;
const MAX_RETRIES: u32 = 10;
/// A running guest's longest silence without --iteration-timeout: longer than the guest's own
/// deadline of an iteration whose workload has no estimate (600 s), which it reports.
const DEFAULT_SILENCE_SEC: u64 = 660;
/// The built-in suite of `--preset vcpu-preempt`.
pub(super) const VCPU_PREEMPT_SUITE: &str = "vcpu-preempt";

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
pub(super) fn vm_spec(
    args: &CampaignStartArgs,
    plan: &RunPlan,
) -> Result<(VmSpec, Option<String>), Failure> {
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
pub(super) fn describe_arm(arm: &VmArm) -> String {
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
pub(super) fn describe_guests(vm: &VmSpec) -> String {
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
