//! Kernels under test in QEMU guests (`campaign start --vm`, `campaign run`): how a campaign's
//! guests are booted ([`VmSpec`], stored with the campaign), which accelerator this machine can
//! give them ([`accel`]), the boot of one slot with its results stored as they arrive ([`boot`]),
//! and schedlab as the guest's `/init` ([`guest`]). The pure parts (initramfs, QEMU command line,
//! the guest's messages, image checks) are `schedlab_core::vm`'s.
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use schedlab_core::record::Arm;
use schedlab_core::vm::image::{bzimage_release, check_static_x86_64, BZIMAGE_HEAD_BYTES};
use schedlab_core::vm::qemu::{Accel, NumaLayout};

use crate::failure::Failure;

pub mod accel;
pub mod boot;
pub mod guest;

/// How a VM campaign boots its guests; both arms share all of it but what [`VmArm`] holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VmSpec {
    /// Chosen at `campaign start` (`--accel auto` decides there, once, and says why).
    pub accel: Accel,
    pub vcpus: u32,
    pub memory_mib: u64,
    #[serde(default)]
    pub numa: Option<NumaLayout>,
    pub a: VmArm,
    pub b: VmArm,
    /// The QEMU program.
    pub qemu: String,
    /// From QEMU's start to the guest's first message, at most.
    pub boot_timeout_sec: u64,
    /// A running guest's longest silence: no iteration, case failure or end for this long, and
    /// it is stopped.
    pub silence_timeout_sec: u64,
    /// Boots of a slot that failed, tried again before the campaign stops.
    pub retries: u32,
}

/// What one arm boots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VmArm {
    /// The kernel image, an absolute path.
    pub image: PathBuf,
    /// The release its header names (`uname -r` in the guest).
    pub release: String,
    /// The image's SHA-256 at `campaign start`: a slot refuses an image rebuilt since.
    pub sha256: String,
    /// Appended to schedlab's own kernel command line.
    pub append: String,
    /// KVM's steal time for the guest (ignored under TCG, which has no KVM features).
    pub steal_time: bool,
    /// Each vCPU's host CPU, in vCPU order; QEMU is kept to these CPUs. `None`: not pinned.
    #[serde(default)]
    pub pin_vcpus: Option<Vec<u32>>,
    /// A shell command run on the host beside each guest of the arm.
    #[serde(default)]
    pub host_load: Option<String>,
}

impl VmSpec {
    pub fn arm(&self, arm: Arm) -> &VmArm {
        match arm {
            Arm::A => &self.a,
            Arm::B => &self.b,
        }
    }
}

impl VmArm {
    /// Reads the image at `path`: its release from its boot header, and its digest.
    pub fn read(
        flag: &str,
        path: &Path,
        append: String,
        steal_time: bool,
    ) -> Result<Self, Failure> {
        let image = std::path::absolute(path)
            .map_err(|e| Failure::bad_input(format!("{flag} {}: {e}", path.display())))?;
        let bytes = std::fs::read(&image).map_err(|e| {
            Failure::bad_input(format!(
                "{flag} {}: cannot read the kernel image: {e}",
                path.display()
            ))
        })?;
        let head = &bytes[..bytes.len().min(BZIMAGE_HEAD_BYTES)];
        let release = bzimage_release(head)
            .map_err(|why| Failure::bad_input(format!("{flag} {} {why}", path.display())))?;
        Ok(VmArm {
            image,
            release,
            sha256: sha256_hex(&bytes),
            append,
            steal_time,
            pin_vcpus: None,
            host_load: None,
        })
    }

    /// What sets two arms booting one image apart (or nothing).
    pub fn same_settings(&self, other: &VmArm) -> bool {
        self.append == other.append
            && self.steal_time == other.steal_time
            && self.pin_vcpus == other.pin_vcpus
            && self.host_load == other.host_load
    }

