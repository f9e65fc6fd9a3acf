//! The commands a user gives schedlab to run around its measurements (`ab --a/--b/--restore`,
//! `campaign next --reboot-cmd`), through `sh -c`.
use std::process::{Command, Stdio};

use crate::failure::Failure;

/// Runs `command`; its output goes to stderr so stdout stays schedlab's. `what` names the option
/// that gave it, for the message when it fails.
pub fn run_shell_command(what: &str, command: &str) -> Result<(), Failure> {
    let status = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(std::io::stderr())
        .status()
        .map_err(|e| Failure::failed(format!("cannot run the {what} command: {e}")))?;
    if status.success() {
        Ok(())
    } else {
        Err(Failure::failed(format!(
            "the {what} command `{command}` failed ({status})"
        )))
    }
}
