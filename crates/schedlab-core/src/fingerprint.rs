//! The machine fingerprint stored with every run: what kernel and boot it ran on, the hardware
//! and tuning state that decide whether two runs can be compared at all, and the kernel settings
//! that change scheduler results (preemption model, sched_features, sched sysctls, THP,
//! mitigations, CPU isolation), so a report can say why two runs differ. Every file is read
//! through `sys`; the parsers here are pure.
use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::sys;

/// Fields after `dmi_product` arrived later; they default when an older stored fingerprint lacks
/// them (`None`, empty), so every stored run still loads.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Fingerprint {
    pub hostname: String,
    pub kernel_release: String,
    pub kernel_version: String,
    pub kernel_cmdline: String,
    /// Runs on one boot share this; comparisons across kernels summarise per boot.
    pub boot_id: String,
    pub cpu_model: String,
    /// The kernel's online CPU list, e.g. `0-1`.
    pub online_cpus: String,
    pub online_cpu_count: u32,
    /// `None` where the kernel does not say (no SMT control).
    pub smt_active: Option<bool>,
    pub numa_nodes: u32,
    /// Distinct cpufreq governors across CPUs; empty where there is no cpufreq.
    pub cpufreq_governors: Vec<String>,
    pub cpuidle_driver: Option<String>,
    /// The CPU reports running under a hypervisor (the `hypervisor` cpuinfo flag).
    pub hypervisor: bool,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    /// The CPU microcode revision (/proc/cpuinfo `microcode`); distinct values joined with `,`
    /// when CPUs disagree. `None` where cpuinfo has no such line (most non-x86 machines).
    #[serde(default)]
    pub microcode: Option<String>,
    /// MemTotal of /proc/meminfo, KiB.
    #[serde(default)]
    pub mem_total_kib: Option<u64>,
    /// `none`, `voluntary`, `full`, `lazy`, `rt`, or `dynamic` (PREEMPT_DYNAMIC, model not
    /// visible to this user); see [`preempt_model`] for where each comes from.
    #[serde(default)]
    pub preempt_model: Option<String>,
    /// /sys/kernel/debug/sched/features as the kernel lists them (`NO_X` is off); `None` where
    /// debugfs is not mounted or not readable (it is root's).
    #[serde(default)]
    pub sched_features: Option<Vec<String>>,
    /// Every `kernel.sched_*` sysctl this kernel has, name → value.
    #[serde(default)]
    pub sched_sysctls: BTreeMap<String, String>,
    /// Transparent huge pages: the selected mode of /sys/kernel/mm/transparent_hugepage/enabled.
    #[serde(default)]
    pub thp_enabled: Option<String>,
    /// `isolcpus=` of the kernel command line; `None` when not given.
    #[serde(default)]
    pub isolcpus: Option<String>,
    /// `nohz_full=` of the kernel command line; `None` when not given.
    #[serde(default)]
    pub nohz_full: Option<String>,
    /// `v2` (cgroup2 at /sys/fs/cgroup), `hybrid` (v1 there, cgroup2 beside it), `v1`.
    #[serde(default)]
    pub cgroup_version: Option<String>,
    /// /sys/devices/system/cpu/vulnerabilities: name → the kernel's state line (`Mitigation: …`,
    /// `Not affected`, `Vulnerable`).
    #[serde(default)]
    pub cpu_vulnerabilities: BTreeMap<String, String>,
    /// The scheduling policy schedlab ran under, which its tasks inherit (`chrt`, `nice`):
    /// `SCHED_OTHER nice 0`, `SCHED_FIFO priority 50`, … (see [`describe_sched_policy`]); `None`
    /// where the kernel would not say (no sched_getattr) and in fingerprints stored before it.
    #[serde(default)]
    pub sched_policy: Option<String>,
    /// The cpuidle governor (`menu`, `teo`, `ladder`, `haltpoll`): how deep an idle CPU sleeps,
    /// and so how long waking it takes. `None` without cpuidle.
    #[serde(default)]
    pub cpuidle_governor: Option<String>,
    /// Polling before halting, which trades CPU time for wake-up latency (seed 001): the guest's
    /// cpuidle-haltpoll and the host's KVM parameters this kernel has, `module.parameter` → value
    /// (`haltpoll.guest_halt_poll_ns`, `kvm.halt_poll_ns`, …).
    #[serde(default)]
    pub halt_poll: BTreeMap<String, String>,
    /// /sys/kernel/sched_ext/state (`enabled`, `disabled`, `enabling`, …); `None` where the kernel
    /// has no sched_ext. A BPF scheduler the kernel ejected leaves the fair class measured.
    #[serde(default)]
    pub sched_ext_state: Option<String>,
    /// The BPF scheduler loaded (/sys/kernel/sched_ext/root/ops, e.g. `rusty`); `None` when none.
    #[serde(default)]
    pub sched_ext_ops: Option<String>,
    /// Each CPU's capacity (1024 for the biggest; less on the little cores of an asymmetric
    /// machine), CPU list → value; empty where the kernel does not say.
    #[serde(default)]
    pub cpu_capacity: BTreeMap<String, String>,
    /// Each CPU's maximum frequency, kHz (cpufreq's `cpuinfo_max_freq`), CPU list → value; empty
    /// without cpufreq.
    #[serde(default)]
    pub cpu_max_freq_khz: BTreeMap<String, String>,
    /// The CPUs of each last-level cache (its `shared_cpu_list`), one entry per cache: a wake-up
    /// from one group to another crosses an LLC.
    #[serde(default)]
    pub llc_groups: Vec<String>,
    /// The scheduler options of the kernel's build configuration ([`KERNEL_CONFIG_OPTIONS`], from
    /// /proc/config.gz, else /boot/config-RELEASE), `CONFIG_HZ` → `250`; an option it does not set
    /// is `n`. Empty when no configuration is readable.
    #[serde(default)]
    pub kernel_config: BTreeMap<String, String>,
    /// The C library the binary uses, with its version (`glibc 2.36`, `musl 1.2.5`): the
    /// read/write data path, fork and the pthread mutex are its code.
    pub libc: String,
    pub schedlab_version: String,
    pub schedlab_commit: String,
    /// Set on a run `schedlab import` read from a tool's output: where the numbers came from and
    /// which fields above are known. Every other field is empty (or 0) because nobody knows it,
    /// not because it is empty; `None` on a run schedlab measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub imported: Option<ImportOrigin>,
    /// Set on a run measured in a QEMU guest that `schedlab campaign run` booted: the fields
    /// above are the guest's own, these say how it was booted and on what host. `None` on a run
    /// measured on the machine itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guest: Option<GuestOrigin>,
}

