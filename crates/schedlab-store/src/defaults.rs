//! The selections of runs and hosts from [`Store::list_runs`] and [`Store::load_run`] alone:
//! what every backend has, and what a backend's own faster query must answer the same as (the
//! store's tests hold every backend to these).
use crate::select::{HostSummary, RunSelection};
use crate::store::Store;
use crate::{Result, RunSummary};

/// [`Store::select_runs`] from [`Store::list_runs`] and [`Store::load_run`].
pub fn select_runs_default<S: Store + ?Sized>(
    store: &S,
    selection: &RunSelection,
    limit: Option<usize>,
) -> Result<Vec<RunSummary>> {
    let mut out = Vec::new();
    for run in store.list_runs(None)? {
        if limit.is_some_and(|l| out.len() >= l) {
            break;
        }
        if !selection.matches_summary(&run) {
            continue;
        }
        if !selection.fields.is_empty() || selection.case.is_some() {
            let record = store.load_run(run.id)?;
            if !selection.matches_fingerprint(&record.fingerprint) {
                continue;
            }
            if let Some(case) = &selection.case {
                if !record.cases.iter().any(|c| c.spec.name == *case) {
                    continue;
                }
            }
        }
        out.push(run);
    }
    Ok(out)
}

/// [`Store::hosts`] from [`Store::list_runs`]: machines by their newest run, newest first.
pub fn hosts_default<S: Store + ?Sized>(store: &S) -> Result<Vec<HostSummary>> {
    let mut hosts: Vec<(HostSummary, Vec<String>)> = Vec::new();
    // Newest first, so a host's first run seen is its last.
    for run in store.list_runs(None)? {
        match hosts.iter_mut().find(|(h, _)| h.hostname == run.hostname) {
            Some((host, kernels)) => {
                host.runs += 1;
                host.first_started_at_ns = host.first_started_at_ns.min(run.started_at_ns);
                if !kernels.contains(&run.kernel_release) {
                    kernels.push(run.kernel_release.clone());
                }
            }
            None => hosts.push((
                HostSummary {
                    hostname: run.hostname.clone(),
                    runs: 1,
                    kernels: 0,
                    first_started_at_ns: run.started_at_ns,
                    last: run.clone(),
                },
                vec![run.kernel_release],
            )),
        }
    }
    Ok(hosts
        .into_iter()
        .map(|(mut h, kernels)| {
            h.kernels = kernels.len();
            h
        })
        .collect())
}
