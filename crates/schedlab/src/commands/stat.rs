//! `schedlab stat`: ministat-compatible comparison of plain data files — one number per line,
//! `#` comments, `-C` column, `-d` delimiters — rendered in any comparison style (ministat's by
//! default). Each number is taken as one independent unit, as ministat takes it: the user says
//! what the numbers are (one per run or per boot, to be meaningful).
use std::path::Path;
use std::process::ExitCode;

use schedlab_analysis::{CalibrationSet, Side};
use schedlab_core::metric::Better;

use super::compare::{render, settings};
use crate::cli::StatArgs;
use crate::failure::Failure;

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

pub fn stat(args: &StatArgs) -> Result<ExitCode, Failure> {
    let settings = settings(&args.decision)?;
    if args.column == 0 {
        return Err(Failure::bad_input("--column starts at 1"));
    }
    if args.delimiters.is_empty() {
        return Err(Failure::bad_input("--delimiter must not be empty"));
    }
    let better = if args.higher_is_better {
        Better::Higher
    } else {
        Better::Lower
    };
    let mut sides = Vec::new();
    for path in &args.files {
        let name = path.display().to_string();
        let text = read_file(path)?;
        let values = read_column(&text, &name, args.column, &args.delimiters)?;
        sides.push(Side::from_values(
            &name,
            vec![("data".to_string(), "value".to_string(), better, values)],
        ));
    }
    let base = sides.remove(0);
    let comparison =
        schedlab_analysis::compare(base, sides, &CalibrationSet::default(), settings, None);
    render(
        &comparison,
        args.style,
        args.format,
        args.decision.fail_on_regression,
        None,
    )
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