    /// Refuses an image that changed since the campaign was planned: its slots would not all
    /// boot the same kernel.
    pub fn check_unchanged(&self) -> Result<(), Failure> {
        let bytes = std::fs::read(&self.image).map_err(|e| {
            Failure::bad_input(format!(
                "cannot read the kernel image {}: {e}",
                self.image.display()
            ))
        })?;
        if sha256_hex(&bytes) != self.sha256 {
            return Err(Failure::bad_input(format!(
                "the kernel image {} changed since the campaign was planned (its SHA-256 differs); \
                 put the kernel it had back, or plan a new campaign",
                self.image.display()
            )));
        }
        Ok(())
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Where the static schedlab a guest runs comes from: `--guest-binary`, else this schedlab when
/// it is static itself. A glibc build cannot run in an initramfs without its C library, and says
/// how to build the static one.
pub fn guest_binary(given: Option<&Path>) -> Result<(PathBuf, Vec<u8>), Failure> {
    let (path, from_flag) = match given {
        Some(path) => (path.to_path_buf(), true),
        None => (
            std::env::current_exe().unwrap_or_else(|_| PathBuf::from("/proc/self/exe")),
            false,
        ),
    };
    let bytes = std::fs::read(&path).map_err(|e| {
        Failure::bad_input(format!(
            "--guest-binary {}: cannot read it: {e}",
            path.display()
        ))
    })?;
    match check_static_x86_64(&bytes) {
        Ok(()) => Ok((path, bytes)),
        Err(why) if from_flag => Err(Failure::bad_input(format!(
            "--guest-binary {} {why}; the guest's /init must be the static schedlab ({BUILD_STATIC})",
            path.display()
        ))),
        Err(why) => Err(Failure::bad_input(format!(
            "this schedlab {why}, and a guest has no C library: give the static build with \
             --guest-binary PATH or SCHEDLAB_GUEST_BINARY ({BUILD_STATIC})"
        ))),
    }
}

/// How to build the static binary (README "A static binary for test boxes").
pub const BUILD_STATIC: &str = "rustup target add x86_64-unknown-linux-musl; \
     apt-get install musl-tools; cargo build --release --target x86_64-unknown-linux-musl \
     -p schedlab --no-default-features makes target/x86_64-unknown-linux-musl/release/schedlab";

/// `--pin-vcpus`: one host CPU per vCPU, in vCPU order, as numbers or ascending ranges
/// (`0,1,0,1`, `0-1,0-1`); each must be a CPU this process may use.
pub fn parse_vcpu_pins(
    flag: &str,
    text: &str,
    vcpus: u32,
    allowed: &[u32],
) -> Result<Vec<u32>, Failure> {
    let bad = || {
        Failure::bad_input(format!(
            "{flag} takes one host CPU per vCPU in vCPU order (0,1,0,1), not {text:?}"
        ))
    };
    let mut cpus = Vec::new();
    for part in text.split(',') {
        let (first, last) = match part.trim().split_once('-') {
            Some((a, b)) => (a.trim(), b.trim()),
            None => (part.trim(), part.trim()),
        };
        let first: u32 = first.parse().map_err(|_| bad())?;
        let last: u32 = last.parse().map_err(|_| bad())?;
        if last < first {
            return Err(bad());
        }
        let count = cpus.len() + (last - first) as usize + 1;
        if count > vcpus as usize {
            return Err(Failure::bad_input(format!(
                "{flag} {text}: {count} host CPUs for {vcpus} vCPUs; give one per vCPU"
            )));
        }
        cpus.extend(first..=last);
    }
    if cpus.len() != vcpus as usize {
        return Err(Failure::bad_input(format!(
            "{flag} {text}: {} host CPUs for {vcpus} vCPUs; give one per vCPU",
            cpus.len()
        )));
    }
    if let Some(cpu) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(Failure::bad_input(format!(
            "{flag} {text}: CPU {cpu} is not one this process may run on"
        )));
    }
    Ok(cpus)
}

/// The distinct host CPUs of a pin list, in the kernel's list form (`0-1`).
pub fn pinned_cpus(pins: &[u32]) -> schedlab_core::cpu_list::CpuList {
    schedlab_core::cpu_list::CpuList::from(pins.to_vec())
}

/// The guest's host name: the host's, with the accelerator (a guest under TCG and one under
/// KVM measure nothing alike, and estimates go by host name), within the kernel's 64 bytes.
pub fn guest_hostname(host: &str, accel: Accel) -> String {
    let suffix = format!("-guest-{accel}");
    let mut name: String = host.chars().take(64 - suffix.len()).collect();
    while name.len() + suffix.len() > 64 {
        name.pop();
    }
    name + &suffix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_host_names_say_the_accelerator_and_fit() {
        assert_eq!(guest_hostname("box7", Accel::Tcg), "box7-guest-tcg");
        let long = "h".repeat(80);
        let name = guest_hostname(&long, Accel::Kvm);
        assert_eq!(name.len(), 64);
        assert!(name.ends_with("-guest-kvm"));
    }

    #[test]
    fn vcpu_pins_are_one_allowed_cpu_per_vcpu_in_order() {
        let allowed = [0, 1, 2, 3];
        let pins = |text: &str, vcpus| parse_vcpu_pins("--pin-vcpus", text, vcpus, &allowed);
        assert_eq!(pins("0,1,0,1", 4).unwrap(), [0, 1, 0, 1]);
        assert_eq!(pins("0-1,0-1", 4).unwrap(), [0, 1, 0, 1]);
        assert_eq!(pins("3", 1).unwrap(), [3]);
        for (text, vcpus, why) in [
            ("0,1", 4, "2 host CPUs for 4 vCPUs"),
            ("0-3,1", 4, "5 host CPUs for 4 vCPUs"),
            ("0-1000000", 4, "host CPUs for 4 vCPUs"),
            ("1-0", 2, "one host CPU per vCPU"),
            ("x", 1, "one host CPU per vCPU"),
            ("7,0", 2, "CPU 7 is not one this process may run on"),
        ] {
            let err = pins(text, vcpus).unwrap_err().message;
            assert!(err.contains(why), "{text}: {err}");
        }
        assert_eq!(pinned_cpus(&[1, 0, 1, 0]).to_string(), "0-1");
    }

    #[test]
    fn sha256_of_nothing() {
        assert_eq!(
            sha256_hex(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
