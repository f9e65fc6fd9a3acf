//! `schedlab changes [CASE…]`: the change points in each case's history on the selected
//! machine — or, with `--all-hosts`, on every selected machine, host by host — with the first run
//! and kernel after each. Histories come from the runs' stored summaries one at a time, so a
//! fleet's are judged in the memory of one host's.
use std::ops::ControlFlow;
use std::process::ExitCode;

use schedlab_analysis::history::{Changes, HistoryError};
use schedlab_report::history as render;
use schedlab_report::refusals;

use crate::cli::{ChangesArgs, HistoryFormat};
use crate::failure::Failure;
use crate::fleet::Judge;
use crate::output::{emit, say};
use crate::select::selection;
use crate::store_path::{db_location, open_reader};

pub fn changes(args: &ChangesArgs) -> Result<ExitCode, Failure> {
    let selection = selection(&args.select)?;
    let store = open_reader(&db_location(&args.db)?)?;
    let mut judge = Judge::new(&*store, args.metric.as_deref(), &args.change)?;
    let query = judge.query(&selection, &args.cases, args.all_hosts);
    let mut found = Found::new(!args.cases.is_empty());
    let mut failed = None;
    store.case_series(&query, &mut |series| match judge.judge(&series) {
        Ok(judged) => match found.add(judged) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                failed = Some(e);
                ControlFlow::Break(())
            }
        },
        Err(e) => {
            failed = Some(e);
            ControlFlow::Break(())
        }
    })?;
    if let Some(failure) = failed {
        return Err(failure);
    }
    let all = found.finish()?;
    emit(|out| match args.format {
        HistoryFormat::Text => render::write_changes_text(&all, out),
        HistoryFormat::Csv => render::write_changes_csv(&all, out),
        HistoryFormat::Json => {
            schedlab_report::json::write_versioned(&serde_json::json!({ "changes": all }), out)
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

/// The changes found so far, and why the histories without any were passed over. Histories
/// themselves are not kept: each is judged and dropped.
struct Found {
    /// Cases named on the command line must each have a history.
    listed: bool,
    all: Vec<Changes>,
    without_metric: Option<HistoryError>,
    passed_over: Vec<HistoryError>,
}

impl Found {
    fn new(listed: bool) -> Self {
        Found {
            listed,
            all: Vec::new(),
            without_metric: None,
            passed_over: Vec::new(),
        }
    }

    fn add(
        &mut self,
        judged: Result<(schedlab_analysis::history::History, Changes), HistoryError>,
    ) -> Result<(), Failure> {
        match judged {
            Ok((_, changes)) => self.all.push(changes),
            // Of every stored case, those only interrupted or abandoned runs measured (or
            // without the metric) have none to look at.
            Err(e @ HistoryError::ManyHosts(_)) => {
                return Err(Failure::bad_input(refusals::history(&e)))
            }
            Err(e) if self.listed => return Err(Failure::bad_input(refusals::history(&e))),
            Err(e @ HistoryError::NoMetric { .. }) => {
                self.without_metric.get_or_insert(e);
            }
            Err(HistoryError::NoRuns { .. }) => {}
            // One damaged case does not hide the others' changes; it is named.
            Err(e @ HistoryError::NotFinite { .. }) => self.passed_over.push(e),
        }
        Ok(())
    }

    /// Every history's changes, or why there are none to show.
    fn finish(self) -> Result<Vec<Changes>, Failure> {
        if self.all.is_empty() {
            return Err(Failure::bad_input(match self.without_metric {
                _ if !self.passed_over.is_empty() => {
                    let others = match self.passed_over.len() - 1 {
                        0 => String::new(),
                        1 => " (and 1 other case likewise)".into(),
                        n => format!(" (and {n} other cases likewise)"),
                    };
                    format!(
                        "{}{others}; nothing else to look at",
                        refusals::history(&self.passed_over[0])
                    )
                }
                Some(e) => refusals::history(&e),
                None => "no complete stored run matches; nothing to look at \
                         (--include-incomplete takes the others)"
                    .to_string(),
            }));
        }
        for e in &self.passed_over {
            say(format_args!("{}: passed over", refusals::history(e)));
        }
        Ok(self.all)
    }
}
