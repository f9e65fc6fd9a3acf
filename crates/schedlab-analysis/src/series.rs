//! A comparison's sides as the analysis sees them: each side's runs (who ran them, on which boot,
//! in which experiment round, how they ended) and, per case × metric, each run's measured values.
//! Nothing is summarised here; the units a row is judged on are chosen in [`crate::units`].
use std::collections::{HashMap, HashSet};

use serde::Serialize;

use schedlab_core::metric::{Better, Measurement, MetricShape, Restates, Role};
use schedlab_core::plan::CaseSpec;
use schedlab_core::record::{Arm, ExperimentTag, RunRecord, RunStatus};
use schedlab_core::workload::WorkloadSpec;

use crate::machine::MachineKey;

/// A stored run with its place in an interleaved experiment, as the loader hands it over.
#[derive(Debug, Clone, Copy)]
pub struct RunInput<'a> {
    pub record: &'a RunRecord,
    pub tag: Option<ExperimentTag>,
}

/// Why a side left a run out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Exclusion {
    /// It did not complete (and `--include-incomplete` was not given).
    Incomplete,
    /// The quiet-machine guard marked every one of its measured iterations disturbed, and
    /// `--drop-disturbed` left them out.
    AllDisturbed,
}

/// What the analysis keeps of a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMeta {
    pub id: Option<i64>,
    pub boot_id: String,
    pub kernel: String,
    pub status: RunStatus,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub experiment_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arm: Option<Arm>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub round: Option<u32>,
    /// The machine's hardware-and-tuning key (`None` for plain numbers).
    #[serde(skip)]
    /// Boxed: `schedlab stat` makes a run of every number it reads, and most runs are alike.
    pub machine: Option<Box<MachineKey>>,
    /// The build or tool that measured the run
    /// ([`schedlab_core::fingerprint::Fingerprint::measured_by`]).
    #[serde(skip)]
    pub measured_by: Option<String>,
    /// Read from a tool's output by `schedlab import`: its machine fields are what was known,
    /// empty where nothing was.
    #[serde(skip)]
    pub imported: bool,
    /// When the run started, nanoseconds since the Unix epoch; 0 where not known (plain numbers,
    /// tests' runs).
    #[serde(skip)]
    pub started_at_ns: i64,
    /// Iterations the run measured, over all its cases, as `schedlab runs` counts them: with
    /// `--until-ci` more than its plan asked for.
    pub measured_iterations: usize,
    /// Warm-up iterations it ran, over all its cases.
    pub warmup_iterations: usize,
    /// Of its measured iterations, those the quiet-machine guard marked disturbed.
    #[serde(skip_serializing_if = "is_zero")]
    pub disturbed_iterations: usize,
    /// Why the side left it out, when it did.
    #[serde(skip)]
    pub left_out: Option<Exclusion>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl RunMeta {
    /// What the analysis keeps of a stored run.
    pub fn of(input: RunInput<'_>) -> RunMeta {
        let run = input.record;
        let iterations = || run.cases.iter().flat_map(|case| &case.iterations);
        RunMeta {
            id: run.id,
            boot_id: run.fingerprint.boot_id.clone(),
            kernel: run.fingerprint.kernel_release.clone(),
            status: run.status,
            experiment_id: input.tag.map(|t| t.experiment_id),
            arm: input.tag.map(|t| t.arm),
            round: input.tag.map(|t| t.round),
            machine: Some(Box::new(MachineKey::of(&run.fingerprint))),
            measured_by: run.fingerprint.measured_by(),
            imported: run.fingerprint.imported.is_some(),
            started_at_ns: run.started_at_ns,
            measured_iterations: iterations().filter(|i| !i.warmup).count(),
            warmup_iterations: iterations().filter(|i| i.warmup).count(),
            disturbed_iterations: iterations().filter(|i| !i.warmup && i.disturbed()).count(),
            left_out: None,
        }
    }
}

