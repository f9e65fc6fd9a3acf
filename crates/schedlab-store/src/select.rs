//! The fleet view's selections: which stored runs `runs`, `compare`, `history` and `changes`
//! look at (`--host`, `--kernel`, `--where key=value` on fingerprint fields, a case), and the
//! machines a store has heard from (`schedlab hosts`); [`crate::defaults`] answers both from
//! whole runs.
use schedlab_core::fingerprint::Fingerprint;

use crate::{RunSummary, StoreError};

/// Which runs to look at; an empty selection takes every run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunSelection {
    /// The fingerprint's hostname.
    pub host: Option<String>,
    /// The kernel release, as `uname -r` prints it.
    pub kernel: Option<String>,
    /// Fingerprint fields that must read as the value (see [`fingerprint_field`]).
    pub fields: Vec<(String, String)>,
    /// Only runs with a case of this canonical name.
    pub case: Option<String>,
    /// Only runs started at or after this time (ns since the epoch).
    pub since_ns: Option<i64>,
    /// Only runs started before this time.
    pub until_ns: Option<i64>,
    /// Only these runs (a comparison's side, already resolved).
    pub ids: Option<Vec<i64>>,
}

impl RunSelection {
    pub fn is_empty(&self) -> bool {
        self.host.is_none()
            && self.kernel.is_none()
            && self.fields.is_empty()
            && self.case.is_none()
            && self.since_ns.is_none()
            && self.until_ns.is_none()
            && self.ids.is_none()
    }

    /// Adds a `--where key=value`; an unknown field or a missing `=` is an error naming the
    /// fields there are.
    pub fn add_where(&mut self, text: &str) -> std::result::Result<(), String> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| format!("--where {text:?}: expected key=value"))?;
        let key = key.trim();
        let known = field_names();
        let top = key.split_once('.').map_or(key, |(top, _)| top);
        if !known.iter().any(|k| k == top) {
            return Err(format!(
                "--where {key}: no such fingerprint field; the fields are {}",
                known.join(", ")
            ));
        }
        self.fields.push((key.to_string(), value.to_string()));
        Ok(())
    }

    /// Whether the run's list line passes the host, kernel, time and id tests.
    pub fn matches_summary(&self, run: &RunSummary) -> bool {
        self.host.as_ref().is_none_or(|h| *h == run.hostname)
            && self
                .kernel
                .as_ref()
                .is_none_or(|k| *k == run.kernel_release)
            && self.since_ns.is_none_or(|t| run.started_at_ns >= t)
            && self.until_ns.is_none_or(|t| run.started_at_ns < t)
            && self.ids.as_ref().is_none_or(|ids| ids.contains(&run.id))
    }

    /// Whether the fingerprint passes the field tests.
    pub fn matches_fingerprint(&self, fingerprint: &Fingerprint) -> bool {
        let value = serde_json::to_value(fingerprint).unwrap_or_default();
        self.fields
            .iter()
            .all(|(key, want)| field_of(&value, key).is_some_and(|v| v == *want))
    }
}

/// The fingerprint's fields by name, as `--where` takes them.
pub fn field_names() -> Vec<String> {
    match serde_json::to_value(Fingerprint::default()) {
        Ok(serde_json::Value::Object(map)) => map.keys().cloned().collect(),
        _ => Vec::new(),
    }
}

/// JSON documents of which a fingerprint must contain one (PostgreSQL's `@>`) for `key` to read
/// `want` ([`fingerprint_field`]): what lets a JSON index find the runs. A run containing none
/// cannot match; one containing one may still not (an array holds more items, a number is
/// written otherwise), so matches are confirmed on the fingerprint. `None` where no such
/// documents can be said (`none`, which a missing value, an empty list and an absent entry all
/// read as; a whole list or map): every run is a candidate then.
pub(crate) fn containing_documents(key: &str, want: &str) -> Option<Vec<serde_json::Value>> {
    Some(containment(key, want)?.0)
}

/// Whether a fingerprint contains one of [`containing_documents`] exactly when `key` reads
/// `want`: for a text or boolean field, an entry of a map (whose values are text), or a number
/// written as JSON writes it. Such a match needs no fingerprint read to confirm it.
pub(crate) fn contains_exactly(key: &str, want: &str) -> bool {
    containment(key, want).is_some_and(|(_, exact)| exact)
}

/// [`containing_documents`], and whether they are exact ([`contains_exactly`]).
fn containment(key: &str, want: &str) -> Option<(Vec<serde_json::Value>, bool)> {
    use serde_json::{json, Value};
    if want == "none" {
        return None;
    }
    let defaults = serde_json::to_value(Fingerprint::default()).ok()?;
    let number = || serde_json::from_str::<serde_json::Number>(want).ok();
    // A leaf whose type the default does not tell: text, a number, a boolean, or a list.
    let any_leaf = || {
        let mut leaves = vec![Value::String(want.into())];
        leaves.extend(number().map(Value::Number));
        leaves.extend(want.parse::<bool>().ok().map(Value::Bool));
        let items = want.split(',').map(|item| Value::String(item.into()));
        leaves.push(Value::Array(items.collect()));
        leaves
    };
    let text = || vec![Value::String(want.into())];
    let (leaves, exact) = match defaults.get(key) {
        Some(Value::String(_)) => (text(), true),
        Some(Value::Bool(_)) => {
            let leaf = want.parse::<bool>().ok().map(Value::Bool);
            (leaf.into_iter().collect(), true)
        }
        Some(Value::Number(_)) => {
            let n = number();
            // 3.0 contains 3 too, which reads "3": only an integer written so is exact.
            let exact = n
                .as_ref()
                .is_some_and(|n| (n.is_i64() || n.is_u64()) && n.to_string() == want);
            (n.map(Value::Number).into_iter().collect(), exact)
        }
        Some(Value::Null) => (any_leaf(), false),
        Some(_) => return None,
        None => {
            let (top, entry) = key.split_once('.')?;
            let (leaves, exact) = match defaults.get(top)? {
                // The maps of text (sysctls, vulnerabilities).
                Value::Object(_) => (text(), true),
                Value::Null => (any_leaf(), false),
                _ => return None,
            };
            let documents = leaves
                .into_iter()
                .map(|leaf| json!({ top: { entry: leaf } }));
            return Some((documents.collect(), exact));
        }
    };
    let documents = leaves.into_iter().map(|leaf| json!({ key: leaf }));
    Some((documents.collect(), exact))
}

