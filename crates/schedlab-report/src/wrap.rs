//! Text within a mail's 80 columns: sentences wrapped at word boundaries with a hanging indent,
//! and long names in a table's column shortened to a key with a legend under the table.

/// The width every text report keeps to by default: a plain-text mail's.
pub const WIDTH: usize = 80;

/// `text` wrapped at `width` columns, the lines after the first indented by `indent` spaces; a
/// word longer than a line is broken. An empty text is one empty line.
pub fn wrap(text: &str, width: usize, indent: usize) -> Vec<String> {
    let hanging = " ".repeat(indent);
    let options = textwrap::Options::new(width.max(indent + 8))
        .subsequent_indent(&hanging)
        .word_splitter(textwrap::WordSplitter::NoHyphenation);
    let lines: Vec<String> = textwrap::wrap(text, options)
        .into_iter()
        .map(|line| line.into_owned())
        .collect();
    if lines.is_empty() {
        vec![String::new()]
    } else {
        lines
    }
}

/// Names shortened to fit `budget` columns: each name that does not fit becomes its longest
/// beginning that does, cut at a space where one is near, then `…[k]` (the key alone, `[k]`,
/// where no useful beginning fits), and the legend says what each `[k]` stands for. Equal
/// names get the same key.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shortened {
    /// The names as shown, in the order given.
    pub names: Vec<String>,
    /// `[k] full name`, one entry per key, in key order (not yet wrapped).
    pub legend: Vec<String>,
}

pub fn shorten(names: &[&str], budget: usize) -> Shortened {
    let mut keyed: Vec<&str> = Vec::new();
    let mut shown = Vec::with_capacity(names.len());
    for &name in names {
        if name.chars().count() <= budget {
            shown.push(name.to_string());
            continue;
        }
        let key = match keyed.iter().position(|k| *k == name) {
            Some(i) => i + 1,
            None => {
                keyed.push(name);
                keyed.len()
            }
        };
        let suffix = format!("…[{key}]");
        let room = budget.saturating_sub(suffix.chars().count());
        // Too little room for a beginning that says anything: the key alone.
        if room < 4 {
            shown.push(format!("[{key}]"));
            continue;
        }
        let mut prefix: String = name.chars().take(room).collect();
        // Cut at the last space when it keeps at least half the room: `cpus=64 …`, not `op…`.
        if let Some(space) = prefix.rfind(' ') {
            if prefix[..space].chars().count() >= room / 2 {
                prefix.truncate(space + 1);
            }
        }
        shown.push(format!("{prefix}{suffix}"));
    }
    Shortened {
        names: shown,
        legend: keyed
            .iter()
            .enumerate()
            .map(|(i, name)| format!("[{}] {name}", i + 1))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_wrap_with_a_hanging_indent() {
        let text =
            "units: runs (each run's mean of ln x over its iterations; all runs on one boot)";
        let lines = wrap(text, 40, 2);
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert!(lines[1..].iter().all(|l| l.starts_with("  ")), "{lines:?}");
        assert_eq!(
            lines
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" "),
            text
        );
        assert_eq!(wrap("", 80, 2), vec![String::new()]);
    }

    #[test]
    fn long_names_get_keys_and_a_legend() {
        let long = "cpudl:orig cpus=64 ops=100000 mix=cpudl-bench (no real deletes)";
        let s = shorten(
            &["short", long, long, "cpudl:fast cpus=64 ops=100000 x"],
            24,
        );
        assert_eq!(s.names[0], "short");
        assert_eq!(s.names[1], "cpudl:orig cpus=64 …[1]");
        assert_eq!(s.names[2], s.names[1]);
        assert_eq!(s.names[3], "cpudl:fast cpus=64 …[2]");
        assert!(s.names.iter().all(|n| n.chars().count() <= 24));
        assert_eq!(
            s.legend,
            vec![
                format!("[1] {long}"),
                "[2] cpudl:fast cpus=64 ops=100000 x".to_string()
            ]
        );
    }
}