impl Default for RunMeta {
    /// A complete run that nothing is known about: plain numbers, or a test's run.
    fn default() -> Self {
        RunMeta {
            id: None,
            boot_id: String::new(),
            kernel: String::new(),
            status: RunStatus::Complete,
            experiment_id: None,
            arm: None,
            round: None,
            machine: None,
            measured_by: None,
            imported: false,
            started_at_ns: 0,
            measured_iterations: 0,
            warmup_iterations: 0,
            disturbed_iterations: 0,
            left_out: None,
        }
    }
}

/// Where a side's numbers came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// Stored runs.
    Runs,
    /// Plain numbers (`schedlab stat`): every value is taken as one independent unit.
    Values,
}

/// A case as shown in schedtests-style tables: the configuration and the load.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseLabel {
    pub name: String,
    pub short: String,
    pub load: String,
}

/// One metric of one case on one side: each run's measured (non-warm-up) values.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub case: CaseLabel,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    /// What one value is, as the first run measuring the metric stored it; plain numbers are
    /// scalars.
    pub shape: MetricShape,
    /// What a quantile or max summarises (see `schedlab_core::metric::MetricDef`).
    pub distribution: Option<String>,
    /// The metric of the case this one restates, as its workload declares it now (`ops_per_sec`
    /// the reciprocal of `usec_per_op`): one effect, tested once.
    pub restates: Option<Restates>,
    /// (index into [`Side::runs`], that run's values), in the side's run order.
    pub runs: Vec<(usize, Vec<f64>)>,
}

impl Series {
    /// A series of numbers given by hand rather than measured (files, tests, simulations): a
    /// case that is its own short name with no load, a scalar metric without a unit, no runs
    /// yet.
    fn given(case: String, metric: String, better: Better) -> Series {
        Series {
            case: CaseLabel {
                name: case.clone(),
                short: case,
                load: "-".into(),
            },
            metric,
            unit: String::new(),
            better,
            shape: MetricShape::Scalar,
            distribution: None,
            restates: None,
            runs: Vec::new(),
        }
    }
}

/// One side of a comparison.
#[derive(Debug, Clone)]
pub struct Side {
    pub name: String,
    pub origin: Origin,
    pub runs: Vec<RunMeta>,
    /// Runs the side named but the analysis left out (incomplete ones, unless asked for).
    pub excluded: Vec<RunMeta>,
    /// In the order cases and metrics first appear.
    pub series: Vec<Series>,
    /// Whether the iterations the quiet-machine guard marked disturbed were left out.
    pub disturbed_dropped: bool,
    /// The spec of each case the kept runs ran, one per name in the order names first appear;
    /// empty for plain numbers. Scaling series are found from their parameters.
    pub cases: Vec<CaseSpec>,
}

/// Which metrics a comparison covers.
#[derive(Debug, Clone, Default)]
pub struct MetricFilter {
    /// Metric names; empty means every primary metric (or every metric with `all`).
    pub names: Vec<String>,
    pub all: bool,
}

impl MetricFilter {
    pub fn every_metric() -> Self {
        MetricFilter {
            names: Vec::new(),
            all: true,
        }
    }

    /// Whether the metric `name` is covered; a name asked for may be one the metric had before a
    /// rename (`--metric rps_p50` is `requests_p50_per_sec`).
    pub fn accepts(&self, name: &str, role: Role) -> bool {
        if !self.names.is_empty() {
            return self
                .names
                .iter()
                .any(|n| schedlab_core::metric::current_name(n) == name);
        }
        self.all || role == Role::Primary
    }
}

/// One case × metric of [`Side::from_run_values`]: case, metric, direction, and per run its
/// (boot id, measured values).
pub type RunValuesSeries = (String, String, Better, Vec<(String, Vec<f64>)>);

