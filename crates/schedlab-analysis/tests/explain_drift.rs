//! The explanation's decision path (`compare --explain`) on generated probed iterations with
//! run-to-run drift, as the probes see it on a shared machine: every run has its own offset per
//! case × metric (τ 3–15 %, wider than the primary metrics' since a probed iteration is a short
//! window), every probed iteration its noise (σ 5–20 %), counts that are often zero (migrations)
//! and system calls a group makes in some runs and not in others. The runs go through
//! [`ProbeSideBuilder`] and [`explain`] as the command's do.
//!
//! Checked: an A/A of probes marks nothing beyond the nominal rate, for runs on one boot
//! alternated between labels and for `ab` rounds whose runs share a drifting walk; a change of
//! the run-queue delay (what a CPU hog does) is marked; and reading every probed iteration as a
//! unit — the mistake that ignores the runs' own drift — cries wolf, so the A/A test can fail.
//!
//! No timing is involved: the data are synthetic and the seeds fixed.
use schedlab_analysis::explain::{explain, ProbeSideBuilder};
use schedlab_analysis::model::Explanation;
use schedlab_analysis::units::Design;
use schedlab_analysis::{RunInput, Settings};
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Better, Measurement, MetricShape, Role};
use schedlab_core::plan::{CaseSpec, RunPlan};
use schedlab_core::probe::{ProbeKind, ProbeMeasurement, ProbeRecord};
use schedlab_core::record::{Arm, CaseRecord, ExperimentTag, RunRecord, RunStatus};
use schedlab_core::rng::SplitMix64;
use schedlab_core::workload::fake::FakeParams;
use schedlab_core::workload::WorkloadSpec;

const CASES: usize = 6;
const GROUPS: [Option<&str>; 3] = [None, Some("worker"), Some("waker")];

/// How a metric's values come about.
#[derive(Clone, Copy)]
enum Kind {
    /// e^(centre + offsets): a delay, a share, a large count.
    LogNormal(f64),
    /// A count drawn with mean λ·e^(offsets): often zero for a small λ.
    Count(f64),
    /// The same in every iteration (`tasks_count`).
    Constant(f64),
    /// `syscall_futex_count`: a call made a few times an iteration, none at all in many, when
    /// the probes store no count for it: the series relies on the zero-filling of calls a counted
    /// group did not make.
    Sometimes(f64),
}

/// One explanatory metric of one task group, with its noise.
#[derive(Clone)]
struct Metric {
    group: Option<&'static str>,
    name: &'static str,
    unit: &'static str,
    kind: Kind,
    tau: f64,
    sigma: f64,
    /// A run-queue delay, which the hog moves.
    runq: bool,
}

const PER_GROUP: [(&str, &str, f64, bool); 11] = [
    ("runq_delay_p50_usec", "usec", 5.0, true),
    ("runq_delay_p99_usec", "usec", 60.0, true),
    ("runq_delay_max_usec", "usec", 700.0, true),
    ("runq_delay_mean_usec", "usec", 9.0, true),
    ("runq_delay_total_usec", "usec", 9e4, true),
    ("runq_delay_count", "count", 1e4, false),
    ("wakeups_cross_cpu_pct", "%", 40.0, false),
    ("migrations_count", "count", -1.5, false),
    ("involuntary_switches_count", "count", -12.0, false),
    ("syscalls_count", "count", 2e4, false),
    ("syscall_futex_count", "count", 0.0, false),
];

