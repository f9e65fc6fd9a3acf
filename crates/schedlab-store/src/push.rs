//! `schedlab push`: copies one store's runs, with everything they hold, into another — a test box
//! without a network into a file carried home, or every machine's file into the fleet's PostgreSQL.
//!
//! A run is recognised by its globally unique id, so pushing twice copies nothing twice and two
//! machines pushing into one store never collide. Each run is copied in one target transaction:
//! an interrupted push leaves the target with whole runs only, and the next push carries on. A
//! caller that is asked to stop (a signal) says so between runs, and the push ends there.
//! Experiments are matched by kind and name (and must be the same experiment: same creation time),
//! calibrations by creation time, host and label. Run ids are a store's own, so the ids that the
//! copied JSON holds — every `run_id` and `run_ids` in an experiment's state or a calibration — are
//! translated to the target's.
use std::collections::HashMap;
use std::ops::ControlFlow;

use schedlab_core::record::RunStatus;

use crate::{Experiment, Result, RunSummary, Store, StoreError, StoredCalibration};

/// What a push did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PushReport {
    /// Runs copied, as (source id, target id).
    pub copied: Vec<(i64, i64)>,
    /// Runs the target already had.
    pub already_there: usize,
    /// Runs still running in the source, left for a later push.
    pub still_running: Vec<i64>,
    /// Runs left out because their experiment conflicts with the target's, with why.
    pub conflicts: Vec<(i64, String)>,
    pub experiments_copied: usize,
    pub experiments_updated: usize,
    pub calibrations_copied: usize,
    pub calibrations_already_there: usize,
    /// The caller stopped the push between runs: the runs not yet looked at, their experiments'
    /// progress and the calibrations are left for the next push.
    pub stopped: bool,
}

/// Copies the runs of `source` that started at or after `since_ns` (all with `None`), oldest
/// first, then their experiments' progress and every calibration whose runs the target now has.
/// `keep_going` is asked, with the report so far, before each run; `Break` ends the push there,
/// after the last run's transaction and before the next one begins.
pub fn push(
    source: &dyn Store,
    target: &mut dyn Store,
    since_ns: Option<i64>,
    keep_going: &mut dyn FnMut(&PushReport) -> ControlFlow<()>,
) -> Result<PushReport> {
    let mut runs = source.list_runs(None)?;
    runs.reverse();
    let mut push = Push {
        source,
        target,
        report: PushReport::default(),
        target_ids: HashMap::new(),
        experiments: HashMap::new(),
    };
    for summary in runs {
        if keep_going(&push.report).is_break() {
            push.report.stopped = true;
            return Ok(push.report);
        }
        if since_ns.is_some_and(|since| summary.started_at_ns < since) {
            continue;
        }
        push.run(&summary)?;
    }
    push.update_experiments()?;
    copy_calibrations(source, push.target, &push.target_ids, &mut push.report)?;
    Ok(push.report)
}

/// One push under way: the stores and what it learnt of them so far.
struct Push<'s, 't> {
    source: &'s dyn Store,
    target: &'t mut dyn Store,
    report: PushReport,
    /// Run ids of the source and the target, for the ids that copied JSON holds.
    target_ids: HashMap<i64, i64>,
    /// Source experiment id to target experiment id; `None` when it conflicts.
    experiments: HashMap<i64, Option<i64>>,
}

impl Push<'_, '_> {
    /// Copies the source's run `summary` unless the target has it, it is still running or its
    /// experiment conflicts with the target's.
    fn run(&mut self, summary: &RunSummary) -> Result<()> {
        let provenance = self.source.run_provenance(summary.id)?;
        let Some(uuid) = provenance.uuid.clone() else {
            return Err(StoreError::NeedsUpgrade {
                path: self.source.describe().into(),
                version: 7,
                oldest: crate::schema::V_RUN_UUID,
            });
        };
        if let Some(id) = self.target.run_by_uuid(&uuid)? {
            self.target_ids.insert(summary.id, id);
            self.report.already_there += 1;
            return Ok(());
        }
        // A run still going would be copied half done and never again: it waits for its end.
        // An abandoned one (derived) is copied as stored.
        if summary.status == RunStatus::Running {
            self.report.still_running.push(summary.id);
            return Ok(());
        }
        let experiment_id = match &provenance.tag {
            None => None,
            Some(tag) => match self.experiment_of(summary.id, tag.experiment_id)? {
                Some(id) => Some(id),
                None => return Ok(()),
            },
        };
        let run = self.source.load_run(summary.id)?;
        match self.target.copy_run(&run, &provenance, experiment_id)? {
            Some(id) => {
                // Probed and profiled iterations follow, each in a transaction of its own.
                for (case_index, probe) in self.source.load_probes(summary.id)? {
                    self.target.record_probe(id, case_index, &probe)?;
                }
                self.target_ids.insert(summary.id, id);
                self.report.copied.push((summary.id, id));
            }
            // Another push copied it meanwhile.
            None => {
                if let Some(id) = self.target.run_by_uuid(&uuid)? {
                    self.target_ids.insert(summary.id, id);
                }
                self.report.already_there += 1;
            }
        }
        Ok(())
    }

