//! The machine schedlab runs on: its boot, its host name, and the text files of /proc, /sys and
//! /boot the fingerprint reads. Part of the audited OS layer (`crate::sys`).

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