fn metrics(g: &mut SplitMix64) -> Vec<Metric> {
    let mut out = Vec::new();
    for group in GROUPS {
        for (name, unit, centre, runq) in PER_GROUP {
            let kind = match (name, centre) {
                ("syscall_futex_count", _) => Kind::Sometimes(2.0),
                (_, c) if c < 0.0 => Kind::Count(-c),
                (_, c) => Kind::LogNormal(c.ln()),
            };
            out.push(Metric {
                group,
                name,
                unit,
                kind,
                tau: g.between(0.03, 0.15),
                sigma: g.between(0.05, 0.20),
                runq,
            });
        }
        out.push(Metric {
            group,
            name: "tasks_count",
            unit: "count",
            kind: Kind::Constant(2.0),
            tau: 0.0,
            sigma: 0.0,
            runq: false,
        });
    }
    out.push(Metric {
        group: None,
        name: "psi_cpu_some_usec",
        unit: "usec",
        kind: Kind::LogNormal(3e5_f64.ln()),
        tau: g.between(0.05, 0.15),
        sigma: g.between(0.05, 0.2),
        runq: false,
    });
    out
}

/// A draw with mean `mean`: Knuth's method for small means, the normal approximation beyond.
fn count(g: &mut SplitMix64, mean: f64) -> f64 {
    if mean > 30.0 {
        return (mean + mean.sqrt() * g.normal()).round().max(0.0);
    }
    let limit = (-mean).exp();
    let (mut k, mut p) = (0.0, 1.0);
    loop {
        p *= g.uniform();
        if p <= limit {
            return k;
        }
        k += 1.0;
    }
}

/// A run's probed iterations of one case: per metric, its run offset (`walk` for the round it
/// shares with the other arm), then each iteration's noise; `runq_shift` moves the worker
/// group's run-queue delays (log scale), and those alone.
fn probes(
    g: &mut SplitMix64,
    metrics: &[Metric],
    iterations: usize,
    walk: f64,
    runq_shift: f64,
) -> Vec<ProbeRecord> {
    let offsets: Vec<f64> = metrics.iter().map(|m| m.tau * g.normal() + walk).collect();
    (0..iterations)
        .map(|index| {
            let mut explanatory = Vec::new();
            for (m, offset) in metrics.iter().zip(&offsets) {
                let shift = if m.runq && m.group == Some("worker") {
                    runq_shift
                } else {
                    0.0
                };
                let y = offset + shift + m.sigma * g.normal();
                let value = match m.kind {
                    Kind::LogNormal(centre) => (centre + y).exp(),
                    Kind::Count(mean) => count(g, mean * y.exp()),
                    Kind::Constant(v) => v,
                    Kind::Sometimes(mean) => match count(g, mean * y.exp()) {
                        0.0 => continue,
                        n => n,
                    },
                };
                explanatory.push(ProbeMeasurement {
                    group: m.group.map(String::from),
                    measurement: Measurement {
                        name: m.name.to_string(),
                        unit: m.unit.to_string(),
                        better: Better::Lower,
                        role: Role::Explanatory,
                        shape: if m.unit == "count" {
                            MetricShape::Count
                        } else {
                            MetricShape::Scalar
                        },
                        distribution: None,
                        value,
                    },
                });
            }
            ProbeRecord {
                kind: ProbeKind::Explain,
                index: index as u32,
                started_at_ns: 0,
                measurements: Vec::new(),
                explanatory,
                unavailable: Vec::new(),
                attachments: Vec::new(),
                symbols: Vec::new(),
            }
        })
        .collect()
}

fn run_record(id: i64) -> RunRecord {
    let specs: Vec<WorkloadSpec> = (0..CASES)
        .map(|_| WorkloadSpec::Fake(FakeParams::default()))
        .collect();
    RunRecord {
        id: Some(id),
        label: None,
        plan: RunPlan::new(None, None, 1, 0, specs).expect("a valid plan"),
        fingerprint: Fingerprint {
            hostname: "testhost".into(),
            boot_id: "boot".into(),
            ..Fingerprint::default()
        },
        started_at_ns: 0,
        ended_at_ns: None,
        status: RunStatus::Complete,
        error: None,
        cases: (0..CASES)
            .map(|i| CaseRecord {
                spec: CaseSpec {
                    name: format!("case-{i}"),
                    workload: WorkloadSpec::Fake(FakeParams::default()),
                    background: Vec::new(),
                },
                iterations: Vec::new(),
                error: None,
            })
            .collect(),
    }
}

