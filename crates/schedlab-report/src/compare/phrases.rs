//! The words for what a comparison says about its rows: verdict names, why a row is `?` or `??`
//! or what a `~` row could detect, why ministat's own test has no difference, the unmatched
//! cases, confidence levels and MDEs as people write them. Every style and format words them
//! here, from the analysis' typed facts.
use schedlab_analysis::model::{Row, Verdict};
use schedlab_analysis::notes::{LoneUnit, MinistatNoTest, RowNote, Unmatched, UnmatchedReason};
use schedlab_analysis::settings::{MAX_RUNS_NEEDED, MDE_SHOWN_UP_TO_PCT};
use schedlab_analysis::units::Design;

/// The verdict as a word or two (the HTML's class names too).
pub fn verdict_name(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
        Verdict::Equivalent => "equivalent",
        Verdict::Inconclusive => "inconclusive",
        Verdict::Noisy => "noisy",
        Verdict::NotJudged => "not judged",
    }
}

/// The sign every style gives a change, in its header: a row reads the same in each.
pub const SIGN: &str = "+% = higher than base";

/// A row's mark as the tables print it: a row that restates another (`ops_per_sec` beside
/// `usec_per_op`) shows that row's verdict in parentheses, `(**)`: the same effect, not a
/// second finding.
pub fn row_mark(row: &Row) -> String {
    if row.restates.is_some() {
        format!("({})", row.verdict.mark())
    } else {
        row.verdict.mark().to_string()
    }
}

/// The plural noun of a unit: `runs`, `boots`, `pairs`, `values`.
pub fn units_noun(design: Design) -> &'static str {
    design.noun()
}

/// Why a row is `?`, short: the footer says how to make such rows judgeable.
fn one_unit(unit: LoneUnit) -> &'static str {
    match unit {
        LoneUnit::Run => "one run per side, no calibration",
        LoneUnit::Boot => "one boot per side, no calibration across boots",
        LoneUnit::RunHoldingBothCases => "one run holding both cases, no calibration",
        LoneUnit::AbRound => "one A/B round, no calibration",
        LoneUnit::Value => "one value per side",
    }
}

/// What a side had, without the "no calibration" that follows it where none was refused.
fn lone(unit: LoneUnit) -> &'static str {
    match unit {
        LoneUnit::Run => "one run per side",
        LoneUnit::Boot => "one boot per side",
        LoneUnit::RunHoldingBothCases => "one run holding both cases",
        LoneUnit::AbRound => "one A/B round",
        LoneUnit::Value => "one value per side",
    }
}

/// A row's note, as the tables print it after the mark.
pub fn row_note(note: &RowNote) -> String {
    match note {
        RowNote::NoSpread => "no spread at all: every iteration of every run alike".to_string(),
        RowNote::OneUnit { unit } => one_unit(*unit).to_string(),
        RowNote::CalibrationRefused {
            unit,
            calibration,
            factor,
        } => format!(
            "{}; calibration {calibration} refused: today's spread is {factor:.0}× it",
            lone(*unit)
        ),
        RowNote::OverNoiseCap {
            design: Design::Pairs,
            spread_pct,
            cap_pct,
        } => format!("pair differences vary by {spread_pct:.1}%, over the noise cap of {cap_pct}%"),
        RowNote::OverNoiseCap {
            design,
            spread_pct,
            cap_pct,
        } => format!(
            "{} vary by {spread_pct:.1}%, over the noise cap of {cap_pct}%",
            units_noun(*design)
        ),
        RowNote::Inconclusive {
            mde_pct,
            units_needed,
            counted,
            per_side,
            min_effect_pct,
        } => {
            let units = format!(
                "{}{}",
                units_noun(*counted),
                if *per_side { " per side" } else { "" }
            );
            match (mde_pct, units_needed) {
                (Some(m), Some(k)) => {
                    format!(
                        "MDE {}; {k} {units} to see ±{min_effect_pct}%",
                        mde_text(*m)
                    )
                }
                (Some(m), None) => format!(
                    "MDE {}; more than {MAX_RUNS_NEEDED} {units} to see ±{min_effect_pct}%",
                    mde_text(*m)
                ),
                (None, _) => "no detectable effect could be computed".to_string(),
            }
        }
    }
}

/// Why ministat's t has no difference block.
pub fn ministat_no_test(why: &MinistatNoTest) -> String {
    match why {
        MinistatNoTest::TooFewUnits {
            design,
            base,
            candidate,
            error,
        } => format!(
            "ministat's t needs at least 2 {} per side ({base} vs {candidate}): {error}",
            units_noun(*design)
        ),
        MinistatNoTest::Failed { error } => format!("ministat's t cannot be computed: {error}"),
    }
}

