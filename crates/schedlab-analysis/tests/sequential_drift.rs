//! Sequential A/B decisions (`schedlab ab --until-decided`) on generated experiments that drift:
//! rounds of one A run and one B run on one boot, each run with its own offset (τ, 2–10 % per
//! case, as in aa_drift.rs) that the arms do not share, each iteration its noise (σ, 1–5 %),
//! and a slow random walk across rounds that moves both runs of a round alike (a neighbour
//! warming up, a thermal trend).
//! The experiment is looked at after every round with an O'Brien–Fleming plan; a row counts as
//! marked if any look marked it, as a decided row keeps its verdict. The tests check that A/A
//! experiments stay within the planned error, that a 10 % change is found, mostly before the last
//! look, that the walk cancels in the pairs, and that looking at the unadjusted level after every
//! round (what the plan replaces) cries wolf — so the A/A test can fail for that mistake.
//!
//! No timing is involved: the data are synthetic and the seeds fixed.
use schedlab_analysis::{
    compare, CalibrationSet, Comparison, SequentialPlan, Settings, Side, Verdict,
};
use schedlab_core::record::Arm;
use schedlab_core::rng::SplitMix64;
use schedlab_stats::sequential::Spending;

mod common;
use common::{ab_arm, case_name, Case, Noise};

const CASES: usize = 8;
const ITERATIONS: usize = 5;
const MAX_ROUNDS: u32 = 10;
const PLAN: SequentialPlan = SequentialPlan {
    max_rounds: MAX_ROUNDS,
    spending: Spending::OBrienFleming,
};
/// The walk's step per round, shared by both runs of the round.
const WALK_STEP: f64 = 0.03;

/// One experiment's values: per case, per round, the A run's and the B run's iterations.
struct Experiment {
    cases: Vec<Case>,
    rounds: Vec<Vec<[Vec<f64>; 2]>>,
}

/// An experiment of `MAX_ROUNDS` rounds; B is A moved by `shift` (log scale) in the cases
/// `changed` picks. The walk draws from a stream of its own, scaled by `walk`, so the same seed
/// with and without it gives the same runs but for the walk.
fn experiment(
    g: &mut SplitMix64,
    changed: impl Fn(&Case) -> bool,
    shift: f64,
    walk: f64,
) -> Experiment {
    let noise = Noise {
        omega: None,
        tau: (0.02, 0.10),
        sigma: (0.01, 0.05),
    };
    let cases = common::matrix(g, CASES, 10.0, &noise);
    let mut w = SplitMix64::new(g.next_u64());
    let rounds = cases
        .iter()
        .map(|c| {
            let moved = if changed(c) { shift } else { 0.0 };
            let mut level = 0.0;
            (0..MAX_ROUNDS)
                .map(|_| {
                    level += walk * WALK_STEP * w.normal();
                    [0.0, moved].map(|arm_shift| {
                        let run = c.tau * g.normal();
                        (0..ITERATIONS)
                            .map(|_| {
                                (c.centre + level + arm_shift + run + c.sigma * g.normal()).exp()
                            })
                            .collect()
                    })
                })
                .collect()
        })
        .collect();
    Experiment { cases, rounds }
}

impl Experiment {
    /// One arm's side of the first `rounds` rounds: a run per round on one boot, tagged as
    /// `ab` tags them.
    fn arm(&self, arm: Arm, rounds: u32) -> Side {
        let index = usize::from(arm == Arm::B);
        let cases = self
            .rounds
            .iter()
            .enumerate()
            .map(|(i, per_round)| {
                let runs = per_round[..rounds as usize]
                    .iter()
                    .map(|both| both[index].clone())
                    .collect();
                (case_name(i), runs)
            })
            .collect();
        ab_arm(if arm == Arm::A { "a" } else { "b" }, arm, cases)
    }

    /// The first `rounds` rounds compared, under `plan` or at the fixed level.
    fn compare(&self, rounds: u32, plan: Option<SequentialPlan>) -> Comparison {
        let c = compare(
            self.arm(Arm::A, rounds),
            vec![self.arm(Arm::B, rounds)],
            &CalibrationSet::default(),
            Settings::default(),
            plan,
        );
        assert_eq!(c.rows.len(), CASES);
        c
    }

    /// Every look of the plan: `ab --until-decided` stops once every row is decided, and a
    /// decided row keeps its verdict, so the rows of all `MAX_ROUNDS` rounds are what it shows.
    fn sequential(&self) -> Comparison {
        let c = self.compare(MAX_ROUNDS, Some(PLAN));
        assert!(c.sequential.is_some(), "every row is a pair");
        c
    }

    /// Per row, whether any look at the fixed level (a comparison of the rounds so far, BH at
    /// the full q each time) marked it: peeking without spending.
    fn peeked(&self) -> Vec<bool> {
        let mut marked = vec![false; CASES];
        for rounds in 2..=MAX_ROUNDS {
            let c = self.compare(rounds, None);
            for (m, row) in marked.iter_mut().zip(&c.rows) {
                *m |= row.verdict.is_marked();
            }
        }
        marked
    }
}

fn marks(c: &Comparison) -> usize {
    c.rows.iter().filter(|r| r.verdict.is_marked()).count()
}

const AA_EXPERIMENTS: usize = 200;

