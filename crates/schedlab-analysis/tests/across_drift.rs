//! `compare --across` on generated runs that drift from run to run: each run has its own level
//! (τ_shared, 5–10 %) that moves both variants of a case alike, as one binary's variants share a
//! run's placement and neighbours, plus a smaller level of each case's own (τ_case) and the
//! iterations' noise (σ). Through the projection, a run holding both variants is a pair and the
//! shared level cancels; the tests check that A/A reports stay within the nominal false-mark
//! rate, that a real change is found, and that the same data compared unpaired (the runs of each
//! variant as independent samples) find it far less often — pairing is what makes the test
//! strong, and the case-level τ is what an iterations-only variance would miss.
//!
//! No timing is involved: the data are synthetic and the seeds fixed.
use schedlab_analysis::across::project;
use schedlab_analysis::notes::{RowNote, UnitsOf};
use schedlab_analysis::units::Design;
use schedlab_analysis::{
    compare, compare_across, CalibrationSet, Comparison, Settings, Side, Verdict,
};
use schedlab_core::metric::Better;
use schedlab_core::plan::CaseSpec;
use schedlab_core::rng::SplitMix64;
use schedlab_core::workload::cpudl::{CpudlParams, HeapVariant};
use schedlab_core::workload::WorkloadSpec;

const CPU_COUNTS: [u32; 8] = [1, 2, 4, 8, 16, 32, 64, 128];
const ITERATIONS: usize = 5;
const REPORTS: usize = 400;
const METRIC: &str = "nsec_per_op";

fn spec(variant: HeapVariant, cpus: u32) -> CaseSpec {
    CaseSpec::new(WorkloadSpec::Cpudl(CpudlParams {
        variant: Some(variant),
        cpus,
        ..CpudlParams::default()
    }))
    .unwrap()
}

/// One row's noise on the log scale.
#[derive(Clone, Copy)]
struct Row {
    centre: f64,
    tau_shared: f64,
    tau_case: f64,
    sigma: f64,
}

/// `runs` runs, each holding an orig and a fast case per CPU count; fast is orig moved by
/// `shift` (log scale). Returns every run as one side, as `compare` loads the selected runs.
fn runs(g: &mut SplitMix64, runs: usize, shift: f64) -> Side {
    runs_on_boots(g, &[runs], 0.0, shift)
}

/// As [`runs`], on one boot per entry of `runs_per_boot` (that many runs each), where every boot
/// also moves each case of each variant by a level of its own (ω, a fraction of `omega` to
/// `omega`·1.6, per row): a boot's placement and memory layout may favour one variant and not
/// the other, so the variants' difference itself moves from boot to boot.
fn runs_on_boots(g: &mut SplitMix64, runs_per_boot: &[usize], omega: f64, shift: f64) -> Side {
    let runs: usize = runs_per_boot.iter().sum();
    let boot_of: Vec<usize> = runs_per_boot
        .iter()
        .enumerate()
        .flat_map(|(boot, &n)| std::iter::repeat_n(boot, n))
        .collect();
    let rows: Vec<Row> = CPU_COUNTS
        .iter()
        .map(|&cpus| Row {
            centre: (50.0 + f64::from(cpus)).ln(),
            tau_shared: g.between(0.05, 0.10),
            tau_case: g.between(0.01, 0.03),
            sigma: g.between(0.01, 0.03),
        })
        .collect();
    // Every run's shared level, the same for each case it holds.
    let levels: Vec<Vec<f64>> = (0..runs)
        .map(|_| rows.iter().map(|r| r.tau_shared * g.normal()).collect())
        .collect();
    let mut cases = Vec::new();
    for (i, (row, &cpus)) in rows.iter().zip(&CPU_COUNTS).enumerate() {
        for (variant, moved) in [(HeapVariant::Orig, 0.0), (HeapVariant::Fast, shift)] {
            // Drawn only where boots move the variants, so one-boot runs keep their draws.
            let boot_levels: Vec<f64> = if omega > 0.0 {
                let omega_row = omega * g.between(1.0, 1.6);
                runs_per_boot
                    .iter()
                    .map(|_| omega_row * g.normal())
                    .collect()
            } else {
                vec![0.0; runs_per_boot.len()]
            };
            let per_run = levels
                .iter()
                .zip(&boot_of)
                .map(|(level, &boot)| {
                    let own = row.tau_case * g.normal() + boot_levels[boot];
                    (0..ITERATIONS)
                        .map(|_| {
                            (row.centre + moved + level[i] + own + row.sigma * g.normal()).exp()
                        })
                        .collect()
                })
                .collect();
            cases.push((spec(variant, cpus), per_run));
        }
    }
    selected_runs_on(cases, &boot_of)
}

/// Every run as one side, as `compare` loads the selected runs: each case with its values per
/// run (of `METRIC`), all on one boot.
fn selected_runs(cases: Vec<(CaseSpec, Vec<Vec<f64>>)>) -> Side {
    let runs = cases.first().map_or(0, |(_, per_run)| per_run.len());
    selected_runs_on(cases, &vec![0; runs])
}

