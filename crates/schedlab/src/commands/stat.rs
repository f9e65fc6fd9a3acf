//! `schedlab stat`: ministat-compatible comparison of plain data files — one number per line,
//! `#` comments, `-C` column, `-d` delimiters — rendered in any comparison style (ministat's by
//! default). Each number is taken as one independent unit, as ministat takes it: the user says
//! what the numbers are (one per run or per boot, to be meaningful).
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use schedlab_analysis::{CalibrationSet, Side};
use schedlab_core::metric::Better;
use schedlab_report::compare::ministat::{write_block, Layout, DEFAULT_WIDTH};
use schedlab_report::compare::{markdown, text};
use schedlab_stats::ministat::ministat_vitals;

use crate::cli::{CompareFormat, CompareStyle, StatArgs};
use crate::comparison::{gate, render, settings};
use crate::failure::Failure;
use crate::output::emit;

/// Reads one column of numbers as ministat does: fields split on any delimiter character, a field
/// starting with `#` ends the line, lines without the column are skipped, anything else that is
/// not a number is an error naming the line.
pub fn read_column(
    text: &str,
    name: &str,
    column: usize,
    delimiters: &str,
) -> Result<Vec<f64>, Failure> {
    let mut values = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let field = line
            .trim_end()
            .split(|c| delimiters.contains(c))
            .filter(|f| !f.is_empty())
            .take_while(|f| !f.starts_with('#'))
            .nth(column - 1);
        let Some(field) = field else { continue };
        let value: f64 = field.parse().map_err(|_| {
            Failure::bad_input(format!(
                "invalid data on line {} in {name}: {field:?}",
                index + 1
            ))
        })?;
        if !value.is_finite() {
            return Err(Failure::bad_input(format!(
                "invalid data on line {} in {name}: {field:?}",
                index + 1
            )));
        }
        values.push(value);
    }
    if values.len() < 3 {
        return Err(Failure::bad_input(format!(
            "dataset {name} must contain at least 3 data points (it has {})",
            values.len()
        )));
    }
    Ok(values)
}

/// The widest plot `-w` may ask for.
const MAX_WIDTH: usize = 10_000;

pub fn stat(args: &StatArgs) -> Result<ExitCode, Failure> {
    let settings = settings(&args.decision)?;
    if args.column == 0 {
        return Err(Failure::bad_input("--column starts at 1"));
    }
    if args.delimiters.is_empty() {
        return Err(Failure::bad_input("--delimiter must not be empty"));
    }
    let layout = layout(args)?;
    // As ministat: no file reads standard input.
    let stdin = [PathBuf::from("-")];
    let files: &[PathBuf] = if args.files.is_empty() {
        &stdin
    } else {
        &args.files
    };
    if files
        .iter()
        .filter(|p| p.as_path() == Path::new("-"))
        .count()
        > 1
    {
        return Err(Failure::bad_input(
            "standard input (`-`) can be read once; give it as one file only",
        ));
    }
    let mut datasets = Vec::new();
    for path in files {
        let name = if path.as_path() == Path::new("-") {
            "<stdin>".to_string()
        } else {
            path.display().to_string()
        };
        let text = read_file(path)?;
        let values = read_column(&text, &name, args.column, &args.delimiters)?;
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
    match (layout, args.format) {
        (Some(layout), CompareFormat::Text) => {
            emit(|out| text::write_ministat(&comparison, layout, out))?;
            gate(&comparison, args.decision.fail_on_regression, None)?;
            Ok(ExitCode::SUCCESS)
        }
        (Some(layout), CompareFormat::Markdown) => {
            emit(|out| markdown::write_ministat(&comparison, layout, out))?;
            gate(&comparison, args.decision.fail_on_regression, None)?;
            Ok(ExitCode::SUCCESS)
        }
        _ => render(
            &comparison,
            args.style,
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
    let width = m.width.unwrap_or(DEFAULT_WIDTH);
    if !(2..=MAX_WIDTH).contains(&width) {
        return Err(Failure::bad_input(format!(
            "-w must be between 2 and {MAX_WIDTH} characters, not {width}"
        )));
    }
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
        CompareFormat::Text | CompareFormat::Markdown => {
            let fenced = args.format == CompareFormat::Markdown;
            if fenced {
                writeln!(out, "```")?;
            }
            write_block(
                &[name.to_string()],
                &[values.to_vec()],
                &[Some(vitals)],
                &[],
                layout,
                out,
            )?;
            if fenced {
                writeln!(out, "```")?;
            }
            Ok(())
        }
        CompareFormat::Json => {
            let document = serde_json::json!({
                "datasets": [{
                    "name": name,
                    "n": vitals.n,
                    "min": vitals.min,
                    "max": vitals.max,
                    "median": vitals.median,
                    "avg": vitals.avg,
                    "stddev": vitals.stddev,
                }],
            });
            serde_json::to_writer_pretty(&mut *out, &document)?;
            writeln!(out)
        }
        CompareFormat::Csv => {
            writeln!(out, "name,n,min,max,median,avg,stddev")?;
            writeln!(
                out,
                "{},{},{},{},{},{},{}",
                csv_field(name),
                vitals.n,
                vitals.min,
                vitals.max,
                vitals.median,
                vitals.avg,
                vitals.stddev
            )
        }
    })?;
    Ok(ExitCode::SUCCESS)
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

fn read_file(path: &Path) -> Result<String, Failure> {
    if path == Path::new("-") {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
            .map_err(|e| Failure::bad_input(format!("cannot read standard input: {e}")))?;
        return Ok(text);
    }
    std::fs::read_to_string(path)
        .map_err(|e| Failure::bad_input(format!("cannot read {}: {e}", path.display())))
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