/// How a guest was booted, as the host that booted it saw it, and what the guest saw of the
/// hypervisor.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct GuestOrigin {
    /// `kvm`, or `tcg` (QEMU emulating every instruction: its timings are the emulator's).
    pub accelerator: String,
    /// `qemu-system-x86_64 --version`'s first line.
    pub qemu_version: String,
    /// The QEMU command line, as one line a shell takes back.
    pub qemu_command: String,
    pub kernel_image: String,
    pub kernel_image_sha256: String,
    /// What the campaign appended to schedlab's own kernel command line for this arm.
    pub append: String,
    pub vcpus: u32,
    pub memory_mib: u64,
    /// The NUMA nodes' vCPUs (`0-1/2-3`); `None` without `-numa`.
    #[serde(default)]
    pub numa: Option<String>,
    /// KVM's steal time as asked of QEMU; `None` under TCG, which has no KVM features.
    #[serde(default)]
    pub steal_time: Option<bool>,
    /// The host CPUs QEMU's threads were confined to; `None` when not pinned.
    #[serde(default)]
    pub host_cpus: Option<String>,
    /// Each vCPU's host CPU in vCPU order (`0,1,0,1`), where each vCPU thread was pinned (KVM;
    /// under TCG one thread runs every vCPU and only `host_cpus` applies).
    #[serde(default)]
    pub vcpu_pins: Option<String>,
    /// The command run on the host beside the guest; `None` without one.
    #[serde(default)]
    pub host_load: Option<String>,
    /// The hypervisor's CPUID signature the guest read (`KVMKVMKVM`, `TCGTCGTCGTCG`).
    #[serde(default)]
    pub hypervisor_signature: Option<String>,
    /// KVM_FEATURE_STEAL_TIME as the guest's CPUID showed it; `None` when not under KVM.
    #[serde(default)]
    pub kvm_steal_time: Option<bool>,
    /// From QEMU's start to the guest's first message, milliseconds.
    pub boot_ms: u64,
    /// The host's own fingerprint.
    pub host: Box<Fingerprint>,
}

/// Where an imported run's numbers came from, and what was known of the machine that made them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ImportOrigin {
    /// The parser that read them: `perf-bench`, `hackbench`, `schbench` or `plain`.
    pub tool: String,
    /// `None` when not known (perf bench's output does not say; schbench and hackbench have none).
    pub tool_version: Option<String>,
    /// The files, as named on the command line.
    pub files: Vec<String>,
    /// Each known field of the fingerprint and where it came from (`--host`, `--kernel`,
    /// `--this-machine`, or a file that records it, as schbench's JSON does).
    pub known: BTreeMap<String, String>,
    /// The host that imported them, which did not measure them (unless `--this-machine` says so).
    pub imported_by: String,
}

/// The fields `--this-machine` vouches for: the hardware and its tuning, which a later kernel
/// does not change. The kernel's own fields (release, command line, preemption, sysctls,
/// mitigations) are not taken: the files may come from another kernel on this machine.
const MACHINE_FIELDS: &[&str] = &[
    "hostname",
    "cpu_model",
    "online_cpus",
    "online_cpu_count",
    "smt_active",
    "numa_nodes",
    "cpufreq_governors",
    "cpuidle_driver",
    "hypervisor",
    "dmi_vendor",
    "dmi_product",
    "microcode",
    "mem_total_kib",
    "cpu_capacity",
    "cpu_max_freq_khz",
    "llc_groups",
];

/// The build options [`Fingerprint::kernel_config`] records: the preemption model, the tick,
/// the CPU masks' size and placement, the scheduling classes and topology levels the kernel has,
/// the accounting that probes read, group scheduling, NUMA, and the paravirtual and idle-polling
/// code that guests run.
pub const KERNEL_CONFIG_OPTIONS: &[&str] = &[
    "CONFIG_PREEMPT_NONE",
    "CONFIG_PREEMPT_VOLUNTARY",
    "CONFIG_PREEMPT",
    "CONFIG_PREEMPT_LAZY",
    "CONFIG_PREEMPT_RT",
    "CONFIG_PREEMPT_DYNAMIC",
    "CONFIG_HZ",
    "CONFIG_NO_HZ_IDLE",
    "CONFIG_NO_HZ_FULL",
    "CONFIG_HIGH_RES_TIMERS",
    "CONFIG_NR_CPUS",
    "CONFIG_CPUMASK_OFFSTACK",
    "CONFIG_SCHED_CLASS_EXT",
    "CONFIG_SCHED_SMT",
    "CONFIG_SCHED_MC",
    "CONFIG_SCHED_CLUSTER",
    "CONFIG_SCHED_CORE",
    "CONFIG_SCHED_AUTOGROUP",
    "CONFIG_SCHEDSTATS",
    "CONFIG_SCHED_INFO",
    "CONFIG_FAIR_GROUP_SCHED",
    "CONFIG_RT_GROUP_SCHED",
    "CONFIG_CFS_BANDWIDTH",
    "CONFIG_UCLAMP_TASK",
    "CONFIG_NUMA",
    "CONFIG_NUMA_BALANCING",
    "CONFIG_IRQ_TIME_ACCOUNTING",
    "CONFIG_PREEMPT_RCU",
    "CONFIG_RCU_NOCB_CPU",
    "CONFIG_PARAVIRT",
    "CONFIG_PARAVIRT_SPINLOCKS",
    "CONFIG_PARAVIRT_TIME_ACCOUNTING",
    "CONFIG_HALTPOLL_CPUIDLE",
    "CONFIG_CPU_IDLE_GOV_HALTPOLL",
    "CONFIG_CPU_IDLE_GOV_MENU",
    "CONFIG_CPU_IDLE_GOV_TEO",
];

/// A fingerprint field two runs must share to be compared: hardware and tuning decide the
/// numbers whatever the kernel, so `compare` refuses runs that differ in one (unless
/// `--allow-fingerprint-mismatch`) and the HTML report marks such a difference as the refusal.
/// One list, so the page never flags a field `compare` lets through or misses one it refuses.
pub struct MustMatch {
    /// The field's name as serialised, which [`Fingerprint::fields`] lists.
    pub field: &'static str,
    /// The field in words, for the refusal.
    pub name: &'static str,
    /// The value compared, as the refusal quotes it.
    pub read: fn(&Fingerprint) -> String,
}

