//! rt-app's JSON (Debian's `rt-app` 1.0, as scheduler developers and LISA's wlgen write it) read
//! as a scenario. The subset: `global.duration` and `default_policy`; tasks with `instance`,
//! `loop`, `policy`, `priority`, `cpus`, `taskgroup`, `dl-runtime`/`dl-period`/`dl-deadline`, and
//! the events `run`, `runtime`, `sleep`, `timer`, `lock`, `unlock`, `barrier` and `yield` (numbered
//! as rt-app allows: `run0`, `sleep1`, in the order written). rt-app's own logging and calibration
//! settings are read and have no effect (schedlab calibrates and measures its own); any other key
//! is a one-line error naming it. Like rt-app's parser (json-c), `/* */` and `//` comments and
//! trailing commas are allowed.
//!
//! Each task becomes a group named after it (lower-cased, other characters as `_`), each
//! taskgroup a cgroup of its own with the controller's defaults. Times are microseconds.
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::spec::{Cpus, Group, Phase, Policy, Scenario, Span, TaskCount, Timer};
use crate::cpu_list::CpuList;

/// A JSON value whose objects keep their keys in the order written (and repeated keys, which
/// rt-app's workgen numbers), unlike serde_json's map.
#[derive(Debug, Clone, PartialEq)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    List(Vec<Json>),
    Object(Vec<(String, Json)>),
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Json;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<Json, E> {
                Ok(Json::Null)
            }
            fn visit_bool<E>(self, b: bool) -> Result<Json, E> {
                Ok(Json::Bool(b))
            }
            fn visit_i64<E>(self, n: i64) -> Result<Json, E> {
                Ok(Json::Int(n))
            }
            fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Json, E> {
                i64::try_from(n)
                    .map(Json::Int)
                    .map_err(|_| E::custom(format!("{n} is too large")))
            }
            fn visit_f64<E>(self, x: f64) -> Result<Json, E> {
                Ok(Json::Float(x))
            }
            fn visit_str<E>(self, s: &str) -> Result<Json, E> {
                Ok(Json::Text(s.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json, A::Error> {
                let mut list = Vec::new();
                while let Some(item) = seq.next_element()? {
                    list.push(item);
                }
                Ok(Json::List(list))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json, A::Error> {
                let mut entries = Vec::new();
                while let Some((k, v)) = map.next_entry()? {
                    entries.push((k, v));
                }
                Ok(Json::Object(entries))
            }
        }
        d.deserialize_any(V)
    }
}

impl Json {
    fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "a boolean",
            Json::Int(_) => "an integer",
            Json::Float(_) => "a number",
            Json::Text(_) => "a string",
            Json::List(_) => "an array",
            Json::Object(_) => "an object",
        }
    }
}

