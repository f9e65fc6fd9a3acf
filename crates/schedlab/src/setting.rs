//! The settings `schedlab ab` switches between: two shell commands (`--a`, `--b`, `--restore`), or
//! two values schedlab writes into one kernel file itself (`--write PATH=A,B`: a sysfs or procfs
//! knob such as the cpuidle governor or a halt-polling parameter), checked before anything runs and
//! put back to the value it had when the experiment ends, however it ends.
use std::io::Write;

use crate::failure::Failure;
use crate::shell::run_shell_command;

/// How the arms are applied and the original setting restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setting {
    /// Shell commands; an arm without one (its daemon is its setting) applies nothing.
    Shell {
        a: Option<String>,
        b: Option<String>,
        restore: Option<String>,
    },
    File {
        path: String,
        a: String,
        b: String,
        /// The value the file held before the experiment, written back at its end.
        original: String,
    },
}

impl Setting {
    /// The setting of `--write PATH=A,B`, after checking the file: it must exist, take its own
    /// value back, and take A and B (each written once, then the original again), so that a knob
    /// this kernel lacks, a read-only one and a value the kernel refuses are each one line and exit
    /// 2 before any case runs.
    pub fn file(given: &str) -> Result<Setting, Failure> {
        let refuse = |why: String| Failure::bad_input(format!("--write {given}: {why}"));
        let Some((path, values)) = given.split_once('=') else {
            return Err(refuse(
                "give PATH=A,B (e.g. /sys/module/haltpoll/parameters/guest_halt_poll_ns=0,200000)"
                    .into(),
            ));
        };
        let Some((a, b)) = values.split_once(',') else {
            return Err(refuse("give the two values as A,B after the =".into()));
        };
        let (path, a, b) = (path.trim(), a.trim(), b.trim());
        if path.is_empty() || a.is_empty() || b.is_empty() || b.contains(',') {
            return Err(refuse(
                "give one path and exactly two values, PATH=A,B".into(),
            ));
        }
        if a == b {
            return Err(refuse(format!(
                "A and B are both {a:?}: nothing to compare"
            )));
        }
        let original = match std::fs::read_to_string(path) {
            Ok(text) => text.trim().to_string(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(refuse(format!(
                    "{path} is absent on this machine{}",
                    absent_hint(path)
                )));
            }
            Err(e) => return Err(refuse(format!("cannot read {path}: {e}"))),
        };
        write_value(path, &original)
            .map_err(|e| refuse(format!("{path} is not writable here ({e})")))?;
        for value in [a, b] {
            let tried = write_value(path, value);
            // Back to where it was before saying anything, even if the value was refused.
            write_value(path, &original)
                .map_err(|e| refuse(format!("cannot put {original:?} back into {path}: {e}")))?;
            tried.map_err(|e| refuse(format!("the kernel refuses {value:?} in {path} ({e})")))?;
        }
        Ok(Setting::File {
            path: path.to_string(),
            a: a.to_string(),
            b: b.to_string(),
            original,
        })
    }

    /// Applies arm A (`b` false) or B.
    pub fn apply(&self, b: bool) -> Result<(), Failure> {
        let flag = if b { "--b" } else { "--a" };
        match self {
            Setting::Shell { a, b: cmd_b, .. } => match if b { cmd_b } else { a } {
                Some(command) => run_shell_command(flag, command),
                None => Ok(()),
            },
            Setting::File {
                path,
                a,
                b: value_b,
                ..
            } => {
                let value = if b { value_b } else { a };
                write_value(path, value).map_err(|e| {
                    Failure::failed(format!("--write: cannot write {value:?} into {path}: {e}"))
                })
            }
        }
    }

    /// Puts the original setting back (`--restore`, or the file's value before the experiment).
    pub fn restore(&self) -> Result<(), Failure> {
        match self {
            Setting::Shell { restore, .. } => restore
                .as_deref()
                .map_or(Ok(()), |cmd| run_shell_command("--restore", cmd)),
            Setting::File { path, original, .. } => write_value(path, original).map_err(|e| {
                Failure::failed(format!(
                    "--write: cannot put {original:?} back into {path}: {e}"
                ))
            }),
        }
    }

    /// The arms and the restore as the experiment's spec stores them.
    pub fn spec(&self) -> serde_json::Value {
        match self {
            Setting::Shell { a, b, restore } => {
                serde_json::json!({ "a": a, "b": b, "restore": restore })
            }
            Setting::File {
                path,
                a,
                b,
                original,
            } => serde_json::json!({
                "a": format!("write {a} to {path}"),
                "b": format!("write {b} to {path}"),
                "restore": format!("write {original} to {path}"),
                "write": { "path": path, "a": a, "b": b, "original": original },
            }),
        }
    }
}

/// One write of `value` (with a newline, as `echo` writes it) into `path`.
fn write_value(path: &str, value: &str) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(path)?;
    file.write_all(format!("{value}\n").as_bytes())
}

/// Why a knob may be missing, for the ones seed 001 compares.
fn absent_hint(path: &str) -> &'static str {
    let module_absent = |module: &str| !std::path::Path::new(module).exists();
    if path.starts_with("/sys/module/haltpoll/") && module_absent("/sys/module/haltpoll") {
        " (cpuidle-haltpoll is a KVM guest's idle driver: not loaded on bare metal or outside KVM)"
    } else if path.starts_with("/sys/module/kvm/") && module_absent("/sys/module/kvm") {
        " (the kvm module is a hypervisor host's: not loaded here)"
    } else if path.starts_with("/sys/devices/system/cpu/cpuidle/") {
        " (no cpuidle here, or a kernel without its governor switch: cpuidle_sysfs_switch)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn knob(value: &str) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("knob");
        std::fs::write(&path, format!("{value}\n")).unwrap();
        (dir, path.to_str().unwrap().to_string())
    }

    #[test]
    fn a_file_setting_is_checked_applied_and_restored() {
        let (_dir, path) = knob("menu");
        let setting = Setting::file(&format!("{path}=haltpoll,ladder")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "menu\n");
        setting.apply(true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "ladder\n");
        setting.apply(false).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "haltpoll\n");
        setting.restore().unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "menu\n");
    }

    #[test]
    fn bad_settings_are_one_line_each() {
        let (_dir, path) = knob("0");
        for (given, says) in [
            (path.clone(), "PATH=A,B"),
            (format!("{path}=1"), "A,B"),
            (format!("{path}=1,2,3"), "exactly two"),
            (format!("{path}=1,1"), "nothing to compare"),
            (
                "/sys/module/haltpoll-none/x=1,2".to_string(),
                "absent on this machine",
            ),
            (
                "/sys/module/haltpoll-none/parameters/x=1,2".to_string(),
                "absent",
            ),
        ] {
            let error = Setting::file(&given).unwrap_err().message;
            assert!(error.contains(says), "{given}: {error}");
            assert!(!error.contains('\n'), "{error}");
        }
    }
}