/// A fingerprint field as text: strings as they are, numbers and booleans as JSON writes them,
/// lists joined with `,`, a missing value (an empty list, a map's absent entry) as `none`;
/// `map.key` reads one entry of a map field
/// (`sched_sysctls.kernel.sched_migration_cost_ns`). `None` when there is no such field.
pub fn fingerprint_field(fingerprint: &Fingerprint, key: &str) -> Option<String> {
    field_of(&serde_json::to_value(fingerprint).ok()?, key)
}

fn field_of(value: &serde_json::Value, key: &str) -> Option<String> {
    let found = match value.get(key) {
        Some(v) => v,
        None => {
            let (top, rest) = key.split_once('.')?;
            match value.get(top)? {
                // An entry the map does not hold (a sysctl that kernel lacks) is missing too.
                serde_json::Value::Object(map) => map.get(rest).unwrap_or(&serde_json::Value::Null),
                _ => return None,
            }
        }
    };
    Some(text_of(found))
}

/// A missing value, an empty list and an absent map entry all read `none`, as `env` shows `-`
/// for each.
fn text_of(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "none".into(),
        Value::Array(items) if items.is_empty() => "none".into(),
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(text_of).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

/// One machine a store has runs of.
#[derive(Debug, Clone, PartialEq)]
pub struct HostSummary {
    pub hostname: String,
    pub runs: usize,
    /// Distinct kernel releases among its runs.
    pub kernels: usize,
    pub first_started_at_ns: i64,
    /// Its newest run.
    pub last: RunSummary,
}

/// The error for a selection that names no run, saying what was asked.
pub fn nothing_selected(what: &str, selection: &RunSelection) -> StoreError {
    let mut parts = Vec::new();
    if let Some(h) = &selection.host {
        parts.push(format!("--host {h}"));
    }
    if let Some(k) = &selection.kernel {
        parts.push(format!("--kernel {k}"));
    }
    for (k, v) in &selection.fields {
        parts.push(format!("--where {k}={v}"));
    }
    if selection.since_ns.is_some() {
        parts.push("--since".into());
    }
    if selection.until_ns.is_some() {
        parts.push("--until".into());
    }
    StoreError::NotFound(format!("{what} has no run matching {}", parts.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_as_text() {
        let mut fp = Fingerprint {
            cpu_model: "Xeon".into(),
            online_cpu_count: 4,
            smt_active: Some(true),
            cpufreq_governors: vec!["performance".into(), "powersave".into()],
            ..Fingerprint::default()
        };
        fp.sched_sysctls
            .insert("kernel.sched_rt_runtime_us".into(), "950000".into());
        assert_eq!(fingerprint_field(&fp, "cpu_model").unwrap(), "Xeon");
        assert_eq!(fingerprint_field(&fp, "online_cpu_count").unwrap(), "4");
        assert_eq!(fingerprint_field(&fp, "smt_active").unwrap(), "true");
        assert_eq!(
            fingerprint_field(&fp, "cpufreq_governors").unwrap(),
            "performance,powersave"
        );
        assert_eq!(fingerprint_field(&fp, "preempt_model").unwrap(), "none");
        assert_eq!(
            fingerprint_field(&fp, "sched_sysctls.kernel.sched_rt_runtime_us").unwrap(),
            "950000"
        );
        assert!(fingerprint_field(&fp, "nonsense").is_none());
        // Nothing there reads `none`, whatever its shape.
        fp.cpufreq_governors.clear();
        assert_eq!(fingerprint_field(&fp, "cpufreq_governors").unwrap(), "none");
        assert_eq!(
            fingerprint_field(&fp, "sched_sysctls.kernel.no_such_sysctl").unwrap(),
            "none"
        );
        assert!(fingerprint_field(&fp, "cpu_model.x").is_none());
    }

    #[test]
    fn where_takes_known_fields_only() {
        let mut s = RunSelection::default();
        s.add_where("cpu_model=Xeon").unwrap();
        s.add_where("sched_sysctls.kernel.x=1").unwrap();
        let err = s.add_where("cpu=Xeon").unwrap_err();
        assert!(err.contains("cpu_model"), "{err}");
        assert!(s.add_where("cpu_model").is_err());
        let fp = Fingerprint {
            cpu_model: "Xeon".into(),
            ..Fingerprint::default()
        };
        let mut only_cpu = RunSelection::default();
        only_cpu.add_where("cpu_model=Xeon").unwrap();
        assert!(only_cpu.matches_fingerprint(&fp));
        only_cpu.add_where("hypervisor=true").unwrap();
        assert!(!only_cpu.matches_fingerprint(&fp));
    }
}