pub const MUST_MATCH: [MustMatch; 4] = [
    MustMatch {
        field: "cpu_model",
        name: "CPU model",
        read: |f| f.cpu_model.clone(),
    },
    MustMatch {
        field: "online_cpu_count",
        name: "online CPU count",
        read: |f| f.online_cpu_count.to_string(),
    },
    MustMatch {
        field: "smt_active",
        name: "SMT",
        read: |f| format!("{:?}", f.smt_active),
    },
    MustMatch {
        field: "cpufreq_governors",
        name: "cpufreq governor",
        read: |f| f.cpufreq_governors.join(","),
    },
];

fn read_trimmed(path: &str) -> Option<String> {
    let text = sys::read_text(path)?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Counts the CPUs in a kernel CPU list such as `0-3,8,10-11`.
pub fn count_cpu_list(list: &str) -> u32 {
    list.split(',')
        .filter(|part| !part.trim().is_empty())
        .map(|part| match part.trim().split_once('-') {
            Some((a, b)) => match (a.parse::<u32>(), b.parse::<u32>()) {
                (Ok(a), Ok(b)) if b >= a => b - a + 1,
                _ => 0,
            },
            None => u32::from(part.trim().parse::<u32>().is_ok()),
        })
        .sum()
}

/// The CPUs the kernel has online (/sys/devices/system/cpu/online), at least 1.
pub fn online_cpu_count() -> u32 {
    read_trimmed("/sys/devices/system/cpu/online")
        .map_or(1, |list| count_cpu_list(&list))
        .max(1)
}

/// The machine counts relative to it are counted on: its online CPUs and its NUMA nodes that
/// have CPUs (/sys/devices/system/node/has_cpu, else the online nodes; 1 without either), so a
/// memory-only node gets no message thread of its own.
pub fn topology() -> crate::workload::Topology {
    let nodes = read_trimmed("/sys/devices/system/node/has_cpu")
        .or_else(|| read_trimmed("/sys/devices/system/node/online"))
        .map_or(1, |list| count_cpu_list(&list));
    crate::workload::Topology::new(online_cpu_count(), nodes)
}

fn cpuinfo_field<'a>(cpuinfo: &'a str, key: &'a str) -> Option<&'a str> {
    cpuinfo_fields(cpuinfo, key).next()
}

fn cpuinfo_fields<'a>(cpuinfo: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    cpuinfo.lines().filter_map(move |line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

/// The distinct microcode revisions over every CPU, in first-seen order.
pub fn microcode(cpuinfo: &str) -> Option<String> {
    let mut seen: Vec<&str> = Vec::new();
    for value in cpuinfo_fields(cpuinfo, "microcode") {
        if !seen.contains(&value) {
            seen.push(value);
        }
    }
    (!seen.is_empty()).then(|| seen.join(","))
}

/// MemTotal in KiB, from /proc/meminfo text.
pub fn mem_total_kib(meminfo: &str) -> Option<u64> {
    meminfo.lines().find_map(|line| {
        let rest = line.strip_prefix("MemTotal:")?;
        rest.split_whitespace().next()?.parse().ok()
    })
}

/// A scheduling policy as `chrt` and `nice` would set it: `SCHED_OTHER nice 0`, `SCHED_BATCH
/// nice 5`, `SCHED_IDLE`, `SCHED_EXT nice 0`, `SCHED_FIFO priority 50`, `SCHED_RR priority 1`,
/// `SCHED_DEADLINE runtime 1000000 deadline 5000000 period 10000000 ns`; a fair policy adds its
/// EEVDF slice where the kernel reports one (` slice 1400000 ns`, 6.12 on; a custom slice changes
/// wake-up latency), then ` reset-on-fork` when the flag is set; an unknown policy goes by its
/// number (`policy 9 nice 0`). Nice is shown for the policies that weigh by it (SCHED_IDLE weighs
/// less than nice 19, whatever nice says).
pub fn describe_sched_policy(policy: &sys::SchedPolicy) -> String {
    let p = &policy.attr;
    let slice = if p.runtime_ns > 0 {
        format!(" slice {} ns", p.runtime_ns)
    } else {
        String::new()
    };
    let weighed = |name: &str| format!("{name} nice {}{slice}", p.nice);
    let mut text = match p.policy {
        0 => weighed("SCHED_OTHER"),
        1 => format!("SCHED_FIFO priority {}", p.rt_priority),
        2 => format!("SCHED_RR priority {}", p.rt_priority),
        3 => weighed("SCHED_BATCH"),
        5 => format!("SCHED_IDLE{slice}"),
        6 => format!(
            "SCHED_DEADLINE runtime {} deadline {} period {} ns",
            p.runtime_ns, p.deadline_ns, p.period_ns
        ),
        7 => weighed("SCHED_EXT"),
        other => weighed(&format!("policy {other}")),
    };
    if policy.reset_on_fork {
        text.push_str(" reset-on-fork");
    }
    text
}

/// The selected value of a sysfs choice file such as `always [madvise] never`.
pub fn bracketed_choice(text: &str) -> Option<String> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    Some(text[start..end].to_string()).filter(|v| !v.is_empty())
}

/// The last value of a kernel command-line parameter (`isolcpus=1-3`), before any `--` (what
/// follows it is init's).
pub fn cmdline_param(cmdline: &str, name: &str) -> Option<String> {
    cmdline
        .split_whitespace()
        .take_while(|word| *word != "--")
        .filter_map(|word| word.strip_prefix(name)?.strip_prefix('='))
        .last()
        .map(str::to_string)
}