/// Blanks out comments and trailing commas (with spaces, newlines kept), so that serde_json's
/// line and column still point into the file as written.
fn strip_json_extensions(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out: Vec<u8> = bytes.to_vec();
    let mut i = 0;
    let mut in_string = false;
    let mut last_comma: Option<usize> = None;
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            if c == b'\\' {
                i += 2;
                continue;
            }
            if c == b'"' {
                in_string = false;
            }
            i += 1;
            continue;
        }
        match c {
            b'"' => {
                in_string = true;
                last_comma = None;
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let end = text[i + 2..].find("*/").map_or(bytes.len(), |e| i + 2 + e + 2);
                for b in &mut out[i..end] {
                    if *b != b'\n' {
                        *b = b' ';
                    }
                }
                i = end;
                continue;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                let end = text[i..].find('\n').map_or(bytes.len(), |e| i + e);
                for b in &mut out[i..end] {
                    *b = b' ';
                }
                i = end;
                continue;
            }
            b',' => last_comma = Some(i),
            b'}' | b']' => {
                if let Some(at) = last_comma.take() {
                    out[at] = b' ';
                }
            }
            c if c.is_ascii_whitespace() => {}
            _ => last_comma = None,
        }
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// Reads an rt-app file's text as a scenario named `name`; the error is one line.
pub fn from_rtapp(text: &str, name: &str) -> Result<Scenario, String> {
    let cleaned = strip_json_extensions(text);
    let mut de = serde_json::Deserializer::from_str(&cleaned);
    let json = Json::deserialize(&mut de)
        .and_then(|json| de.end().map(|()| json))
        .map_err(|e| format!("line {}, column {}: {}", e.line(), e.column(), strip_position(&e)))?;
    let Json::Object(top) = json else {
        return Err(format!("the file holds {}, not an rt-app object", json.kind()));
    };
    let mut scenario = Scenario {
        name: Some(name.to_string()),
        duration: None,
        cgroup: BTreeMap::new(),
        group: Vec::new(),
    };
    let mut default_policy = Policy::Other;
    let mut tasks = None;
    for (key, value) in &top {
        match key.as_str() {
            "global" => read_global(value, &mut scenario, &mut default_policy)?,
            "tasks" => tasks = Some(value),
            other => return Err(format!("unsupported key {other:?} (schedlab reads \"global\" and \"tasks\")")),
        }
    }
    let Some(Json::Object(tasks)) = tasks else {
        return Err("no \"tasks\" object".into());
    };
    let mut timer_refs: BTreeMap<String, String> = BTreeMap::new();
    for (task, value) in tasks {
        let group = read_task(task, value, default_policy, &mut scenario, &mut timer_refs)?;
        if scenario.group(&group.name).is_some() {
            return Err(format!(
                "tasks {task:?} and another are both named {:?} as groups",
                group.name
            ));
        }
        scenario.group.push(group);
    }
    Ok(scenario)
}

/// serde_json's message without its own " at line L column C".
fn strip_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// rt-app's global settings that only govern its own output (its logs, traces and plots) or its
/// calibration, which schedlab measures for itself.
const WITHOUT_EFFECT: &[&str] = &[
    "calibration",
    "logdir",
    "log_basename",
    "log_size",
    "gnuplot",
    "ftrace",
    "cumulative_slack",
];

fn read_global(value: &Json, scenario: &mut Scenario, default_policy: &mut Policy) -> Result<(), String> {
    let Json::Object(global) = value else {
        return Err(format!("\"global\" is {}, not an object", value.kind()));
    };
    for (key, value) in global {
        let at = || format!("global.{key}");
        match (key.as_str(), value) {
            ("duration", Json::Int(-1)) => scenario.duration = None,
            ("duration", Json::Int(s)) if *s > 0 => {
                scenario.duration = Some(Span((*s as u64).saturating_mul(1_000_000_000)))
            }
            ("duration", other) => {
                return Err(format!("{}: {} is not a number of seconds (or -1)", at(), describe(other)))
            }
            ("default_policy", Json::Text(p)) => *default_policy = policy(p).map_err(|e| format!("{}: {e}", at()))?,
            (key, _) if WITHOUT_EFFECT.contains(&key) => {}
            // Off, these change nothing; on, they ask for what schedlab does not do.
            ("pi_enabled" | "lock_pages", Json::Bool(false)) => {}
            _ => return Err(format!("unsupported key {:?} ({})", at(), describe(value))),
        }
    }
    Ok(())
}

fn describe(value: &Json) -> String {
    match value {
        Json::Int(n) => n.to_string(),
        Json::Bool(b) => b.to_string(),
        Json::Text(s) => format!("{s:?}"),
        other => other.kind().to_string(),
    }
}

fn policy(name: &str) -> Result<Policy, String> {
    Ok(match name {
        "SCHED_OTHER" => Policy::Other,
        "SCHED_BATCH" => Policy::Batch,
        "SCHED_IDLE" => Policy::Idle,
        "SCHED_FIFO" => Policy::Fifo,
        "SCHED_RR" => Policy::Rr,
        "SCHED_DEADLINE" => Policy::Deadline,
        other => return Err(format!("unknown policy {other:?}")),
    })
}