/// A case × metric without a row, and why.
pub fn unmatched(u: &Unmatched) -> String {
    match &u.reason {
        UnmatchedReason::NoCompleteUnit => {
            format!("{} {}: no complete unit on both sides", u.case, u.metric)
        }
        UnmatchedReason::NotIn { side } => format!("{} {}: not in {side}", u.case, u.metric),
    }
}

/// A confidence level as people write it: `95%`, `99.5%` (to a tenth; a sequential look's spent
/// level 0.99161 is `99.2%`). A level that a tenth would round up to 100 gets the decimals it
/// needs to stay below it (an early O'Brien–Fleming look spends 0.99998: `99.998%`).
pub fn level_text(level: f64) -> String {
    let tenths = (level * 1000.0).round() / 10.0;
    if tenths.fract() == 0.0 && (tenths < 100.0 || level >= 1.0) {
        return format!("{tenths:.0}%");
    }
    if tenths < 100.0 {
        return format!("{tenths:.1}%");
    }
    let pct = level * 100.0;
    (2..=12)
        .map(|decimals| format!("{pct:.decimals$}%"))
        .find(|text| !text.starts_with("100"))
        .unwrap_or_else(|| format!("{pct}%"))
}

/// An MDE as the text prints it. With one degree of freedom it can run to 30 digits, which say
/// no more than that nothing short of a huge change could be seen: above
/// `MDE_SHOWN_UP_TO_PCT` the text says only that (the JSON keeps the number).
pub fn mde_text(mde_pct: f64) -> String {
    if mde_pct > MDE_SHOWN_UP_TO_PCT {
        format!("above {MDE_SHOWN_UP_TO_PCT}%")
    } else {
        format!("{mde_pct:.1}%")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use schedlab_stats::StatsError;

    #[test]
    fn levels_read_as_people_write_them() {
        for (level, text) in [
            (0.95, "95%"),
            (0.995, "99.5%"),
            (0.8, "80%"),
            (0.9902245963748793, "99%"),
            (0.99161, "99.2%"),
            (0.9995, "99.95%"),
            (0.99998, "99.998%"),
            (0.999_987_6, "99.999%"),
            (1.0, "100%"),
        ] {
            assert_eq!(level_text(level), text, "{level}");
        }
    }

    #[test]
    fn an_mde_past_the_limit_is_named_and_one_below_is_spelled_out() {
        assert_eq!(mde_text(249_744_193.6), "above 1000%");
        assert_eq!(mde_text(1000.0), "1000.0%");
        assert_eq!(mde_text(3.25), "3.2%");
    }

    #[test]
    fn row_notes_read_as_the_tables_print_them() {
        let inconclusive = |units_needed, counted, per_side| RowNote::Inconclusive {
            mde_pct: Some(3.25),
            units_needed,
            counted,
            per_side,
            min_effect_pct: 1.0,
        };
        for (note, text) in [
            (
                RowNote::NoSpread,
                "no spread at all: every iteration of every run alike",
            ),
            (
                RowNote::OneUnit {
                    unit: LoneUnit::Boot,
                },
                "one boot per side, no calibration across boots",
            ),
            (
                RowNote::CalibrationRefused {
                    unit: LoneUnit::Run,
                    calibration: 7,
                    factor: 64.6,
                },
                "one run per side; calibration 7 refused: today's spread is 65× it",
            ),
            (
                RowNote::OverNoiseCap {
                    design: Design::Pairs,
                    spread_pct: 12.34,
                    cap_pct: 10.0,
                },
                "pair differences vary by 12.3%, over the noise cap of 10%",
            ),
            (
                RowNote::OverNoiseCap {
                    design: Design::Runs,
                    spread_pct: 12.34,
                    cap_pct: 10.0,
                },
                "runs vary by 12.3%, over the noise cap of 10%",
            ),
            (
                inconclusive(Some(7), Design::Runs, true),
                "MDE 3.2%; 7 runs per side to see ±1%",
            ),
            (
                inconclusive(None, Design::Pairs, false),
                "MDE 3.2%; more than 1000 pairs to see ±1%",
            ),
        ] {
            assert_eq!(row_note(&note), text);
        }
        let no_mde = RowNote::Inconclusive {
            mde_pct: None,
            units_needed: None,
            counted: Design::Runs,
            per_side: true,
            min_effect_pct: 1.0,
        };
        assert_eq!(row_note(&no_mde), "no detectable effect could be computed");
    }

    #[test]
    fn ministat_says_why_it_has_no_test() {
        let error = StatsError::TooFewSamples {
            what: "reference",
            needed: 2,
            got: 1,
        };
        let why = MinistatNoTest::TooFewUnits {
            design: Design::Runs,
            base: 1,
            candidate: 3,
            error,
        };
        assert_eq!(
            ministat_no_test(&why),
            "ministat's t needs at least 2 runs per side (1 vs 3): reference needs at least 2 \
             values, got 1"
        );
    }
}
