//! `compare --across KEY`: one set of runs seen as sides by the value of one workload parameter.
//!
//! A kernel developer often measures two variants in one binary and one run (cpudl's heap
//! `variant`, cpupri's `layout`): each variant is a case of its own, so no case is on both sides
//! of a plain comparison. Here the runs' cases are split by the value of `KEY` (a suite key, read
//! from each case's typed parameters, never from its name); cases that agree on every other
//! parameter, the workload included, form a row, named by the base case. A run that holds both
//! cases of a row is then a pair ([`crate::units::row_units_across`]): its own conditions, which
//! move both cases alike, cancel in the difference.
use serde::Serialize;

use schedlab_core::plan::CaseSpec;
use schedlab_core::workload::WorkloadDefinition;

use crate::series::{case_label, Series, Side};

/// The projection a comparison was made over, as the JSON records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Across {
    /// The workload parameter, as a suite file names it.
    pub key: String,
    /// Its values, the base first, as the side names show them.
    pub values: Vec<String>,
}

/// Why `--across` cannot be applied to the selected runs (`schedlab-report` words it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AcrossError {
    /// No workload of the selected runs has the parameter.
    UnknownKey { key: String, known: Vec<String> },
    /// A value asked for that no case of the selected runs has.
    ValueNotFound {
        key: String,
        value: String,
        found: Vec<String>,
    },
    /// A value list of fewer than two values.
    TooFewValues { key: String },
    /// A value list that names a value twice.
    RepeatedValue { key: String, value: String },
    /// No value list, and the runs' cases take fewer than two values.
    OneValueFound { key: String, found: Vec<String> },
}

/// A set of runs split into sides by one parameter.
#[derive(Debug, Clone)]
pub struct Projection {
    pub across: Across,
    /// The base side (the first value) first, then one side per candidate value.
    pub sides: Vec<Side>,
    /// Per side: (row name, the side's own case name) for each case that goes by its base
    /// partner's name, so a calibration can be found for the case that actually ran.
    renamed: Vec<Vec<(String, String)>>,
}

impl Projection {
    /// The case side `side` ran for the row `row` (the base case's name).
    pub fn own_case<'a>(&'a self, side: usize, row: &'a str) -> &'a str {
        self.renamed
            .get(side)
            .and_then(|r| r.iter().find(|(name, _)| name == row))
            .map_or(row, |(_, own)| own.as_str())
    }
}

