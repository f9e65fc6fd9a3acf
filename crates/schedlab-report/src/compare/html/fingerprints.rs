//! The sides' machine fingerprints side by side: every field of `Fingerprint` (enumerated through
//! its serde form, so a field added there shows up here; maps such as the sched sysctls and the
//! CPU vulnerabilities one row per entry), each side's distinct values over its runs, and every
//! difference from the baseline classed by what it means for the comparison.
use std::fmt::{self, Write};

use super::assets;
use super::escape::Esc;
use schedlab_core::fingerprint::{Fingerprint, MUST_MATCH};

/// What a difference from the baseline means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    Same,
    /// The kernel and the boot: what a comparison of kernels is about.
    Expected,
    /// Hardware and tuning that `schedlab compare` refuses to mix without
    /// `--allow-fingerprint-mismatch` (`schedlab_core::fingerprint::MUST_MATCH`).
    Refused,
    /// Anything else: worth a look before trusting the numbers.
    Differs,
}

impl Difference {
    pub fn class(self) -> &'static str {
        match self {
            Difference::Same => "fp-same",
            Difference::Expected => "fp-expected",
            Difference::Refused => "fp-refused",
            Difference::Differs => "fp-differs",
        }
    }

    fn badge(self) -> &'static str {
        match self {
            Difference::Same => "",
            Difference::Expected => "expected",
            Difference::Refused => "mismatch",
            Difference::Differs => "differs",
        }
    }
}

const EXPECTED: [&str; 4] = [
    "kernel_release",
    "kernel_version",
    "kernel_cmdline",
    "boot_id",
];

fn refused(field: &str) -> bool {
    MUST_MATCH.iter().any(|must| must.field == field)
}

/// The scheduler settings added to the fingerprint later (preemption model, sched_features, sched
/// sysctls, THP, isolation, mitigations, microcode, memory, cgroups) are all `differs`: the
/// kernel under test sets many of them (a patch may change sched_features or a sysctl default)
/// and `schedlab ab` arms toggle them, so refusing them would refuse the experiments schedlab
/// exists for; flagged, they explain a difference instead. A map's entry (`sched_sysctls.kernel.x`)
/// is classed as its map.
pub fn classify(field: &str) -> Difference {
    let field = field.split_once('.').map_or(field, |(map, _)| map);
    if EXPECTED.contains(&field) {
        Difference::Expected
    } else if refused(field) {
        Difference::Refused
    } else {
        Difference::Differs
    }
}

/// Every field of a fingerprint with its value as shown.
pub fn fields(fp: &Fingerprint) -> Vec<(String, String)> {
    fp.fields()
        .into_iter()
        .map(|(name, value)| (name, show(&value)))
        .collect()
}

