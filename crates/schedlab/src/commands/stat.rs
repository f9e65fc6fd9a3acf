//! `schedlab stat`: ministat-compatible comparison of plain data files — one number per line,
//! `#` comments, `-C` column, `-d` delimiters — rendered in any comparison style (ministat's by
//! default). Each number is taken as one independent unit, as ministat takes it: the user says
//! what the numbers are (one per run or per boot, to be meaningful).
use std::process::ExitCode;

use schedlab_analysis::{CalibrationSet, Side};
use schedlab_core::import::plain::column_numbers;
use schedlab_core::metric::Better;
use schedlab_report::compare::ministat::{self, Layout, DEFAULT_WIDTH};
use schedlab_report::compare::{csv, footer, json, markdown, text};
use schedlab_stats::ministat::ministat_vitals;

use crate::cli::{CompareFormat, CompareStyle, StatArgs};
use crate::comparison::{gate, options, render, settings};
use crate::failure::Failure;
use crate::input;
use crate::output::emit;

/// The numbers of one column of a file, as ministat reads them (see [`column_numbers`]): at least
/// three, or bad input naming the file.
fn read_column(
    text: &str,
    name: &str,
    column: usize,
    delimiters: &str,
) -> Result<Vec<f64>, Failure> {
    let values: Vec<f64> = column_numbers(text, column, delimiters)
        .map_err(|e| {
            Failure::bad_input(format!(
                "invalid data on line {} in {name}: {:?}",
                e.line, e.field
            ))
        })?
        .into_iter()
        .map(|(_, value)| value)
        .collect();
    if values.len() < 3 {
        return Err(Failure::bad_input(format!(
            "dataset {name} must contain at least 3 data points (it has {})",
            values.len()
        )));
    }
    Ok(values)
}

pub fn stat(args: &StatArgs) -> Result<ExitCode, Failure> {
    let settings = settings(&args.decision)?;
    let columns = &args.columns;
    let layout = layout(args)?;
    let options = options(&args.shape, args.style, args.format)?;
    let mut datasets = Vec::new();
    for path in input::files_or_stdin(&args.files, None)? {
        let name = input::display_name(&path);
        let text = input::read_text(&path)?;
        let values = read_column(&text, &name, columns.column, &columns.delimiters)?;
        datasets.push((name, values));
    }
    if datasets.len() == 1 {
        let (name, values) = datasets.remove(0);
        return summary(args, layout, &name, &values);
    }
    let better = if args.higher_is_better {
        Better::Higher
    } else {
        Better::Lower
    };
    let mut sides: Vec<Side> = datasets
        .into_iter()
        .map(|(name, values)| {
            Side::from_values(
                &name,
                vec![("data".to_string(), "value".to_string(), better, values)],
            )
        })
        .collect();
    let base = sides.remove(0);
    let comparison =
        schedlab_analysis::compare(base, sides, &CalibrationSet::default(), settings, None);
    let ministat = |layout| {
        let mut doc = ministat::document_with(&comparison, layout);
        if options.brief && doc.closing.is_some() {
            doc.closing = Some(footer::brief_block(&comparison));
        }
        doc
    };
    match (layout, args.format) {
        (Some(layout), CompareFormat::Text) => {
            emit(|out| text::write(&ministat(layout), out))?;
            gate(&comparison, args.decision.fail_on_regression, None)?;
            Ok(ExitCode::SUCCESS)
        }
        (Some(layout), CompareFormat::Markdown) => {
            emit(|out| markdown::write(&ministat(layout), out))?;
            gate(&comparison, args.decision.fail_on_regression, None)?;
            Ok(ExitCode::SUCCESS)
        }
        _ => render(
            &comparison,
            (args.style, options),
            args.format,
            args.decision.fail_on_regression,
            None,
        ),
    }
}

/// ministat's switches as a layout: `None` when none is given (any style and format), else they
/// need the ministat style in text or markdown, the only output they shape.
fn layout(args: &StatArgs) -> Result<Option<Layout>, Failure> {
    let m = &args.ministat;
    let given = m.no_plot || m.stats_only || m.quiet || m.separate || m.width.is_some();
    if !given {
        return Ok(None);
    }
    let shaped = args.style == CompareStyle::Ministat
        && matches!(args.format, CompareFormat::Text | CompareFormat::Markdown);
    if !shaped {
        return Err(Failure::bad_input(
            "-A, -n, -q, -s and -w shape ministat's report: they need --style ministat (the \
             default) and --format text or markdown",
        ));
    }
    // -w's range is its parser's (flag_values.rs).
    let width = m.width.unwrap_or(DEFAULT_WIDTH);
    Ok(Some(Layout {
        plot: !(m.no_plot || m.stats_only),
        differences: !m.stats_only,
        legend: !m.quiet,
        separate_bars: m.separate,
        width,
    }))
}

/// One file: its statistics, as ministat prints a single dataset (legend, plot, vitals); there
/// is nothing to compare, so no test, no verdict and no footer.
fn summary(
    args: &StatArgs,
    layout: Option<Layout>,
    name: &str,
    values: &[f64],
) -> Result<ExitCode, Failure> {
    let vitals =
        ministat_vitals(values).map_err(|e| Failure::bad_input(format!("dataset {name}: {e}")))?;
    let layout = layout.unwrap_or_default();
    let text_like = matches!(args.format, CompareFormat::Text | CompareFormat::Markdown);
    if text_like && args.style != CompareStyle::Ministat {
        return Err(Failure::bad_input(
            "one file has nothing to compare: its summary is ministat's (leave out --style, or \
             give a baseline and a candidate)",
        ));
    }
    emit(|out| match args.format {
        CompareFormat::Text => text::write(
            &ministat::dataset_document(name, values, vitals, layout),
            out,
        ),
        CompareFormat::Markdown => markdown::write(
            &ministat::dataset_document(name, values, vitals, layout),
            out,
        ),
        CompareFormat::Json => json::write_dataset(name, &vitals, out),
        CompareFormat::Csv => csv::write_dataset(name, &vitals, out),
    })?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_like_ministat() {
        let text = "# times\n1.5\n  \n2.5 # trailing\n3\tx\n";
        assert_eq!(
            read_column(text, "f", 1, " \t").unwrap(),
            vec![1.5, 2.5, 3.0]
        );
        assert_eq!(
            read_column("1 10\n2 20\n3 30\n", "f", 2, " ").unwrap(),
            vec![10.0, 20.0, 30.0]
        );
        assert!(read_column("1\n2\nthree\n", "f", 1, " ")
            .unwrap_err()
            .message
            .contains("line 3"));
        assert!(read_column("1\n2\n", "f", 1, " ")
            .unwrap_err()
            .message
            .contains("at least 3"));
    }
}