/// A parameter's value as a side's name shows it: text as it is, numbers as Rust prints them
/// (10, not 10.0), anything else as JSON.
fn value_text(value: &serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => match n.as_f64() {
            Some(x) if !n.is_i64() && !n.is_u64() => x.to_string(),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Whether the value asked for on the command line is `found`: the same text, or the same
/// number (`10.0` is 10).
fn same_value(asked: &str, found: &str) -> bool {
    asked == found
        || matches!(
            (asked.parse::<f64>(), found.parse::<f64>()),
            (Ok(a), Ok(b)) if a == b
        )
}

/// A case as the projection reads it: its value of the key and its row (every other
/// parameter, the workload included), or `None` when it does not set the key. A default that is
/// the same on every machine counts as set (`WorkloadSpec::settled`).
fn place(spec: &CaseSpec, key: &str) -> Option<(String, String)> {
    let serde_json::Value::Object(mut params) =
        serde_json::to_value(spec.workload.settled()).ok()?
    else {
        return None;
    };
    let value = params.remove(key)?;
    Some((
        value_text(&value),
        serde_json::Value::Object(params).to_string(),
    ))
}

/// Splits `all` (every selected run, as one side) into one side per value of `key`: `values`
/// names them, the base first; without it, every value the cases take, in the order the runs'
/// plans list them.
pub fn project(
    all: &Side,
    key: &str,
    values: Option<&[String]>,
) -> Result<Projection, AcrossError> {
    let declared = |spec: &CaseSpec| {
        let name = serde_json::to_value(&spec.workload)
            .ok()
            .and_then(|v| v.get("workload")?.as_str().map(String::from))?;
        WorkloadDefinition::find(&name)
    };
    if key == "workload"
        || !all
            .cases
            .iter()
            .any(|c| declared(c).is_some_and(|d| d.param(key).is_some()))
    {
        let mut known: Vec<String> = Vec::new();
        for definition in all.cases.iter().filter_map(declared) {
            for p in definition.params {
                if !known.iter().any(|k| k == p.key) {
                    known.push(p.key.to_string());
                }
            }
        }
        return Err(AcrossError::UnknownKey {
            key: key.to_string(),
            known,
        });
    }
    let placed: Vec<(&CaseSpec, String, String)> = all
        .cases
        .iter()
        .filter_map(|c| place(c, key).map(|(value, row)| (c, value, row)))
        .collect();
    let mut found: Vec<String> = Vec::new();
    for (_, value, _) in &placed {
        if !found.contains(value) {
            found.push(value.clone());
        }
    }
    let chosen = chosen_values(key, values, found)?;
    // The base case of each row, by row.
    let base_of_row: Vec<(&String, &CaseSpec)> = placed
        .iter()
        .filter(|(_, value, _)| *value == chosen[0])
        .map(|(spec, _, row)| (row, *spec))
        .collect();
    let (sides, renamed) = chosen
        .iter()
        .map(|value| side_of(all, key, value, &placed, &base_of_row))
        .unzip();
    Ok(Projection {
        across: Across {
            key: key.to_string(),
            values: chosen,
        },
        sides,
        renamed,
    })
}

/// The values the sides take, the base's first: those asked for, each found among the cases,
/// or every value found.
fn chosen_values(
    key: &str,
    values: Option<&[String]>,
    found: Vec<String>,
) -> Result<Vec<String>, AcrossError> {
    match values {
        Some(asked) => {
            if asked.len() < 2 {
                return Err(AcrossError::TooFewValues {
                    key: key.to_string(),
                });
            }
            let mut chosen: Vec<String> = Vec::new();
            for a in asked {
                let Some(value) = found.iter().find(|f| same_value(a, f)) else {
                    return Err(AcrossError::ValueNotFound {
                        key: key.to_string(),
                        value: a.clone(),
                        found: found.clone(),
                    });
                };
                if chosen.contains(value) {
                    return Err(AcrossError::RepeatedValue {
                        key: key.to_string(),
                        value: a.clone(),
                    });
                }
                chosen.push(value.clone());
            }
            Ok(chosen)
        }
        None if found.len() < 2 => Err(AcrossError::OneValueFound {
            key: key.to_string(),
            found,
        }),
        None => Ok(found),
    }
}

/// The side of one value: its cases, each under its base partner's name, and (row name, own
/// case name) for each case renamed so.
fn side_of(
    all: &Side,
    key: &str,
    value: &str,
    placed: &[(&CaseSpec, String, String)],
    base_of_row: &[(&String, &CaseSpec)],
) -> (Side, Vec<(String, String)>) {
    let mut names: Vec<(String, Option<&CaseSpec>)> = Vec::new();
    let mut cases = Vec::new();
    for (spec, v, row) in placed {
        if v != value {
            continue;
        }
        let partner = base_of_row.iter().find(|(r, _)| *r == row).map(|(_, s)| *s);
        names.push((spec.name.clone(), partner));
        cases.push((*spec).clone());
    }
    let series: Vec<Series> = all
        .series
        .iter()
        .filter_map(|s| {
            let (_, partner) = names.iter().find(|(n, _)| *n == s.case.name)?;
            let mut s = s.clone();
            if let Some(partner) = partner {
                s.case = case_label(&partner.name, &partner.workload);
            }
            Some(s)
        })
        .collect();
    let renamed = names
        .iter()
        .filter_map(|(own, partner)| {
            let partner = (*partner)?;
            (partner.name != *own).then(|| (partner.name.clone(), own.clone()))
        })
        .collect();
    let side = Side {
        name: format!("{key}={value}"),
        origin: all.origin,
        runs: all.runs.clone(),
        excluded: all.excluded.clone(),
        series,
        disturbed_dropped: all.disturbed_dropped,
        cases,
    };
    (side, renamed)
}