/// How the sides' runs were made and how they are read.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Layout {
    /// Runs on one boot alternated between the two labels, `runs` a side.
    Runs { runs: usize },
    /// `ab` rounds: both runs of a round share a walk that drifts 3 % a round.
    Rounds { rounds: usize },
    /// The negative control: `runs` runs a side of `iterations` probed iterations each, every
    /// iteration read as a run of its own.
    IterationsAsUnits { runs: usize, iterations: usize },
}

/// One generated report's explanation: base and candidate built from their runs.
fn report(g: &mut SplitMix64, matrix: &[Vec<Metric>], layout: Layout, shift: f64) -> Explanation {
    let mut sides = [
        ProbeSideBuilder::new("base", false),
        ProbeSideBuilder::new("cand", false),
    ];
    let mut next_id = 1;
    let mut add = |g: &mut SplitMix64,
                   sides: &mut [ProbeSideBuilder; 2],
                   side: usize,
                   tag: Option<ExperimentTag>,
                   walk: f64,
                   iterations: usize,
                   split: bool| {
        let cases: Vec<Vec<ProbeRecord>> = matrix
            .iter()
            .map(|m| probes(g, m, iterations, walk, if side == 1 { shift } else { 0.0 }))
            .collect();
        let runs = if split { iterations } else { 1 };
        for r in 0..runs {
            let record = run_record(next_id);
            next_id += 1;
            let probes: Vec<(usize, ProbeRecord)> = cases
                .iter()
                .enumerate()
                .flat_map(|(case, records)| {
                    records
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| !split || *i == r)
                        .map(move |(_, p)| (case, p.clone()))
                })
                .collect();
            sides[side].add_run(
                RunInput {
                    record: &record,
                    tag,
                },
                &probes,
            );
        }
    };
    match layout {
        Layout::Runs { runs } => {
            for _ in 0..runs {
                for side in 0..2 {
                    add(g, &mut sides, side, None, 0.0, 1, false);
                }
            }
        }
        Layout::Rounds { rounds } => {
            let mut walk = 0.0;
            for round in 0..rounds {
                walk += 0.03 * g.normal();
                for (side, arm) in [(0, Arm::A), (1, Arm::B)] {
                    let tag = ExperimentTag {
                        experiment_id: 1,
                        arm,
                        round: round as u32,
                    };
                    add(g, &mut sides, side, Some(tag), walk, 1, false);
                }
            }
        }
        Layout::IterationsAsUnits { runs, iterations } => {
            for _ in 0..runs {
                for side in 0..2 {
                    add(g, &mut sides, side, None, 0.0, iterations, true);
                }
            }
        }
    }
    let [base, cand] = sides;
    explain(
        base.finish(),
        vec![cand.finish()],
        &Settings::default(),
        None,
    )
}

fn marked(e: &Explanation) -> usize {
    e.metrics
        .rows
        .iter()
        .filter(|r| r.row.verdict.is_marked())
        .count()
}

/// Over `reports` A/A reports of fresh matrices: the mean false marks per report, and the share
/// of reports with any.
fn aa_rate(seed: u64, layout: Layout, reports: usize) -> (f64, f64) {
    let mut g = SplitMix64::new(seed);
    let (mut false_marks, mut any) = (0, 0);
    for _ in 0..reports {
        let matrix: Vec<Vec<Metric>> = (0..CASES).map(|_| metrics(&mut g)).collect();
        let marks = marked(&report(&mut g, &matrix, layout, 0.0));
        false_marks += marks;
        any += usize::from(marks > 0);
    }
    (
        false_marks as f64 / reports as f64,
        any as f64 / reports as f64,
    )
}

/// The family's promise is the footer's: if nothing changed, P(any false mark) ≤ 0.05. Counts
/// of a few events a run (migrations, a rare system call) are coarser than the t test assumes,
/// and 300 reports measure a rate to about ±0.013, hence the bound: 0.08 (600 reports measured
/// 0.042–0.065 reports with a mark, 0.047–0.072 marks per report, over the layouts below and
/// five runs a side).
const AA_BOUND: f64 = 0.08;

