//! What users hand in, damaged: the reference tools' real outputs in `fixtures/import/` and the
//! built-in suite files, cut short, with lines dropped, repeated or swapped, bytes changed, text
//! inserted, or another input appended. Every import parser may refuse an output, naming a line
//! of the text, but never panics, and whatever it accepts holds finite values of metrics the tool
//! declares; a suite file is refused in one line or read into cases that pass their checks.
use std::path::PathBuf;

use proptest::prelude::*;
use schedlab_core::import::{PlainOptions, Tool};
use schedlab_core::suite::{Suite, BUILTIN_SUITES};

const TOOLS: [Tool; 4] = [
    Tool::PerfBench,
    Tool::Hackbench,
    Tool::Schbench,
    Tool::Plain,
];

fn fixtures() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import");
    let mut texts: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.file_name().is_some_and(|n| n != "README.md"))
        .map(|path| std::fs::read_to_string(path).unwrap())
        .collect();
    texts.sort();
    assert!(texts.len() >= 20, "fixtures missing from {}", dir.display());
    texts
}

#[derive(Debug, Clone)]
enum Damage {
    CutAt(usize),
    DropLine(usize),
    RepeatLine(usize),
    SwapLines(usize, usize),
    SetByte(usize, u8),
    InsertText(usize, String),
    AppendOther(usize),
}

fn damage() -> impl Strategy<Value = Damage> {
    let anywhere = any::<usize>();
    prop_oneof![
        anywhere.prop_map(Damage::CutAt),
        anywhere.prop_map(Damage::DropLine),
        anywhere.prop_map(Damage::RepeatLine),
        (anywhere, any::<usize>()).prop_map(|(a, b)| Damage::SwapLines(a, b)),
        (anywhere, any::<u8>()).prop_map(|(at, b)| Damage::SetByte(at, b)),
        (
            anywhere,
            prop_oneof![
                Just("-1".to_string()),
                Just("nan".to_string()),
                Just("inf".to_string()),
                Just("1e309".to_string()),
                Just("99999999999999999999999".to_string()),
                Just("\u{0}".to_string()),
                Just("\n\n".to_string()),
                Just("{".to_string()),
                Just("}]".to_string()),
                Just(" Time: ".to_string()),
                Just("99.0th: ".to_string()),
                Just("\"2x\"".to_string()),
                Just("\"0%\"".to_string()),
                Just("[1, 2, 3, 4]".to_string()),
                Just("[[case]]\n".to_string()),
                Just("workload = \"fake\"\n".to_string()),
                "[ -~]{0,12}",
            ]
        )
            .prop_map(|(at, text)| Damage::InsertText(at, text)),
        anywhere.prop_map(Damage::AppendOther),
    ]
}

fn apply(text: &str, damage: &Damage, all: &[String]) -> String {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let at = |i: usize, len: usize| if len == 0 { 0 } else { i % len };
    match damage {
        Damage::CutAt(i) => {
            let cut = at(*i, text.len() + 1);
            String::from_utf8_lossy(&text.as_bytes()[..cut]).into_owned()
        }
        Damage::DropLine(i) => {
            if !lines.is_empty() {
                lines.remove(at(*i, lines.len()));
            }
            lines.concat()
        }
        Damage::RepeatLine(i) => {
            if !lines.is_empty() {
                let line = lines[at(*i, lines.len())];
                lines.insert(at(*i, lines.len()), line);
            }
            lines.concat()
        }
        Damage::SwapLines(a, b) => {
            if !lines.is_empty() {
                let (a, b) = (at(*a, lines.len()), at(*b, lines.len()));
                lines.swap(a, b);
            }
            lines.concat()
        }
        Damage::SetByte(i, byte) => {
            let mut bytes = text.as_bytes().to_vec();
            if !bytes.is_empty() {
                let i = at(*i, bytes.len());
                bytes[i] = *byte;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Damage::InsertText(i, inserted) => {
            let mut at_char = at(*i, text.len() + 1);
            while !text.is_char_boundary(at_char) {
                at_char -= 1;
            }
            format!("{}{inserted}{}", &text[..at_char], &text[at_char..])
        }
        Damage::AppendOther(i) => format!("{text}{}", all[at(*i, all.len())]),
    }
}

/// One of `all`, damaged in turn by each of `damages`.
fn damaged(all: &[String], which: usize, damages: &[Damage]) -> String {
    damages
        .iter()
        .fold(all[which % all.len()].clone(), |text, d| {
            apply(&text, d, all)
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn damaged_outputs_are_refused_or_parsed_never_a_panic(
        which in any::<usize>(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let text = damaged(&fixtures(), which, &damages);
        for tool in TOOLS {
            let plain = PlainOptions::default();
            match tool.parse_text(&text, &plain) {
                Ok(parsed) => {
                    let declared = tool.metrics(&plain);
                    for result in &parsed.results {
                        for m in &result.measurements {
                            prop_assert!(m.value.is_finite(), "{tool:?}: {} = {}", m.name, m.value);
                            prop_assert!(
                                declared.iter().any(|d| d.name == m.name),
                                "{tool:?}: undeclared metric {}", m.name
                            );
                        }
                    }
                }
                Err(e) => prop_assert!(
                    e.line >= 1 && e.line <= text.lines().count().max(1) + 1,
                    "{tool:?}: line {} of {}", e.line, text.lines().count()
                ),
            }
        }
    }

    #[test]
    fn damaged_suite_files_are_refused_in_one_line_or_read_whole(
        which in any::<usize>(),
        damages in prop::collection::vec(damage(), 1..4),
    ) {
        let suites: Vec<String> = BUILTIN_SUITES.iter().map(|(_, text)| text.to_string()).collect();
        let text = damaged(&suites, which, &damages);
        match Suite::parse_for("damaged", &text, 2) {
            Ok(suite) => {
                for spec in &suite.cases {
                    prop_assert!(spec.validate().is_ok(), "{spec:?}");
                }
            }
            Err(e) => {
                let message = e.to_string();
                prop_assert!(!message.contains('\n'), "{message}");
            }
        }
    }
}
