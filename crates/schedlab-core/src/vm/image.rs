//! What a file says it is, read before anything boots: the release a kernel image (bzImage) was
//! built as, so a campaign can tell a guest that booted the wrong kernel; and whether a binary is
//! a static x86-64 ELF, the only kind that runs as `/init` of an initramfs with nothing else in it.

/// How much of a kernel image [`bzimage_release`] needs: the setup header and the setup code,
/// which holds the version string (a few kilobytes into the file).
pub const BZIMAGE_HEAD_BYTES: usize = 64 * 1024;

/// The release (`uname -r`) an x86 bzImage was built as, from its setup header
/// (Documentation/arch/x86/boot.rst): the boot flag 0xAA55 at 0x1FE, "HdrS" at 0x202, boot
/// protocol 2.00 or newer at 0x206, and at 0x20E the offset (less 0x200) of the version string,
/// whose first word is the release. `head` is the file's first bytes ([`BZIMAGE_HEAD_BYTES`]).
pub fn bzimage_release(head: &[u8]) -> Result<String, String> {
    let u16_at = |at: usize| {
        head.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    if u16_at(0x1FE) != Some(0xAA55) || head.get(0x202..0x206) != Some(b"HdrS") {
        return Err("is not an x86 kernel image (bzImage): it has no Linux boot header".into());
    }
    let protocol = u16_at(0x206).unwrap_or(0);
    if protocol < 0x200 {
        return Err(format!(
            "is a kernel image of boot protocol {}.{:02}, older than QEMU boots (2.00)",
            protocol >> 8,
            protocol & 0xff
        ));
    }
    let pointer = u16_at(0x20E).unwrap_or(0);
    let at = usize::from(pointer) + 0x200;
    let text = head
        .get(at..)
        .filter(|_| pointer != 0)
        .map(|rest| &rest[..rest.iter().position(|&b| b == 0).unwrap_or(rest.len())])
        .ok_or("is a kernel image without a version string")?;
    let text = String::from_utf8_lossy(text);
    text.split_whitespace()
        .next()
        .filter(|release| release.chars().all(|c| c.is_ascii_graphic()))
        .map(str::to_string)
        .ok_or_else(|| "is a kernel image whose version string is empty".to_string())
}

/// Why `elf` (a file's first bytes, its program headers included) cannot be a guest's `/init`:
/// not an ELF file, not 64-bit little-endian x86-64, or dynamically linked (a `PT_INTERP`
/// program header names a loader the initramfs does not have). `Ok` for a static binary, the
/// musl build's `static-pie` included.
pub fn check_static_x86_64(elf: &[u8]) -> Result<(), String> {
    if elf.get(..4) != Some(b"\x7fELF") {
        return Err("is not an ELF executable".into());
    }
    if elf.get(4) != Some(&2) || elf.get(5) != Some(&1) {
        return Err("is not a 64-bit little-endian ELF executable".into());
    }
    let u16_at = |at: usize| {
        elf.get(at..at + 2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
    };
    let u32_at = |at: usize| {
        elf.get(at..at + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let u64_at = |at: usize| {
        elf.get(at..at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    };
    const EM_X86_64: u16 = 62;
    if u16_at(18) != Some(EM_X86_64) {
        return Err("is not an x86-64 executable".into());
    }
    let truncated = || "is a truncated ELF file".to_string();
    let phoff = u64_at(32).ok_or_else(truncated)? as usize;
    let phentsize = usize::from(u16_at(54).ok_or_else(truncated)?);
    let phnum = usize::from(u16_at(56).ok_or_else(truncated)?);
    const PT_INTERP: u32 = 3;
    for index in 0..phnum {
        let at = phoff + index * phentsize;
        match u32_at(at) {
            None => return Err(truncated()),
            Some(PT_INTERP) => {
                return Err("is dynamically linked (it needs a loader and shared libraries)".into())
            }
            Some(_) => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bzImage head as the kernel's build writes it, with `version` where the header points.
    fn bzimage(protocol: u16, version: &[u8]) -> Vec<u8> {
        let mut head = vec![0u8; 0x4000];
        head[0x1FE..0x200].copy_from_slice(&0xAA55u16.to_le_bytes());
        head[0x202..0x206].copy_from_slice(b"HdrS");
        head[0x206..0x208].copy_from_slice(&protocol.to_le_bytes());
        let at = 0x3000usize;
        head[0x20E..0x210].copy_from_slice(&((at - 0x200) as u16).to_le_bytes());
        head[at..at + version.len()].copy_from_slice(version);
        head
    }

    #[test]
    fn reads_the_release_of_a_bzimage() {
        let head = bzimage(
            0x20f,
            b"6.12.117+deb12-cloud-amd64 (debian-kernel@lists.debian.org) #1 SMP PREEMPT_DYNAMIC\0",
        );
        assert_eq!(
            bzimage_release(&head).unwrap(),
            "6.12.117+deb12-cloud-amd64"
        );
    }

    #[test]
    fn refuses_what_is_not_a_bootable_bzimage() {
        assert!(bzimage_release(b"\x7fELF")
            .unwrap_err()
            .contains("not an x86 kernel image"));
        assert!(bzimage_release(&bzimage(0x1ff, b"6.1\0"))
            .unwrap_err()
            .contains("older than QEMU boots"));
        assert!(bzimage_release(&bzimage(0x20f, b"\0"))
            .unwrap_err()
            .contains("empty"));
        let mut no_pointer = bzimage(0x20f, b"6.1\0");
        no_pointer[0x20E..0x210].copy_from_slice(&[0, 0]);
        assert!(bzimage_release(&no_pointer)
            .unwrap_err()
            .contains("without a version string"));
    }

    /// An x86-64 ELF header with one program header of type `kind`.
    fn elf(kind: u32) -> Vec<u8> {
        let mut elf = vec![0u8; 64 + 56];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[18..20].copy_from_slice(&62u16.to_le_bytes());
        elf[32..40].copy_from_slice(&64u64.to_le_bytes());
        elf[54..56].copy_from_slice(&56u16.to_le_bytes());
        elf[56..58].copy_from_slice(&1u16.to_le_bytes());
        elf[64..68].copy_from_slice(&kind.to_le_bytes());
        elf
    }

    #[test]
    fn tells_a_static_binary_from_a_dynamic_one() {
        const PT_LOAD: u32 = 1;
        assert_eq!(check_static_x86_64(&elf(PT_LOAD)), Ok(()));
        assert!(check_static_x86_64(&elf(3))
            .unwrap_err()
            .contains("dynamically linked"));
        let mut arm = elf(PT_LOAD);
        arm[18..20].copy_from_slice(&183u16.to_le_bytes());
        assert!(check_static_x86_64(&arm).unwrap_err().contains("x86-64"));
        assert!(check_static_x86_64(&elf(PT_LOAD)[..66])
            .unwrap_err()
            .contains("truncated"));
        assert!(check_static_x86_64(b"#!/bin/sh\n")
            .unwrap_err()
            .contains("not an ELF"));
    }

    /// The binary running this test is an x86-64 ELF, static or not as it was linked.
    #[test]
    fn reads_this_test_binary() {
        let exe = std::fs::read("/proc/self/exe").unwrap();
        let verdict = check_static_x86_64(&exe);
        if cfg!(all(target_arch = "x86_64", target_feature = "crt-static")) {
            assert_eq!(verdict, Ok(()));
        } else if cfg!(target_arch = "x86_64") {
            assert!(verdict.unwrap_err().contains("dynamically linked"));
        }
    }
}
