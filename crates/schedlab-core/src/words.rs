//! Counts in words ("1 run", "3 runs") for every message and report line that counts something,
//! so no line reads "1 runs" or hedges with "run(s)"; and the rule for text that names something.

/// `singular` as the noun for `n` things: itself for one, with an `s` otherwise. Every noun
/// schedlab counts (run, boot, case, iteration, warm-up, row, file, kernel release) takes an `s`.
pub fn noun(n: usize, singular: &str) -> String {
    if n == 1 {
        singular.to_string()
    } else {
        format!("{singular}s")
    }
}

/// `n` and its noun: "1 run", "0 runs", "3 runs".
pub fn counted(n: usize, singular: &str) -> String {
    format!("{n} {}", noun(n, singular))
}

/// Text that names something (a kernel release, a host, a case, a campaign): not empty or blank,
/// and without control characters, which would break the one line it is shown on. The reason
/// follows the flag or argument (`--kernel must be printable text`).
pub fn check_printable(text: &str) -> std::result::Result<(), String> {
    if text.trim().is_empty() || text.chars().any(char::is_control) {
        return Err("must be printable text".to_string());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_is_singular_and_every_other_count_plural() {
        assert_eq!(counted(1, "run"), "1 run");
        assert_eq!(counted(0, "run"), "0 runs");
        assert_eq!(counted(2, "kernel release"), "2 kernel releases");
        assert_eq!(noun(1, "warm-up"), "warm-up");
        assert_eq!(noun(11, "warm-up"), "warm-ups");
    }
}
