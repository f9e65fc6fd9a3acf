//! What a child process left behind, as messages show it: how it ended and the last lines of its
//! log. Guests (`vm/boot.rs`) and daemon arms (`daemon.rs`) both report them.
use std::path::Path;

use schedlab_core::sys::{self, ChildExit};

/// The console lines a failed slot keeps.
pub const CONSOLE_TAIL_LINES: usize = 40;

pub fn describe_exit(exit: ChildExit) -> String {
    match exit {
        ChildExit::Code(code) => format!("status {code}"),
        ChildExit::Signal(signal) => format!("killed by {}", sys::signal_name(signal)),
    }
}

/// The console's last lines, printable: what the kernel and the guest's schedlab said last.
pub fn console_tail(path: &Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<String> = text
        .split('\n')
        .map(|line| {
            line.chars()
                .filter(|c| !c.is_control() || *c == '\t')
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    let end = lines
        .iter()
        .rposition(|l| !l.is_empty())
        .map_or(0, |i| i + 1);
    lines[end.saturating_sub(CONSOLE_TAIL_LINES)..end].to_vec()
}
