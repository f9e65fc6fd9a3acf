//! Scaling series among case specs: the cases of one workload that differ in a single numeric
//! parameter (hackbench's `groups`, schbench's `workers`, syscall's `threads`), found by their
//! parameters (the suite-file keys), so a run of one matrix groups the same way in `show` and in
//! a comparison ([`crate::scaling`] places a comparison's sides along them).
use serde::Serialize;
use serde_json::{Map, Value};

use schedlab_core::plan::CaseSpec;

/// A series needs this many distinct values of its parameter: two points are a comparison, not
/// a curve.
pub const MIN_POINTS: usize = 3;

/// How the x axis spaces the parameter's values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum XScale {
    Linear,
    Log,
}

/// Cases that differ in one numeric parameter only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Grouping {
    pub workload: String,
    /// The parameter that varies, by its suite-file key.
    pub parameter: String,
    /// Every other parameter, the same in each case (suite-file keys).
    pub fixed: Map<String, Value>,
    /// The parameter's values, ascending.
    pub values: Vec<f64>,
    /// The case at each value.
    pub cases: Vec<String>,
    pub x_scale: XScale,
    /// Each value's place on the x axis: log2 of the value on a log axis, the value itself on a
    /// linear one.
    pub x: Vec<f64>,
}

impl Grouping {
    /// The fixed parameters as `key=value` words, for captions and headings.
    pub fn fixed_label(&self) -> String {
        self.fixed
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// A case's parameters as suite files spell them, `workload` included.
fn parameters(spec: &CaseSpec) -> Option<Map<String, Value>> {
    match serde_json::to_value(&spec.workload) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// A numeric parameter's value; booleans, strings, lists and absent options are not numbers.
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Number(n) => n.as_f64().filter(|x| x.is_finite()),
        _ => None,
    }
}

/// The series among `cases`: for every numeric parameter, the cases whose other parameters are
/// all equal, when they take at least [`MIN_POINTS`] values of it. A case may lie on several
/// series (a groups × fds matrix has a series over groups per fds and one over fds per groups).
/// Cases are told apart by name, the first spec of a name standing for it. Series come per
/// workload in the order cases first name it, the parameter with the most values first (the
/// likeliest scaling axis), then by parameter name and the first case's position.
pub fn group<'a>(cases: impl IntoIterator<Item = &'a CaseSpec>) -> Vec<Grouping> {
    struct Open {
        first: usize,
        workload_first: usize,
        workload: String,
        parameter: String,
        fixed: Map<String, Value>,
        members: Vec<(f64, String)>,
    }
    let mut seen: Vec<&str> = Vec::new();
    let mut workloads: Vec<String> = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    for spec in cases {
        if seen.contains(&spec.name.as_str()) {
            continue;
        }
        let position = seen.len();
        seen.push(&spec.name);
        let Some(mut params) = parameters(spec) else {
            continue;
        };
        let workload = match params.remove("workload") {
            Some(Value::String(w)) => w,
            _ => continue,
        };
        let workload_first = match workloads.iter().position(|w| *w == workload) {
            Some(i) => i,
            None => {
                workloads.push(workload.clone());
                workloads.len() - 1
            }
        };
        for (key, value) in &params {
            let Some(x) = number(value) else {
                continue;
            };
            let mut fixed = params.clone();
            fixed.remove(key);
            match open
                .iter_mut()
                .find(|o| o.workload == workload && o.parameter == *key && o.fixed == fixed)
            {
                Some(o) => {
                    if !o.members.iter().any(|(v, _)| *v == x) {
                        o.members.push((x, spec.name.clone()));
                    }
                }
                None => open.push(Open {
                    first: position,
                    workload_first,
                    workload: workload.clone(),
                    parameter: key.clone(),
                    fixed,
                    members: vec![(x, spec.name.clone())],
                }),
            }
        }
    }
    open.retain(|o| o.members.len() >= MIN_POINTS);
    open.sort_by(|a, b| {
        a.workload_first
            .cmp(&b.workload_first)
            .then(b.members.len().cmp(&a.members.len()))
            .then(a.parameter.cmp(&b.parameter))
            .then(a.first.cmp(&b.first))
    });
    open.into_iter()
        .map(|mut o| {
            o.members.sort_by(|a, b| a.0.total_cmp(&b.0));
            let values: Vec<f64> = o.members.iter().map(|m| m.0).collect();
            let x_scale = x_scale(&values);
            let x = values
                .iter()
                .map(|v| match x_scale {
                    XScale::Log => v.log2(),
                    XScale::Linear => *v,
                })
                .collect();
            Grouping {
                workload: o.workload,
                parameter: o.parameter,
                fixed: o.fixed,
                cases: o.members.into_iter().map(|m| m.1).collect(),
                values,
                x_scale,
                x,
            }
        })
        .collect()
}

/// Log when the values are positive and more evenly spaced on a log axis than on a linear one
/// (1, 2, 4, 8 groups; 1 to 256 CPUs), linear otherwise (15, 30, 45 fds). Evenness is the
/// coefficient of variation of the gaps between neighbours.
pub fn x_scale(sorted: &[f64]) -> XScale {
    if sorted.first().is_none_or(|v| *v <= 0.0) {
        return XScale::Linear;
    }
    let unevenness = |xs: &[f64]| {
        let gaps: Vec<f64> = xs.windows(2).map(|w| w[1] - w[0]).collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len().max(1) as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / gaps.len().max(1) as f64;
        if mean > 0.0 {
            var.sqrt() / mean
        } else {
            f64::INFINITY
        }
    };
    let logs: Vec<f64> = sorted.iter().map(|v| v.log2()).collect();
    // A small margin keeps evenly spaced values linear where both spacings are nearly as even.
    if unevenness(&logs) + 0.05 < unevenness(sorted) {
        XScale::Log
    } else {
        XScale::Linear
    }
}
