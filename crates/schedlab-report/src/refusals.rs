//! Why the analysis could not answer what was asked, in words: an `--across` that does not
//! apply to the selected runs, a history that cannot be built, runs that make no calibration.
//! The analysis returns the reasons as enums; the commands print these sentences.
use schedlab_analysis::across::AcrossError;
use schedlab_analysis::calibration::CalibrationError;
use schedlab_analysis::history::HistoryError;

/// Why `--across` does not apply.
pub fn across(e: &AcrossError) -> String {
    match e {
        AcrossError::UnknownKey { key, known } => format!(
            "--across {key}: no workload of the selected runs has a parameter `{key}` (theirs: {})",
            known.join(", ")
        ),
        AcrossError::ValueNotFound { key, value, found } => format!(
            "--across {key}: no case of the selected runs has {key}={value} (found: {})",
            found.join(", ")
        ),
        AcrossError::TooFewValues { key } => format!(
            "--across {key}=...: give a base and at least one candidate value, e.g. {key}=A,B"
        ),
        AcrossError::RepeatedValue { key, value } => {
            format!("--across {key}=...: {value} is listed twice")
        }
        AcrossError::OneValueFound { key, found } if found.is_empty() => {
            format!("--across {key}: no case of the selected runs sets {key}")
        }
        AcrossError::OneValueFound { key, found } => format!(
            "--across {key}: every case of the selected runs has {key}={}, so there is nothing \
             to compare it with",
            found.join(",")
        ),
    }
}

/// Why a case has no history.
pub fn history(e: &HistoryError) -> String {
    match e {
        HistoryError::NoRuns { case } => format!("no complete run measured case {case}"),
        HistoryError::NoMetric {
            case,
            metric,
            available,
        } => format!(
            "case {case} has no metric {metric}; it has {}",
            available.join(", ")
        ),
        HistoryError::NotFinite {
            case,
            metric,
            run_id,
        } => format!(
            "case {case}, metric {metric}: run {} stored a value that is not a finite number",
            run_id.map_or_else(|| "?".to_string(), |id| id.to_string())
        ),
        HistoryError::ManyHosts(hosts) => format!(
            "the runs of this case come from {} hosts ({}); a history is one machine's: pass \
             --host",
            hosts.len(),
            hosts.join(", ")
        ),
    }
}

/// Why runs make no calibration.
pub fn calibration(e: &CalibrationError) -> String {
    match e {
        CalibrationError::NoCompleteRun => "no complete runs to calibrate from".to_string(),
        CalibrationError::MachinesDiffer {
            first,
            other,
            fields,
        } => format!(
            "runs {} and {} ran on machines that differ in {}",
            first.unwrap_or_default(),
            other.unwrap_or_default(),
            fields.join(", ")
        ),
        CalibrationError::TooFewRuns { needed } => {
            format!("no case has at least {needed} complete runs with the same iteration count")
        }
    }
}
