//! docs/cli.md against the binary's own `-h`: every flag a command offers is documented in that
//! command's section, and every flag a section's tables list is one the command offers (the
//! workloads' tables are generated from their definitions; see schedlab-core's docs_flags test).
use std::collections::BTreeSet;

mod common;
use common::{schedlab_without_db, words};

/// Each command, and the heading its section in docs/cli.md starts with.
const SECTIONS: &[(&str, &str)] = &[
    ("list", "## `schedlab list`"),
    ("run", "## `schedlab run`"),
    ("runs", "## `schedlab runs`"),
    ("hosts", "## `schedlab hosts`"),
    ("history", "## `schedlab history"),
    ("changes", "## `schedlab changes"),
    ("show", "## `schedlab show"),
    ("ab", "## `schedlab ab"),
    ("campaign start", "## `schedlab campaign"),
    ("campaign next", "## `schedlab campaign"),
    ("campaign status", "## `schedlab campaign"),
    ("calibrate", "## `schedlab calibrate"),
    ("compare", "## `schedlab compare"),
    ("report", "## `schedlab report"),
    ("stat", "## `schedlab stat"),
    ("import", "## `schedlab import"),
    ("env", "## `schedlab env"),
    ("db check", "## `schedlab db check"),
    ("db upgrade", "## `schedlab db upgrade"),
    ("push", "## `schedlab push"),
    ("completions", "## `schedlab completions"),
    ("man", "## `schedlab man"),
];

/// The long flags `-h` lists (not their aliases), help and version aside.
fn help_flags(path: &[&str]) -> BTreeSet<String> {
    let out = schedlab_without_db().args(path).arg("-h").output().unwrap();
    assert!(out.status.success(), "{path:?}");
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        // A flag's line starts at most six columns in; help wrapped onto the next lines starts
        // further in, and may begin with a flag it names.
        .filter(|line| line.len() - line.trim_start().len() <= 6)
        .map(str::trim_start)
        .filter(|line| line.starts_with('-'))
        .filter_map(|line| {
            let start = line.find("--")?;
            let name: String = line[start + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                .collect();
            Some(name)
        })
        .filter(|name| name != "help" && name != "version")
        .collect()
}

/// A section: from its heading to the next heading of the same level.
fn section<'a>(docs: &'a str, heading: &str) -> &'a str {
    let start = docs
        .find(heading)
        .unwrap_or_else(|| panic!("docs/cli.md has no section {heading}"));
    let level = heading.split(' ').next().unwrap();
    let body = &docs[start + heading.len()..];
    let end = body
        .match_indices(&format!("\n{level} "))
        .next()
        .map_or(body.len(), |(i, _)| i);
    &body[..end]
}

/// The long flags in the first cell of the section's table rows, up to the first workload's
/// own section (`### `schedlab run pipe``), whose tables are generated.
fn table_flags(section: &str) -> BTreeSet<String> {
    let section = section.split("\n### `schedlab run ").next().unwrap();
    section
        .lines()
        .filter(|line| line.starts_with("| `"))
        .flat_map(|line| {
            let cell = line.split(" | ").next().unwrap_or_default();
            cell.match_indices("`--")
                .map(|(i, _)| {
                    cell[i + 3..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Whether `text` names `--flag` itself (not a longer flag that starts with it).
fn mentions(text: &str, flag: &str) -> bool {
    let needle = format!("--{flag}");
    text.match_indices(&needle).any(|(i, _)| {
        let next = text[i + needle.len()..].chars().next();
        !matches!(next, Some(c) if c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_flag_is_documented_and_every_documented_flag_exists() {
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md")).unwrap();
    let mut problems = Vec::new();
    let mut offered_by_heading: std::collections::BTreeMap<&str, BTreeSet<String>> =
        Default::default();
    for (path, heading) in SECTIONS {
        let text = section(&docs, heading);
        let offered = help_flags(&words(path));
        for flag in &offered {
            if !mentions(text, flag) {
                problems.push(format!("{path:?}: --{flag} is not in {heading}"));
            }
        }
        offered_by_heading
            .entry(heading)
            .or_default()
            .extend(offered);
    }
    for (heading, offered) in &offered_by_heading {
        for flag in table_flags(section(&docs, heading)) {
            if !offered.contains(&flag) {
                problems.push(format!(
                    "{heading}: its table lists --{flag}, which no -h offers"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