impl Side {
    /// A side made of stored runs. Runs that did not complete are left out (and listed in
    /// `excluded`) unless `include_incomplete`: an interrupted run's iterations saw conditions
    /// its missing ones did not.
    pub fn from_runs(
        name: &str,
        inputs: &[RunInput<'_>],
        metrics: &MetricFilter,
        include_incomplete: bool,
    ) -> Side {
        let mut builder = SideBuilder::new(name, metrics.clone(), include_incomplete);
        for input in inputs {
            builder.add_run(*input);
        }
        builder.finish()
    }

    /// A side of plain numbers (for `schedlab stat` and tests): per case × metric, the values,
    /// each taken as one independent unit. The side has one run record, of no run and no boot, and
    /// each series one entry holding all its values, whatever their count: a million values
    /// would otherwise carry a million empty records and a million one-value lists.
    pub fn from_values(name: &str, series: Vec<(String, String, Better, Vec<f64>)>) -> Side {
        let any = series.iter().any(|s| !s.3.is_empty());
        let runs = if any {
            vec![RunMeta::default()]
        } else {
            Vec::new()
        };
        let series = series
            .into_iter()
            .map(|(case, metric, better, values)| Series {
                runs: vec![(0, values)],
                ..Series::given(case, metric, better)
            })
            .collect();
        Side {
            runs,
            series,
            ..Side::empty(name, Origin::Values)
        }
    }

    /// A side named `name` with nothing in it yet.
    pub(crate) fn empty(name: &str, origin: Origin) -> Side {
        Side {
            name: name.to_string(),
            origin,
            runs: Vec::new(),
            excluded: Vec::new(),
            series: Vec::new(),
            disturbed_dropped: false,
            cases: Vec::new(),
        }
    }

    /// A side of runs given as values (for tests and simulations): per case × metric, per run
    /// (boot id, values). The runs' machine is [`MachineKey::default`], so calibrations made for
    /// that key apply.
    pub fn from_run_values(name: &str, series: Vec<RunValuesSeries>) -> Side {
        let mut side = Side::empty(name, Origin::Runs);
        for (case, metric, better, runs) in series {
            let mut entry = Series::given(case, metric, better);
            for (i, (boot, values)) in runs.into_iter().enumerate() {
                if side.runs.len() <= i {
                    side.runs.push(RunMeta {
                        id: Some(i as i64 + 1),
                        boot_id: boot,
                        machine: Some(Box::default()),
                        ..RunMeta::default()
                    });
                }
                entry.runs.push((i, values));
            }
            side.series.push(entry);
        }
        side
    }

    pub fn get(&self, case: &str, metric: &str) -> Option<&Series> {
        self.series
            .iter()
            .find(|s| s.case.name == case && s.metric == metric)
    }

    /// A series of this side in the groups summarised alone: each run's values, or on a values
    /// side each value by itself.
    pub fn groups<'a>(&self, series: &'a Series) -> Box<dyn Iterator<Item = &'a [f64]> + 'a> {
        let lists = series.runs.iter().map(|(_, v)| v.as_slice());
        match self.origin {
            Origin::Values => Box::new(lists.flat_map(|v| v.chunks(1))),
            Origin::Runs => Box::new(lists.filter(|v| !v.is_empty())),
        }
    }

    /// Distinct boot ids of the side's runs, in order of appearance.
    pub fn boots(&self) -> Vec<&str> {
        let mut boots: Vec<&str> = Vec::new();
        for run in &self.runs {
            if !boots.contains(&run.boot_id.as_str()) {
                boots.push(&run.boot_id);
            }
        }
        boots
    }

    pub fn kernels(&self) -> Vec<&str> {
        let mut kernels: Vec<&str> = Vec::new();
        for run in &self.runs {
            if !run.kernel.is_empty() && !kernels.contains(&run.kernel.as_str()) {
                kernels.push(&run.kernel);
            }
        }
        kernels
    }
}

/// A [`Side`] of stored runs built one run at a time, so a caller can drop each run's
/// measurements once they are in the side: a comparison of hundreds of runs then never holds them
/// all. Series and cases are found by name through indexes, as a side of a 48-case matrix
/// with every metric has hundreds of series and each run brings thousands of values.
pub struct SideBuilder {
    side: Side,
    takes: Takes,
    include_incomplete: bool,
    /// The position in `side.series` of each metric of each case, by case name, then metric
    /// name: looked up with borrowed names, as the lookup is made for every value.
    series_at: HashMap<String, HashMap<String, usize>>,
    /// The names in `side.cases`.
    case_names: HashSet<String>,
}

