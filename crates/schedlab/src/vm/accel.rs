//! Which accelerator a guest gets, and saying so honestly: KVM when this machine has a KVM that
//! can run a stock kernel, else TCG, whose timings are QEMU's emulation and no kernel's.
use std::path::Path;

use schedlab_core::sys;
use schedlab_core::vm::qemu::Accel;

use crate::failure::Failure;

/// What TCG is good for, said wherever a campaign falls back to it.
pub const TCG_IS_FOR: &str = "under TCG QEMU emulates every instruction, so the campaign checks \
     the mechanism, NUMA layouts and functional differences between the kernels, but its timings \
     are the emulator's: `compare` will not judge them as a kernel comparison without --allow-tcg; \
     run the campaign on a host with KVM to measure the kernels";

/// Why KVM cannot run a stock guest kernel here; `None` when it can.
pub fn kvm_unusable() -> Option<String> {
    if !Path::new("/dev/kvm").exists() {
        return Some(
            "there is no /dev/kvm (no KVM module loaded, or a VM without nested virtualisation)"
                .into(),
        );
    }
    if let Err(e) = sys::open_device("/dev/kvm") {
        return Some(format!(
            "/dev/kvm cannot be opened for reading and writing: {e}"
        ));
    }
    // A PVM host (a nested hypervisor for guests of cloud VMs) answers on /dev/kvm, but runs
    // only kernels built for it: a stock kernel dies in its instruction emulator early in boot
    // (an emulation failure on SHLX in 6.12's decompressor, on `lock cmpxchg16b` later), and QEMU
    // then sits paused instead of exiting.
    if Path::new("/sys/module/kvm_pvm").exists() {
        return Some(
            "/dev/kvm is served by kvm_pvm, a nested PVM hypervisor in which stock kernels die \
             early in boot"
                .into(),
        );
    }
    None
}

/// `--accel`: what the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccelChoice {
    Auto,
    Kvm,
    Tcg,
}

/// The accelerator for `choice` on this machine, with the line to print about it (always one
/// under TCG), or why `--accel kvm` cannot be had.
pub fn resolve(choice: AccelChoice) -> Result<(Accel, Option<String>), Failure> {
    match (choice, kvm_unusable()) {
        (AccelChoice::Tcg, _) => Ok((Accel::Tcg, Some(format!("accelerator tcg: {TCG_IS_FOR}")))),
        (AccelChoice::Auto | AccelChoice::Kvm, None) => Ok((Accel::Kvm, None)),
        (AccelChoice::Auto, Some(why)) => Ok((
            Accel::Tcg,
            Some(format!("accelerator tcg, not kvm: {why}; {TCG_IS_FOR}")),
        )),
        (AccelChoice::Kvm, Some(why)) => Err(Failure::bad_input(format!(
            "--accel kvm: {why}; --accel tcg boots the guests emulated ({TCG_IS_FOR})"
        ))),
    }
}

/// The first line of `QEMU --version`; the error says how to install it.
pub fn qemu_version(qemu: &str) -> Result<String, Failure> {
    let missing = || {
        Failure::bad_input(format!(
            "{qemu} is not installed (Debian: apt-get install qemu-system-x86), or give --qemu PATH"
        ))
    };
    if sys::find_program(qemu).is_none() {
        return Err(missing());
    }
    let argv = [qemu.to_string(), "--version".to_string()];
    let run = sys::run_command(&argv, &|| sys::interrupt_signal().is_some())
        .map_err(|e| Failure::failed(format!("cannot run {qemu} --version: {e:?}")))?;
    let text = String::from_utf8_lossy(&run.stdout);
    text.lines()
        .next()
        .map(|l| l.trim().to_string())
        .filter(|l| !l.is_empty())
        .ok_or_else(missing)
}
