//! The comparison's behaviour on generated data: A/A comparisons stay quiet across many seeds,
//! real shifts are marked in the right direction, and equivalence, noise and small samples get
//! their own marks. No timing is involved: the data are synthetic and the seeds fixed.
use super::*;

/// splitmix64 + Box–Muller: reproducible normal draws without a dependency.
struct Normal(u64);

impl Normal {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn draw(&mut self) -> f64 {
        let (u1, u2) = (self.uniform().max(1e-300), self.uniform());
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// `n` log-normal values around `centre` with coefficient of variation ≈ `cov`.
    fn sample(&mut self, n: usize, centre: f64, cov: f64) -> Vec<f64> {
        (0..n).map(|_| centre * (cov * self.draw()).exp()).collect()
    }
}

/// A 48-case matrix like seed 004's hackbench table, CoV from 0.5 % to 5 %.
fn matrix(seed: u64, n: usize, shift: f64) -> (Side, Side) {
    let mut rng = Normal(seed);
    let mut base = Vec::new();
    let mut cand = Vec::new();
    for case in 0..48 {
        let cov = 0.005 + 0.045 * (case as f64 / 47.0);
        let centre = 1.0 + case as f64;
        let name = format!("case-{case:02}");
        base.push((
            name.clone(),
            "time_sec".to_string(),
            Better::Lower,
            vec![rng.sample(n, centre, cov)],
        ));
        cand.push((
            name,
            "time_sec".to_string(),
            Better::Lower,
            vec![rng.sample(n, centre * shift, cov)],
        ));
    }
    (
        side_from_samples("base", base),
        side_from_samples("cand", cand),
    )
}

fn marked(c: &Comparison) -> usize {
    c.rows
        .iter()
        .filter(|r| matches!(r.verdict, Verdict::Regression | Verdict::Improvement))
        .count()
}

#[test]
fn aa_comparisons_of_48_cases_rarely_mark_anything() {
    let seeds = 200;
    let mut runs_with_marks = 0;
    let mut total_marks = 0;
    for seed in 0..seeds {
        let (base, cand) = matrix(seed, 10, 1.0);
        let c = compare(
            base,
            vec![cand],
            Settings {
                bootstrap_resamples: 200,
                ..Settings::default()
            },
        );
        assert_eq!(c.rows.len(), 48);
        let m = marked(&c);
        total_marks += m;
        runs_with_marks += usize::from(m > 0);
    }
    let rate = runs_with_marks as f64 / seeds as f64;
    eprintln!(
        "A/A: {runs_with_marks} of {seeds} reports of 48 cases had a mark ({total_marks} marks)"
    );
    // BH at q = 0.05 bounds P(any false mark) by 5 % under the global null; allow sampling slack.
    assert!(
        rate <= 0.08,
        "{runs_with_marks} of {seeds} A/A reports had marks ({total_marks} marks)"
    );
}

#[test]
fn a_five_percent_regression_at_low_noise_is_marked() {
    let mut rng = Normal(7);
    let base = side_from_samples(
        "base",
        vec![(
            "c".into(),
            "time_sec".into(),
            Better::Lower,
            vec![rng.sample(10, 2.0, 0.01)],
        )],
    );
    let cand = side_from_samples(
        "cand",
        vec![(
            "c".into(),
            "time_sec".into(),
            Better::Lower,
            vec![rng.sample(10, 2.1, 0.01)],
        )],
    );
    let c = compare(base, vec![cand], Settings::default());
    let row = &c.rows[0];
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    let change = row.change_pct.unwrap();
    assert!((3.0..7.0).contains(&change), "change {change}");
    let ci = row.ratio_ci.unwrap();
    assert!(ci.low > 1.0 && ci.contains(row.ratio.unwrap()));
}

#[test]
fn five_percent_shifts_across_the_low_noise_cases_are_found() {
    let (base, cand) = matrix(11, 10, 1.05);
    let c = compare(base, vec![cand], Settings::default());
    let low_noise: Vec<&Row> = c.rows.iter().take(16).collect(); // CoV up to about 2 %
    assert!(
        low_noise.iter().all(|r| r.verdict == Verdict::Regression),
        "{:?}",
        low_noise
            .iter()
            .map(|r| (r.case.clone(), r.verdict))
            .collect::<Vec<_>>()
    );
}

#[test]
fn direction_follows_the_metric() {
    let mut rng = Normal(3);
    let b = rng.sample(8, 100.0, 0.01);
    let higher = rng.sample(8, 110.0, 0.01);
    let side = |name: &str, better, v: &Vec<f64>| {
        side_from_samples(
            name,
            vec![("c".into(), "m".into(), better, vec![v.clone()])],
        )
    };
    let c = compare(
        side("b", Better::Higher, &b),
        vec![side("c", Better::Higher, &higher)],
        Settings::default(),
    );
    assert_eq!(c.rows[0].verdict, Verdict::Improvement);
    let c = compare(
        side("b", Better::Lower, &b),
        vec![side("c", Better::Lower, &higher)],
        Settings::default(),
    );
    assert_eq!(c.rows[0].verdict, Verdict::Regression);
}

#[test]
fn tight_identical_distributions_are_equivalent() {
    let mut rng = Normal(5);
    let base = side_from_samples(
        "b",
        vec![(
            "c".into(),
            "m".into(),
            Better::Lower,
            vec![rng.sample(30, 5.0, 0.002)],
        )],
    );
    let cand = side_from_samples(
        "c",
        vec![(
            "c".into(),
            "m".into(),
            Better::Lower,
            vec![rng.sample(30, 5.0, 0.002)],
        )],
    );
    let c = compare(base, vec![cand], Settings::default());
    assert_eq!(c.rows[0].verdict, Verdict::Equivalent, "{:?}", c.rows[0]);
}

#[test]
fn small_or_noisy_samples_are_not_judged() {
    let mut rng = Normal(9);
    let few = side_from_samples(
        "b",
        vec![("c".into(), "m".into(), Better::Lower, vec![vec![1.0, 1.1]])],
    );
    let other = side_from_samples(
        "c",
        vec![(
            "c".into(),
            "m".into(),
            Better::Lower,
            vec![vec![2.0, 2.1, 2.2]],
        )],
    );
    let c = compare(few, vec![other], Settings::default());
    assert_eq!(c.rows[0].verdict, Verdict::Noisy);
    assert!(c.rows[0].note.as_deref().unwrap().contains("too few"));

    let noisy_b = side_from_samples(
        "b",
        vec![(
            "c".into(),
            "m".into(),
            Better::Lower,
            vec![rng.sample(5, 1.0, 0.3)],
        )],
    );
    let noisy_c = side_from_samples(
        "c",
        vec![(
            "c".into(),
            "m".into(),
            Better::Lower,
            vec![rng.sample(5, 1.0, 0.3)],
        )],
    );
    let c = compare(noisy_b, vec![noisy_c], Settings::default());
    assert_eq!(c.rows[0].verdict, Verdict::Noisy, "{:?}", c.rows[0]);
}

#[test]
fn boots_become_the_samples_when_a_side_spans_several() {
    // Three boots of five iterations: the row sees three per-boot values, not fifteen.
    let groups = vec![
        vec![1.0, 1.01, 0.99, 1.0, 1.02],
        vec![1.1, 1.12, 1.09, 1.1, 1.11],
        vec![0.95, 0.96, 0.94, 0.95, 0.97],
    ];
    let base = side_from_samples(
        "b",
        vec![("c".into(), "m".into(), Better::Lower, groups.clone())],
    );
    let cand = side_from_samples("c", vec![("c".into(), "m".into(), Better::Lower, groups)]);
    let c = compare(base, vec![cand], Settings::default());
    assert_eq!(c.rows[0].replication, Replication::Boots);
    assert_eq!(c.rows[0].base_samples.len(), 3);
    assert!((c.rows[0].base_samples[0] - 1.0).abs() < 1e-12);
}

#[test]
fn q_values_cover_every_candidate() {
    let (base, cand) = matrix(1, 6, 1.0);
    let (_, cand2) = matrix(2, 6, 1.0);
    let c = compare(base, vec![cand, cand2], Settings::default());
    assert_eq!(c.rows.len(), 96);
    assert_eq!(c.footer.comparisons, 96);
    for row in &c.rows {
        assert!(row.q_value.unwrap() >= row.p_value.unwrap());
    }
}

/// A side whose groups are the rounds of one interleaved experiment.
fn rounds_side(name: &str, experiment: i64, rounds: &[Vec<f64>]) -> Side {
    let mut side = side_from_samples(
        name,
        vec![("c".into(), "m".into(), Better::Lower, rounds.to_vec())],
    );
    side.group_keys = (0..rounds.len())
        .map(|r| GroupKey {
            boot: 0,
            round: Some((experiment, r as u32)),
        })
        .collect();
    side
}

#[test]
fn interleaved_rounds_are_compared_as_pairs_and_drift_cancels() {
    // Strong drift between rounds (±10 %) and a steady 3 % regression inside every round: the
    // unpaired spread hides it, the pairs show it.
    let drift = [1.0, 1.1, 0.9, 1.05, 0.95, 1.08];
    let a: Vec<Vec<f64>> = drift
        .iter()
        .map(|d| vec![d * 1.000, d * 1.001, d * 0.999])
        .collect();
    let b: Vec<Vec<f64>> = drift
        .iter()
        .map(|d| vec![d * 1.030, d * 1.031, d * 1.029])
        .collect();
    let c = compare(
        rounds_side("a", 7, &a),
        vec![rounds_side("b", 7, &b)],
        Settings::default(),
    );
    let row = &c.rows[0];
    assert_eq!(row.replication, Replication::Pairs);
    assert_eq!(row.test, TEST_PAIRED_LOG);
    assert_eq!(row.verdict, Verdict::Regression, "{row:?}");
    assert!((row.change_pct.unwrap() - 3.0).abs() < 0.1);

    // The same numbers from different experiments are not pairs.
    let c = compare(
        rounds_side("a", 7, &a),
        vec![rounds_side("b", 8, &b)],
        Settings::default(),
    );
    assert_ne!(c.rows[0].replication, Replication::Pairs);
}