#[test]
fn the_probes_aa_marks_nothing_beyond_the_nominal_rate() {
    for (seed, layout, design) in [
        (11, Layout::Runs { runs: 3 }, Design::Runs),
        (12, Layout::Rounds { rounds: 4 }, Design::Pairs),
        (13, Layout::Rounds { rounds: 8 }, Design::Pairs),
    ] {
        let mut g = SplitMix64::new(seed);
        let matrix: Vec<Vec<Metric>> = (0..CASES).map(|_| metrics(&mut g)).collect();
        let e = report(&mut g, &matrix, layout, 0.0);
        assert!(e.metrics.rows.iter().all(|r| r.row.design == design));
        // Every metric of every case and group is a row: system calls a counted group did not
        // make in some runs are 0 there, not a series one side lacks.
        assert!(e.metrics.unmatched.is_empty(), "{:?}", e.metrics.unmatched);
        assert_eq!(
            e.metrics.rows.len(),
            CASES * (GROUPS.len() * (PER_GROUP.len() + 1) + 1)
        );
        let futex = e
            .metrics
            .rows
            .iter()
            .find(|r| r.row.metric == "syscall_futex_count" && r.group.as_deref() == Some("worker"))
            .expect("the worker's futex row");
        let zero = |u: &[f64]| u.contains(&0.0);
        if zero(&futex.row.base_side.units) || zero(&futex.row.candidate_side.units) {
            assert_eq!(futex.row.scale, schedlab_analysis::units::Scale::Raw);
        }

        let (per_report, any) = aa_rate(seed, layout, 300);
        println!("{layout:?}: {per_report} false marks per report, {any} of reports with one");
        assert!(
            per_report <= AA_BOUND && any <= AA_BOUND,
            "{layout:?}: {per_report} false marks per A/A report of the probes, {any} of reports \
             with one"
        );
    }
}

#[test]
fn a_run_queue_delay_that_moved_is_marked() {
    let mut g = SplitMix64::new(21);
    let (mut found, mut moved, mut false_marks) = (0, 0, 0);
    let reports = 40;
    for _ in 0..reports {
        let matrix: Vec<Vec<Metric>> = (0..CASES).map(|_| metrics(&mut g)).collect();
        // What a CPU hog does to the worker's run-queue delays: ten times longer.
        let e = report(&mut g, &matrix, Layout::Rounds { rounds: 4 }, 10f64.ln());
        for r in &e.metrics.rows {
            let runq = r.group.as_deref() == Some("worker")
                && PER_GROUP
                    .iter()
                    .any(|(name, _, _, runq)| *runq && *name == r.row.metric);
            if runq {
                moved += 1;
                if r.row.verdict == schedlab_analysis::Verdict::Regression {
                    found += 1;
                }
            } else if r.row.verdict.is_marked() {
                false_marks += 1;
            }
        }
    }
    let power = found as f64 / moved as f64;
    assert!(
        power >= 0.8,
        "{found} of {moved} moved run-queue rows marked"
    );
    // The rows that did not move are marked as rarely as the adjustment allows once some rows
    // did: a false discovery rate of 5 % of the marks.
    let false_rate = false_marks as f64 / found.max(1) as f64;
    assert!(
        false_rate <= 0.05,
        "{false_marks} unmoved rows marked beside {found} moved ones"
    );
    println!("power {power:.3}, {false_marks} false marks beside {found} ({reports} reports)");
}

/// The mistake the unit of replication guards against: five probed iterations a run, each read
/// as a unit, ignore the runs' own drift and mark far more than the nominal rate.
#[test]
fn probed_iterations_as_units_cry_wolf() {
    let (rate, _) = aa_rate(
        31,
        Layout::IterationsAsUnits {
            runs: 3,
            iterations: 5,
        },
        40,
    );
    println!("iterations as units: {rate} false marks per report");
    assert!(rate > 1.0, "only {rate} false marks per report");
}