    /// The target's id of the experiment (source id `experiment_id`) that run `run_id` is part
    /// of, or `None` when that experiment conflicts with the target's (and the run, noted among
    /// the conflicts, is not copied).
    fn experiment_of(&mut self, run_id: i64, experiment_id: i64) -> Result<Option<i64>> {
        let mapped = match self.experiments.get(&experiment_id) {
            Some(mapped) => *mapped,
            None => {
                let mapped =
                    target_experiment(self.source, self.target, experiment_id, &mut self.report)?;
                self.experiments
                    .insert(experiment_id, mapped.as_ref().ok().copied());
                if let Err(why) = &mapped {
                    self.report.conflicts.push((run_id, why.clone()));
                    return Ok(None);
                }
                mapped.ok()
            }
        };
        if mapped.is_none() && !self.report.conflicts.iter().any(|(id, _)| *id == run_id) {
            self.report
                .conflicts
                .push((run_id, "its experiment conflicts with the target's".into()));
        }
        Ok(mapped)
    }

    /// Experiments' progress (a campaign's slots, an A/B's visits), in the target's run ids.
    fn update_experiments(&mut self) -> Result<()> {
        for (source_id, target_id) in &self.experiments {
            let (Some(target_id), Some(theirs)) =
                (target_id, self.source.experiment_by_id(*source_id)?)
            else {
                continue;
            };
            let Some(ours) = self.target.experiment_by_id(*target_id)? else {
                continue;
            };
            let state = translate(&theirs.state, &self.target_ids);
            if ours.state != state || ours.status != theirs.status {
                self.target
                    .update_experiment(*target_id, &state, theirs.status)?;
                self.report.experiments_updated += 1;
            }
        }
        Ok(())
    }
}

/// The target's id of the source's experiment `id`, created there when new; `Err` with why when
/// the target holds another experiment of that kind and name.
fn target_experiment(
    source: &dyn Store,
    target: &mut dyn Store,
    id: i64,
    report: &mut PushReport,
) -> Result<std::result::Result<i64, String>> {
    let theirs = source
        .experiment_by_id(id)?
        .ok_or_else(|| StoreError::Corrupt(format!("experiment {id} is missing")))?;
    if let Some(ours) = target.experiment(theirs.kind, &theirs.name)? {
        return Ok(
            if ours.created_at_ns == theirs.created_at_ns && ours.spec == theirs.spec {
                Ok(ours.id.unwrap_or_default())
            } else {
                Err(format!(
                    "the target has another {} named {:?}",
                    theirs.kind.as_str(),
                    theirs.name
                ))
            },
        );
    }
    // Created with the state it starts from; the translated state follows once its runs are in.
    let created = target.create_experiment(&Experiment {
        id: None,
        state: translate(&theirs.state, &HashMap::new()),
        ..theirs
    })?;
    report.experiments_copied += 1;
    Ok(Ok(created))
}

fn copy_calibrations(
    source: &dyn Store,
    target: &mut dyn Store,
    target_ids: &HashMap<i64, i64>,
    report: &mut PushReport,
) -> Result<()> {
    let theirs = source.calibrations()?;
    if theirs.is_empty() {
        return Ok(());
    }
    let ours = target.calibrations()?;
    for c in theirs.into_iter().rev() {
        let here = ours.iter().any(|o| {
            o.created_at_ns == c.created_at_ns && o.hostname == c.hostname && o.label == c.label
        });
        if here {
            report.calibrations_already_there += 1;
            continue;
        }
        // A calibration is copied once the target holds every run it was computed from.
        if !c.run_ids.iter().all(|id| target_ids.contains_key(id)) {
            continue;
        }
        let mut model = translate(&c.model, target_ids);
        if let Some(id) = model.get_mut("id") {
            // The calibration's id in the source; the target gives it its own.
            *id = serde_json::Value::Null;
        }
        target.save_calibration(&StoredCalibration {
            id: None,
            run_ids: c.run_ids.iter().map(|id| target_ids[id]).collect(),
            model,
            ..c
        })?;
        report.calibrations_copied += 1;
    }
    Ok(())
}

/// `value` with every `run_id` (a number) and `run_ids` (numbers) translated by `ids`. What names
/// a run the map lacks is left out — an id from `run_ids`, an object with that `run_id` from the
/// list holding it — so no copied JSON names a run of another store, and a campaign's slots say
/// what the target holds.
pub fn translate(value: &serde_json::Value, ids: &HashMap<i64, i64>) -> serde_json::Value {
    use serde_json::Value;
    let mapped = |v: &Value| v.as_i64().and_then(|id| ids.get(&id)).copied();
    let names_a_missing_run = |v: &Value| {
        v.get("run_id")
            .is_some_and(|id| id.is_number() && mapped(id).is_none())
    };
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, v)| {
                    let v = match (key.as_str(), v) {
                        ("run_id", Value::Number(_)) => mapped(v).map_or(Value::Null, Value::from),
                        ("run_ids", Value::Array(list)) => {
                            Value::Array(list.iter().filter_map(mapped).map(Value::from).collect())
                        }
                        _ => translate(v, ids),
                    };
                    (key.clone(), v)
                })
                .collect(),
        ),
        Value::Array(list) => Value::Array(
            list.iter()
                .filter(|v| !names_a_missing_run(v))
                .map(|v| translate(v, ids))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_in_copied_json_name_the_targets_runs() {
        let ids: HashMap<i64, i64> = [(1, 101), (2, 102)].into();
        let state = serde_json::json!({
            "slots": [{"run_id": 1, "arm": "a"}, {"run_id": 2}, {"run_id": 3}],
            "run_ids": [2, 3, 1],
            "visits_done": 2,
        });
        assert_eq!(
            translate(&state, &ids),
            serde_json::json!({
                "slots": [{"run_id": 101, "arm": "a"}, {"run_id": 102}],
                "run_ids": [102, 101],
                "visits_done": 2,
            })
        );
    }
}
