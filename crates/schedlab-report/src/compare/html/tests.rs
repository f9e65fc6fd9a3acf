//! Tests of the whole page: hostile strings in every user-controlled place come out escaped,
//! nothing is fetched, the table has a row per comparison row, and the latency section appears
//! exactly when percentile metrics exist.
use schedlab_core::fingerprint::Fingerprint;
use schedlab_core::metric::{Better, MetricDef};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{CaseRecord, IterationRecord, RunRecord, RunStatus};
use schedlab_core::workload::fake::FakeParams;
use schedlab_core::workload::wakeup::metrics as wakeup;
use schedlab_core::workload::WorkloadSpec;

use schedlab_analysis::latency::curves;
use schedlab_analysis::units::Design;
use schedlab_analysis::{
    compare, CalibrationSet, Comparison, MetricFilter, RunInput, Settings, Side,
};

const HOSTILE: &str = r#"<script>alert(1)</script>&"'"#;

fn fingerprint(kernel: &str, run: i64) -> Fingerprint {
    Fingerprint {
        hostname: format!("host{HOSTILE}"),
        kernel_release: kernel.into(),
        kernel_cmdline: format!("root=/dev/vda1 {HOSTILE}"),
        boot_id: format!("boot-{kernel}-{run}"),
        cpu_model: "Test CPU".into(),
        online_cpu_count: 4,
        ..Fingerprint::default()
    }
}

/// The fake cases' one metric.
const USEC_PER_OP: MetricDef = MetricDef::primary("usec_per_op", "usec", Better::Lower);

/// A plan of 6 iterations of a fake case per value, in order.
fn fake_plan(values_usec: &[f64]) -> RunPlan {
    let workloads = values_usec
        .iter()
        .map(|v| {
            WorkloadSpec::Fake(FakeParams {
                value_usec: *v,
                ..FakeParams::default()
            })
        })
        .collect();
    RunPlan::new(None, None, 6, 0, workloads).unwrap()
}

/// A run of two fake cases (the second renamed to something hostile) with 6 iterations each;
/// `scale` multiplies every value, `latency` adds the wakeup workload's latency quantiles and max
/// to the first case.
fn run(id: i64, label: &str, kernel: &str, scale: f64, latency: bool) -> RunRecord {
    let plan = fake_plan(&[100.0, 200.0]);
    let cases = plan
        .cases
        .iter()
        .enumerate()
        .map(|(c, spec)| {
            let mut spec = spec.clone();
            if c == 1 {
                spec.name = format!("case {HOSTILE}");
            }
            let iterations = (0..6)
                .map(|i| {
                    let noise = (1.0 + (i % 3) as f64 * 0.002) * (1.0 + id as f64 * 0.001);
                    let mut measurements =
                        vec![USEC_PER_OP.value((100.0 + 100.0 * c as f64) * scale * noise)];
                    if latency && c == 0 {
                        let values = [5.0, 9.0, 40.0, 120.0, 900.0];
                        for (def, v) in wakeup::WAKEUP_QUANTILES.iter().zip(values) {
                            measurements.push(def.value(v * scale * noise));
                        }
                    }
                    IterationRecord {
                        index: i,
                        warmup: false,
                        started_at_ns: 1_700_000_000_000_000_000,
                        measurements,
                        attachments: Vec::new(),
                        quiet: None,
                    }
                })
                .collect();
            CaseRecord {
                spec,
                iterations,
                error: None,
            }
        })
        .collect();
    RunRecord {
        id: Some(id),
        label: Some(label.into()),
        plan,
        fingerprint: fingerprint(kernel, id),
        started_at_ns: 1_700_000_000_000_000_000,
        ended_at_ns: Some(1_700_000_060_000_000_000),
        status: if id == 2 {
            RunStatus::Failed
        } else {
            RunStatus::Complete
        },
        error: (id == 2).then(|| format!("iteration 3 failed: {HOSTILE}")),
        cases,
    }
}

fn page(latency: bool) -> (String, usize) {
    page_with(latency, |_| {})
}

