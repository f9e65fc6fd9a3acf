//! `perf bench sched pipe` and `perf bench sched messaging` output. The default format is a block
//! per benchmark: a `# Running 'sched/pipe' benchmark:` header, `#` lines saying what ran, then
//! `Total time: 0.355 [sec]` and, for pipe, `usecs/op` and `ops/sec`. `-f simple` prints only the
//! total time in seconds, one number a line, which does not say which benchmark it was. Logs of
//! many runs hold many blocks; each is one result. Blank lines are skipped; any other line is an
//! error, so a file that is not perf's output is never half-read.
use super::parsed::{number, ParseError, Parsed, ToolResult};
use crate::metric::{Better, MetricDef};

/// The same names, units and directions as the `messaging` and `pipe` workloads' metrics.
pub const USEC_PER_OP: MetricDef = MetricDef::primary("usec_per_op", "usec", Better::Lower);
/// The total of pipe's loops, to a millisecond: a multiple of `usec_per_op` where that is
/// printed too (messaging prints the total only).
pub const TIME_SEC: MetricDef =
    MetricDef::primary("time_sec", "sec", Better::Lower).multiple_of(USEC_PER_OP);
pub const OPS_PER_SEC: MetricDef =
    MetricDef::primary("ops_per_sec", "ops/sec", Better::Higher).reciprocal_of(USEC_PER_OP);

/// Every result has its total time; only pipe's default format has the rest.
pub const METRICS: &[MetricDef] = &[TIME_SEC, USEC_PER_OP.optional(), OPS_PER_SEC.optional()];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bench {
    Pipe,
    Messaging,
}

impl Bench {
    fn name(self) -> &'static str {
        match self {
            Bench::Pipe => "sched/pipe",
            Bench::Messaging => "sched/messaging",
        }
    }
}

/// A default-format block being read.
struct Block {
    bench: Bench,
    line: usize,
    /// `process` or `threads`.
    mode: Option<&'static str>,
    loops: Option<u64>,
    senders: Option<u64>,
    groups: Option<u64>,
    time_sec: Option<f64>,
    usec_per_op: Option<f64>,
    ops_per_sec: Option<f64>,
}

impl Block {
    fn new(bench: Bench, line: usize) -> Self {
        Block {
            bench,
            line,
            mode: None,
            loops: None,
            senders: None,
            groups: None,
            time_sec: None,
            usec_per_op: None,
            ops_per_sec: None,
        }
    }

    /// Whether the block has everything its benchmark prints.
    fn complete(&self) -> bool {
        match self.bench {
            Bench::Messaging => self.time_sec.is_some(),
            Bench::Pipe => self.time_sec.is_some() && self.ops_per_sec.is_some(),
        }
    }

    fn finish(self) -> Result<ToolResult, ParseError> {
        let missing = |what: &str| {
            ParseError::at(
                self.line,
                format!(
                    "the {} result that starts here has no {what}",
                    self.bench.name()
                ),
            )
        };
        let time_sec = self.time_sec.ok_or_else(|| missing("`Total time:` line"))?;
        let mode = self.mode.ok_or_else(|| missing("line saying what ran"))?;
        let mut measurements = vec![TIME_SEC.value(time_sec)];
        let case = match self.bench {
            Bench::Pipe => {
                let loops = self.loops.ok_or_else(|| missing("`# Executed` line"))?;
                match (self.usec_per_op, self.ops_per_sec) {
                    (Some(usec), Some(ops)) => {
                        measurements.push(USEC_PER_OP.value(usec));
                        measurements.push(OPS_PER_SEC.value(ops));
                    }
                    (None, None) => {}
                    _ => return Err(missing("pair of `usecs/op` and `ops/sec` lines")),
                }
                format!("perf-bench:pipe {mode} loops={loops}")
            }
            Bench::Messaging => {
                let senders = self.senders.ok_or_else(|| missing("senders per group"))?;
                let groups = self.groups.ok_or_else(|| missing("group count"))?;
                format!("perf-bench:messaging {mode} fds={senders} groups={groups}")
            }
        };
        Ok(ToolResult {
            case,
            line: self.line,
            at_ns: None,
            measurements,
        })
    }
}

