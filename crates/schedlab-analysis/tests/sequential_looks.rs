//! Sequential A/B decisions (`schedlab ab --until-decided`) on hand-made rounds: a row decided
//! at an early look keeps that verdict and round whatever later rounds show, the looks spend
//! the planned error and no more, and a look that can judge nothing spends nothing.
use schedlab_analysis::{
    compare, CalibrationSet, Comparison, SequentialPlan, Settings, Side, Verdict,
};
use schedlab_core::metric::Better;
use schedlab_core::record::Arm;
use schedlab_stats::sequential::{spent_alpha, Spending};

mod common;

/// Per round, ln(B/A) of each case: "hog" doubles in rounds 1 and 2 and then swings ±e³, so
/// all four rounds together decide nothing; "flat" stays within ±0.1 %.
const HOG: [f64; 4] = [
    std::f64::consts::LN_2,
    std::f64::consts::LN_2 + 0.0005,
    -3.0,
    3.0,
];
const FLAT: [f64; 4] = [0.001, -0.001, 0.0005, -0.0005];

/// One arm of experiment 1: a run per round on one boot, each case at 100 × e^(its shift).
fn arm(name: &str, arm: Arm, rounds: usize, shift: impl Fn(&[f64; 4], usize) -> f64) -> Side {
    let cases = [("hog", &HOG), ("flat", &FLAT)]
        .into_iter()
        .map(|(case, d)| {
            let runs = (0..rounds)
                .map(|r| vec![100.0 * shift(d, r).exp(); 2])
                .collect();
            (case.to_string(), runs)
        })
        .collect();
    common::ab_arm(name, arm, cases)
}

fn experiment(rounds: usize, plan: Option<SequentialPlan>) -> Comparison {
    let a = arm("a", Arm::A, rounds, |_, _| 0.0);
    let b = arm("b", Arm::B, rounds, |d, r| d[r]);
    compare(
        a,
        vec![b],
        &CalibrationSet::default(),
        Settings::default(),
        plan,
    )
}

const PLAN: SequentialPlan = SequentialPlan {
    max_rounds: 4,
    spending: Spending::OBrienFleming,
};

fn verdict(c: &Comparison, case: &str) -> (Verdict, Option<u32>) {
    let r = c.rows.iter().find(|r| r.case == case).unwrap();
    (r.verdict, r.decided_at_round)
}

#[test]
fn a_row_decided_early_keeps_its_verdict_and_round() {
    let c = experiment(4, Some(PLAN));
    // Round 2 is the first look with a variance (one pair has none); the doubling is
    // overwhelming there, and rounds 3 and 4 cannot undo it.
    assert_eq!(verdict(&c, "hog"), (Verdict::Regression, Some(2)));
    // The flat row is shown within ±1 % once three rounds are in.
    assert_eq!(verdict(&c, "flat"), (Verdict::Equivalent, Some(3)));
    // All four rounds at once would not mark the hog: the mark is the early look's.
    let fixed = experiment(4, None);
    assert!(fixed.sequential.is_none());
    assert!(
        !verdict(&fixed, "hog").0.is_marked(),
        "{:?}",
        verdict(&fixed, "hog")
    );
    assert_eq!(verdict(&fixed, "hog").1, None);
}

#[test]
fn the_looks_spend_at_most_the_planned_error() {
    let c = experiment(4, Some(PLAN));
    let seq = c.sequential.as_ref().unwrap();
    assert_eq!(seq.rounds, 4);
    // Look 1 (one pair) judges nothing and spends nothing: looks at rounds 2, 3 and 4.
    let rounds: Vec<u32> = seq.looks.iter().map(|l| l.rounds).collect();
    assert_eq!(rounds, vec![2, 3, 4]);
    let first = spent_alpha(Spending::OBrienFleming, 0.5, 0.05).unwrap();
    assert!((seq.looks[0].level - first).abs() < 1e-15);
    let fdr = c.settings.fdr;
    let total: f64 = seq.looks.iter().map(|l| l.level).sum();
    let total_eq: f64 = seq.looks.iter().map(|l| l.equivalence_level).sum();
    assert!(seq.looks.iter().all(|l| l.level > 0.0));
    assert!(total <= fdr + 1e-12 && total > fdr - 1e-12, "{total}");
    assert!(total_eq <= 0.05 + 1e-12, "{total_eq}");
    assert_eq!(seq.looks.last().unwrap().decided, 2);

    // Stopped after 3 of 4 planned rounds: what the last look would have spent is unspent.
    let c = experiment(3, Some(PLAN));
    let seq = c.sequential.as_ref().unwrap();
    let total: f64 = seq.looks.iter().map(|l| l.level).sum();
    let at_three = spent_alpha(Spending::OBrienFleming, 0.75, 0.05).unwrap();
    assert!((total - at_three).abs() < 1e-12 && total < fdr);
}

#[test]
fn a_plan_applies_only_to_pairs() {
    let base = Side::from_run_values(
        "base",
        vec![(
            "c".into(),
            "m".into(),
            Better::Lower,
            vec![("boot".into(), vec![1.0]), ("boot".into(), vec![1.1])],
        )],
    );
    let candidate = base.clone();
    let c = compare(
        base,
        vec![candidate],
        &CalibrationSet::default(),
        Settings::default(),
        Some(PLAN),
    );
    assert!(c.sequential.is_none());
    assert_eq!(c.rows[0].decided_at_round, None);
}
