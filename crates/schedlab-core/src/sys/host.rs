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

/// The C library schedlab was built against, with its version where it has a call for it
/// (`glibc 2.39`; musl has none).
pub fn libc_description() -> String {
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