impl SideBuilder {
    /// An empty side of the runs [`SideBuilder::add_run`] will add, with the metrics `metrics`
    /// takes; see [`Side::from_runs`].
    pub fn new(name: &str, metrics: MetricFilter, include_incomplete: bool) -> Self {
        SideBuilder {
            side: Side::empty(name, Origin::Runs),
            takes: Takes::Metrics(metrics),
            include_incomplete,
            series_at: HashMap::new(),
            case_names: HashSet::new(),
        }
    }

    /// Leaves out, with `drop`, the iterations the quiet-machine guard marked disturbed, and the
    /// runs whose every measured iteration it marked.
    pub fn dropping_disturbed(mut self, drop: bool) -> Self {
        self.side.disturbed_dropped = drop;
        self
    }

    /// An empty side that takes only the quantiles and maxima of distributions, whatever their
    /// role: all that latency curves are drawn from ([`crate::latency::curves`]).
    pub fn of_distributions(name: &str, include_incomplete: bool) -> Self {
        SideBuilder {
            takes: Takes::Distributions,
            ..SideBuilder::new(name, MetricFilter::default(), include_incomplete)
        }
    }

    /// Adds the run after those added before it.
    pub fn add_run(&mut self, input: RunInput<'_>) {
        let run = input.record;
        let mut meta = RunMeta::of(input);
        if run.status != RunStatus::Complete && !self.include_incomplete {
            meta.left_out = Some(Exclusion::Incomplete);
            self.side.excluded.push(meta);
            return;
        }
        let drop = self.side.disturbed_dropped;
        if drop
            && meta.measured_iterations > 0
            && meta.disturbed_iterations == meta.measured_iterations
        {
            meta.left_out = Some(Exclusion::AllDisturbed);
            self.side.excluded.push(meta);
            return;
        }
        let run_index = self.side.runs.len();
        self.side.runs.push(meta);
        for case in run.cases_as_listed() {
            if !self.case_names.contains(&case.spec.name) {
                self.case_names.insert(case.spec.name.clone());
                self.side.cases.push(case.spec.clone());
            }
            // The label is needed only for a series this case has not had yet.
            let mut label = None;
            for iteration in case.measured().filter(|it| !(drop && it.disturbed())) {
                for m in &iteration.measurements {
                    if !self.takes.takes(m) {
                        continue;
                    }
                    let series = self.series_mut(&case.spec, &mut label, m);
                    match series.runs.last_mut() {
                        Some((i, values)) if *i == run_index => values.push(m.value),
                        _ => series.runs.push((run_index, vec![m.value])),
                    }
                }
            }
        }
    }

    /// The series of `m`'s metric in the case, new (described as `m` is) if it has none yet.
    fn series_mut(
        &mut self,
        case: &CaseSpec,
        label: &mut Option<CaseLabel>,
        m: &Measurement,
    ) -> &mut Series {
        let known = self
            .series_at
            .get(&case.name)
            .and_then(|metrics| metrics.get(&m.name));
        let index = match known {
            Some(&index) => index,
            None => self.new_series(case, label, m),
        };
        &mut self.side.series[index]
    }

    /// Adds the series of `m`'s metric in the case, described as `m` is; returns its position.
    fn new_series(
        &mut self,
        case: &CaseSpec,
        label: &mut Option<CaseLabel>,
        m: &Measurement,
    ) -> usize {
        let index = self.side.series.len();
        self.series_at
            .entry(case.name.clone())
            .or_default()
            .insert(m.name.clone(), index);
        let label = label.get_or_insert_with(|| case_label(&case.name, &case.workload));
        self.side.series.push(Series {
            case: label.clone(),
            metric: m.name.clone(),
            unit: m.unit.clone(),
            better: m.better,
            shape: m.shape,
            distribution: m.distribution.clone(),
            restates: case.workload.restates(&m.name),
            runs: Vec::new(),
        });
        index
    }

    /// The side of the runs added, in the order they were.
    pub fn finish(self) -> Side {
        self.side
    }
}

/// Which measurements a [`SideBuilder`] takes.
enum Takes {
    Metrics(MetricFilter),
    Distributions,
}

