//! The progress bar on stderr: case, iteration and ETA, updated only between iterations (before a
//! timed window opens and after it closes) and never by a background tick, so it cannot disturb a
//! measurement. Hidden when stderr is not a terminal or with --quiet.
use std::io::IsTerminal;
use std::time::{Duration, Instant};

use indicatif::{HumanDuration, ProgressBar, ProgressDrawTarget, ProgressStyle};
use schedlab_core::estimate;
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::record::IterationRecord;
use schedlab_core::runner::{Progress, RunObserver};

pub struct ProgressLine {
    bar: ProgressBar,
    quiet: bool,
    eta: Option<Eta>,
}

/// The time a run has left by its estimates (each case's expectation from this host's history,
/// else its rule of thumb), each workload's corrected by how its iterations went against theirs
/// so far. A suite's cases differ in length by orders of magnitude, so the bar's own ETA, which
/// assumes every iteration is like the last few, is far off at every change of case; and a host
/// may be slow at one workload and fast at another.
struct Eta {
    /// Estimated seconds of one iteration, by case index.
    per_iteration_sec: Vec<f64>,
    /// The workload of each case, as an index into `remaining_sec` and `done`.
    workload_of_case: Vec<usize>,
    names: Vec<String>,
    /// Estimated seconds left, by workload.
    remaining_sec: Vec<f64>,
    /// Seconds done, by workload: (estimated, taken).
    done: Vec<(f64, f64)>,
    /// When the last iteration finished (or the run started): the next one's time runs from
    /// there, its setup and any cool-down included.
    last_finish: Instant,
}

/// The bar's look: the ETA of the estimates (in the prefix) when there is one, else the bar's own.
fn style(estimated: bool) -> ProgressStyle {
    let eta = if estimated { "{prefix}" } else { "{eta}" };
    ProgressStyle::with_template(&format!(
        "{{bar:25}} {{pos}}/{{len}} iterations · ETA {eta} · {{msg}}"
    ))
    .unwrap_or_else(|_| ProgressStyle::default_bar())
}

impl Eta {
    /// `None` when a case has no estimate (an external tool's).
    fn of(plan: &RunPlan) -> Option<Eta> {
        let per_iteration_sec = plan
            .cases
            .iter()
            .map(|case| estimate::deadline_basis_sec(plan, case))
            .collect::<Option<Vec<f64>>>()?;
        let mut workloads: Vec<&str> = Vec::new();
        let workload_of_case = plan
            .cases
            .iter()
            .map(|case| {
                let kind = case.workload.kind();
                workloads
                    .iter()
                    .position(|k| *k == kind)
                    .unwrap_or_else(|| {
                        workloads.push(kind);
                        workloads.len() - 1
                    })
            })
            .collect::<Vec<usize>>();
        let per_case = f64::from(plan.warmup + plan.iterations);
        let mut remaining_sec = vec![0.0; workloads.len()];
        for (case, sec) in per_iteration_sec.iter().enumerate() {
            remaining_sec[workload_of_case[case]] += sec * per_case;
        }
        Some(Eta {
            per_iteration_sec,
            workload_of_case,
            names: plan.cases.iter().map(|c| c.name.clone()).collect(),
            done: vec![(0.0, 0.0); remaining_sec.len()],
            remaining_sec,
            last_finish: Instant::now(),
        })
    }

    fn left(&self) -> Duration {
        Duration::from_secs_f64(eta_sec(&self.remaining_sec, &self.done))
    }

    /// Counts `iterations` more (negative: fewer) of case `case` as left to do.
    fn add(&mut self, case: usize, iterations: f64) {
        self.remaining_sec[self.workload_of_case[case]] +=
            self.per_iteration_sec[case] * iterations;
    }

    fn finished(&mut self, case: usize) {
        let now = Instant::now();
        let taken = now.duration_since(self.last_finish).as_secs_f64();
        self.last_finish = now;
        self.add(case, -1.0);
        let done = &mut self.done[self.workload_of_case[case]];
        done.0 += self.per_iteration_sec[case];
        done.1 += taken;
    }
}

/// Seconds left: each workload's estimate of what remains, times how long its done iterations
/// took against their estimates; a workload with none done yet goes at the run's pace so far,
/// and at its estimate before anything is done.
fn eta_sec(remaining_sec: &[f64], done: &[(f64, f64)]) -> f64 {
    let pace = |(estimated, taken): (f64, f64)| (estimated > 0.0).then(|| taken / estimated);
    let total = done.iter().fold((0.0, 0.0), |(e, t), (estimated, taken)| {
        (e + estimated, t + taken)
    });
    let run_pace = pace(total).unwrap_or(1.0);
    let left: f64 = remaining_sec
        .iter()
        .zip(done)
        .map(|(remaining, done)| remaining.max(0.0) * pace(*done).unwrap_or(run_pace))
        .sum();
    if left.is_finite() {
        left.min(1e9)
    } else {
        0.0
    }
}

impl ProgressLine {
    pub fn new(quiet: bool) -> Self {
        let bar = if quiet || !std::io::stderr().is_terminal() {
            ProgressBar::hidden()
        } else {
            let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
            bar.set_style(style(false));
            bar
        };
        ProgressLine {
            bar,
            quiet,
            eta: None,
        }
    }

    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    /// A line for the reader between iterations, `schedlab: ` first as on every line schedlab
    /// writes to stderr: above the bar on a terminal, as a plain line when stderr is a file or a
    /// pipe (a hidden bar prints nothing), nowhere with --quiet.
    pub fn note(&self, line: String) {
        if self.quiet {
            return;
        }
        if self.bar.is_hidden() {
            crate::output::say(format_args!("schedlab: {line}"));
        } else {
            self.bar.println(format!("schedlab: {line}"));
        }
    }
}