/// The preemption model, from the best source there is:
///
/// 1. /sys/kernel/debug/sched/preempt (`debugfs`, PREEMPT_DYNAMIC kernels, readable by root):
///    the model in effect, parenthesised (`none voluntary (full) lazy`);
/// 2. else the version string (`uname -v`): `PREEMPT_RT` → `rt`, `PREEMPT` → `full`, no
///    preemption word → `none` or `voluntary`, which the version string cannot tell apart, so
///    the kernel config (`config`: /proc/config.gz, else /boot/config-RELEASE) decides when it is there;
/// 3. `PREEMPT_DYNAMIC` without debugfs: the `preempt=` boot parameter, else the config's default
///    model, else `dynamic` (chosen at boot; not visible to this user).
pub fn preempt_model(
    debugfs: Option<&str>,
    version: &str,
    cmdline: &str,
    config: Option<&str>,
) -> Option<String> {
    if let Some(text) = debugfs {
        let start = text.find('(').map(|i| i + 1);
        if let Some(start) = start {
            if let Some(len) = text[start..].find(')') {
                let model = text[start..start + len].trim();
                if !model.is_empty() {
                    return Some(model.to_string());
                }
            }
        }
    }
    let words: Vec<&str> = version.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let config_model = || {
        let config = config?;
        let set = |key: &str| config.lines().any(|l| l.trim() == format!("{key}=y"));
        [
            ("CONFIG_PREEMPT_RT", "rt"),
            ("CONFIG_PREEMPT_LAZY", "lazy"),
            ("CONFIG_PREEMPT", "full"),
            ("CONFIG_PREEMPT_VOLUNTARY", "voluntary"),
            ("CONFIG_PREEMPT_NONE", "none"),
        ]
        .into_iter()
        .find(|(key, _)| set(key))
        .map(|(_, model)| model.to_string())
    };
    if words.contains(&"PREEMPT_RT") {
        return Some("rt".to_string());
    }
    if words.contains(&"PREEMPT_DYNAMIC") {
        let chosen = cmdline_param(cmdline, "preempt")
            .filter(|m| ["none", "voluntary", "full", "lazy"].contains(&m.as_str()));
        return Some(
            chosen
                .or_else(config_model)
                .unwrap_or_else(|| "dynamic".to_string()),
        );
    }
    if words.contains(&"PREEMPT") {
        return Some("full".to_string());
    }
    // A model this code does not know yet (a later kernel's word), as the kernel spells it.
    if let Some(other) = words.iter().find_map(|w| w.strip_prefix("PREEMPT_")) {
        return Some(other.to_ascii_lowercase());
    }
    Some(config_model().unwrap_or_else(|| "none or voluntary".to_string()))
}

/// Which cgroup hierarchy is mounted at /sys/fs/cgroup, from /proc/self/mounts text.
pub fn cgroup_version(mounts: &str) -> Option<String> {
    let mut root = None;
    let mut unified = false;
    let mut v1 = false;
    for line in mounts.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (Some(point), Some(kind)) = (fields.get(1), fields.get(2)) else {
            continue;
        };
        if *point == "/sys/fs/cgroup" {
            root = Some(*kind);
        }
        if *kind == "cgroup2" && point.starts_with("/sys/fs/cgroup/") {
            unified = true;
        }
        if *kind == "cgroup" {
            v1 = true;
        }
    }
    match root {
        Some("cgroup2") => Some("v2".to_string()),
        _ if v1 && unified => Some("hybrid".to_string()),
        _ if v1 => Some("v1".to_string()),
        _ => None,
    }
}

/// The CPU numbers of /sys/devices/system/cpu (`cpu0`, `cpu1`, …), ascending.
fn cpu_numbers() -> Vec<u32> {
    let mut cpus: Vec<u32> = sys::dir_names("/sys/devices/system/cpu")
        .iter()
        .filter_map(|name| name.strip_prefix("cpu")?.parse().ok())
        .collect();
    cpus.sort_unstable();
    cpus
}

/// A kernel CPU list (`0-3,8,10-11`) of ascending CPU numbers.
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Per-CPU values as CPU list → value, CPUs with the same value in one list (`0-3` → `1024`,
/// `4-7` → `512`), so a uniform machine is one entry.
pub fn group_cpus_by_value(values: &[(u32, String)]) -> BTreeMap<String, String> {
    let mut by_value: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for (cpu, value) in values {
        by_value.entry(value.as_str()).or_default().push(*cpu);
    }
    by_value
        .into_iter()
        .map(|(value, mut cpus)| {
            cpus.sort_unstable();
            (format_cpu_list(&cpus), value.to_string())
        })
        .collect()
}

/// A per-CPU sysfs file (`cpu_capacity`, `cpufreq/cpuinfo_max_freq`) over every CPU that has it.
fn per_cpu(file: &str) -> BTreeMap<String, String> {
    let values: Vec<(u32, String)> = cpu_numbers()
        .into_iter()
        .filter_map(|cpu| {
            let value = read_trimmed(&format!("/sys/devices/system/cpu/cpu{cpu}/{file}"))?;
            Some((cpu, value))
        })
        .collect();
    group_cpus_by_value(&values)
}

/// The distinct `shared_cpu_list`s of each CPU's last-level cache: the highest-numbered
/// `cache/indexN` that is a data or unified cache.
fn llc_groups() -> Vec<String> {
    let mut groups = BTreeSet::new();
    for cpu in cpu_numbers() {
        let dir = format!("/sys/devices/system/cpu/cpu{cpu}/cache");
        let last = sys::dir_names(&dir)
            .into_iter()
            .filter_map(|name| name.strip_prefix("index")?.parse::<u32>().ok())
            .filter(|index| {
                read_trimmed(&format!("{dir}/index{index}/type"))
                    .is_some_and(|kind| kind != "Instruction")
            })
            .max();
        if let Some(list) =
            last.and_then(|index| read_trimmed(&format!("{dir}/index{index}/shared_cpu_list")))
        {
            groups.insert(list);
        }
    }
    groups.into_iter().collect()
}

/// Each option of `wanted` as a kernel `.config` text sets it (`y`, `m`, a number, a quoted
/// string without its quotes), `n` where the text says it is not set or does not name it.
pub fn config_options(config: &str, wanted: &[&str]) -> BTreeMap<String, String> {
    let mut set: BTreeMap<&str, &str> = BTreeMap::new();
    for line in config.lines() {
        if let Some((key, value)) = line.trim().split_once('=') {
            set.insert(key, value.trim_matches('"'));
        }
    }
    wanted
        .iter()
        .map(|key| (key.to_string(), set.get(key).unwrap_or(&"n").to_string()))
        .collect()
}

/// The running kernel's build configuration: /proc/config.gz (IKCONFIG_PROC), else
/// /boot/config-RELEASE.
fn kernel_config_text(release: &str) -> Option<String> {
    if let Some(compressed) = sys::read_bytes("/proc/config.gz") {
        let mut text = String::new();
        let decoded = std::io::Read::read_to_string(
            &mut flate2::read::GzDecoder::new(compressed.as_slice()),
            &mut text,
        );
        if decoded.is_ok() {
            return Some(text);
        }
    }
    sys::read_text(&format!("/boot/config-{release}"))
}

/// The halt-polling parameters of the `haltpoll` (guest) and `kvm` (host) modules.
fn halt_poll() -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for module in ["haltpoll", "kvm"] {
        let dir = format!("/sys/module/{module}/parameters");
        for (name, value) in files_of(&dir, |name| name.contains("halt_poll")) {
            out.insert(format!("{module}.{name}"), value);
        }
    }
    out
}

