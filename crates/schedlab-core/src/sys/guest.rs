//! What schedlab does as a guest's `/init` (PID 1 of a kernel it booted in QEMU): mount the
//! kernel's file systems, take its host name, open the results serial port raw, see what the
//! hypervisor tells the CPU, and power the machine off at the end. Part of the audited OS layer
//! (`crate::sys`); nothing here runs on a host.
use std::io;

use rustix::fd::OwnedFd;

/// The file systems a workload and the fingerprint need: where, what type, and whether the guest
/// can do without it (debugfs holds `sched_features`, tracefs the probes, cgroup2 the cgroup
/// settings; a kernel built without one still runs the workloads).
const MOUNTS: &[(&str, &str, bool)] = &[
    ("/proc", "proc", false),
    ("/sys", "sysfs", false),
    ("/dev", "devtmpfs", false),
    ("/tmp", "tmpfs", false),
    ("/run", "tmpfs", true),
    ("/sys/kernel/debug", "debugfs", true),
    ("/sys/kernel/tracing", "tracefs", true),
    ("/sys/fs/cgroup", "cgroup2", true),
];

/// Mounts [`MOUNTS`]; an error names the first required one that failed, and the optional ones
/// that failed are returned, for the console.
pub fn mount_guest_filesystems() -> io::Result<Vec<String>> {
    use rustix::mount::{mount, MountFlags};
    let mut missing = Vec::new();
    for &(target, kind, optional) in MOUNTS {
        let flags = MountFlags::NOSUID;
        match mount(kind, target, kind, flags, None) {
            Ok(()) => {}
            Err(e) if optional => missing.push(format!("{kind} on {target}: {e}")),
            Err(e) => {
                return Err(io::Error::other(format!(
                    "cannot mount {kind} on {target}: {e}"
                )))
            }
        }
        // /dev/shm for POSIX shared memory, once /dev is there.
        if target == "/dev" {
            let _ = std::fs::create_dir_all("/dev/shm");
            let _ = mount("tmpfs", "/dev/shm", "tmpfs", MountFlags::NOSUID, None);
        }
    }
    Ok(missing)
}

pub fn set_hostname(name: &str) -> io::Result<()> {
    Ok(rustix::system::sethostname(name.as_bytes())?)
}

/// Opens a serial port for writing, raw: no translation of line breaks, no echo, no signals.
pub fn open_serial_raw(path: &str) -> io::Result<OwnedFd> {
    use rustix::fs::{Mode, OFlags};
    use rustix::termios::{tcgetattr, tcsetattr, OptionalActions};
    let fd = rustix::fs::open(
        path,
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut termios = tcgetattr(&fd)?;
    termios.make_raw();
    tcsetattr(&fd, OptionalActions::Now, &termios)?;
    Ok(fd)
}

/// Waits until everything written to the serial port has left it.
pub fn drain_serial(fd: &OwnedFd) -> io::Result<()> {
    Ok(rustix::termios::tcdrain(fd)?)
}

/// Ends the guest: file systems synced, then power off; should ACPI not take the machine down,
/// a restart, which QEMU's `-no-reboot` turns into its exit all the same.
pub fn power_off() -> ! {
    use rustix::system::{reboot, RebootCommand};
    rustix::fs::sync();
    let _ = reboot(RebootCommand::PowerOff);
    let _ = reboot(RebootCommand::Restart);
    loop {
        // PID 1 must not return; the host's deadline ends a guest stuck here.
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// The hypervisor as the CPU reports it: the signature of CPUID leaf 0x40000000 (12 bytes,
/// `KVMKVMKVM\0\0\0`, `TCGTCGTCGTCG`, ...) when leaf 1 sets the hypervisor bit, and for KVM the
/// feature bits of leaf 0x40000001. `(None, None)` on bare metal and on other architectures.
pub fn hypervisor_cpuid() -> (Option<String>, Option<u32>) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::__cpuid;
        const HYPERVISOR_BIT: u32 = 1 << 31;
        if __cpuid(1).ecx & HYPERVISOR_BIT == 0 {
            return (None, None);
        }
        let leaf = __cpuid(0x4000_0000);
        let bytes: Vec<u8> = [leaf.ebx, leaf.ecx, leaf.edx]
            .iter()
            .flat_map(|r| r.to_le_bytes())
            .collect();
        let signature = String::from_utf8_lossy(&bytes)
            .trim_end_matches('\0')
            .to_string();
        let kvm_features =
            (signature == "KVMKVMKVM" && leaf.eax >= 0x4000_0001).then(|| __cpuid(0x4000_0001).eax);
        (Some(signature).filter(|s| !s.is_empty()), kvm_features)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (None, None)
    }
}

/// KVM_FEATURE_STEAL_TIME, bit 5 of CPUID 0x40000001's EAX.
pub const KVM_FEATURE_STEAL_TIME: u32 = 1 << 5;
