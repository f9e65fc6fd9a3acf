//! `schedlab report`: the comparison `compare` would print, written as one self-contained HTML
//! page. The file is written beside its destination and renamed into place, so a failed run
//! never leaves a half-written report where the old one was.
use std::process::ExitCode;

use schedlab_core::words;
use schedlab_report::compare::html;

use crate::cli::ReportArgs;
use crate::comparison::{gate, load_comparison};
use crate::failure::Failure;
use crate::output::{emit_line, is_stdout, say, write_atomically};

pub fn report(args: &ReportArgs) -> Result<ExitCode, Failure> {
    let loaded = load_comparison(&args.sides)
        .map_err(|f| f.or_could_not_test(args.sides.could_not_test_exit))?;
    let to_stdout = is_stdout(&args.html);
    write_atomically(&args.html, |out| {
        html::write(
            &loaded.comparison,
            &loaded.base_runs,
            &loaded.candidate_runs,
            out,
        )
    })?;
    let c = &loaded.comparison;
    let summary = format!(
        "wrote {}: {}, {}",
        args.html.display(),
        words::counted(c.rows.len(), "row"),
        schedlab_report::compare::footer::tally(&c.footer)
    );
    // The page on stdout stays a page: the summary goes beside it.
    if to_stdout {
        say(format_args!("{summary}"));
    } else {
        emit_line(format_args!("{summary}"))?;
    }
    gate(
        c,
        args.sides.decision.fail_on_regression,
        args.sides.could_not_test_exit,
    )?;
    Ok(ExitCode::SUCCESS)
}