fn cpufreq_governors() -> Vec<String> {
    let mut governors = BTreeSet::new();
    for name in sys::dir_names("/sys/devices/system/cpu") {
        if name.starts_with("cpu") && name[3..].chars().all(|c| c.is_ascii_digit()) {
            let path = format!("/sys/devices/system/cpu/{name}/cpufreq/scaling_governor");
            if let Some(g) = read_trimmed(&path) {
                governors.insert(g);
            }
        }
    }
    governors.into_iter().collect()
}

/// Every readable file of `dir` whose name passes `keep`, name → trimmed contents with runs of
/// white space as one space (some sysctls hold tab-separated vectors).
fn files_of(dir: &str, keep: impl Fn(&str) -> bool) -> BTreeMap<String, String> {
    sys::dir_names(dir)
        .into_iter()
        .filter(|name| keep(name))
        .filter_map(|name| {
            let text = sys::read_text(&format!("{dir}/{name}"))?;
            let value = text.split_whitespace().collect::<Vec<_>>().join(" ");
            Some((name, value))
        })
        .collect()
}

impl Fingerprint {
    /// What took the run's numbers: schedlab's build (version, commit, C library), or for an
    /// imported run the tool whose output was read. Two runs with different answers may differ
    /// because the measuring code did; `None` when a fingerprint stored before the fields existed
    /// does not say.
    pub fn measured_by(&self) -> Option<String> {
        if let Some(origin) = &self.imported {
            return Some(match &origin.tool_version {
                Some(version) => format!("{} {version} (imported)", origin.tool),
                None => format!("{} (imported)", origin.tool),
            });
        }
        if self.schedlab_commit.is_empty() && self.schedlab_version.is_empty() {
            return None;
        }
        let mut by = format!(
            "schedlab {} {}",
            self.schedlab_version, self.schedlab_commit
        );
        if !self.libc.is_empty() {
            by.push_str(&format!(" ({})", self.libc));
        }
        Some(by)
    }

    /// Reads the fingerprint of the machine schedlab runs on. Missing files give empty or `None`
    /// fields, never an error: containers and odd kernels hide some of these.
    pub fn collect() -> Self {
        let cpuinfo = sys::read_text("/proc/cpuinfo").unwrap_or_default();
        let online_cpus = read_trimmed("/sys/devices/system/cpu/online").unwrap_or_default();
        let nodes = read_trimmed("/sys/devices/system/node/online");
        let kernel_release = read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default();
        let kernel_version = read_trimmed("/proc/sys/kernel/version").unwrap_or_default();
        let kernel_cmdline = read_trimmed("/proc/cmdline").unwrap_or_default();
        let config = kernel_config_text(&kernel_release);
        let preempt_model = preempt_model(
            sys::read_text("/sys/kernel/debug/sched/preempt").as_deref(),
            &kernel_version,
            &kernel_cmdline,
            config.as_deref(),
        );
        let sched_features = read_trimmed("/sys/kernel/debug/sched/features")
            .map(|text| text.split_whitespace().map(str::to_string).collect());
        let sched_sysctls = files_of("/proc/sys/kernel", |name| name.starts_with("sched_"))
            .into_iter()
            .map(|(name, value)| (format!("kernel.{name}"), value))
            .collect();
        Fingerprint {
            hostname: sys::hostname(),
            kernel_release,
            kernel_version,
            isolcpus: cmdline_param(&kernel_cmdline, "isolcpus"),
            nohz_full: cmdline_param(&kernel_cmdline, "nohz_full"),
            kernel_cmdline,
            boot_id: sys::boot_id().unwrap_or_default(),
            cpu_model: cpuinfo_field(&cpuinfo, "model name")
                .or_else(|| cpuinfo_field(&cpuinfo, "CPU part"))
                .unwrap_or("unknown")
                .to_string(),
            online_cpu_count: count_cpu_list(&online_cpus),
            online_cpus,
            smt_active: read_trimmed("/sys/devices/system/cpu/smt/active").map(|s| s == "1"),
            numa_nodes: nodes.as_deref().map_or(1, count_cpu_list).max(1),
            cpufreq_governors: cpufreq_governors(),
            cpuidle_driver: read_trimmed("/sys/devices/system/cpu/cpuidle/current_driver"),
            hypervisor: cpuinfo_field(&cpuinfo, "flags")
                .is_some_and(|flags| flags.split_whitespace().any(|f| f == "hypervisor")),
            dmi_vendor: read_trimmed("/sys/class/dmi/id/sys_vendor"),
            dmi_product: read_trimmed("/sys/class/dmi/id/product_name"),
            microcode: microcode(&cpuinfo),
            mem_total_kib: sys::read_text("/proc/meminfo").and_then(|m| mem_total_kib(&m)),
            preempt_model,
            sched_features,
            sched_sysctls,
            thp_enabled: sys::read_text("/sys/kernel/mm/transparent_hugepage/enabled")
                .and_then(|t| bracketed_choice(&t)),
            cgroup_version: sys::read_text("/proc/self/mounts").and_then(|m| cgroup_version(&m)),
            cpu_vulnerabilities: files_of("/sys/devices/system/cpu/vulnerabilities", |_| true),
            sched_policy: sys::current_sched_policy()
                .ok()
                .map(|p| describe_sched_policy(&p)),
            cpuidle_governor: read_trimmed("/sys/devices/system/cpu/cpuidle/current_governor")
                .or_else(|| read_trimmed("/sys/devices/system/cpu/cpuidle/current_governor_ro")),
            halt_poll: halt_poll(),
            sched_ext_state: read_trimmed("/sys/kernel/sched_ext/state"),
            sched_ext_ops: read_trimmed("/sys/kernel/sched_ext/root/ops"),
            cpu_capacity: per_cpu("cpu_capacity"),
            cpu_max_freq_khz: per_cpu("cpufreq/cpuinfo_max_freq"),
            llc_groups: llc_groups(),
            kernel_config: config
                .as_deref()
                .map(|text| config_options(text, KERNEL_CONFIG_OPTIONS))
                .unwrap_or_default(),
            libc: sys::libc_description(),
            schedlab_version: crate::VERSION.to_string(),
            schedlab_commit: crate::GIT_COMMIT.to_string(),
            imported: None,
            guest: None,
        }
    }

