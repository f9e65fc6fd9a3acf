//! hackbench's output (rt-tests' and the original): optionally `Running in process mode with 2
//! groups using 40 file descriptors each (== 80 tasks)` and `Each sender will pass 100 messages
//! of 100 bytes`, then `Time: 0.394`, the seconds the whole exchange took. A log of many runs
//! holds many; each `Time:` line is one result. Blank lines are skipped; any other line is an
//! error.
use super::parsed::{number, ParseError, Parsed, ToolResult};
use crate::metric::{Better, MetricDef};

/// The `messaging` workload's metric: hackbench's time, in seconds.
pub const TIME_SEC: MetricDef = MetricDef::primary("time_sec", "sec", Better::Lower);

pub const METRICS: &[MetricDef] = &[TIME_SEC];

/// What the two header lines say, spelt as the `messaging` workload names its cases (the
/// transport, sockets or pipes, is not printed).
#[derive(Default)]
struct Header {
    line: Option<usize>,
    mode_groups_fds: Option<String>,
    loops_datasize: Option<String>,
}

/// `Running in process mode with 2 groups using 40 file descriptors each (== 80 tasks)`:
/// hackbench prints twice its `-f` (senders and receivers).
fn running(words: &[&str]) -> Option<String> {
    match words {
        ["Running", "in", mode, "mode", "with", groups, "groups", "using", fds, "file", "descriptors", "each", ..] =>
        {
            let mode = match *mode {
                "process" => "process",
                "threaded" => "threads",
                _ => return None,
            };
            let groups: u64 = groups.parse().ok()?;
            let descriptors: u64 = fds.parse().ok()?;
            let fds = if descriptors.is_multiple_of(2) {
                descriptors / 2
            } else {
                descriptors
            };
            Some(format!("{mode} fds={fds} groups={groups}"))
        }
        _ => None,
    }
}

/// `Each sender will pass 100 messages of 100 bytes`.
fn each_sender(words: &[&str]) -> Option<String> {
    match words {
        ["Each", "sender", "will", "pass", loops, "messages", "of", size, "bytes"] => {
            let loops: u64 = loops.parse().ok()?;
            let size: u64 = size.parse().ok()?;
            Some(format!("loops={loops} datasize={size}"))
        }
        _ => None,
    }
}

pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut results = Vec::new();
    let mut header = Header::default();
    for (index, raw) in text.lines().enumerate() {
        let n = index + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.first() == Some(&"Running") {
            let what = running(&words).ok_or_else(|| {
                ParseError::at(
                    n,
                    format!("not hackbench's `Running in … mode` line: {line:?}"),
                )
            })?;
            header = Header {
                line: Some(n),
                mode_groups_fds: Some(what),
                loops_datasize: None,
            };
        } else if words.first() == Some(&"Each") {
            let what = each_sender(&words).ok_or_else(|| {
                ParseError::at(n, format!("not hackbench's `Each sender` line: {line:?}"))
            })?;
            header.line.get_or_insert(n);
            header.loops_datasize = Some(what);
        } else if let Some(value) = line.strip_prefix("Time:") {
            let time = number(value)
                .filter(|t| *t >= 0.0)
                .ok_or_else(|| ParseError::at(n, format!("a time in seconds: {line:?}")))?;
            let header = std::mem::take(&mut header);
            let described: Vec<String> = [header.mode_groups_fds, header.loops_datasize]
                .into_iter()
                .flatten()
                .collect();
            let case = if described.is_empty() {
                "hackbench".to_string()
            } else {
                format!("hackbench:{}", described.join(" "))
            };
            results.push(ToolResult {
                case,
                line: header.line.unwrap_or(n),
                at_ns: None,
                measurements: vec![TIME_SEC.value(time)],
            });
        } else {
            return Err(ParseError::at(
                n,
                format!("not hackbench output (`Running in`, `Each sender`, `Time:`): {line:?}"),
            ));
        }
    }
    if let Some(line) = header.line {
        return Err(ParseError::at(
            line,
            "the hackbench run that starts here has no `Time:` line",
        ));
    }
    Ok(Parsed {
        results,
        ..Parsed::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::testdata::{assert_rejected, fixture};

    fn results(name: &str) -> Vec<ToolResult> {
        parse(&fixture(name)).unwrap().results
    }

    #[test]
    fn every_mode_reads_its_time_and_case() {
        for (file, case, time) in [
            (
                "hackbench.txt",
                "hackbench:process fds=20 groups=2 loops=100 datasize=100",
                0.394,
            ),
            (
                "hackbench-threads.txt",
                "hackbench:threads fds=20 groups=2 loops=100 datasize=100",
                0.353,
            ),
            (
                "hackbench-pipe.txt",
                "hackbench:process fds=20 groups=2 loops=100 datasize=100",
                0.069,
            ),
        ] {
            let r = results(file);
            assert_eq!(r.len(), 1, "{file}");
            assert_eq!(r[0].case, case, "{file}");
            assert_eq!(r[0].line, 1, "{file}");
            assert_eq!(r[0].measurements, vec![TIME_SEC.value(time)], "{file}");
        }
    }

    #[test]
    fn a_log_of_many_runs_is_one_result_each() {
        let r = results("hackbench-repeated.txt");
        let times: Vec<f64> = r.iter().map(|r| r.measurements[0].value).collect();
        assert_eq!(times, [0.286, 0.387, 0.292]);
        assert_eq!(r.iter().map(|r| r.line).collect::<Vec<_>>(), [1, 4, 7]);
    }

    #[test]
    fn a_bare_time_line_is_a_result() {
        let r = parse("Time: 1.25\nTime: 1.5\n").unwrap().results;
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].case, "hackbench");
        assert_eq!(r[1].line, 2);
    }

    #[test]
    fn malformed_output_names_its_line() {
        assert_rejected(
            parse,
            &[
                ("malformed-hackbench-bad-time.txt", 3, "a time in seconds"),
                (
                    "malformed-hackbench-truncated.txt",
                    1,
                    "has no `Time:` line",
                ),
                ("perf-pipe.txt", 1, "not hackbench output"),
            ],
        );
    }

    #[test]
    fn the_name_is_the_messaging_workloads() {
        assert_eq!(TIME_SEC, crate::workload::messaging::TIME_SEC);
    }
}