impl Takes {
    fn takes(&self, m: &Measurement) -> bool {
        match self {
            Takes::Metrics(filter) => filter.accepts(&m.name, m.role),
            Takes::Distributions => m.shape.of_distribution(),
        }
    }
}

/// schedtests' "case" and "load" columns of a case, as its workload defines them (hackbench's
/// groups are a load; most workloads have none and show `-`).
pub fn case_label(name: &str, workload: &WorkloadSpec) -> CaseLabel {
    let label = workload.comparison_label(name);
    CaseLabel {
        name: name.to_string(),
        short: label.short,
        load: label.load,
    }
}

#[cfg(test)]
mod tests {
    use schedlab_core::record::{Arm, CaseRecord, ExperimentTag, RunRecord, RunStatus};

    use super::*;
    use crate::testutil::{record, PRIMARY, SECONDARY};

    fn inputs(records: &[RunRecord]) -> Vec<RunInput<'_>> {
        records
            .iter()
            .map(|record| RunInput { record, tag: None })
            .collect()
    }

    fn ids(runs: &[RunMeta]) -> Vec<i64> {
        runs.iter().map(|r| r.id.unwrap()).collect()
    }

    #[test]
    fn a_shuffled_runs_cases_read_in_the_order_they_were_listed() {
        use schedlab_core::plan::RunPlan;
        use schedlab_core::record::IterationRecord;
        use schedlab_core::workload::fake::FakeParams;

        let specs = (1..=6)
            .map(|i| {
                WorkloadSpec::Fake(FakeParams {
                    value_usec: f64::from(i),
                    ..FakeParams::default()
                })
            })
            .collect();
        let listed = RunPlan::new(None, None, 1, 0, specs).unwrap();
        let names = |cases: &[CaseSpec]| cases.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
        let plan = listed.clone().shuffled(7);
        assert_ne!(names(&plan.cases), names(&listed.cases));
        let measured = IterationRecord {
            index: 0,
            warmup: false,
            started_at_ns: 0,
            measurements: vec![crate::testutil::PRIMARY_METRIC.value(1.0)],
            attachments: Vec::new(),
            quiet: None,
        };
        let cases = plan
            .cases
            .iter()
            .map(|spec| CaseRecord {
                spec: spec.clone(),
                iterations: vec![measured.clone()],
                error: None,
            })
            .collect();
        let run = crate::testutil::stored_run(1, "b", RunStatus::Complete, plan, cases);
        let side = Side::from_runs("a", &inputs(&[run]), &MetricFilter::default(), false);
        let series: Vec<String> = side.series.iter().map(|s| s.case.name.clone()).collect();
        assert_eq!(series, names(&listed.cases));
        assert_eq!(names(&side.cases), names(&listed.cases));
    }

    #[test]
    fn a_side_of_distributions_takes_their_quantiles_and_maxima_whatever_their_role() {
        use schedlab_core::metric::MetricDef;
        const P99: MetricDef =
            MetricDef::secondary("wait_p99_usec", "usec", Better::Lower).quantile("wait", 99.0);
        const MAX: MetricDef =
            MetricDef::primary("wait_max_usec", "usec", Better::Lower).max_of("wait");
        let mut run = record(1, "b", RunStatus::Complete, &[("case", &[1.0, 2.0])]);
        for iteration in &mut run.cases[0].iterations {
            iteration.measurements.push(P99.value(30.0));
            iteration.measurements.push(MAX.value(40.0));
        }
        let mut builder = SideBuilder::of_distributions("s", false);
        builder.add_run(RunInput {
            record: &run,
            tag: None,
        });
        let side = builder.finish();
        let metrics: Vec<&str> = side.series.iter().map(|s| s.metric.as_str()).collect();
        assert_eq!(metrics, ["wait_p99_usec", "wait_max_usec"]);
        assert_eq!(side.series[1].runs, vec![(0, vec![40.0, 40.0])]);
        assert_eq!(ids(&side.runs), vec![1]);
    }

    fn five_runs() -> Vec<RunRecord> {
        vec![
            record(1, "b", RunStatus::Complete, &[("case", &[10.0, 11.0])]),
            record(2, "b", RunStatus::Interrupted, &[("case", &[20.0])]),
            record(3, "b", RunStatus::Failed, &[("case", &[30.0, 31.0])]),
            record(4, "b", RunStatus::Complete, &[("case", &[40.0, 41.0])]),
            record(5, "b", RunStatus::Running, &[("case", &[50.0])]),
        ]
    }

    #[test]
    fn runs_that_did_not_complete_are_left_out_and_listed() {
        let records = five_runs();
        let side = Side::from_runs("base", &inputs(&records), &MetricFilter::default(), false);
        assert_eq!(ids(&side.runs), vec![1, 4]);
        assert_eq!(ids(&side.excluded), vec![2, 3, 5]);
        let statuses: Vec<RunStatus> = side.excluded.iter().map(|r| r.status).collect();
        assert_eq!(
            statuses,
            vec![
                RunStatus::Interrupted,
                RunStatus::Failed,
                RunStatus::Running
            ]
        );
        // None of their values reaches the series, and the indices point at kept runs.
        let series = side.get("case", PRIMARY).unwrap();
        assert_eq!(
            series.runs,
            vec![(0, vec![10.0, 11.0]), (1, vec![40.0, 41.0])]
        );
    }

    #[test]
    fn include_incomplete_keeps_every_run() {
        let records = five_runs();
        let side = Side::from_runs("base", &inputs(&records), &MetricFilter::default(), true);
        assert_eq!(ids(&side.runs), vec![1, 2, 3, 4, 5]);
        assert!(side.excluded.is_empty());
        let series = side.get("case", PRIMARY).unwrap();
        assert_eq!(series.runs.len(), 5);
        assert_eq!(series.runs[1], (1, vec![20.0]));
        assert_eq!(side.runs[2].status, RunStatus::Failed);
    }

    #[test]
    fn warm_ups_are_not_values_and_the_filter_picks_the_metrics() {
        let records = [record(
            1,
            "b",
            RunStatus::Complete,
            &[("case", &[1.0, 2.0])],
        )];
        let primary = Side::from_runs("s", &inputs(&records), &MetricFilter::default(), false);
        // The warm-up iteration's 1e9 is stored but never measured.
        assert_eq!(primary.series.len(), 1);
        assert_eq!(primary.series[0].runs, vec![(0, vec![1.0, 2.0])]);
        let every = Side::from_runs("s", &inputs(&records), &MetricFilter::every_metric(), false);
        assert_eq!(every.series.len(), 2);
        assert_eq!(
            every.get("case", SECONDARY).unwrap().runs[0].1,
            vec![7.0; 2]
        );
        let named = MetricFilter {
            names: vec![SECONDARY.into()],
            all: false,
        };
        let named = Side::from_runs("s", &inputs(&records), &named, false);
        assert_eq!(named.series.len(), 1);
        assert_eq!(named.series[0].metric, SECONDARY);
    }

    #[test]
    fn runs_keep_their_boot_tag_and_machine() {
        let records = [
            record(1, "boot-x", RunStatus::Complete, &[("case", &[1.0])]),
            record(2, "boot-y", RunStatus::Complete, &[("case", &[1.0])]),
            record(3, "boot-x", RunStatus::Complete, &[("case", &[1.0])]),
        ];
        let tag = ExperimentTag {
            experiment_id: 9,
            arm: Arm::B,
            round: 4,
        };
        let inputs = [
            RunInput {
                record: &records[0],
                tag: Some(tag),
            },
            RunInput {
                record: &records[1],
                tag: None,
            },
            RunInput {
                record: &records[2],
                tag: None,
            },
        ];
        let side = Side::from_runs("s", &inputs, &MetricFilter::default(), false);
        let first = &side.runs[0];
        assert_eq!(
            (first.experiment_id, first.arm, first.round),
            (Some(9), Some(Arm::B), Some(4))
        );
        assert_eq!(side.runs[1].round, None);
        assert_eq!(
            first.machine.as_deref(),
            Some(&MachineKey::of(&records[0].fingerprint))
        );
        assert_eq!(side.boots(), vec!["boot-x", "boot-y"]);
    }
}
