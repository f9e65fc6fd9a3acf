//! `schedlab compare`: each side's stored runs compared, rendered in the chosen style and format,
//! and gated as asked.
use std::process::ExitCode;

use crate::cli::CompareArgs;
use crate::comparison::{load_comparison, options, render};
use crate::failure::Failure;

pub fn compare(args: &CompareArgs) -> Result<ExitCode, Failure> {
    let options = options(&args.shape, args.style, args.format)?;
    let loaded = load_comparison(&args.sides)
        .map_err(|f| f.or_could_not_test(args.sides.could_not_test_exit))?;
    render(
        &loaded.comparison,
        (args.style, options),
        args.format,
        args.sides.decision.fail_on_regression,
        args.sides.could_not_test_exit,
    )
}