impl RunObserver for ProgressLine {
    fn run_starting(&mut self, plan: &RunPlan) {
        let per_case = u64::from(plan.warmup + plan.iterations);
        // One line serves every run of an `ab` experiment: each run counts from 0.
        self.bar.reset();
        self.bar.set_length(per_case * plan.cases.len() as u64);
        self.eta = Eta::of(plan);
        if !self.bar.is_hidden() {
            if let Some(eta) = &self.eta {
                self.bar
                    .set_prefix(format!("{:#}", HumanDuration(eta.left())));
            }
            self.bar.set_style(style(self.eta.is_some()));
        }
    }

    fn iteration_starting(&mut self, p: &Progress<'_>) {
        // Adaptive stopping adds iterations beyond the plan.
        if self.bar.position() >= self.bar.length().unwrap_or(0) {
            self.bar.inc_length(1);
            if let Some(eta) = &mut self.eta {
                eta.add(p.case_index, 1.0);
            }
        }
        if let Some(eta) = &self.eta {
            self.bar
                .set_prefix(format!("{:#}", HumanDuration(eta.left())));
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

    fn iteration_finished(&mut self, p: &Progress<'_>, _iteration: &IterationRecord) {
        self.bar.inc(1);
        if let Some(eta) = &mut self.eta {
            eta.finished(p.case_index);
        }
    }

    /// With --keep-going the run goes on; say so and count the iterations that will not run, so
    /// the ETA stays honest.
    fn case_failed(&mut self, case: &CaseSpec, skipped: u32, message: &str) {
        self.note(format!("failed, going on (--keep-going): {message}"));
        self.bar.inc(u64::from(skipped));
        if let Some(eta) = &mut self.eta {
            if let Some(index) = eta.names.iter().position(|n| *n == case.name) {
                eta.add(index, -f64::from(skipped));
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_follows_each_workloads_pace() {
        // Nothing done yet: the estimates as they stand.
        assert_eq!(eta_sec(&[60.0, 40.0], &[(0.0, 0.0), (0.0, 0.0)]), 100.0);
        // The first workload's 10 estimated seconds took 30: its 60 left take 180, and the
        // second, not begun, goes at the run's pace too.
        assert_eq!(eta_sec(&[60.0, 40.0], &[(10.0, 30.0), (0.0, 0.0)]), 300.0);
        // Once the second has a pace of its own (twice as fast as estimated), it keeps it.
        assert_eq!(eta_sec(&[0.0, 40.0], &[(70.0, 210.0), (10.0, 5.0)]), 20.0);
        // Past the plan (adaptive stopping, a re-run iteration): nothing left, not negative.
        assert_eq!(eta_sec(&[-4.0], &[(10.0, 12.0)]), 0.0);
    }

    /// `ab` measures every visit through one line: each run counts its own iterations, so no
    /// run looks like it had more than planned (which would also count as added iterations).
    #[test]
    fn every_run_counts_its_iterations_from_zero() {
        use schedlab_core::workload::{fake::FakeParams, IterationInfo, WorkloadSpec};
        let plan = RunPlan::new(
            None,
            None,
            2,
            0,
            vec![WorkloadSpec::Fake(FakeParams {
                sleep_ms: 100,
                ..Default::default()
            })],
        )
        .unwrap();
        let mut line = ProgressLine::new(true);
        for _run in 0..3 {
            line.run_starting(&plan);
            assert_eq!((line.bar.position(), line.bar.length()), (0, Some(2)));
            for index in 0..2 {
                let progress = Progress {
                    case_index: 0,
                    case_count: 1,
                    case: &plan.cases[0],
                    iteration: IterationInfo {
                        index,
                        warmup: false,
                    },
                    iterations_in_case: 2,
                };
                line.iteration_starting(&progress);
                let record = IterationRecord {
                    index,
                    warmup: false,
                    started_at_ns: 0,
                    measurements: Vec::new(),
                    attachments: Vec::new(),
                    quiet: None,
                };
                line.iteration_finished(&progress, &record);
            }
            assert_eq!((line.bar.position(), line.bar.length()), (2, Some(2)));
            let eta = line.eta.as_ref().unwrap();
            assert!(eta.remaining_sec[0].abs() < 1e-9, "{:?}", eta.remaining_sec);
        }
    }

    #[test]
    fn the_eta_starts_from_every_iteration_of_every_case() {
        use schedlab_core::workload::{fake::FakeParams, WorkloadSpec};
        // Two values too: cases of one plan need names of their own, and fake's leaves the
        // sleep out.
        let fake = |sleep_ms, value_usec| {
            WorkloadSpec::Fake(FakeParams {
                sleep_ms,
                value_usec,
                ..Default::default()
            })
        };
        let plan =
            RunPlan::new(None, None, 3, 1, vec![fake(100, 100.0), fake(300, 200.0)]).unwrap();
        let eta = Eta::of(&plan).unwrap();
        assert_eq!(eta.per_iteration_sec, [0.1, 0.3]);
        assert_eq!(eta.workload_of_case, [0, 0]);
        assert!((eta.remaining_sec[0] - 1.6).abs() < 1e-9);
    }
}
