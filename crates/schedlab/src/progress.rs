//! The progress line on stderr: one line as each iteration starts, printed before its timed window
//! opens and never redrawn inside it; nothing at all when stderr is not a terminal.
use std::io::{IsTerminal, Write};

use schedlab_core::runner::{Progress, RunObserver};

pub struct StderrProgress {
    enabled: bool,
}

impl StderrProgress {
    pub fn new() -> Self {
        StderrProgress {
            enabled: std::io::stderr().is_terminal(),
        }
    }
}

impl RunObserver for StderrProgress {
    fn iteration_starting(&mut self, p: &Progress<'_>) {
        if !self.enabled {
            return;
        }
        let kind = if p.iteration.warmup { " (warm-up)" } else { "" };
        let _ = writeln!(
            std::io::stderr(),
            "[case {}/{}] {}  iteration {}/{}{kind}",
            p.case_index + 1,
            p.case_count,
            p.case.name,
            p.iteration.index + 1,
            p.iterations_in_case
        );
    }
}