/// `processes` or `threads` (perf's words) as schedlab's modes name them.
fn mode(word: &str) -> Option<&'static str> {
    match word {
        "processes" => Some("process"),
        "threads" => Some("threads"),
        _ => None,
    }
}

/// The benchmark a `# Running …` header names: `'sched/pipe' benchmark:` (perf bench sched pipe)
/// or `sched/pipe benchmark...` (perf bench sched all).
fn running(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("# Running ")?;
    let name = rest.split_whitespace().next()?;
    Some(name.trim_matches('\''))
}

pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    let mut results = Vec::new();
    let mut block: Option<Block> = None;
    for (index, raw) in text.lines().enumerate() {
        let n = index + 1;
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        let bad = |what: &str| ParseError::at(n, format!("{what}: {line:?}"));
        if let Some(name) = running(line) {
            if let Some(done) = block.take() {
                results.push(done.finish()?);
            }
            let bench = match name {
                "sched/pipe" => Bench::Pipe,
                "sched/messaging" => Bench::Messaging,
                other => {
                    return Err(bad(&format!(
                        "perf bench {other} is not one schedlab reads (sched/pipe, sched/messaging)"
                    )))
                }
            };
            block = Some(Block::new(bench, n));
            continue;
        }
        let Some(current) = block.as_mut() else {
            // Outside a block: `-f simple`'s bare total time.
            let value = number(line).filter(|v| *v >= 0.0).ok_or_else(|| {
                bad("not perf bench output (a `# Running` header or a -f simple number)")
            })?;
            results.push(ToolResult {
                case: "perf-bench:simple".to_string(),
                line: n,
                at_ns: None,
                measurements: vec![TIME_SEC.value(value)],
            });
            continue;
        };
        let words: Vec<&str> = line.split_whitespace().collect();
        let count = |i: usize| words.get(i).and_then(|w| w.parse::<u64>().ok());
        match (current.bench, words.as_slice()) {
            // # Executed 20000 pipe operations between two processes
            (Bench::Pipe, ["#", "Executed", _, "pipe", "operations", "between", "two", who]) => {
                current.loops = Some(count(2).ok_or_else(|| bad("a loop count"))?);
                current.mode = Some(mode(who).ok_or_else(|| bad("processes or threads"))?);
            }
            // # 20 sender and receiver processes per group
            (Bench::Messaging, ["#", _, "sender", "and", "receiver", who, "per", "group"]) => {
                current.senders = Some(count(1).ok_or_else(|| bad("a sender count"))?);
                current.mode = Some(mode(who).ok_or_else(|| bad("processes or threads"))?);
            }
            // # 2 groups == 80 processes run
            (Bench::Messaging, ["#", _, "groups", "==", _, _, "run"]) => {
                current.groups = Some(count(1).ok_or_else(|| bad("a group count"))?);
            }
            (_, ["Total", "time:", value, "[sec]"]) if current.time_sec.is_none() => {
                current.time_sec =
                    Some(number(value).ok_or_else(|| bad("a total time in seconds"))?);
            }
            (Bench::Pipe, [value, "usecs/op"]) if current.time_sec.is_some() => {
                current.usec_per_op = Some(number(value).ok_or_else(|| bad("usecs/op"))?);
            }
            (Bench::Pipe, [value, "ops/sec"]) if current.usec_per_op.is_some() => {
                current.ops_per_sec = Some(number(value).ok_or_else(|| bad("ops/sec"))?);
            }
            _ => {
                return Err(bad(&format!(
                    "unexpected line in the {} result that starts at line {}",
                    current.bench.name(),
                    current.line
                )))
            }
        }
        if current.complete() {
            if let Some(done) = block.take() {
                results.push(done.finish()?);
            }
        }
    }
    if let Some(done) = block.take() {
        results.push(done.finish()?);
    }
    Ok(Parsed {
        results,
        ..Parsed::default()
    })
}