/// As [`selected_runs`], run `i` on the boot `boot_of[i]`.
fn selected_runs_on(cases: Vec<(CaseSpec, Vec<Vec<f64>>)>, boot_of: &[usize]) -> Side {
    let series = cases
        .iter()
        .map(|(case, per_run)| {
            let per_run = per_run
                .iter()
                .zip(boot_of)
                .map(|(values, boot)| (format!("boot-{boot}"), values.clone()))
                .collect();
            (
                case.name.clone(),
                METRIC.to_string(),
                Better::Lower,
                per_run,
            )
        })
        .collect();
    let mut side = Side::from_run_values("selected runs", series);
    side.cases = cases.into_iter().map(|(case, _)| case).collect();
    side
}

fn across(all: &Side) -> Comparison {
    let projection = project(all, "variant", None).unwrap();
    compare_across(&projection, &CalibrationSet::default(), Settings::default())
}

/// The same runs with each variant's runs taken as an independent sample (other runs on the same
/// boot): what comparing two labels of separate runs would do.
fn unpaired(all: &Side) -> Comparison {
    let projection = project(all, "variant", None).unwrap();
    let mut sides = projection.sides;
    let mut candidate = sides.pop().unwrap();
    for run in &mut candidate.runs {
        run.id = run.id.map(|id| id + 1000);
    }
    let base = sides.pop().unwrap();
    compare(
        base,
        vec![candidate],
        &CalibrationSet::default(),
        Settings::default(),
        None,
    )
}

fn marked(c: &Comparison) -> usize {
    c.rows.iter().filter(|r| r.verdict.is_marked()).count()
}

#[test]
fn the_projection_pairs_each_runs_two_variants() {
    let mut g = SplitMix64::new(5);
    let c = across(&runs(&mut g, 3, 0.0));
    assert_eq!(c.rows.len(), CPU_COUNTS.len());
    for row in &c.rows {
        assert!(row.pairs_within_runs, "{}", row.case);
        assert_eq!(row.design, schedlab_analysis::units::Design::Pairs);
        assert_eq!(row.base_side.n, 3);
        assert!(row.case.starts_with("cpudl:orig "), "{}", row.case);
        assert_eq!(row.candidate, "variant=fast");
    }
    assert_eq!(c.base.name, "variant=orig");
    assert_eq!(
        c.footer.units,
        [UnitsOf::PairsWithinRuns { by_boot: false }]
    );
    // The unpaired reading of the same runs is runs against runs.
    let u = unpaired(&runs(&mut g, 3, 0.0));
    assert!(u
        .rows
        .iter()
        .all(|r| r.design == schedlab_analysis::units::Design::Runs));
}

/// `REPORTS` A/A reports of each setting's runs, seeded per setting: fails naming every
/// setting that marks more than 0.06 rows per report.
fn assert_false_marks_rare<T: Copy>(
    settings: &[T],
    seed: impl Fn(T) -> u64,
    name: impl Fn(T) -> String,
    runs_of: impl Fn(&mut SplitMix64, T) -> Side,
) {
    let mut failures = Vec::new();
    for &setting in settings {
        let mut g = SplitMix64::new(seed(setting));
        let (mut false_marks, mut judged) = (0, 0);
        for _ in 0..REPORTS {
            let c = across(&runs_of(&mut g, setting));
            false_marks += marked(&c);
            judged += c.footer.comparisons;
        }
        let per_report = false_marks as f64 / REPORTS as f64;
        let name = name(setting);
        eprintln!("A/A, {name}: {per_report:.3} false marks per report ({judged} judged rows)");
        assert!(judged > 0);
        if per_report > 0.06 {
            failures.push(format!("{name}: {per_report}"));
        }
    }
    assert!(failures.is_empty(), "too many false marks: {failures:?}");
}

#[test]
fn aa_false_marks_stay_rare_with_run_to_run_drift() {
    assert_false_marks_rare(
        &[2, 3, 5],
        |k| 900 + k as u64,
        |k| format!("{k} runs"),
        |g, k| runs(g, k, 0.0),
    );
}

/// Runs on several boots, each boot moving each variant by 3–5 % of its own: the pairs of one
/// boot share that move, so a boot is the unit (the mean of its runs' pairs). Taken run by run,
/// the same data marked 1.2 to 2.5 of the 8 rows of every A/A report.
#[test]
fn aa_false_marks_stay_rare_when_each_boot_moves_the_variants_apart() {
    assert_false_marks_rare(
        &[[3, 3, 3], [2, 4, 3], [5, 5, 5]],
        |layout| 700 + layout.iter().sum::<usize>() as u64,
        |layout| format!("runs per boot {layout:?}"),
        |g, layout| runs_on_boots(g, &layout, 0.03, 0.0),
    );
    let mut g = SplitMix64::new(7);
    let c = across(&runs_on_boots(&mut g, &[3, 3, 3], 0.03, 0.0));
    assert!(c.rows.iter().all(|r| r.pairs_by_boot && r.base_side.n == 3));
    assert_eq!(c.footer.units, [UnitsOf::PairsWithinRuns { by_boot: true }]);
}

