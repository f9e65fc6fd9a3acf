//! Why the cases moved (`compare --explain`, `report`, `ab --explain`): a loaded comparison's
//! explanation, from the probed and profiled iterations the store keeps apart from the measured
//! ones, built from the same runs, in the same sides, with the same settings (docs/explain.md).
use schedlab_analysis::explain::{explain, ProbeSideBuilder};
use schedlab_analysis::RunInput;
use schedlab_core::record::RunRecord;
use schedlab_store::Store;

use crate::comparison::LoadedComparison;
use crate::failure::Failure;

/// Whether a comparison without probed runs is an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// `compare --explain`: asked for, so runs without any probe are bad input.
    Asked,
    /// The HTML report, `ab`: explained where the runs were probed.
    WhereProbed,
}

/// Adds the explanation to the comparison. `--across` sides are projections of one set of runs,
/// which the explanation does not split: asked for there, it is refused.
pub fn attach(store: &dyn Store, loaded: &mut LoadedComparison, need: Need) -> Result<(), Failure> {
    let c = &loaded.comparison;
    if c.across.is_some() {
        return match need {
            Need::Asked => Err(Failure::bad_input(
                "--explain compares sides of runs, not the cases of --across: compare the runs \
                 as sides (schedlab compare A B --explain)",
            )),
            Need::WhereProbed => Ok(()),
        };
    }
    let include = c.settings.include_incomplete;
    let side = |name: &str, runs: &[RunRecord]| -> Result<_, Failure> {
        let mut builder = ProbeSideBuilder::new(name, include);
        for run in runs {
            let Some(id) = run.id else { continue };
            let probes = store.load_probes(id)?;
            let tag = store.run_tag(id)?;
            builder.add_run(RunInput { record: run, tag }, &probes);
        }
        Ok(builder.finish())
    };
    let base = side(&c.base.name, &loaded.base_runs)?;
    let candidates = c
        .candidates
        .iter()
        .zip(&loaded.candidate_runs)
        .map(|(s, runs)| side(&s.name, runs))
        .collect::<Result<Vec<_>, _>>()?;
    let explanation = explain(
        base,
        candidates,
        &c.settings,
        c.sequential.as_ref().map(|s| s.plan),
    );
    if explanation.is_empty() {
        return match need {
            Need::Asked => Err(Failure::bad_input(
                "--explain: none of the compared runs has probed or profiled iterations; run \
                 them with --explain or --profile (docs/explain.md)",
            )),
            Need::WhereProbed => Ok(()),
        };
    }
    loaded.comparison.explanation = Some(explanation);
    Ok(())
}
