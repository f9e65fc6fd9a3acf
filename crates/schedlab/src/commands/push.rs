//! `schedlab push --to URL`: copies the runs of the store `--db` names (with their fingerprints,
//! iterations, histograms, metric definitions, experiments and calibrations) into another store.
//! Runs are matched by their globally unique id, so a second push copies nothing twice, and each
//! run goes in in one transaction of the target, so an interrupted push leaves only whole runs.
//! A stop signal ends it between runs: it says what it copied and exits 128 + N.
use std::ops::ControlFlow;
use std::process::ExitCode;

use schedlab_core::sys;
use schedlab_core::words;
use schedlab_store::push::PushReport;
use schedlab_store::{Location, SqliteStore, Store, StoreError};

use crate::cli::{OutputFormat, PushArgs};
use crate::failure::{Failure, FailureKind};
use crate::output::{emit, say};
use crate::store_path::{db_location, open_reader};

pub fn push(args: &PushArgs) -> Result<ExitCode, Failure> {
    let since_ns = args
        .since
        .as_deref()
        .map(|text| parse_since(text, sys::realtime_ns()))
        .transpose()?;
    let source_location = db_location(&args.db)?;
    if args.to.is_empty() {
        return Err(Failure::bad_input(
            "--to is empty: give the store to copy into, a postgres:// URL or an SQLite path",
        ));
    }
    let target_location = Location::parse(&args.to).map_err(as_target)?;
    if same_store(&source_location, &target_location) {
        let (to, from) = (target_location.describe(), source_location.describe());
        let spelt = if to == from {
            String::new()
        } else {
            format!(" ({from})")
        };
        return Err(Failure::bad_input(format!(
            "--to {to} is the store --db names{spelt}; push copies into another one"
        )));
    }
    // Ctrl-C, `kill`, a hang-up: the run being copied is finished (its transaction commits or
    // rolls back whole either way) and the push stops before the next.
    sys::install_interrupt_handlers()
        .map_err(|e| Failure::failed(format!("cannot install signal handlers: {e}")))?;
    let source = open_source(&source_location)?;
    let mut target = schedlab_store::open_writer(&target_location, true).map_err(as_target)?;
    let report = schedlab_store::push::push(&*source, &mut *target, since_ns, &mut |_| {
        match sys::interrupt_signal() {
            Some(_) => ControlFlow::Break(()),
            None => ControlFlow::Continue(()),
        }
    })?;
    let (from, to) = (source.describe(), target.describe());
    let stopped_by = report.stopped.then(sys::interrupt_signal).flatten();
    emit(|out| match args.format {
        OutputFormat::Json => {
            serde_json::to_writer_pretty(&mut *out, &to_json(&report, &from, &to, stopped_by))?;
            writeln!(out)
        }
        OutputFormat::Text => write_text(out, &report, &from, &to),
    })?;
    if let Some(signal) = stopped_by {
        return Err(Failure::new(
            FailureKind::Interrupted { signal },
            format!(
                "push interrupted by {} after {} copied; the target holds whole runs only, and pushing again copies the rest",
                sys::signal_name(signal),
                words::counted(report.copied.len(), "run")
            ),
        ));
    }
    if !report.conflicts.is_empty() {
        return Err(Failure::reported(FailureKind::Failed));
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether two locations are one store: the same text, or SQLite files that are one file
/// under two names (a relative path, `sqlite:`, a symbolic or hard link). A file that does not
/// exist yet is no file `--db` reads.
fn same_store(source: &Location, target: &Location) -> bool {
    use std::os::unix::fs::MetadataExt;
    if source == target {
        return true;
    }
    match (source, target) {
        (Location::Sqlite(a), Location::Sqlite(b)) => {
            match (std::fs::metadata(a), std::fs::metadata(b)) {
                (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
                _ => false,
            }
        }
        _ => false,
    }
}

/// An error of the store `--to` names, naming `--to` where the store's own words name `--db`
/// (its messages are written for the store a command works on).
fn as_target(e: StoreError) -> Failure {
    match e {
        StoreError::BadLocation(why) => Failure::bad_input(format!("--to {why}")),
        StoreError::NotSchedlab { path, why } => Failure::bad_input(format!(
            "--to {}: not a schedlab results database ({why}); push into another store",
            path.display()
        )),
        StoreError::NotAFile { path, reason } | StoreError::Unwritable { path, reason } => {
            Failure::bad_input(format!(
                "--to {}: cannot write a results database there: {reason}",
                path.display()
            ))
        }
        // A server that refuses, is unreachable or is not schedlab's: the same failure, with the
        // message saying it is the target's (the store's messages speak of "the results
        // database", which a reader would take for --db's).
        e => {
            let failure = Failure::from(e);
            Failure::new(failure.kind, format!("--to: {}", failure.message))
        }
    }
}

/// The store runs are copied from, read-only. An SQLite file older than V8 has no run ids to
/// match runs by: it is upgraded first, as `schedlab db upgrade` would.
fn open_source(location: &Location) -> Result<Box<dyn Store>, Failure> {
    if let Location::Sqlite(path) = location {
        let reader = SqliteStore::open_existing(path)?;
        if reader.schema_version() < schedlab_store::known_version() {
            drop(reader);
            let writer = SqliteStore::open_existing_writer(path)?;
            say(format_args!(
                "{}: schema version {} → {} (runs get their global ids)",
                path.display(),
                writer.found_version(),
                writer.schema_version()
            ));
        }
    }
    open_reader(location)
}

fn to_json(
    report: &PushReport,
    from: &str,
    to: &str,
    stopped_by: Option<i32>,
) -> serde_json::Value {
    serde_json::json!({
        "from": from,
        "to": to,
        "copied": report.copied.iter().map(|(source, target)| serde_json::json!({
            "run_id": source,
            "target_run_id": target,
        })).collect::<Vec<_>>(),
        "already_there": report.already_there,
        "still_running": report.still_running,
        "conflicts": report.conflicts.iter().map(|(id, why)| serde_json::json!({
            "run_id": id,
            "why": why,
        })).collect::<Vec<_>>(),
        "experiments_copied": report.experiments_copied,
        "experiments_updated": report.experiments_updated,
        "calibrations_copied": report.calibrations_copied,
        "calibrations_already_there": report.calibrations_already_there,
        "interrupted_by": stopped_by.map(sys::signal_name),
    })
}

fn write_text(
    out: &mut dyn std::io::Write,
    report: &PushReport,
    from: &str,
    to: &str,
) -> std::io::Result<()> {
    writeln!(out, "push {from} → {to}")?;
    writeln!(
        out,
        "runs          {} copied, {} already there",
        report.copied.len(),
        report.already_there
    )?;
    if !report.still_running.is_empty() {
        let ids: Vec<String> = report.still_running.iter().map(i64::to_string).collect();
        writeln!(
            out,
            "running       {} left for a later push (still running: {})",
            ids.len(),
            ids.join(", ")
        )?;
    }
    for (id, why) in &report.conflicts {
        writeln!(out, "not copied    run {id}: {why}")?;
    }
    writeln!(
        out,
        "experiments   {} copied, {} updated",
        report.experiments_copied, report.experiments_updated
    )?;
    writeln!(
        out,
        "calibrations  {} copied, {} already there",
        report.calibrations_copied, report.calibrations_already_there
    )?;
    if report.stopped {
        writeln!(
            out,
            "stopped       by a signal before the other runs; push again to copy the rest"
        )?;
    }
    Ok(())
}

/// `--since`: a date (UTC midnight), a UTC time, or an age before `now_ns`.
fn parse_since(text: &str, now_ns: i64) -> Result<i64, Failure> {
    let bad = || {
        Failure::bad_input(format!(
            "--since {text:?}: give a date (2026-11-01), a UTC time (2026-11-01T18:30:00Z) or an age (36h, 7d, 2w)"
        ))
    };
    const SEC: i64 = 1_000_000_000;
    let age = text
        .strip_suffix(|c: char| c.is_ascii_alphabetic())
        .filter(|number| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()));
    if let Some(number) = age {
        let unit = text.chars().last().unwrap_or_default();
        let number: i64 = number.parse().map_err(|_| bad())?;
        let per = match unit {
            's' => SEC,
            'm' => 60 * SEC,
            'h' => 3600 * SEC,
            'd' => 86_400 * SEC,
            'w' => 7 * 86_400 * SEC,
            _ => return Err(bad()),
        };
        return number
            .checked_mul(per)
            .map(|age| now_ns.saturating_sub(age))
            .ok_or_else(bad);
    }
    let (date, time) = match text.split_once(['T', ' ']) {
        Some((date, time)) => (date, Some(time.strip_suffix('Z').unwrap_or(time))),
        None => (text, None),
    };
    let mut parts = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (Some(Some(year)), Some(Some(month)), Some(Some(day))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return Err(bad());
    };
    if !(1970..=9999).contains(&year)
        || !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
    {
        return Err(Failure::bad_input(format!(
            "--since {text:?}: {date} is not a date (YYYY-MM-DD, from 1970)"
        )));
    }
    let seconds_of_day = match time {
        None => 0,
        Some(time) => {
            let fields: Vec<Option<i64>> = time.split(':').map(|p| p.parse().ok()).collect();
            match fields.as_slice() {
                [Some(h), Some(m)] if *h < 24 && *m < 60 => h * 3600 + m * 60,
                [Some(h), Some(m), Some(s)] if *h < 24 && *m < 60 && *s < 61 => {
                    h * 3600 + m * 60 + s
                }
                _ => return Err(bad()),
            }
        }
    };
    // Nanoseconds in an i64 end in 2262.
    (days_from_civil(year, month, day) * 86_400 + seconds_of_day)
        .checked_mul(SEC)
        .ok_or_else(|| {
            Failure::bad_input(format!(
                "--since {text:?} is after 2262-04-11T23:47:16Z, the last time schedlab can store"
            ))
        })
}

/// Days in `month` (1 to 12) of `year` in the Gregorian calendar.
fn days_in_month(year: i64, month: i64) -> i64 {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEC: i64 = 1_000_000_000;

    #[test]
    fn since_takes_dates_times_and_ages() {
        assert_eq!(parse_since("1970-01-01", 0).unwrap(), 0);
        assert_eq!(parse_since("2026-11-01", 0).unwrap(), 1_793_491_200 * SEC);
        assert_eq!(
            parse_since("2026-11-01T18:30:00Z", 0).unwrap(),
            (1_793_491_200 + 18 * 3600 + 30 * 60) * SEC
        );
        assert_eq!(parse_since("2000-03-01", 0).unwrap(), 951_868_800 * SEC);
        let now = 1_000_000 * SEC;
        assert_eq!(parse_since("36h", now).unwrap(), now - 36 * 3600 * SEC);
        assert_eq!(parse_since("2w", now).unwrap(), now - 14 * 86_400 * SEC);
        for bad in [
            "",
            "yesterday",
            "7y",
            "-3d",
            "2026-13-01",
            "2026-11-01T25:00",
            "d",
            "9999-01-01",
            "2026-02-30",
            "2026-04-31",
            "2023-02-29",
            "2100-02-29",
            "2026-11-00",
            "2262-04-12",
        ] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
        for good in ["2024-02-29", "2000-02-29", "2026-04-30", "2262-04-11"] {
            assert!(parse_since(good, now).is_ok(), "{good}");
        }
        let err = parse_since("2026-02-30", now).unwrap_err().message;
        assert!(err.contains("2026-02-30 is not a date"), "{err}");
        let err = parse_since("9999-12-31", now).unwrap_err().message;
        assert!(err.contains("after 2262-04-11"), "{err}");
    }

    /// Every day from 1970 to the last day nanoseconds reach: a date is accepted exactly when
    /// its day is in its month, and each accepted date is one day after the one before, so no
    /// day is skipped or repeated (an independent count, not the formula again). The months'
    /// lengths are checked against the calendar's own rules at a few known years.
    #[test]
    fn since_knows_every_calendar_day() {
        let mut expected_days = 0i64;
        for year in 1970..=2262 {
            for month in 1..=12 {
                for day in 1..=31 {
                    let text = format!("{year:04}-{month:02}-{day:02}");
                    let parsed = parse_since(&text, 0);
                    if day > days_in_month(year, month) {
                        assert!(parsed.is_err(), "{text}");
                        continue;
                    }
                    if (year, month, day) > (2262, 4, 11) {
                        assert!(parsed.is_err(), "{text}");
                        continue;
                    }
                    assert_eq!(parsed.unwrap(), expected_days * 86_400 * SEC, "{text}");
                    expected_days += 1;
                }
            }
        }
        // Days 0 (1970-01-01) to 106,751 (2262-04-11); day 106,752 starts past i64 nanoseconds.
        assert_eq!(expected_days, 106_752);
        let year_days = |year| (1..=12).map(|m| days_in_month(year, m)).sum::<i64>();
        for (year, days) in [
            (1970, 365),
            (1972, 366),
            (2000, 366),
            (2100, 365),
            (2024, 366),
        ] {
            assert_eq!(year_days(year), days, "{year}");
        }
    }
}
