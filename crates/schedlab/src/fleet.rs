//! What `history` and `changes` share: each case's history built from the runs' stored
//! summaries (never their iterations), and the changes in it, judged against the noise of the
//! newest run's machine.
use std::ops::ControlFlow;

use schedlab_analysis::history::{
    self, newest_taken, ChangeSettings, Changes, History, HistoryError, SummarisedRun,
};
use schedlab_analysis::{CalibrationSet, MachineKey};
use schedlab_stats::edivisive::EDivisiveSettings;
use schedlab_store::{CaseSeries, MetricChoice, RunSelection, SeriesQuery, Store};

use crate::cli::ChangeArgs;
use crate::comparison::{calibrations, CalibrationChoice};
use crate::failure::Failure;

/// The change-detection settings of the command line, checked.
pub fn change_settings(args: &ChangeArgs) -> Result<ChangeSettings, Failure> {
    if !(args.noise_multiple.is_finite() && args.noise_multiple >= 0.0) {
        return Err(Failure::bad_input("--noise-multiple must be 0 or more"));
    }
    if !(args.min_effect.is_finite() && args.min_effect >= 0.0 && args.min_effect < 100.0) {
        return Err(Failure::bad_input(
            "--min-effect must be a percentage from 0 to below 100",
        ));
    }
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(Failure::bad_input("--alpha must be between 0 and 1"));
    }
    if args.min_runs < 2 {
        return Err(Failure::bad_input("--min-runs must be at least 2"));
    }
    Ok(ChangeSettings {
        edivisive: EDivisiveSettings {
            alpha: args.alpha,
            min_segment: args.min_runs,
            ..EDivisiveSettings::default()
        },
        min_effect: args.min_effect / 100.0,
        noise_multiple: args.noise_multiple,
    })
}

/// How histories are judged: the settings, which calibrations apply, and the metric.
pub struct Judge<'a> {
    store: &'a dyn Store,
    settings: ChangeSettings,
    choice: CalibrationChoice,
    /// Read once for every history.
    calibrations: Option<CalibrationSet>,
    metric: Option<&'a str>,
    include_incomplete: bool,
}

impl<'a> Judge<'a> {
    pub fn new(
        store: &'a dyn Store,
        metric: Option<&'a str>,
        args: &ChangeArgs,
    ) -> Result<Self, Failure> {
        Ok(Judge {
            store,
            settings: change_settings(args)?,
            choice: CalibrationChoice::parse(&args.calibration)?,
            calibrations: None,
            metric,
            include_incomplete: args.include_incomplete,
        })
    }

    /// The series of the metric asked for (the primary ones by default) that `selection` takes:
    /// one per case (every case when `cases` is empty), or per host and case with `per_host`.
    pub fn query(&self, selection: &RunSelection, cases: &[String], per_host: bool) -> SeriesQuery {
        SeriesQuery {
            selection: selection.clone(),
            cases: cases.to_vec(),
            metrics: match self.metric {
                Some(name) => MetricChoice::Named(name.to_string()),
                None => MetricChoice::Primary,
            },
            per_host,
        }
    }

    /// A series' history and the changes in it, or why it has none apart from the failures: a
    /// caller looking through every stored case passes over one that no complete run measured,
    /// or that has no such metric.
    pub fn judge(
        &mut self,
        series: &CaseSeries,
    ) -> Result<Result<(History, Changes), HistoryError>, Failure> {
        let history = match self.history(series)? {
            Ok(history) => history,
            Err(e) => return Ok(Err(e)),
        };
        let newest = history.points.last().and_then(|p| p.run_id);
        let settings = self.settings;
        let calibrations = self.calibrations(newest)?;
        let changes = history::changes(&history, calibrations, &settings)
            .map_err(|e| Failure::failed(format!("change detection failed: {e}")))?;
        Ok(Ok((history, changes)))
    }

    fn history(&self, series: &CaseSeries) -> Result<Result<History, HistoryError>, Failure> {
        let runs = &series.runs;
        let machine = match newest_taken(runs, self.include_incomplete) {
            Some(i) => Some(self.machine(&runs[i])?),
            None => None,
        };
        let built = history::history_of(
            runs,
            &series.case,
            self.metric,
            self.include_incomplete,
            machine,
        );
        Ok(match built {
            // The series held the metrics asked for alone; the error names the case's others.
            Err(HistoryError::NoMetric { .. }) => Err(self.no_metric(series)?),
            other => other,
        })
    }

    fn machine(&self, run: &SummarisedRun) -> Result<MachineKey, Failure> {
        let id = run.id.unwrap_or_default();
        Ok(MachineKey::of(&self.store.fingerprint(id)?))
    }

    /// The error of a history without the metric asked for, naming every metric the case has.
    fn no_metric(&self, series: &CaseSeries) -> Result<HistoryError, Failure> {
        let selection = RunSelection {
            ids: Some(series.runs.iter().filter_map(|r| r.id).collect()),
            ..RunSelection::default()
        };
        let query = SeriesQuery {
            selection,
            cases: vec![series.case.clone()],
            metrics: MetricChoice::All,
            per_host: false,
        };
        let mut every = Vec::new();
        self.store.case_series(&query, &mut |s| {
            every = s.runs;
            ControlFlow::Break(())
        })?;
        let built = history::history_of(
            &every,
            &series.case,
            self.metric,
            self.include_incomplete,
            None,
        );
        Ok(built.err().unwrap_or(HistoryError::NoRuns {
            case: series.case.clone(),
        }))
    }

    /// The calibrations that apply, read once; with `--calibration ID`, checked against the
    /// machine of run `newest`.
    fn calibrations(&mut self, newest: Option<i64>) -> Result<&CalibrationSet, Failure> {
        if let CalibrationChoice::Id(_) = self.choice {
            // Each history's machine must be the calibration's.
            let fingerprint = newest.map(|id| self.store.fingerprint(id)).transpose()?;
            self.calibrations = Some(calibrations(
                self.store,
                &self.choice,
                fingerprint.as_ref(),
            )?);
        } else if self.calibrations.is_none() {
            self.calibrations = Some(calibrations(self.store, &self.choice, None)?);
        }
        Ok(self
            .calibrations
            .get_or_insert_with(CalibrationSet::default))
    }
}

/// `case`'s history on the selected runs, and the changes in it.
pub fn history_and_changes(
    store: &dyn Store,
    selection: &RunSelection,
    case: &str,
    metric: Option<&str>,
    args: &ChangeArgs,
) -> Result<(History, Changes), Failure> {
    let mut judge = Judge::new(store, metric, args)?;
    let query = judge.query(selection, &[case.to_string()], false);
    let mut found = None;
    store.case_series(&query, &mut |s| {
        found = Some(s);
        ControlFlow::Break(())
    })?;
    let series = found.unwrap_or(CaseSeries {
        case: case.to_string(),
        host: None,
        runs: Vec::new(),
    });
    judge
        .judge(&series)?
        .map_err(|e| Failure::bad_input(schedlab_report::refusals::history(&e)))
}
