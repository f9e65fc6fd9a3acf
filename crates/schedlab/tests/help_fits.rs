//! Help fits a terminal: every line of every command's `-h` and `--help` (workloads under `run`,
//! `ab`, `calibrate` and `campaign start` included) is at most 100 columns, whatever the width
//! the environment claims, and `-h` gives each flag a short entry, the whole story being for
//! `--help`.
mod common;
use common::schedlab_without_db;

const COLUMNS: usize = 100;

/// `schedlab PATH FLAG`'s help, asked with the environment claiming `columns` (clap takes
/// `COLUMNS` when stdout is not a terminal).
fn help(path: &[String], flag: &str, columns: Option<&str>) -> String {
    let mut command = schedlab_without_db();
    match columns {
        Some(columns) => command.env("COLUMNS", columns),
        None => command.env_remove("COLUMNS"),
    };
    let out = command.args(path).arg(flag).output().unwrap();
    assert!(out.status.success(), "schedlab {path:?} {flag} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// The subcommands a help lists under `Commands:`, `help` aside.
fn commands(help: &str) -> Vec<String> {
    let mut section = "";
    let mut names = Vec::new();
    for line in help.lines() {
        if !line.starts_with(' ') {
            section = line;
            continue;
        }
        // A name sits two columns in; a wrapped description further.
        let is_entry = line.starts_with("  ") && !line.starts_with("   ");
        if section == "Commands:" && is_entry {
            let name = line.split_whitespace().next().unwrap();
            if name != "help" {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// Every command path, the top one (no words) first.
fn every_command() -> Vec<Vec<String>> {
    let mut paths = vec![Vec::new()];
    let mut at = 0;
    while at < paths.len() {
        let path = paths[at].clone();
        for name in commands(&help(&path, "-h", None)) {
            let mut sub = path.clone();
            sub.push(name);
            paths.push(sub);
        }
        at += 1;
    }
    paths
}

/// The lines of `text` wider than [`COLUMNS`], in characters.
fn too_wide(text: &str) -> Vec<String> {
    text.lines()
        .filter(|line| line.chars().count() > COLUMNS)
        .map(String::from)
        .collect()
}

#[test]
fn every_help_line_fits_100_columns() {
    let paths = every_command();
    // Workloads under each of run, ab, calibrate and campaign start, and the commands above.
    assert!(paths.len() > 60, "{}", paths.len());
    let mut wide = Vec::new();
    for path in &paths {
        for flag in ["-h", "--help"] {
            for columns in [None, Some("300")] {
                for line in too_wide(&help(path, flag, columns)) {
                    wide.push(format!("schedlab {} {flag}: {line}", path.join(" ")));
                }
            }
        }
    }
    assert!(
        wide.is_empty(),
        "{} lines of help are wider than {COLUMNS} columns:\n{}",
        wide.len(),
        wide.join("\n")
    );
}

/// The most characters of a flag's one-line help in `-h`, clap's notes (`[default: …]`,
/// `[aliases: …]`, `[possible values: …]`) aside: about two lines beside the flags.
const SHORT_HELP_CHARS: usize = 140;

/// clap's bracketed notes taken out of an entry's help.
fn without_notes(text: &str) -> String {
    let mut out = text.to_string();
    for note in [
        "[default: ",
        "[alias: ",
        "[aliases: ",
        "[possible values: ",
        "[short alias",
    ] {
        while let Some(start) = out.find(note) {
            let end = out[start..].find(']').map_or(out.len(), |e| start + e + 1);
            out.replace_range(start..end, "");
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `-h` is a summary: each flag's help there is a line or two; the whole story is `--help`'s.
#[test]
fn short_help_gives_each_flag_a_short_entry() {
    let mut long = Vec::new();
    for path in every_command() {
        let text = help(&path, "-h", None);
        let mut entries: Vec<(String, String)> = Vec::new();
        for line in text.lines() {
            let indent = line.len() - line.trim_start().len();
            if line.trim_start().starts_with('-') && indent <= 6 {
                let (flag, help) = line.trim().split_once("  ").unwrap_or((line.trim(), ""));
                entries.push((flag.to_string(), help.trim().to_string()));
            } else if indent > 6 && !line.trim().is_empty() {
                if let Some((_, help)) = entries.last_mut() {
                    help.push(' ');
                    help.push_str(line.trim());
                }
            } else {
                entries.push((String::new(), String::new()));
            }
        }
        for (flag, help) in entries {
            let summary = without_notes(&help);
            if summary.chars().count() > SHORT_HELP_CHARS {
                long.push(format!("schedlab {} -h: {flag}: {summary}", path.join(" ")));
            }
        }
    }
    assert!(
        long.is_empty(),
        "{} flags' -h help is longer than {SHORT_HELP_CHARS} characters (put the rest in a \
         paragraph of its own, or a parameter's details, for --help):\n{}",
        long.len(),
        long.join("\n")
    );
}