    /// The fingerprint of an imported run: only what `origin.known` lists is filled in —
    /// `hostname` and `kernel_release` from `host` and `kernel`, the hardware fields from this
    /// machine when `this_machine` says the files were measured here — and the rest left empty.
    /// The boot is never known.
    pub fn for_import(
        mut origin: ImportOrigin,
        host: Option<(String, String)>,
        kernel: Option<(String, String)>,
        this_machine: bool,
    ) -> Self {
        let mut fp = Fingerprint {
            schedlab_version: crate::VERSION.to_string(),
            schedlab_commit: crate::GIT_COMMIT.to_string(),
            ..Fingerprint::default()
        };
        if this_machine {
            let here = Fingerprint::collect();
            fp = Fingerprint {
                hostname: here.hostname,
                cpu_model: here.cpu_model,
                online_cpus: here.online_cpus,
                online_cpu_count: here.online_cpu_count,
                smt_active: here.smt_active,
                numa_nodes: here.numa_nodes,
                cpufreq_governors: here.cpufreq_governors,
                cpuidle_driver: here.cpuidle_driver,
                hypervisor: here.hypervisor,
                dmi_vendor: here.dmi_vendor,
                dmi_product: here.dmi_product,
                microcode: here.microcode,
                mem_total_kib: here.mem_total_kib,
                cpu_capacity: here.cpu_capacity,
                cpu_max_freq_khz: here.cpu_max_freq_khz,
                llc_groups: here.llc_groups,
                ..fp
            };
            for field in MACHINE_FIELDS {
                origin
                    .known
                    .insert(field.to_string(), "--this-machine".to_string());
            }
        }
        if let Some((hostname, source)) = host {
            fp.hostname = hostname;
            origin.known.insert("hostname".to_string(), source);
        }
        if let Some((release, source)) = kernel {
            fp.kernel_release = release;
            origin.known.insert("kernel_release".to_string(), source);
        }
        fp.imported = Some(origin);
        fp
    }

    /// Every field in declaration order, as its JSON value, with maps (sysctls, vulnerabilities)
    /// spread into one `field.key` entry each so a difference in one shows on its own line; an
    /// empty map stays one entry. Enumerated through serde, so a field added to the struct shows
    /// up in `schedlab env` and the HTML report without touching them.
    pub fn fields(&self) -> Vec<(String, serde_json::Value)> {
        let Ok(json) = serde_json::to_string(self) else {
            return Vec::new();
        };
        let Ok(Ordered(fields)) = serde_json::from_str::<Ordered>(&json) else {
            return Vec::new();
        };
        let mut out = Vec::with_capacity(fields.len());
        for (name, value) in fields {
            match value {
                serde_json::Value::Object(map) if !map.is_empty() => {
                    for (key, v) in map {
                        out.push((format!("{name}.{key}"), v));
                    }
                }
                other => out.push((name, other)),
            }
        }
        out
    }
}

