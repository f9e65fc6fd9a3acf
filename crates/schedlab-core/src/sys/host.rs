//! The machine schedlab runs on: its boot, its host name, its C library, and the text files of
//! /proc, /sys and /boot the fingerprint reads. Part of the audited OS layer (`crate::sys`).

/// The kernel's id of the current boot (`/proc/sys/kernel/random/boot_id`), new at every boot.
pub fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

/// This machine's host name (uname's nodename).
pub fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

/// A text file of /proc, /sys or /boot, whole; `None` when it is missing or this user may not
/// read it (containers hide some, and debugfs is root's only). Never an error: the fingerprint
/// records what it can see.
pub fn read_text(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// A binary file whole (/proc/config.gz); `None` when it is missing or unreadable, as
/// [`read_text`].
pub fn read_bytes(path: &str) -> Option<Vec<u8>> {
    std::fs::read(path).ok()
}

/// The entry names of a directory, sorted; empty when it is missing or cannot be listed.
pub fn dir_names(path: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(path)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

/// The C library schedlab runs on, with its version: `glibc 2.36` (gnu_get_libc_version), or
/// `musl 1.2.5` in the static build. musl has no call that names its version, so the static build
/// reads `__libc_version`, the string musl's own dynamic loader prints; it is hidden from dynamic
/// linking but an ordinary symbol of libc.a, so a fully static link (which `.cargo/config.toml`
/// forces for musl) resolves it, and what it names is the musl that is really linked in (Rust's
/// bundled one, not the musl-tools headers). A dynamically linked musl build says `musl`.
pub fn libc_description() -> String {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: gnu_get_libc_version returns a pointer to a static NUL-terminated string.
        let version = unsafe { std::ffi::CStr::from_ptr(libc::gnu_get_libc_version()) };
        format!("glibc {}", version.to_string_lossy())
    }
    #[cfg(all(target_env = "musl", target_feature = "crt-static"))]
    {
        extern "C" {
            // musl's src/internal/version.c: `const char __libc_version[] = VERSION;`.
            static __libc_version: [std::ffi::c_char; 0];
        }
        // SAFETY: musl defines __libc_version as a NUL-terminated constant array that lives for
        // the whole program; only its address is taken here, and CStr reads up to the NUL.
        let version =
            unsafe { std::ffi::CStr::from_ptr(std::ptr::addr_of!(__libc_version).cast()) };
        format!("musl {}", version.to_string_lossy())
    }
    #[cfg(all(target_env = "musl", not(target_feature = "crt-static")))]
    {
        "musl".to_string()
    }
    #[cfg(not(any(target_env = "gnu", target_env = "musl")))]
    {
        "unknown".to_string()
    }
}