/// A task name as a group name: lower case, `_` for anything else, a letter first.
fn group_name(task: &str) -> String {
    let mut name: String = task
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
        .collect();
    if !name.starts_with(|c: char| c.is_ascii_lowercase()) {
        name.insert_str(0, "t_");
    }
    name.truncate(32);
    name
}

/// The events, longest name first so that `runtime` is not read as `run`.
const EVENTS: &[&str] = &["runtime", "run", "sleep", "timer", "unlock", "lock", "barrier", "yield"];

fn micros(value: &Json, at: &str) -> Result<Span, String> {
    match value {
        Json::Int(us) if *us > 0 => Ok(Span((*us as u64).saturating_mul(1_000))),
        other => Err(format!("{at}: {} is not a positive number of microseconds", describe(other))),
    }
}

fn text<'a>(value: &'a Json, at: &str) -> Result<&'a str, String> {
    match value {
        Json::Text(s) if !s.is_empty() => Ok(s),
        other => Err(format!("{at}: {} is not a name", describe(other))),
    }
}

fn read_task(
    task: &str,
    value: &Json,
    default_policy: Policy,
    scenario: &mut Scenario,
    timer_refs: &mut BTreeMap<String, String>,
) -> Result<Group, String> {
    let label = format!("task {task:?}");
    let Json::Object(keys) = value else {
        return Err(format!("{label} is {}, not an object", value.kind()));
    };
    let mut group = Group::new(group_name(task), default_policy, Vec::new());
    let mut priority = None;
    let mut dl = (None, None, None);
    for (key, value) in keys {
        let at = format!("{label}: {key}");
        match key.as_str() {
            "instance" => match value {
                Json::Int(n) if *n >= 1 => group.count = TaskCount(*n as u64),
                other => return Err(format!("{at}: {} is not a count", describe(other))),
            },
            "loop" => match value {
                Json::Int(-1) => group.loops = None,
                Json::Int(n) if *n >= 1 => group.loops = Some(*n as u64),
                other => return Err(format!("{at}: {} is not a count (or -1)", describe(other))),
            },
            "policy" => group.policy = policy(text(value, &at)?).map_err(|e| format!("{at}: {e}"))?,
            "priority" => match value {
                Json::Int(p) => priority = Some(*p),
                other => return Err(format!("{at}: {} is not a priority", describe(other))),
            },
            "cpus" => {
                let Json::List(cpus) = value else {
                    return Err(format!("{at}: {} is not an array of CPUs", describe(value)));
                };
                let cpus: Result<Vec<u32>, String> = cpus
                    .iter()
                    .map(|c| match c {
                        Json::Int(n) if *n >= 0 => Ok(*n as u32),
                        other => Err(format!("{at}: {} is not a CPU", describe(other))),
                    })
                    .collect();
                group.cpus = Some(Cpus(CpuList::from(cpus?)));
            }
            "taskgroup" => {
                let path = text(value, &at)?;
                let name = group_name(path.trim_matches('/'));
                scenario.cgroup.entry(name.clone()).or_default();
                group.cgroup = Some(name);
            }
            "dl-runtime" => dl.0 = Some(micros(value, &at)?),
            "dl-period" => dl.1 = Some(micros(value, &at)?),
            "dl-deadline" => dl.2 = Some(micros(value, &at)?),
            _ => {
                let Some(event) = EVENTS.iter().find(|e| key.starts_with(**e)) else {
                    return Err(format!("{label}: unsupported key {key:?}"));
                };
                group.phases.push(read_event(event, value, &at, task, group.count.0, timer_refs)?);
            }
        }
    }
    match group.policy {
        Policy::Fifo | Policy::Rr => group.priority = Some(priority.unwrap_or(10) as u32),
        Policy::Other | Policy::Batch => {
            group.nice = priority.filter(|p| *p != 0).map(|p| p as i32);
        }
        Policy::Idle | Policy::Deadline => {}
    }
    if let Some(p) = priority {
        if matches!(group.policy, Policy::Fifo | Policy::Rr) && !(1..=99).contains(&p) {
            return Err(format!(
                "{label}: priority must be between 1 and 99 for {}, not {p}",
                group.policy.kernel_name()
            ));
        }
    }
    if group.policy == Policy::Deadline {
        group.runtime = dl.0;
        group.period = dl.1.or(dl.0);
        group.deadline = dl.2;
    } else if dl != (None, None, None) {
        return Err(format!(
            "{label}: dl-runtime, dl-period and dl-deadline are for SCHED_DEADLINE, not {}",
            group.policy.kernel_name()
        ));
    }
    Ok(group)
}

