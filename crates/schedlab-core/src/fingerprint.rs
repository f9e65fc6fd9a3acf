//! The machine fingerprint stored with every run: what kernel and boot it ran on, and the hardware
//! and tuning state that decide whether two runs can be compared at all.
use std::collections::BTreeSet;
use std::fs;

use serde::{Deserialize, Serialize};

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
    /// The C library the binary uses: semaphore and pthread results depend on it.
    pub libc: String,
    pub schedlab_version: String,
    pub schedlab_commit: String,
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = fs::read_to_string(path).ok()?;
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

fn cpuinfo_field<'a>(cpuinfo: &'a str, key: &str) -> Option<&'a str> {
    cpuinfo.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

fn cpufreq_governors() -> Vec<String> {
    let mut governors = BTreeSet::new();
    if let Ok(entries) = fs::read_dir("/sys/devices/system/cpu") {
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("cpu") && name[3..].chars().all(|c| c.is_ascii_digit()) {
                let path = entry.path().join("cpufreq/scaling_governor");
                if let Some(g) = fs::read_to_string(path).ok().map(|s| s.trim().to_string()) {
                    governors.insert(g);
                }
            }
        }
    }
    governors.into_iter().collect()
}

fn libc_description() -> String {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        format!("glibc {}", version.to_string_lossy())
    }
    #[cfg(target_env = "musl")]
    {
        "musl".to_string()
    }
    #[cfg(not(any(target_env = "gnu", target_env = "musl")))]
    {
        "unknown".to_string()
    }
}

impl Fingerprint {
    /// Reads the fingerprint of the machine schedlab runs on. Missing files give empty or `None`
    /// fields, never an error: containers and odd kernels hide some of these.
    pub fn collect() -> Self {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let online_cpus = read_trimmed("/sys/devices/system/cpu/online").unwrap_or_default();
        let nodes = read_trimmed("/sys/devices/system/node/online");
        Fingerprint {
            hostname: rustix::system::uname()
                .nodename()
                .to_string_lossy()
                .into_owned(),
            kernel_release: read_trimmed("/proc/sys/kernel/osrelease").unwrap_or_default(),
            kernel_version: read_trimmed("/proc/sys/kernel/version").unwrap_or_default(),
            kernel_cmdline: read_trimmed("/proc/cmdline").unwrap_or_default(),
            boot_id: read_trimmed("/proc/sys/kernel/random/boot_id").unwrap_or_default(),
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
            libc: libc_description(),
            schedlab_version: crate::VERSION.to_string(),
            schedlab_commit: crate::GIT_COMMIT.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_cpu_lists() {
        assert_eq!(count_cpu_list("0-1"), 2);
        assert_eq!(count_cpu_list("0-3,8,10-11"), 7);
        assert_eq!(count_cpu_list("0"), 1);
        assert_eq!(count_cpu_list(""), 0);
    }

    #[test]
    fn collects_this_machine() {
        let fp = Fingerprint::collect();
        assert!(!fp.kernel_release.is_empty());
        assert!(fp.online_cpu_count >= 1);
        assert_eq!(fp.boot_id.len(), 36, "boot id {:?}", fp.boot_id);
        assert!(fp.libc.starts_with("glibc") || fp.libc == "musl");
    }
}
