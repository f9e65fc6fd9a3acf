//! Plain number files, read as ministat reads them: fields split on any of the delimiter
//! characters (space and tab unless told), a field starting with `#` ends the line, lines
//! without the chosen column are skipped, and anything else that is not a number is an error
//! naming the line. Each number is one result.
use super::{number, ParseError, Parsed, PlainOptions, ToolResult};

pub fn parse(text: &str, options: &PlainOptions) -> Result<Parsed, ParseError> {
    let column = options.column.max(1);
    let def = options.def();
    let case = format!("plain:{}", options.name);
    let mut results = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let field = line
            .trim_end()
            .split(|c| options.delimiters.contains(c))
            .filter(|f| !f.is_empty())
            .take_while(|f| !f.starts_with('#'))
            .nth(column - 1);
        let Some(field) = field else { continue };
        let value = number(field).ok_or_else(|| {
            ParseError::at(index + 1, format!("invalid data (not a number): {field:?}"))
        })?;
        results.push(ToolResult {
            case: case.clone(),
            line: index + 1,
            at_ns: None,
            measurements: vec![def.value(value)],
        });
    }
    Ok(Parsed {
        results,
        ..Parsed::default()
    })
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
