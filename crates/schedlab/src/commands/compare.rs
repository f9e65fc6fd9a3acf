//! `schedlab compare`: each side's stored runs compared (and with `--explain`, why they moved),
//! rendered in the chosen style and format, and gated as asked.
use std::process::ExitCode;

use crate::cli::CompareArgs;
use crate::comparison::{load_comparison, options, render};
use crate::explanation::{attach, Need};
use crate::failure::Failure;
use crate::store_path::{db_location, open_reader};

pub fn compare(args: &CompareArgs) -> Result<ExitCode, Failure> {
    let options = options(&args.shape, args.style, args.format)?;
    let mut loaded = load_comparison(&args.sides)
        .map_err(|f| f.or_could_not_test(args.sides.could_not_test_exit))?;
    if args.explain {
        let store = open_reader(&db_location(&args.sides.db)?)?;
        attach(&*store, &mut loaded, Need::Asked)?;
    }
    render(
        &loaded.comparison,
        (args.style, options),
        args.format,
        args.sides.decision.fail_on_regression,
        args.sides.could_not_test_exit,
    )
}