/// The plan spends q = 0.05 over its looks, so P(any false mark) ≤ 0.05 per experiment by the
/// union bound; false marks per experiment may exceed it only as far as marks come together.
/// 0.06, as aa_drift.rs allows per report.
const AA_BOUND: f64 = 0.06;

#[test]
fn aa_false_marks_stay_within_the_planned_error() {
    let mut g = SplitMix64::new(2024);
    let (mut false_marks, mut with_any) = (0, 0);
    for _ in 0..AA_EXPERIMENTS {
        let c = experiment(&mut g, |_| false, 0.0, 1.0).sequential();
        false_marks += marks(&c);
        with_any += usize::from(marks(&c) > 0);
    }
    let per_experiment = false_marks as f64 / AA_EXPERIMENTS as f64;
    eprintln!(
        "A/A over {MAX_ROUNDS} looks: {per_experiment:.3} false marks per experiment, {with_any} of {AA_EXPERIMENTS} experiments with any"
    );
    assert!(
        per_experiment <= AA_BOUND,
        "{per_experiment} false marks per experiment (bound {AA_BOUND})"
    );
}

/// The quiet cases, where a 10 % change is several standard errors of ten pairs.
fn quiet(c: &Case) -> bool {
    c.tau <= 0.04
}

#[test]
fn ten_percent_changes_are_found_mostly_before_the_last_look() {
    let mut g = SplitMix64::new(4242);
    let (mut found, mut early, mut rows) = (0, 0, 0);
    let (mut quiet_found, mut quiet_rows) = (0, 0);
    for _ in 0..40 {
        let e = experiment(&mut g, |_| true, 1.10_f64.ln(), 1.0);
        let c = e.sequential();
        for (case, row) in e.cases.iter().zip(&c.rows) {
            let regression = row.verdict == Verdict::Regression;
            rows += 1;
            found += usize::from(regression);
            early +=
                usize::from(regression && row.decided_at_round.is_some_and(|r| r < MAX_ROUNDS));
            if quiet(case) {
                quiet_rows += 1;
                quiet_found += usize::from(regression);
            }
        }
    }
    let power = found as f64 / rows as f64;
    let quiet_power = quiet_found as f64 / quiet_rows as f64;
    let early = early as f64 / found as f64;
    eprintln!(
        "+10 % in every case: {:.1} % of rows marked ({:.1} % of the {quiet_rows} with τ ≤ 4 %), {:.1} % of the marks before look {MAX_ROUNDS}",
        power * 100.0,
        quiet_power * 100.0,
        early * 100.0
    );
    assert!(quiet_power >= 0.8, "power {quiet_power} in quiet cases");
    assert!(early >= 0.5, "{early} of the marks before the last look");
}

/// The walk moves both runs of a round alike, so it is gone from each pair's difference: the
/// same experiment with and without it gives the same tests, though each arm's runs spread more.
#[test]
fn the_shared_walk_cancels_in_the_pairs() {
    for seed in 0..5 {
        let [with, without] = [1.0, 0.0].map(|walk| {
            let mut g = SplitMix64::new(seed);
            experiment(&mut g, |_| false, 0.0, walk).sequential()
        });
        let (mut spread_with, mut spread_without) = (0.0, 0.0);
        for (a, b) in with.rows.iter().zip(&without.rows) {
            assert_eq!(a.verdict, b.verdict, "{}", a.case);
            assert_eq!(a.decided_at_round, b.decided_at_round, "{}", a.case);
            let (p, q) = (a.p_value.unwrap(), b.p_value.unwrap());
            assert!(
                (p - q).abs() <= 1e-9 * q.max(1e-300),
                "{}: p {p} against {q}",
                a.case
            );
            spread_with += a.base_side.std_pct.unwrap();
            spread_without += b.base_side.std_pct.unwrap();
        }
        assert!(
            spread_with > spread_without,
            "the walk is not in the runs: {spread_with} against {spread_without}"
        );
    }
}

/// The negative control: the same A/A experiments looked at after every round at the full level,
/// taking the first mark (what the spending replaces), cry wolf. It needs τ well above σ/√n,
/// as this machine measures (docs/statistics.md §6): with τ of 1–5 % the within-run floor
/// keeps the early looks' few pairs so conservative that unadjusted looks stayed near q.
#[test]
fn looking_at_the_full_level_every_round_cries_wolf() {
    // The first experiments of the A/A test above.
    let mut g = SplitMix64::new(2024);
    let count = 100;
    let (mut planned, mut peeked, mut with_any) = (0, 0, 0);
    for _ in 0..count {
        let e = experiment(&mut g, |_| false, 0.0, 1.0);
        planned += marks(&e.sequential());
        let marked = e.peeked().iter().filter(|m| **m).count();
        peeked += marked;
        with_any += usize::from(marked > 0);
    }
    let (planned, peeked) = (planned as f64 / count as f64, peeked as f64 / count as f64);
    eprintln!(
        "A/A: planned looks {planned:.3}, unadjusted looks {peeked:.3} false marks per experiment ({with_any} of {count} experiments with any)"
    );
    // Twice what the A/A test allows, and five times the plan's own reading of the same data.
    assert!(
        peeked > 2.0 * AA_BOUND && peeked > 5.0 * planned,
        "unadjusted looks did not cry wolf: {peeked} against {planned} planned"
    );
}
