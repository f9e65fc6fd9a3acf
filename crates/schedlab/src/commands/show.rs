//! `schedlab show`: stored runs by id or label, in the same formats as `run` prints, or their raw
//! samples as CSV.
use std::process::ExitCode;

use schedlab_core::latency::PerMille;
use schedlab_report::RunReport;

use crate::cli::{ShowArgs, ShowFormat};
use crate::failure::Failure;
use crate::output::emit;
use crate::store_path::{db_location, open_reader};

pub fn show(args: &ShowArgs) -> Result<ExitCode, Failure> {
    let percentiles = per_mille(&args.percentiles);
    if percentiles.is_some() && args.format == ShowFormat::Csv {
        return Err(Failure::bad_input(
            "--percentiles is for the latency tables of text and json; csv holds the samples",
        ));
    }
    let store = open_reader(&db_location(&args.db)?)?;
    let runs = store
        .resolve(&args.run)?
        .into_iter()
        .map(|id| store.load_run(id))
        .collect::<Result<Vec<_>, _>>()?;
    let report = || RunReport::with_percentiles(&runs, percentiles.as_deref());
    emit(|out| match args.format {
        ShowFormat::Text => schedlab_report::text::write(&report(), out),
        ShowFormat::Json => schedlab_report::json::write(&report(), out),
        ShowFormat::Csv => schedlab_report::csv::write(&runs, out),
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `--percentiles`' list in tenths of a percent (each read by clap,
/// [`crate::flag_values::per_mille`]), ascending and without repeats; `None` when not given.
fn per_mille(list: &[PerMille]) -> Option<Vec<PerMille>> {
    if list.is_empty() {
        return None;
    }
    let mut out = list.to_vec();
    out.sort_unstable();
    out.dedup();
    Some(out)
}