/// The page of [`page`] after `edit` changed its model: a renderer prints what the model says.
fn page_with(latency: bool, edit: fn(&mut Comparison)) -> (String, usize) {
    // Two runs per side on one boot each, so every row is judged.
    let base = vec![
        run(1, "base", "6.18.0", 1.0, latency),
        run(3, "base", "6.18.0", 1.0, latency),
    ];
    let cand = vec![
        run(2, HOSTILE, "6.19.0", 1.05, latency),
        run(4, HOSTILE, "6.19.0", 1.05, latency),
    ];
    let filter = MetricFilter {
        names: vec!["usec_per_op".into()],
        all: false,
    };
    fn inputs(runs: &[RunRecord]) -> Vec<RunInput<'_>> {
        runs.iter()
            .map(|record| RunInput { record, tag: None })
            .collect()
    }
    // The failed candidate run is shown: its error text is one more hostile string.
    let settings = Settings {
        include_incomplete: true,
        ..Settings::default()
    };
    let mut c = compare(
        Side::from_runs("base", &inputs(&base), &filter, true),
        vec![Side::from_runs(HOSTILE, &inputs(&cand), &filter, true)],
        &CalibrationSet::default(),
        settings,
        None,
    );
    let every = MetricFilter::every_metric();
    c.latency_curves = curves(&[
        &Side::from_runs("base", &inputs(&base), &every, true),
        &Side::from_runs(HOSTILE, &inputs(&cand), &every, true),
    ]);
    edit(&mut c);
    let mut out = Vec::new();
    super::write(&c, &base, &[cand], &mut out).unwrap();
    (String::from_utf8(out).unwrap(), c.rows.len())
}

/// A side's `n` names what it counts: pairs, or boots where within-run pairs are averaged per
/// boot.
#[test]
fn the_table_counts_by_boot_pairs_as_boots() {
    let (html, rows) = page_with(false, |c| {
        for r in &mut c.rows {
            r.design = Design::Pairs;
            r.pairs_within_runs = true;
        }
    });
    assert_eq!(html.matches(" n=2 pairs</div>").count(), 2 * rows, "{html}");
    let (html, rows) = page_with(false, |c| {
        for r in &mut c.rows {
            r.design = Design::Pairs;
            r.pairs_within_runs = true;
            r.pairs_by_boot = true;
        }
    });
    assert_eq!(html.matches(" n=2 boots</div>").count(), 2 * rows, "{html}");
    assert!(!html.contains(" pairs</div>"));
}

#[test]
fn every_user_string_is_escaped() {
    let (html, _) = page(true);
    assert!(!html.contains("<script"), "no script element at all");
    assert!(!html.contains("alert(1)</script>"));
    let escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;";
    // Label (title, header, table, plots, fingerprint header, runs), case name, hostname,
    // command line and error text.
    assert!(html.matches(escaped).count() >= 10, "{html}");
    assert!(html.contains(&format!(
        "<title>schedlab report: {escaped} vs base</title>"
    )));
    assert!(html.contains(&format!("host{escaped}")));
    assert!(html.contains(&format!("root=/dev/vda1 {escaped}")));
    assert!(html.contains(&format!("iteration 3 failed: {escaped}")));
    assert!(html.contains(&format!("case {escaped}")));
}

#[test]
fn the_page_fetches_nothing() {
    let (html, _) = page(true);
    for needle in [
        "src=", "@import", "url(", "<link", "<script", "<iframe", "<img",
    ] {
        assert!(!html.contains(needle), "{needle}");
    }
    // The only URL is the SVG namespace, which is a name, not a fetch.
    let urls = html.matches("http").count();
    assert_eq!(urls, html.matches("http://www.w3.org/2000/svg").count());
}