/// The measurements' names, for tests of other modules.
#[cfg(test)]
pub(crate) fn names(m: &[crate::metric::Measurement]) -> Vec<&str> {
    m.iter().map(|m| m.name.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::import::testdata::{assert_rejected, fixture, value};

    fn one(name: &str) -> ToolResult {
        let parsed = parse(&fixture(name)).unwrap();
        assert_eq!(parsed.results.len(), 1, "{name}");
        parsed.results.into_iter().next().unwrap()
    }

    #[test]
    fn pipe_processes_and_threads() {
        let r = one("perf-pipe.txt");
        assert_eq!(r.case, "perf-bench:pipe process loops=20000");
        assert_eq!(r.line, 1);
        assert_eq!(
            names(&r.measurements),
            ["time_sec", "usec_per_op", "ops_per_sec"]
        );
        assert_eq!(value(&r.measurements, "time_sec"), Some(0.355));
        assert_eq!(value(&r.measurements, "usec_per_op"), Some(17.769450));
        assert_eq!(value(&r.measurements, "ops_per_sec"), Some(56276.0));
        let r = one("perf-pipe-threads.txt");
        assert_eq!(r.case, "perf-bench:pipe threads loops=20000");
        assert_eq!(value(&r.measurements, "usec_per_op"), Some(14.673250));
    }

    #[test]
    fn messaging_in_each_mode() {
        for (file, case, time) in [
            (
                "perf-messaging.txt",
                "perf-bench:messaging process fds=20 groups=2",
                0.265,
            ),
            // -p (pipes) prints the same as sockets: the case cannot tell them apart.
            (
                "perf-messaging-pipe.txt",
                "perf-bench:messaging process fds=20 groups=2",
                0.086,
            ),
            (
                "perf-messaging-threads.txt",
                "perf-bench:messaging threads fds=20 groups=2",
                0.233,
            ),
        ] {
            let r = one(file);
            assert_eq!(r.case, case, "{file}");
            assert_eq!(r.measurements, vec![TIME_SEC.value(time)], "{file}");
        }
    }

    #[test]
    fn simple_format_is_the_total_time() {
        let r = one("perf-pipe-simple.txt");
        assert_eq!(r.case, "perf-bench:simple");
        assert_eq!(r.measurements, vec![TIME_SEC.value(0.164)]);
        assert_eq!(
            one("perf-messaging-simple.txt").measurements,
            vec![TIME_SEC.value(0.281)]
        );
        let many = parse(&fixture("perf-messaging-simple-repeated.txt")).unwrap();
        let times: Vec<f64> = many
            .results
            .iter()
            .map(|r| r.measurements[0].value)
            .collect();
        assert_eq!(times, [0.253, 0.429, 0.323]);
        assert_eq!(many.results[2].line, 3);
    }

    #[test]
    fn a_log_of_many_runs_is_one_result_each() {
        let parsed = parse(&fixture("perf-pipe-repeated.txt")).unwrap();
        let usec: Vec<f64> = parsed
            .results
            .iter()
            .map(|r| value(&r.measurements, "usec_per_op").unwrap())
            .collect();
        assert_eq!(usec, [14.668200, 14.692400, 9.012300]);
        let lines: Vec<usize> = parsed.results.iter().map(|r| r.line).collect();
        assert_eq!(lines, [1, 8, 15]);
    }

    #[test]
    fn malformed_output_names_its_line() {
        assert_rejected(
            parse,
            &[
                (
                    "malformed-perf-truncated.txt",
                    1,
                    "has no `Total time:` line",
                ),
                (
                    "malformed-perf-bad-number.txt",
                    4,
                    "a total time in seconds",
                ),
                ("malformed-perf-stray-line.txt", 6, "unexpected line"),
                (
                    "malformed-perf-other-bench.txt",
                    1,
                    "not one schedlab reads",
                ),
                ("hackbench.txt", 1, "not perf bench output"),
            ],
        );
    }

    #[test]
    fn the_names_are_the_native_workloads() {
        use crate::workload::{messaging, pipe};
        // messaging measures its total alone; perf's pipe prints usecs/op beside it.
        let alone = MetricDef {
            restates: None,
            ..TIME_SEC
        };
        assert_eq!(alone, messaging::TIME_SEC);
        assert_eq!(USEC_PER_OP, pipe::USEC_PER_OP);
        assert_eq!(OPS_PER_SEC, pipe::OPS_PER_SEC);
    }
}
