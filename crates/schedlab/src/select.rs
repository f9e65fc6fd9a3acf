//! The runs a fleet command looks at, as the command line selects them — `--host`, `--kernel`,
//! `--where`, `--since` and `--until` — for `runs`, `history`, `changes` and each side of
//! `compare` and `report`, and the times those flags (and `push --since`) take.
use schedlab_core::sys;
use schedlab_store::RunSelection;

use crate::cli::SelectArgs;
use crate::failure::Failure;

/// The selection of `--host`, `--kernel`, `--where`, `--since` and `--until`.
pub fn selection(args: &SelectArgs) -> Result<RunSelection, Failure> {
    let now = sys::realtime_ns();
    let when = |flag: &str, text: &Option<String>| {
        text.as_deref()
            .map(|text| parse_when(flag, text, now))
            .transpose()
    };
    let mut selection = RunSelection {
        host: args.host.clone(),
        kernel: args.kernel.clone(),
        since_ns: when("--since", &args.since)?,
        until_ns: when("--until", &args.until)?,
        ..RunSelection::default()
    };
    for field in &args.fields {
        selection.add_where(field).map_err(Failure::bad_input)?;
    }
    Ok(selection)
}

/// A time a flag (`--since`, `--until`) names: a date (UTC midnight), a UTC time, or an age
/// before `now_ns`; nanoseconds since the epoch.
pub fn parse_when(flag: &str, text: &str, now_ns: i64) -> Result<i64, Failure> {
    let bad = || {
        Failure::bad_input(format!(
            "{flag} {text:?}: give a date (2026-11-01), a UTC time (2026-11-01T18:30:00Z) or an age (36h, 7d, 2w)"
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
            "{flag} {text:?}: {date} is not a date (YYYY-MM-DD, from 1970)"
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
                "{flag} {text:?} is after 2262-04-11T23:47:16Z, the last time schedlab can store"
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
        assert_eq!(parse_when("--since", "1970-01-01", 0).unwrap(), 0);
        assert_eq!(
            parse_when("--since", "2026-11-01", 0).unwrap(),
            1_793_491_200 * SEC
        );
        assert_eq!(
            parse_when("--since", "2026-11-01T18:30:00Z", 0).unwrap(),
            (1_793_491_200 + 18 * 3600 + 30 * 60) * SEC
        );
        assert_eq!(
            parse_when("--since", "2000-03-01", 0).unwrap(),
            951_868_800 * SEC
        );
        let now = 1_000_000 * SEC;
        assert_eq!(
            parse_when("--since", "36h", now).unwrap(),
            now - 36 * 3600 * SEC
        );
        assert_eq!(
            parse_when("--since", "2w", now).unwrap(),
            now - 14 * 86_400 * SEC
        );
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
            assert!(parse_when("--since", bad, now).is_err(), "{bad}");
        }
        for good in ["2024-02-29", "2000-02-29", "2026-04-30", "2262-04-11"] {
            assert!(parse_when("--since", good, now).is_ok(), "{good}");
        }
        let err = parse_when("--since", "2026-02-30", now)
            .unwrap_err()
            .message;
        assert!(err.contains("2026-02-30 is not a date"), "{err}");
        let err = parse_when("--since", "9999-12-31", now)
            .unwrap_err()
            .message;
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
                    let parsed = parse_when("--since", &text, 0);
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