#[test]
fn the_table_has_a_row_per_comparison_row_and_tags_balance() {
    let (html, rows) = page(false);
    assert_eq!(rows, 2);
    assert_eq!(html.matches(r#"<tr class="row "#).count(), rows);
    for (open, close) in [
        ("<section", "</section>"),
        ("<svg", "</svg>"),
        ("<table", "</table>"),
        ("<tr", "</tr>"),
        ("<figure", "</figure>"),
        ("<text", "</text>"),
    ] {
        assert_eq!(
            html.matches(open).count(),
            html.matches(close).count(),
            "{open}"
        );
    }
    let tds = html.matches("<td>").count() + html.matches("<td ").count();
    assert_eq!(tds, html.matches("</td>").count());
    assert!(html.starts_with("<!DOCTYPE html>") && html.ends_with("</html>\n"));
}

#[test]
fn forest_and_distributions_cover_every_row() {
    let (html, rows) = page(false);
    assert_eq!(html.matches(r#"class="ci""#).count(), rows);
    assert_eq!(html.matches(r#"<figure class="dist">"#).count(), rows);
    // One dot per run: two runs per side, two sides, per row.
    assert_eq!(html.matches(r#"class="sample""#).count(), rows * 4);
}

#[test]
fn latency_curves_appear_only_with_percentile_metrics() {
    let (without, _) = page(false);
    assert!(!without.contains(r#"id="latency""#));
    let (with, _) = page(true);
    assert!(with.contains(r#"id="latency""#));
    assert_eq!(with.matches(r#"<figure class="latency">"#).count(), 1);
    assert_eq!(with.matches(r#"class="latency-line""#).count(), 2);
    for label in ["p50", "p90", "p99", "p99.9", "max"] {
        assert!(with.contains(&format!(">{label}</text>")), "{label}");
    }
    // `show` prints other p99s of the same runs; the section says what its own are.
    assert!(with.contains(
        "each percentile's geometric mean over a run's iterations (each iteration's own \
         percentile), then the median over the side's runs"
    ));
}

/// A run of a fake matrix over value_usec (25, 50, 100, 200 µs): four cases that differ in that
/// parameter only, each value × `scale` with a little noise per iteration and run.
fn matrix_run(id: i64, label: &str, scale: f64) -> RunRecord {
    let values = [25.0, 50.0, 100.0, 200.0];
    let mut record = run(id, label, "6.18.0", scale, false);
    record.plan = fake_plan(&values);
    record.status = RunStatus::Complete;
    record.cases = record
        .plan
        .cases
        .iter()
        .zip(values)
        .map(|(spec, v)| CaseRecord {
            spec: spec.clone(),
            iterations: (0..6)
                .map(|i| IterationRecord {
                    index: i,
                    warmup: false,
                    started_at_ns: 1_700_000_000_000_000_000,
                    measurements: vec![USEC_PER_OP.value(
                        v * scale * (1.0 + (i % 3) as f64 * 0.002) * (1.0 + id as f64 * 0.001),
                    )],
                    attachments: Vec::new(),
                    quiet: None,
                })
                .collect(),
            error: None,
        })
        .collect();
    record
}

#[test]
fn a_matrix_gets_a_scaling_plot_with_a_line_per_side() {
    let base = vec![matrix_run(1, "base", 1.0), matrix_run(3, "base", 1.0)];
    let cand = vec![matrix_run(2, HOSTILE, 1.05), matrix_run(4, HOSTILE, 1.05)];
    fn inputs(runs: &[RunRecord]) -> Vec<RunInput<'_>> {
        runs.iter()
            .map(|record| RunInput { record, tag: None })
            .collect()
    }
    let c = compare(
        Side::from_runs("base", &inputs(&base), &MetricFilter::default(), false),
        vec![Side::from_runs(
            HOSTILE,
            &inputs(&cand),
            &MetricFilter::default(),
            false,
        )],
        &CalibrationSet::default(),
        Settings::default(),
        None,
    );
    assert_eq!(c.scaling.len(), 1);
    let mut out = Vec::new();
    super::write(&c, &base, &[cand], &mut out).unwrap();
    let html = String::from_utf8(out).unwrap();
    assert!(html.contains(r##"<a href="#scaling">Scaling</a>"##));
    assert!(html.contains(r#"<section id="scaling">"#));
    assert!(html.contains("<h3>fake over value_usec</h3>"));
    assert_eq!(html.matches(r#"<figure class="scaling-plot">"#).count(), 1);
    assert_eq!(html.matches(r#"class="scaling-line""#).count(), 2);
    // Every point of both sides has its interval; every candidate point is marked (+5.1 %).
    assert_eq!(html.matches(r#"class="scaling-ci""#).count(), 8);
    assert_eq!(html.matches(r#"class="scaling-mark""#).count(), 4);
    let table = html.split(r#"class="pct scaling-table""#).nth(1).unwrap();
    assert_eq!(table.matches("+5.1% **").count(), 4, "{table}");
    assert!(!html.contains("<script"));
    assert!(!html.contains("NaN"));
    // The page without a matrix has no such section.
    let (without, _) = page(false);
    assert!(!without.contains(r#"id="scaling""#));
}

#[test]
fn kernel_differences_are_marked_expected() {
    let (html, _) = page(false);
    let row = html.split(">kernel_release</th>").next().unwrap();
    assert!(
        row.ends_with(r#"<tr class="fp-expected"><th scope="row""#),
        "{}",
        &row[row.len() - 80..]
    );
    let row = html.split(">cpu_model</th>").next().unwrap();
    assert!(row.ends_with(r#"<tr class="fp-same"><th scope="row""#));
}
