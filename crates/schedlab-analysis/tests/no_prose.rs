//! The analysis returns facts; `schedlab-report` words them. This test reads the crate's non-test
//! sources and fails on a string literal that a user could read as a sentence or that names the
//! command line.
//!
//! The rule, on every string literal (plain, raw or byte) outside comments and outside
//! `#[cfg(test)]` modules and the files they declare, with `format!` placeholders (`{...}`)
//! removed:
//! - two words in a row, a word being two or more letters (apostrophes allowed), is prose
//!   ("no complete unit", "Wakeup Latencies", a panic message): a label of one word, a key or a
//!   serde name is not;
//! - `--` followed by a letter names a flag;
//! - `schedlab` followed by a space and a letter names a command.
//!
//! Comments are not read: they are for whoever changes the code, and may name the commands the
//! code serves.
use std::path::{Path, PathBuf};

/// A literal the rule refuses: where it is and why.
#[derive(Debug, PartialEq)]
struct Finding {
    line: usize,
    why: &'static str,
    literal: String,
}

/// The string literals of `source` outside comments, each with its line.
fn literals(source: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    let at = |i: usize, text: &str| {
        text.chars()
            .enumerate()
            .all(|(k, c)| chars.get(i + k) == Some(&c))
    };
    while i < chars.len() {
        let c = chars[i];
        if c == '\n' {
            line += 1;
            i += 1;
        } else if at(i, "//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if at(i, "/*") {
            let mut depth = 0;
            while i < chars.len() {
                if at(i, "/*") {
                    depth += 1;
                    i += 2;
                } else if at(i, "*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(chars[i] == '\n');
                    i += 1;
                }
            }
        } else if c == '\'' {
            // A char literal ('"', '\'', '\u{..}') or a lifetime ('a): skip the char literal.
            if chars.get(i + 1) == Some(&'\\') {
                i += 2;
                while i < chars.len() && chars[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if chars.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if (c == 'r' || (c == 'b' && chars.get(i + 1) == Some(&'r')))
            && !is_ident(chars.get(i.wrapping_sub(1)).copied())
            && matches!(chars.get(i + usize::from(c == 'b') + 1), Some('"' | '#'))
        {
            let mut j = i + usize::from(c == 'b') + 1;
            let mut hashes = 0;
            while chars.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if chars.get(j) != Some(&'"') {
                i = j;
                continue;
            }
            let close: String = std::iter::once('"')
                .chain(std::iter::repeat_n('#', hashes))
                .collect();
            let start = j + 1;
            let mut k = start;
            while k < chars.len() && !at(k, &close) {
                k += 1;
            }
            let text: String = chars[start..k.min(chars.len())].iter().collect();
            out.push((line, text.clone()));
            line += text.matches('\n').count();
            i = k + close.chars().count();
        } else if c == '"' {
            let mut text = String::new();
            let start_line = line;
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    // A line continuation drops the newline and the next line's indentation.
                    if chars.get(i + 1) == Some(&'\n') {
                        line += 1;
                        i += 2;
                        while i < chars.len() && chars[i].is_whitespace() {
                            line += usize::from(chars[i] == '\n');
                            i += 1;
                        }
                        continue;
                    }
                    text.push(chars[i + 1]);
                    i += 2;
                    continue;
                }
                line += usize::from(chars[i] == '\n');
                text.push(chars[i]);
                i += 1;
            }
            out.push((start_line, text));
            i += 1;
        } else {
            i += 1;
        }
    }
    out
}

fn is_ident(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// `text` without `format!` placeholders; `{{` and `}}` are literal braces.
fn without_placeholders(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                out.push(' ');
            }
            c => out.push(c),
        }
    }
    out
}

/// Why `literal` is refused, if it is.
fn refusal(literal: &str) -> Option<&'static str> {
    let text = without_placeholders(literal);
    let chars: Vec<char> = text.chars().collect();
    let letter = |i: usize| chars.get(i).is_some_and(|c| c.is_ascii_alphabetic());
    if (0..chars.len()).any(|i| chars[i] == '-' && chars.get(i + 1) == Some(&'-') && letter(i + 2))
    {
        return Some("names a flag");
    }
    if text
        .match_indices("schedlab ")
        .any(|(i, m)| letter(text[..i + m.len()].chars().count()))
    {
        return Some("names a command");
    }
    // Two words in a row: separated by white space only.
    let mut previous_word = false;
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end();
        let is_word = word.chars().filter(|c| c.is_alphabetic()).count() >= 2
            && word.chars().all(|c| c.is_alphabetic() || c == '\'');
        if is_word && previous_word {
            return Some("reads as a sentence");
        }
        previous_word = is_word && piece.ends_with(char::is_whitespace);
    }
    None
}

/// Every refused literal of one source file's non-test code, and the modules it declares as
/// test-only (`#[cfg(test)] mod name;`).
fn check_source(source: &str) -> (Vec<Finding>, Vec<String>) {
    let (code, test_modules) = without_test_modules(source);
    let findings = literals(&code)
        .into_iter()
        .filter_map(|(line, literal)| refusal(&literal).map(|why| Finding { line, why, literal }))
        .collect();
    (findings, test_modules)
}

/// `source` with each `#[cfg(test)]` module's body blanked (lines kept, so findings keep their
/// line numbers), and the names of the modules declared test-only in other files.
fn without_test_modules(source: &str) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut test_modules = Vec::new();
    let mut lines = source.lines().peekable();
    while let Some(line) = lines.next() {
        out.push_str(line);
        out.push('\n');
        if line.trim() != "#[cfg(test)]" {
            continue;
        }
        let Some(next) = lines.peek() else { break };
        let item = next.trim();
        if let Some(name) = item
            .strip_prefix("mod ")
            .and_then(|rest| rest.strip_suffix(';'))
        {
            test_modules.push(name.to_string());
            continue;
        }
        if !(item.starts_with("mod ") && item.ends_with('{')) {
            continue;
        }
        // Blank the module up to its closing brace at the indentation it opened at.
        let indent = next.len() - next.trim_start().len();
        let close = format!("{}}}", " ".repeat(indent));
        for line in lines.by_ref() {
            out.push('\n');
            if line == close {
                break;
            }
        }
    }
    (out, test_modules)
}

/// The crate's non-test source files: every file under src/ but those declared test-only.
fn non_test_sources(src: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    let mut pending = vec![src.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).unwrap();
                files.push((path, text));
            }
        }
    }
    let mut test_only: Vec<PathBuf> = Vec::new();
    for (path, text) in &files {
        let (_, modules) = without_test_modules(text);
        let dir = match path.file_name().and_then(|n| n.to_str()) {
            Some("lib.rs" | "mod.rs") => path.parent().unwrap().to_path_buf(),
            _ => path.with_extension(""),
        };
        for m in modules {
            test_only.push(dir.join(format!("{m}.rs")));
            test_only.push(path.parent().unwrap().join(format!("{m}.rs")));
            test_only.push(dir.join(&m).join("mod.rs"));
        }
    }
    files.retain(|(path, _)| !test_only.contains(path));
    files.sort();
    files
}

#[test]
fn the_analysis_sources_hold_no_sentence_and_name_no_flag_or_command() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = non_test_sources(&src);
    assert!(files.iter().any(|(p, _)| p.ends_with("compare.rs")));
    assert!(!files.iter().any(|(p, _)| p.ends_with("history/tests.rs")));
    let mut refused = Vec::new();
    for (path, text) in &files {
        for f in check_source(text).0 {
            refused.push(format!(
                "{}:{}: {} ({:?})",
                path.strip_prefix(&src).unwrap().display(),
                f.line,
                f.why,
                f.literal
            ));
        }
    }
    assert!(
        refused.is_empty(),
        "word these in schedlab-report, from typed facts:\n{}",
        refused.join("\n")
    );
}

/// The rule finds what it is meant to, and leaves comments, tests, labels and keys alone.
#[test]
fn the_rule_refuses_planted_prose_flags_and_commands() {
    let planted = r####"//! Run `schedlab calibrate` again: a comment may say so.
fn flag() -> &'static str {
    "--include-incomplete"
}
fn command(id: i64) -> String {
    format!("calibration {id}: run schedlab calibrate")
}
/* a block comment, "with a quoted sentence" */
fn sentence() -> &'static str {
    r#"today's spread is wide"#
}
fn continued() -> &'static str {
    "a line \
     continued"
}
#[derive(serde::Serialize)]
#[serde(rename_all = "snake_case")]
enum Kind { NotJudged }
fn labels() -> [&'static str; 5] {
    ["regression", "{k}={v}", "{} {}", "variance-ratio", "ln x"]
}
fn quote() -> char {
    '"'
}
#[cfg(test)]
mod tests {
    const IN_A_TEST: &str = "a sentence in a test, --with a flag";
}
#[cfg(test)]
mod testutil;
"####;
    let (findings, test_modules) = check_source(planted);
    let got: Vec<(usize, &str)> = findings.iter().map(|f| (f.line, f.why)).collect();
    assert_eq!(
        got,
        [
            (3, "names a flag"),
            (6, "names a command"),
            (10, "reads as a sentence"),
            (13, "reads as a sentence"),
        ],
        "{findings:?}"
    );
    assert_eq!(test_modules, ["testutil"]);
}
