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
    let percentiles = per_mille(&args.percentiles)?;
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

/// `--percentiles`' list in tenths of a percent, ascending and without repeats; `None` when not
/// given. The histograms' percentiles are read at that resolution (schbench's own: 99.9th).
fn per_mille(list: &[String]) -> Result<Option<Vec<PerMille>>, Failure> {
    if list.is_empty() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(list.len());
    for text in list {
        let bad = |why: &str| Failure::bad_input(format!("--percentiles {text:?}: {why}"));
        let p: f64 = text
            .trim()
            .parse()
            .ok()
            .filter(|p: &f64| !p.is_nan())
            .ok_or_else(|| bad("not a number"))?;
        // An infinity (`inf`, `1e999`) is a number, out of range like 100.
        if !(p > 0.0 && p < 100.0) {
            return Err(bad("a percentile is above 0 and below 100"));
        }
        let tenths = (p * 10.0).round();
        if (p * 10.0 - tenths).abs() > 1e-6 {
            return Err(bad("tenths of a percent are the finest (99.9, not 99.95)"));
        }
        // 0.00000001 is within the tolerance of a whole tenth, 0.0, which is no percentile.
        if !(1.0..=999.0).contains(&tenths) {
            return Err(bad(
                "tenths of a percent are the finest, so a percentile is 0.1 to 99.9",
            ));
        }
        out.push(tenths as PerMille);
    }
    out.sort_unstable();
    out.dedup();
    Ok(Some(out))
}
