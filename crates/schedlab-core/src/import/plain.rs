//! Plain number files, read as ministat reads them: fields split on any of the delimiter
//! characters (space and tab unless told), a field starting with `#` ends the line, lines
//! without the chosen column are skipped, and anything else that is not a number is an error
//! naming the line. Each number is one result.
use super::parsed::{number, ParseError, Parsed, PlainOptions, ToolResult};

pub fn parse(text: &str, options: &PlainOptions) -> Result<Parsed, ParseError> {
    let def = options.def();
    let case = format!("plain:{}", options.name);
    let numbers = column_numbers(text, options.column, &options.delimiters).map_err(|e| {
        ParseError::at(
            e.line,
            format!("invalid data (not a number): {:?}", e.field),
        )
    })?;
    let results = numbers
        .into_iter()
        .map(|(line, value)| ToolResult {
            case: case.clone(),
            line,
            at_ns: None,
            measurements: vec![def.value(value)],
        })
        .collect();
    Ok(Parsed {
        results,
        ..Parsed::default()
    })
}

/// A field of the chosen column that is not a finite number: its 1-based line and its text.
#[derive(Debug, PartialEq)]
pub struct NotANumber {
    pub line: usize,
    pub field: String,
}

/// The numbers of the 1-based `column` (0 reads as 1), each with its 1-based line, read as
/// ministat reads them; `import --tool plain` and `schedlab stat` both read files this way.
pub fn column_numbers(
    text: &str,
    column: usize,
    delimiters: &str,
) -> Result<Vec<(usize, f64)>, NotANumber> {
    let mut numbers = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let field = line
            .trim_end()
            .split(|c| delimiters.contains(c))
            .filter(|f| !f.is_empty())
            .take_while(|f| !f.starts_with('#'))
            .nth(column.max(1) - 1);
        let Some(field) = field else { continue };
        let value = number(field).ok_or_else(|| NotANumber {
            line: index + 1,
            field: field.to_string(),
        })?;
        numbers.push((index + 1, value));
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::testdata::fixture;
    use crate::metric::Better;

    fn values(parsed: &Parsed) -> Vec<f64> {
        parsed
            .results
            .iter()
            .map(|r| r.measurements[0].value)
            .collect()
    }

    #[test]
    fn numbers_comments_and_blank_lines() {
        let options = PlainOptions {
            name: "wakeup_p99_usec".into(),
            ..Default::default()
        };
        let parsed = parse(&fixture("plain.txt"), &options).unwrap();
        assert_eq!(values(&parsed), [105.3, 98.7, 101.2, 99.8, 103.0]);
        let first = &parsed.results[0];
        assert_eq!(first.line, 2);
        assert_eq!(first.case, "plain:wakeup_p99_usec");
        assert_eq!(first.measurements[0].unit, "usec");
        assert_eq!(first.measurements[0].better, Better::Lower);
    }

    #[test]
    fn a_column_of_a_delimited_file() {
        let options = PlainOptions {
            name: "ops_per_sec".into(),
            higher_is_better: true,
            column: 3,
            delimiters: ",".into(),
        };
        let parsed = parse(&fixture("plain-columns.csv"), &options).unwrap();
        assert_eq!(values(&parsed), [56276.0, 68151.0, 68062.0]);
        assert_eq!(parsed.results[0].measurements[0].unit, "ops/sec");
        assert_eq!(parsed.results[0].measurements[0].better, Better::Higher);
    }

    #[test]
    fn malformed_data_names_its_line() {
        let err = parse(&fixture("malformed-plain.txt"), &PlainOptions::default()).unwrap_err();
        assert_eq!(err.line, 4);
        assert!(err.message.contains("\"abc\""), "{err}");
        // A tool's output is not a number file.
        let err = parse(&fixture("hackbench.txt"), &PlainOptions::default()).unwrap_err();
        assert_eq!(err.line, 1);
    }
}