#[test]
fn one_run_is_one_pair_and_not_judged() {
    let mut g = SplitMix64::new(11);
    let c = across(&runs(&mut g, 1, 0.2));
    assert_eq!(c.footer.comparisons, 0);
    assert!(c
        .rows
        .iter()
        .all(|r| r.verdict == schedlab_analysis::Verdict::NotJudged));
}

#[test]
fn pairing_finds_a_five_percent_change_that_unpaired_runs_miss() {
    let mut g = SplitMix64::new(4242);
    let shift = 0.95_f64.ln();
    let (mut paired_found, mut unpaired_found, mut rows) = (0, 0, 0);
    for _ in 0..REPORTS / 4 {
        let all = runs(&mut g, 5, shift);
        let improved = |c: &Comparison| {
            c.rows
                .iter()
                .filter(|r| r.verdict == schedlab_analysis::Verdict::Improvement)
                .count()
        };
        paired_found += improved(&across(&all));
        unpaired_found += improved(&unpaired(&all));
        rows += CPU_COUNTS.len();
    }
    let (paired, unpaired) = (
        paired_found as f64 / rows as f64,
        unpaired_found as f64 / rows as f64,
    );
    eprintln!(
        "fast 5 % faster, 5 runs with 5–10 % drift: paired {:.1} % of rows marked, unpaired {:.1} %",
        paired * 100.0,
        unpaired * 100.0
    );
    assert!(paired >= 0.6, "paired power {paired}");
    assert!(unpaired <= 0.1, "unpaired power {unpaired}");
}

/// The negative control: the same A/A runs with every iteration of each variant taken as an
/// independent sample cry wolf, because each case's own run level (τ_case) does not cancel —
/// so the A/A test above can fail for that mistake.
#[test]
fn iterations_taken_as_units_cry_wolf_on_the_same_runs() {
    let mut g = SplitMix64::new(31337);
    let reports = 200;
    let mut false_marks = 0;
    for _ in 0..reports {
        let all = runs(&mut g, 3, 0.0);
        let projection = project(&all, "variant", None).unwrap();
        let as_values = |side: &Side| {
            let series = side
                .series
                .iter()
                .map(|s| {
                    let values = s.runs.iter().flat_map(|(_, v)| v.clone()).collect();
                    (s.case.name.clone(), s.metric.clone(), s.better, values)
                })
                .collect();
            Side::from_values(&side.name, series)
        };
        let c = compare(
            as_values(&projection.sides[0]),
            vec![as_values(&projection.sides[1])],
            &CalibrationSet::default(),
            Settings::default(),
            None,
        );
        false_marks += marked(&c);
    }
    let per_report = false_marks as f64 / reports as f64;
    eprintln!("iterations as units: {per_report:.2} false marks per report");
    // Above what the A/A test allows (0.06), with room to spare.
    assert!(per_report > 0.1, "{per_report}");
}

/// The noise cap of a pair row looks at the pairs' differences, the spread the test faces, not at
/// each side's runs, which still hold the drift pairing took out. Four runs whose levels move
/// both cases by −20 % to +25 %: at 1 CPU the differences vary by about 3 % (`~`, though each
/// side's runs vary by about 20 %), at 2 CPUs by about 25 % (`??`, naming the differences).
#[test]
fn the_noise_cap_of_pairs_reads_their_differences() {
    let levels = [0.0, 0.25, -0.20, 0.10];
    let differences = [[0.03, -0.02, 0.05, -0.01], [0.30, -0.25, 0.20, -0.15]];
    let iteration_noise = [0.001, -0.001, 0.0];
    let mut cases = Vec::new();
    for (cpus, d) in [1, 2].into_iter().zip(differences) {
        for variant in [HeapVariant::Orig, HeapVariant::Fast] {
            let per_run = levels
                .iter()
                .zip(d)
                .map(|(level, d)| {
                    let moved = if variant == HeapVariant::Fast { d } else { 0.0 };
                    iteration_noise
                        .iter()
                        .map(|e| (100.0_f64.ln() + level + moved + e).exp())
                        .collect()
                })
                .collect();
            cases.push((spec(variant, cpus), per_run));
        }
    }
    let c = across(&selected_runs(cases));
    let [quiet, loud] = [&c.rows[0], &c.rows[1]];
    assert!(
        quiet.base_side.std_pct.unwrap() > 15.0,
        "each side's runs drift: {:?}",
        quiet.base_side.std_pct
    );
    assert_eq!(quiet.verdict, Verdict::Inconclusive, "{:?}", quiet.note);
    assert_eq!(loud.verdict, Verdict::Noisy, "{:?}", loud.note);
    // The spread of the pairs' differences is over the cap, not each side's runs'.
    match loud.note {
        Some(RowNote::OverNoiseCap {
            design: Design::Pairs,
            spread_pct,
            cap_pct,
        }) => assert!(spread_pct > cap_pct, "{spread_pct} vs {cap_pct}"),
        ref other => panic!("{other:?}"),
    }
}