fn read_event(
    event: &str,
    value: &Json,
    at: &str,
    task: &str,
    instances: u64,
    timer_refs: &mut BTreeMap<String, String>,
) -> Result<Phase, String> {
    Ok(match event {
        "run" => Phase::Run(micros(value, at)?),
        "runtime" => Phase::Spin(micros(value, at)?),
        "sleep" => Phase::Sleep(micros(value, at)?),
        "lock" => Phase::Lock(text(value, at)?.to_string()),
        "unlock" => Phase::Unlock(text(value, at)?.to_string()),
        "barrier" => Phase::Barrier(text(value, at)?.to_string()),
        "yield" => Phase::Yield,
        "timer" => {
            let Json::Object(fields) = value else {
                return Err(format!("{at}: {} is not a timer object", describe(value)));
            };
            let mut period = None;
            let mut relative = true;
            for (key, value) in fields {
                match (key.as_str(), value) {
                    ("period", v) => period = Some(micros(v, &format!("{at}.period"))?),
                    ("mode", Json::Text(m)) if m == "relative" => relative = true,
                    ("mode", Json::Text(m)) if m == "absolute" => relative = false,
                    ("ref", Json::Text(name)) => {
                        // Every task of schedlab's has timers of its own: a timer rt-app would
                        // share between tasks or instances is refused, not silently split.
                        if !name.starts_with("unique") {
                            if instances > 1 {
                                return Err(format!(
                                    "{at}: timer {name:?} would be shared by the task's \
                                     {instances} instances in rt-app; name it \"unique…\" for a \
                                     timer per instance, which is what schedlab runs"
                                ));
                            }
                            if let Some(other) = timer_refs.insert(name.clone(), task.to_string()) {
                                if other != task {
                                    return Err(format!(
                                        "{at}: timer {name:?} is shared with task {other:?} in \
                                         rt-app; schedlab gives every task its own timer (name \
                                         them apart)"
                                    ));
                                }
                            }
                        }
                    }
                    _ => return Err(format!("{at}: unsupported key {key:?} ({})", describe(value))),
                }
            }
            let Some(period) = period else {
                return Err(format!("{at}: the timer has no period"));
            };
            Phase::Timer(Timer { period, relative })
        }
        _ => unreachable!("every event of EVENTS is read"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// rt-app's tutorial example 1, as Debian ships it: comments and trailing commas included.
    const EXAMPLE1: &str = r#"{
	/*
	 * Simple use case which creates a thread that run 2ms then sleep 8ms
	 * until the use case is stopped with Ctrl+C
	 */
	"tasks" : {
		"thread0" : {
			"loop" : -1,
			"run" :   20000,
			"sleep" : 80000
		}
	},
	"global" : {
		"duration" : 2,
		"calibration" : "CPU0",
		"default_policy" : "SCHED_OTHER",
		"pi_enabled" : false,
		"lock_pages" : false,
		"logdir" : "./",
		"log_basename" : "rt-app1",
		"ftrace" : false,
		"gnuplot" : true,
	}
}"#;

    #[test]
    fn the_tutorials_first_example_reads() {
        let s = from_rtapp(EXAMPLE1, "example1").unwrap();
        s.check().unwrap();
        assert_eq!(s.duration, Some(Span(2_000_000_000)));
        assert_eq!(s.group.len(), 1);
        let g = &s.group[0];
        assert_eq!((g.name.as_str(), g.count.0, g.loops), ("thread0", 1, None));
        assert_eq!(g.phases, [Phase::Run(Span(20_000_000)), Phase::Sleep(Span(80_000_000))]);
    }

    #[test]
    fn events_keep_their_order_and_tasks_their_settings() {
        let text = r#"{
            "global": { "duration": -1, "default_policy": "SCHED_FIFO" },
            "tasks": {
                "Big.Task": {
                    "instance": 2, "loop": 10, "priority": 20, "cpus": [0],
                    "taskgroup": "/tg1",
                    "timer0": { "ref": "unique", "period": 10000, "mode": "absolute" },
                    "lock": "m", "run0": 1000, "unlock": "m",
                    "runtime": 500, "barrier": "b", "yield": ""
                },
                "dl": { "policy": "SCHED_DEADLINE", "dl-runtime": 1000, "dl-period": 10000,
                        "loop": 10, "run": 500, "barrier": "b", "timer": { "ref": "t", "period": 10000 } }
            }
        }"#;
        let s = from_rtapp(text, "x").unwrap();
        let big = &s.group[0];
        assert_eq!(big.name, "big_task");
        assert_eq!((big.count.0, big.loops, big.policy, big.priority), (2, Some(10), Policy::Fifo, Some(20)));
        assert_eq!(big.cgroup.as_deref(), Some("tg1"));
        assert!(s.cgroup.contains_key("tg1"));
        assert_eq!(
            big.phases,
            [
                Phase::Timer(Timer { period: Span(10_000_000), relative: false }),
                Phase::Lock("m".into()),
                Phase::Run(Span(1_000_000)),
                Phase::Unlock("m".into()),
                Phase::Spin(Span(500_000)),
                Phase::Barrier("b".into()),
                Phase::Yield,
            ]
        );
        let dl = &s.group[1];
        assert_eq!((dl.policy, dl.runtime, dl.period), (Policy::Deadline, Some(Span(1_000_000)), Some(Span(10_000_000))));
        assert_eq!(dl.phases[2], Phase::Timer(Timer { period: Span(10_000_000), relative: true }));
        // Ten loops each: the barrier balances.
        s.check().unwrap();
    }

    #[test]
    fn what_is_not_read_is_named() {
        for (text, says) in [
            (r#"{"tasks": {"t": {"run": 10, "suspend": "x"}}}"#, "task \"t\": unsupported key \"suspend\""),
            (r#"{"tasks": {"t": {"phases": {}}}}"#, "unsupported key \"phases\""),
            (r#"{"tasks": {}, "resources": {}}"#, "unsupported key \"resources\""),
            (r#"{"global": {"io_device": "/dev/null"}, "tasks": {}}"#, "unsupported key \"global.io_device\""),
            (r#"{"global": {"lock_pages": true}, "tasks": {}}"#, "unsupported key \"global.lock_pages\""),
            (r#"{"tasks": {"t": {"run": "10"}}}"#, "is not a positive number of microseconds"),
            (r#"{"tasks": {"t": {"policy": "SCHED_FIFO", "priority": 100, "run": 10}}}"#, "between 1 and 99"),
            (r#"{"tasks": {"t": {"instance": 2, "timer": {"ref": "t", "period": 100}}}}"#, "shared by the task's 2 instances"),
            (r#"{"tasks": {"a": {"timer": {"ref": "t", "period": 100}}, "b": {"timer": {"ref": "t", "period": 100}}}}"#, "shared with task \"a\""),
            (r#"{"tasks": {"t": {"run": 10,}"#, "line 1"),
            (r#"[1]"#, "not an rt-app object"),
        ] {
            let err = from_rtapp(text, "x").expect_err(text);
            assert!(err.contains(says), "{text}\n→ {err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn comments_and_trailing_commas_are_blanked_in_place() {
        let text = "{\"a\": \"/* not a comment */\", // note\n \"b\": [1, 2,], /* x */ }";
        let cleaned = strip_json_extensions(text);
        assert_eq!(cleaned.len(), text.len());
        assert!(cleaned.contains("\"/* not a comment */\""));
        let v: serde_json::Value = serde_json::from_str(&cleaned).unwrap();
        assert_eq!(v["b"], serde_json::json!([1, 2]));
    }
}
