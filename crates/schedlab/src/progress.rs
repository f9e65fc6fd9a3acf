//! The progress bar on stderr: case, iteration and ETA, updated only between iterations (before a
//! timed window opens and after it closes) and never by a background tick, so it cannot disturb a
//! measurement. Hidden when stderr is not a terminal or with --quiet.
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::IterationRecord;
use schedlab_core::runner::{Progress, RunObserver};

pub struct ProgressLine {
    bar: ProgressBar,
    quiet: bool,
}

impl ProgressLine {
    pub fn new(quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{bar:25} {pos}/{len} iterations · ETA {eta} · {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        };
        ProgressLine { bar, quiet }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A line for the reader between iterations: above the bar on a terminal, as a plain line
    /// when stderr is a file or a pipe (a hidden bar prints nothing), nowhere with --quiet.
    pub fn note(&self, line: String) {
        if self.quiet {
            return;
        }
        if self.bar.is_hidden() {
            crate::output::say(format_args!("{line}"));
        } else {
            self.bar.println(line);
        }
    }
}

impl RunObserver for ProgressLine {
    fn run_starting(&mut self, plan: &RunPlan) {
        let per_case = u64::from(plan.warmup + plan.iterations);
        self.bar.set_length(per_case * plan.cases.len() as u64);
    }

    fn iteration_starting(&mut self, p: &Progress<'_>) {
        // Adaptive stopping adds iterations beyond the plan.
        if self.bar.position() >= self.bar.length().unwrap_or(0) {
            self.bar.inc_length(1);
        }
        let kind = if p.iteration.warmup { " warm-up" } else { "" };
        self.bar.set_message(format!(
            "case {}/{} {} · iteration {}{kind}",
            p.case_index + 1,
            p.case_count,
            p.case.name,
            p.iteration.index + 1
        ));
    }

    fn iteration_finished(&mut self, _p: &Progress<'_>, _iteration: &IterationRecord) {
        self.bar.inc(1);
    }

    /// With --keep-going the run goes on; say so and count the iterations that will not run, so
    /// the ETA stays honest.
    fn case_failed(&mut self, _case: &CaseSpec, skipped: u32, message: &str) {
        self.note(format!("failed, going on (--keep-going): {message}"));
        self.bar.inc(u64::from(skipped));
    }

    fn iteration_suspended(&mut self, p: &Progress<'_>) {
        self.note(format!(
            "case {} iteration {}: schedlab was stopped while it measured (Ctrl-Z, SIGSTOP); \
             thrown away and run again",
            p.case.name,
            p.iteration.index + 1
        ));
    }
}