/// A JSON object's fields in the order they were written. `serde_json::Value` sorts keys (the
/// `preserve_order` feature is off), and the struct's order (hostname, kernel, CPUs, …) reads
/// better than the alphabet.
struct Ordered(Vec<(String, serde_json::Value)>);

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Ordered;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry()? {
                    fields.push(entry);
                }
                Ok(Ordered(fields))
            }
        }
        d.deserialize_map(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The list is matched against [`Fingerprint::fields`]' names by the HTML report: a field
    /// renamed in the struct but not here would silently stop being flagged.
    #[test]
    fn every_must_match_field_is_a_serialised_field_that_its_reader_tells_apart() {
        let listed: Vec<String> = Fingerprint::default()
            .fields()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        let other = Fingerprint {
            cpu_model: "Other CPU".into(),
            online_cpu_count: 64,
            smt_active: Some(true),
            cpufreq_governors: vec!["powersave".into()],
            ..Fingerprint::default()
        };
        for must in &MUST_MATCH {
            assert!(listed.iter().any(|f| f == must.field), "{}", must.field);
            assert_ne!(
                (must.read)(&Fingerprint::default()),
                (must.read)(&other),
                "{}",
                must.field
            );
        }
    }

    #[test]
    fn cpu_lists_and_per_cpu_values_group_as_the_kernel_writes_them() {
        assert_eq!(format_cpu_list(&[]), "");
        assert_eq!(format_cpu_list(&[0]), "0");
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 8, 10, 11]), "0-3,8,10-11");
        let values: Vec<(u32, String)> = [(0, "1024"), (1, "1024"), (2, "512"), (3, "512")]
            .into_iter()
            .map(|(cpu, v)| (cpu, v.to_string()))
            .collect();
        let grouped = group_cpus_by_value(&values);
        assert_eq!(grouped.get("0-1").map(String::as_str), Some("1024"));
        assert_eq!(grouped.get("2-3").map(String::as_str), Some("512"));
        assert_eq!(grouped.len(), 2);
    }

    #[test]
    fn config_options_read_set_unset_and_absent_options() {
        let config = "# comment\nCONFIG_HZ=250\nCONFIG_SCHED_SMT=y\n\
                      # CONFIG_SCHEDSTATS is not set\nCONFIG_DEFAULT_HOSTNAME=\"(none)\"\n";
        let options = config_options(
            config,
            &[
                "CONFIG_HZ",
                "CONFIG_SCHED_SMT",
                "CONFIG_SCHEDSTATS",
                "CONFIG_SCHED_CLASS_EXT",
                "CONFIG_DEFAULT_HOSTNAME",
            ],
        );
        let get = |k: &str| options.get(k).map(String::as_str);
        assert_eq!(get("CONFIG_HZ"), Some("250"));
        assert_eq!(get("CONFIG_SCHED_SMT"), Some("y"));
        assert_eq!(get("CONFIG_SCHEDSTATS"), Some("n"));
        assert_eq!(get("CONFIG_SCHED_CLASS_EXT"), Some("n"));
        assert_eq!(get("CONFIG_DEFAULT_HOSTNAME"), Some("(none)"));
    }

    #[test]
    fn measured_by_names_the_build_or_the_imported_tool() {
        let built = Fingerprint {
            libc: "glibc 2.36".into(),
            schedlab_version: "0.1.0".into(),
            schedlab_commit: "abc".into(),
            ..Fingerprint::default()
        };
        assert_eq!(
            built.measured_by().as_deref(),
            Some("schedlab 0.1.0 abc (glibc 2.36)")
        );
        let imported = Fingerprint {
            imported: Some(ImportOrigin {
                tool: "hackbench".into(),
                ..ImportOrigin::default()
            }),
            ..built.clone()
        };
        assert_eq!(
            imported.measured_by().as_deref(),
            Some("hackbench (imported)")
        );
        assert_eq!(Fingerprint::default().measured_by(), None);
    }

    #[test]
    fn names_scheduling_policies_as_chrt_and_nice_set_them() {
        let policy = |policy, nice, rt_priority| sys::SchedPolicy {
            attr: sys::SchedRequest {
                policy,
                nice,
                rt_priority,
                ..sys::SchedRequest::default()
            },
            reset_on_fork: false,
        };
        let cases = [
            (policy(0, 0, 0), "SCHED_OTHER nice 0"),
            (policy(0, 19, 0), "SCHED_OTHER nice 19"),
            (policy(3, -5, 0), "SCHED_BATCH nice -5"),
            (policy(5, 0, 0), "SCHED_IDLE"),
            (policy(7, 0, 0), "SCHED_EXT nice 0"),
            (policy(1, 0, 50), "SCHED_FIFO priority 50"),
            (policy(2, 0, 1), "SCHED_RR priority 1"),
            (policy(9, 2, 0), "policy 9 nice 2"),
        ];
        for (p, want) in cases {
            assert_eq!(describe_sched_policy(&p), want);
        }
        let sliced = |mut policy: sys::SchedPolicy| {
            policy.attr.runtime_ns = 1_400_000;
            policy
        };
        assert_eq!(
            describe_sched_policy(&sliced(policy(0, 0, 0))),
            "SCHED_OTHER nice 0 slice 1400000 ns"
        );
        assert_eq!(
            describe_sched_policy(&sliced(policy(5, 0, 0))),
            "SCHED_IDLE slice 1400000 ns"
        );
        let deadline = sys::SchedPolicy {
            attr: sys::SchedRequest {
                policy: 6,
                runtime_ns: 1_000_000,
                deadline_ns: 5_000_000,
                period_ns: 10_000_000,
                ..sys::SchedRequest::default()
            },
            reset_on_fork: true,
        };
        assert_eq!(
            describe_sched_policy(&deadline),
            "SCHED_DEADLINE runtime 1000000 deadline 5000000 period 10000000 ns reset-on-fork"
        );
    }

    #[test]
    fn counts_cpu_lists() {
        assert_eq!(count_cpu_list("0-1"), 2);
        assert_eq!(count_cpu_list("0-3,8,10-11"), 7);
        assert_eq!(count_cpu_list("0"), 1);
        assert_eq!(count_cpu_list(""), 0);
    }

    /// The flavour this test binary is linked with, and a dotted version number after it (glibc's
    /// from gnu_get_libc_version, a static musl's from __libc_version; a dynamic musl cannot say).
    fn assert_libc_named_with_version(libc: &str) {
        if cfg!(all(target_env = "musl", not(target_feature = "crt-static"))) {
            assert_eq!(libc, "musl");
            return;
        }
        let flavour = if cfg!(target_env = "musl") {
            "musl "
        } else {
            "glibc "
        };
        let version = libc
            .strip_prefix(flavour)
            .unwrap_or_else(|| panic!("{libc:?}"));
        let parts: Vec<&str> = version.split('.').collect();
        assert!(
            parts.len() >= 2 && parts.iter().all(|p| p.parse::<u32>().is_ok()),
            "libc {libc:?}"
        );
    }

    #[test]
    fn collects_this_machine() {
        let fp = Fingerprint::collect();
        assert!(!fp.kernel_release.is_empty());
        assert!(fp.online_cpu_count >= 1);
        assert_eq!(fp.boot_id.len(), 36, "boot id {:?}", fp.boot_id);
        assert_libc_named_with_version(&fp.libc);
        // Every kernel since 3.14 answers sched_getattr, and the test runs under some policy.
        assert!(
            fp.sched_policy
                .as_deref()
                .is_some_and(|p| p.starts_with("SCHED_")),
            "{:?}",
            fp.sched_policy
        );
        // Every Linux has these two; the rest depends on the kernel and the user.
        assert!(fp.mem_total_kib.is_some_and(|kib| kib > 0));
        assert!(fp.preempt_model.is_some());
        assert!(fp
            .sched_sysctls
            .keys()
            .all(|k| k.starts_with("kernel.sched_")));
        assert_eq!(online_cpu_count(), fp.online_cpu_count.max(1));
    }

    #[test]
    fn preemption_model_comes_from_the_best_source() {
        let dynamic = "#1 SMP PREEMPT_DYNAMIC Debian 6.12.48-1";
        let config = "CONFIG_PREEMPT_BUILD=y\n# CONFIG_PREEMPT_NONE is not set\nCONFIG_PREEMPT_VOLUNTARY=y\n";
        let model =
            |debugfs, version, cmdline, config| preempt_model(debugfs, version, cmdline, config);
        assert_eq!(
            model(Some("none voluntary (full) lazy\n"), dynamic, "", None).as_deref(),
            Some("full")
        );
        assert_eq!(
            model(
                None,
                dynamic,
                "root=/dev/sda preempt=none -- preempt=full",
                None
            )
            .as_deref(),
            Some("none")
        );
        assert_eq!(
            model(None, dynamic, "quiet", Some(config)).as_deref(),
            Some("voluntary")
        );
        assert_eq!(
            model(None, dynamic, "quiet", None).as_deref(),
            Some("dynamic")
        );
        assert_eq!(
            model(None, "#1 SMP PREEMPT_RT Tue", "", None).as_deref(),
            Some("rt")
        );
        assert_eq!(
            model(None, "#1 SMP PREEMPT Tue", "", None).as_deref(),
            Some("full")
        );
        assert_eq!(
            model(None, "#1 SMP Tue", "", None).as_deref(),
            Some("none or voluntary")
        );
        assert_eq!(
            model(None, "#1 SMP Tue", "", Some("CONFIG_PREEMPT_NONE=y\n")).as_deref(),
            Some("none")
        );
        assert_eq!(
            model(None, "#1 SMP PREEMPT_LAZY x", "", None).as_deref(),
            Some("lazy")
        );
        assert_eq!(model(None, "", "", None), None);
    }

    #[test]
    fn parses_the_files_that_change_scheduler_results() {
        assert_eq!(
            bracketed_choice("always [madvise] never\n").as_deref(),
            Some("madvise")
        );
        assert_eq!(bracketed_choice("always madvise never"), None);
        let cpuinfo =
            "processor\t: 0\nmicrocode\t: 0x1000065\nprocessor\t: 1\nmicrocode\t: 0x1000065\n\
                       processor\t: 2\nmicrocode\t: 0x1000066\n";
        assert_eq!(microcode(cpuinfo).as_deref(), Some("0x1000065,0x1000066"));
        assert_eq!(microcode("processor : 0\n"), None);
        assert_eq!(
            mem_total_kib("MemTotal:       24684092 kB\nMemFree: 1 kB\n"),
            Some(24_684_092)
        );
        assert_eq!(mem_total_kib("MemFree: 1 kB\n"), None);
        let cmdline =
            "BOOT_IMAGE=/vmlinuz isolcpus=1 quiet isolcpus=domain,2-3 nohz_full=2-3 -- isolcpus=9";
        assert_eq!(
            cmdline_param(cmdline, "isolcpus").as_deref(),
            Some("domain,2-3")
        );
        assert_eq!(cmdline_param(cmdline, "nohz_full").as_deref(), Some("2-3"));
        assert_eq!(cmdline_param("quiet", "isolcpus"), None);
        assert_eq!(cmdline_param("xisolcpus=1", "isolcpus"), None);
    }

    #[test]
    fn tells_cgroup_hierarchies_apart() {
        let v2 = "cgroup2 /sys/fs/cgroup cgroup2 rw,nosuid 0 0\n";
        let hybrid =
            "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n\
                      cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n";
        let v1 = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\ncgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n";
        assert_eq!(cgroup_version(v2).as_deref(), Some("v2"));
        assert_eq!(cgroup_version(hybrid).as_deref(), Some("hybrid"));
        assert_eq!(cgroup_version(v1).as_deref(), Some("v1"));
        assert_eq!(cgroup_version("proc /proc proc rw 0 0\n"), None);
    }

    /// A fingerprint stored before the scheduler-setting fields existed still loads, with them
    /// unknown.
    #[test]
    fn old_stored_fingerprints_load() {
        let old = r##"{"hostname":"vm","kernel_release":"6.1.0","kernel_version":"#1 SMP",
            "kernel_cmdline":"quiet","boot_id":"b","cpu_model":"cpu","online_cpus":"0-1",
            "online_cpu_count":2,"smt_active":null,"numa_nodes":1,"cpufreq_governors":[],
            "cpuidle_driver":null,"hypervisor":true,"dmi_vendor":null,"dmi_product":null,
            "libc":"glibc 2.36","schedlab_version":"0.1.0","schedlab_commit":"abc"}"##;
        let fp: Fingerprint = serde_json::from_str(old).unwrap();
        assert_eq!(fp.hostname, "vm");
        assert_eq!((fp.preempt_model, fp.mem_total_kib), (None, None));
        assert!(fp.sched_sysctls.is_empty() && fp.cpu_vulnerabilities.is_empty());
        assert_eq!(fp.sched_features, None);
        assert_eq!(fp.sched_policy, None);
    }

    #[test]
    fn fields_keep_declaration_order_and_spread_maps() {
        let mut fp = Fingerprint {
            hostname: "h".into(),
            ..Fingerprint::default()
        };
        fp.sched_sysctls
            .insert("kernel.sched_rt_runtime_us".into(), "950000".into());
        let fields = fp.fields();
        let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(&names[..2], ["hostname", "kernel_release"]);
        assert!(names.contains(&"sched_sysctls.kernel.sched_rt_runtime_us"));
        assert!(
            names.contains(&"cpu_vulnerabilities"),
            "an empty map stays a field"
        );
        assert!(!names.contains(&"sched_sysctls"));
        assert_eq!(names.last(), Some(&"schedlab_commit"));
    }

    #[test]
    fn an_imported_fingerprint_knows_only_what_it_was_told() {
        let origin = ImportOrigin {
            tool: "hackbench".into(),
            files: vec!["old.log".into()],
            imported_by: "here".into(),
            ..ImportOrigin::default()
        };
        let fp = Fingerprint::for_import(
            origin.clone(),
            Some(("box7".into(), "--host".into())),
            None,
            false,
        );
        assert_eq!(fp.hostname, "box7");
        assert_eq!((fp.kernel_release.as_str(), fp.boot_id.as_str()), ("", ""));
        assert_eq!((fp.cpu_model.as_str(), fp.online_cpu_count), ("", 0));
        let imported = fp.imported.as_ref().unwrap();
        assert_eq!(imported.known.keys().collect::<Vec<_>>(), ["hostname"]);
        // Stored and read back, it is still an import; a measured run's JSON has no such key.
        let back: Fingerprint = serde_json::from_str(&serde_json::to_string(&fp).unwrap()).unwrap();
        assert_eq!(back, fp);
        let measured = serde_json::to_value(Fingerprint::default()).unwrap();
        assert!(measured.get("imported").is_none());

        let here = Fingerprint::for_import(
            origin,
            None,
            Some(("6.1.0".into(), "--kernel".into())),
            true,
        );
        let now = Fingerprint::collect();
        assert_eq!(here.cpu_model, now.cpu_model);
        assert_eq!(here.online_cpu_count, now.online_cpu_count);
        assert_eq!(here.kernel_release, "6.1.0");
        assert_eq!(
            here.kernel_cmdline, "",
            "the kernel of the files is not this one's"
        );
        assert_eq!(here.boot_id, "");
        let known = &here.imported.as_ref().unwrap().known;
        assert_eq!(known["cpu_model"], "--this-machine");
        assert_eq!(known["kernel_release"], "--kernel");
        assert!(!known.contains_key("kernel_cmdline"));
    }
}