fn show(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Null => "—".to_string(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::String(s) if s.is_empty() => "(empty)".to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) if items.is_empty() => "(none)".to_string(),
        Value::Array(items) => items.iter().map(show).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// One side as the table shows it: for each field, the distinct values over its runs.
pub struct SideValues {
    pub name: String,
    pub fields: Vec<(String, Vec<String>)>,
}

impl SideValues {
    pub fn new(name: &str, fingerprints: &[&Fingerprint]) -> Self {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for fp in fingerprints {
            for (field, value) in fields(fp) {
                let values = match out.iter_mut().position(|(f, _)| *f == field) {
                    Some(i) => &mut out[i].1,
                    None => {
                        out.push((field, Vec::new()));
                        &mut out.last_mut().expect("just pushed").1
                    }
                };
                if !values.contains(&value) {
                    values.push(value);
                }
            }
        }
        SideValues {
            name: name.to_string(),
            fields: out,
        }
    }

    fn get(&self, field: &str) -> &[String] {
        self.fields
            .iter()
            .find(|(f, _)| f == field)
            .map_or(&[], |(_, v)| v.as_slice())
    }
}

/// Every field any side has, the baseline's first: a fingerprint stored before a field existed
/// lacks it, and a map's entries differ from machine to machine.
fn all_fields(sides: &[SideValues]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for side in sides {
        for (field, _) in &side.fields {
            if !out.contains(field) {
                out.push(field.clone());
            }
        }
    }
    out
}

/// How a side's values for `field` relate to the baseline's. A side whose own runs disagree
/// differs too, except in the boot id (a label may span several boots of one kernel); a side
/// spanning two kernels is not what "expected" means.
pub fn difference(field: &str, base: &[String], side: &[String]) -> Difference {
    if base != side {
        classify(field)
    } else if side.len() <= 1 || field == "boot_id" {
        Difference::Same
    } else if refused(field) {
        Difference::Refused
    } else {
        Difference::Differs
    }
}

/// One sentence naming the fields that differ, by class, so the reader need not scan the table.
pub fn summary(s: &mut impl Write, sides: &[SideValues]) -> fmt::Result {
    let Some(base) = sides.first() else {
        return Ok(());
    };
    let mut by_class: Vec<(Difference, Vec<&str>)> = [
        Difference::Refused,
        Difference::Differs,
        Difference::Expected,
    ]
    .into_iter()
    .map(|d| (d, Vec::new()))
    .collect();
    let all = all_fields(sides);
    for field in &all {
        for side in sides {
            let d = difference(field, base.get(field), side.get(field));
            if let Some((_, fields)) = by_class.iter_mut().find(|(c, _)| *c == d) {
                if !fields.contains(&field.as_str()) {
                    fields.push(field);
                }
            }
        }
    }
    by_class.retain(|(_, fields)| !fields.is_empty());
    s.write_str(r#"<p class="fp-summary">"#)?;
    if by_class.is_empty() {
        s.write_str(assets::MACHINES_ALIKE)?;
    } else {
        s.write_str(assets::MACHINES_DIFFER)?;
        for (i, (d, fields)) in by_class.iter().enumerate() {
            if i > 0 {
                s.write_str("; ")?;
            }
            write!(
                s,
                r#"<span class="badge {}">{}</span> "#,
                d.class(),
                d.badge()
            )?;
            let names: Vec<String> = fields
                .iter()
                .map(|f| format!("<code>{}</code>", Esc(f)))
                .collect();
            s.write_str(&names.join(", "))?;
        }
        s.write_char('.')?;
    }
    s.write_str("</p>")?;
    Ok(())
}

/// The table: a row per field, a column per side (baseline first).
pub fn table(s: &mut impl Write, sides: &[SideValues]) -> fmt::Result {
    let Some(base) = sides.first() else {
        return Ok(());
    };
    summary(s, sides)?;
    s.write_str(r#"<table id="fingerprints" class="fingerprints"><colgroup><col style="width:180px"></colgroup><thead><tr><th><span class="role">field</span></th>"#)?;
    for (i, side) in sides.iter().enumerate() {
        let role = if i == 0 { "baseline" } else { "candidate" };
        write!(
            s,
            r#"<th><span class="role">{role}</span><br><span class="side-name">{}</span></th>"#,
            Esc(&side.name)
        )?;
    }
    s.write_str("</tr></thead><tbody>")?;
    for field in &all_fields(sides) {
        let cells: Vec<(Difference, &[String])> = sides
            .iter()
            .map(|side| {
                let values = side.get(field);
                (difference(field, base.get(field), values), values)
            })
            .collect();
        let worst = cells
            .iter()
            .map(|(d, _)| *d)
            .max_by_key(|d| match d {
                Difference::Same => 0,
                Difference::Expected => 1,
                Difference::Differs => 2,
                Difference::Refused => 3,
            })
            .unwrap_or(Difference::Same);
        write!(
            s,
            r#"<tr class="{}"><th scope="row">{}</th>"#,
            worst.class(),
            Esc(field)
        )?;
        for (difference, values) in cells {
            write!(s, r#"<td class="{}">"#, difference.class())?;
            if values.is_empty() {
                s.write_str("(absent)")?;
            }
            let mut first = true;
            for v in values {
                if !first {
                    s.write_str("<br>")?;
                }
                first = false;
                write!(s, "{}", Esc(v))?;
            }
            if difference != Difference::Same {
                write!(
                    s,
                    r#" <span class="badge {}">{}</span>"#,
                    difference.class(),
                    difference.badge()
                )?;
            }
            s.write_str("</td>")?;
        }
        s.write_str("</tr>")?;
    }
    s.write_str("</tbody></table>")?;
    s.write_str(assets::FINGERPRINTS_LEGEND)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table row whose header cell is `field`.
    fn row_of(html: &str, field: &str) -> String {
        let start = html.find(&format!(">{field}</th>")).unwrap();
        let end = start + html[start..].find("</tr>").unwrap();
        let row_start = html[..start].rfind("<tr").unwrap();
        html[row_start..end].to_string()
    }

    fn fingerprint() -> Fingerprint {
        Fingerprint {
            hostname: "<b>host</b>".into(),
            kernel_release: "6.18.0".into(),
            kernel_cmdline: "root=/dev/sda1 quiet & \"x\"".into(),
            boot_id: "a".into(),
            cpu_model: "CPU".into(),
            online_cpu_count: 4,
            smt_active: Some(true),
            cpufreq_governors: vec!["performance".into()],
            ..Fingerprint::default()
        }
    }

    #[test]
    fn enumerates_every_field_in_declaration_order() {
        let f = fields(&fingerprint());
        let names: Vec<&str> = f.iter().map(|(n, _)| n.as_str()).collect();
        let all = serde_json::to_value(fingerprint()).unwrap();
        assert_eq!(names.len(), all.as_object().unwrap().len());
        assert_eq!(
            &names[..3],
            ["hostname", "kernel_release", "kernel_version"]
        );
        let value = |n: &str| f.iter().find(|(k, _)| k == n).unwrap().1.clone();
        assert_eq!(value("smt_active"), "yes");
        assert_eq!(value("cpuidle_driver"), "—");
        assert_eq!(value("kernel_version"), "(empty)");
        assert_eq!(value("online_cpu_count"), "4");
    }

    #[test]
    fn classes_differences_by_meaning() {
        let base = fingerprint();
        let mut other = fingerprint();
        other.kernel_release = "6.19.0".into();
        other.boot_id = "b".into();
        other.cpu_model = "Other CPU".into();
        other.libc = "musl".into();
        let sides = [
            SideValues::new("base", &[&base]),
            SideValues::new("<i>cand</i>", &[&other]),
        ];
        let mut s = String::new();
        table(&mut s, &sides).unwrap();
        let row = |field: &str| row_of(&s, field);
        assert!(row("kernel_release").starts_with(r#"<tr class="fp-expected""#));
        assert!(row("boot_id").starts_with(r#"<tr class="fp-expected""#));
        assert!(row("cpu_model").starts_with(r#"<tr class="fp-refused""#));
        assert!(row("libc").starts_with(r#"<tr class="fp-differs""#));
        assert!(row("numa_nodes").starts_with(r#"<tr class="fp-same""#));
        assert!(s.contains("&lt;b&gt;host&lt;/b&gt;"));
        assert!(s.contains("quiet &amp; &quot;x&quot;"));
        assert!(s.contains("&lt;i&gt;cand&lt;/i&gt;"));
        assert!(!s.contains("<b>") && !s.contains("<i>"));
    }

    #[test]
    fn several_boots_on_one_side_are_not_a_difference_in_boot_id() {
        let (a, mut b) = (fingerprint(), fingerprint());
        b.boot_id = "b".into();
        let side = SideValues::new("x", &[&a, &b]);
        assert_eq!(side.get("boot_id"), ["a", "b"]);
        assert_eq!(
            difference("boot_id", side.get("boot_id"), side.get("boot_id")),
            Difference::Same
        );
        assert_eq!(
            difference(
                "hostname",
                &["h1".into(), "h2".into()],
                &["h1".into(), "h2".into()]
            ),
            Difference::Differs
        );
    }

    #[test]
    fn scheduler_settings_differ_entry_by_entry_even_against_old_fingerprints() {
        let old = fingerprint();
        let mut new = fingerprint();
        new.preempt_model = Some("full".into());
        new.thp_enabled = Some("always".into());
        new.sched_sysctls
            .insert("kernel.sched_rt_runtime_us".into(), "950000".into());
        new.cpu_vulnerabilities
            .insert("spectre_v2".into(), "Mitigation: Retpolines".into());
        let mut newer = new.clone();
        newer.preempt_model = Some("none".into());
        newer
            .cpu_vulnerabilities
            .insert("spectre_v2".into(), "Vulnerable".into());
        let sides = [
            SideValues::new("base", &[&new]),
            SideValues::new("old", &[&old]),
            SideValues::new("newer", &[&newer]),
        ];
        let mut s = String::new();
        table(&mut s, &sides).unwrap();
        let row = |field: &str| row_of(&s, field);
        for field in [
            "preempt_model",
            "thp_enabled",
            "sched_sysctls.kernel.sched_rt_runtime_us",
            "cpu_vulnerabilities.spectre_v2",
        ] {
            assert!(
                row(field).starts_with(r#"<tr class="fp-differs""#),
                "{field}: {}",
                row(field)
            );
        }
        assert!(row("cpu_vulnerabilities.spectre_v2").contains("Vulnerable"));
        // The old fingerprint has no entry: said so, not an empty cell.
        assert!(row("sched_sysctls.kernel.sched_rt_runtime_us").contains("(absent)"));
        assert_eq!(
            classify("sched_sysctls.kernel.sched_rt_runtime_us"),
            Difference::Differs
        );
        assert!(
            s.contains("<code>preempt_model</code>"),
            "named in the summary"
        );
    }
}
