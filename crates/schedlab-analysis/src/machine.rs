//! The hardware-and-tuning key of a machine: the fingerprint fields that decide whether runs
//! may be compared with one another or judged with a calibration made on another run's machine.
use serde::{Deserialize, Serialize};

use schedlab_core::fingerprint::Fingerprint;

/// The fingerprint fields that decide whether two runs saw the same machine with the same
/// tuning: hardware and tuning, not the kernel (a calibration is made to compare kernels).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MachineKey {
    pub hostname: String,
    pub cpu_model: String,
    pub online_cpus: String,
    pub smt_active: Option<bool>,
    pub numa_nodes: u32,
    pub cpufreq_governors: Vec<String>,
    pub cpuidle_driver: Option<String>,
    pub hypervisor: bool,
    pub dmi_vendor: Option<String>,
    pub dmi_product: Option<String>,
    /// The scheduler tuning that changes run-to-run noise; `None` in calibrations stored before
    /// schedlab recorded it, which then match whatever the runs have.
    #[serde(default)]
    pub tuning: Option<TuningKey>,
}

/// Settings of one machine that change how much its results vary, and that stay put from kernel
/// to kernel (unlike sched_features, sysctl defaults or mitigations, which the kernel under test
/// sets): the preemption model (latency tails under `none` and `full` differ by orders of
/// magnitude), transparent huge pages, and CPU isolation. A field is compared only where both
/// sides know it: a fingerprint stored before it existed, or a preemption model this user could
/// not see, is no reason to turn a calibration down.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TuningKey {
    pub preempt_model: Option<String>,
    pub thp_enabled: Option<String>,
    /// From the kernel command line, so runs stored before the field existed have it too.
    pub isolcpus: Option<String>,
    pub nohz_full: Option<String>,
}

impl TuningKey {
    pub fn of(fp: &Fingerprint) -> Self {
        use schedlab_core::fingerprint::cmdline_param;
        // "dynamic" names no model: PREEMPT_DYNAMIC seen without the model in effect.
        let known = |v: &Option<String>| v.clone().filter(|v| v != "dynamic");
        TuningKey {
            preempt_model: known(&fp.preempt_model),
            thp_enabled: fp.thp_enabled.clone(),
            isolcpus: cmdline_param(&fp.kernel_cmdline, "isolcpus"),
            nohz_full: cmdline_param(&fp.kernel_cmdline, "nohz_full"),
        }
    }

    fn differences(&self, other: &TuningKey, out: &mut Vec<&'static str>) {
        let unknown_or_same =
            |a: &Option<String>, b: &Option<String>| a.is_none() || b.is_none() || a == b;
        if !unknown_or_same(&self.preempt_model, &other.preempt_model) {
            out.push("preempt_model");
        }
        if !unknown_or_same(&self.thp_enabled, &other.thp_enabled) {
            out.push("thp_enabled");
        }
        // Not given on the command line is a setting too: no isolation.
        if self.isolcpus != other.isolcpus {
            out.push("isolcpus");
        }
        if self.nohz_full != other.nohz_full {
            out.push("nohz_full");
        }
    }
}

impl MachineKey {
    pub fn of(fp: &Fingerprint) -> Self {
        MachineKey {
            hostname: fp.hostname.clone(),
            cpu_model: fp.cpu_model.clone(),
            online_cpus: fp.online_cpus.clone(),
            smt_active: fp.smt_active,
            numa_nodes: fp.numa_nodes,
            cpufreq_governors: fp.cpufreq_governors.clone(),
            cpuidle_driver: fp.cpuidle_driver.clone(),
            hypervisor: fp.hypervisor,
            dmi_vendor: fp.dmi_vendor.clone(),
            dmi_product: fp.dmi_product.clone(),
            tuning: Some(TuningKey::of(fp)),
        }
    }

    /// Whether runs of `other` may use a calibration of `self` (or be summarised with runs of
    /// `self`): no field differs. Unknown tuning on either side matches.
    pub fn matches(&self, other: &MachineKey) -> bool {
        self.differences(other).is_empty()
    }

    /// The names of the fields that differ, for "calibration N does not apply: …" messages.
    pub fn differences(&self, other: &MachineKey) -> Vec<&'static str> {
        let mut out = Vec::new();
        let mut check = |name: &'static str, same: bool| {
            if !same {
                out.push(name);
            }
        };
        check("hostname", self.hostname == other.hostname);
        check("cpu_model", self.cpu_model == other.cpu_model);
        check("online_cpus", self.online_cpus == other.online_cpus);
        check("smt_active", self.smt_active == other.smt_active);
        check("numa_nodes", self.numa_nodes == other.numa_nodes);
        check(
            "cpufreq_governors",
            self.cpufreq_governors == other.cpufreq_governors,
        );
        check(
            "cpuidle_driver",
            self.cpuidle_driver == other.cpuidle_driver,
        );
        check("hypervisor", self.hypervisor == other.hypervisor);
        check("dmi_vendor", self.dmi_vendor == other.dmi_vendor);
        check("dmi_product", self.dmi_product == other.dmi_product);
        if let (Some(a), Some(b)) = (&self.tuning, &other.tuning) {
            a.differences(b, &mut out);
        }
        out
    }
}
