//! How clap reads the values of schedlab's own flags: whole numbers (written as workloads' counts
//! are: `800_000`, `800k`), decimal numbers and names, each held to its rule where the rule lives
//! (`schedlab_core::plan::check_iterations`, …), so clap refuses a bad value before anything
//! runs. A refusal is a [`Refusal`], a reason that follows the flag; main.rs puts the flag in
//! front (`--iterations must be between 1 and 100000, not 0`).
use schedlab_core::latency::PerMille;
use schedlab_core::workload::parse_count;

/// A rule of one value: why it is refused, following the flag.
type Rule<T> = fn(T) -> Result<(), String>;

/// Why a value is refused, written to follow its flag (`must be between 1 and 8, not 0`), as
/// every parser here says it; clap's own parsers' errors read otherwise and are left as clap
/// words them.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

impl From<String> for Refusal {
    fn from(reason: String) -> Self {
        Refusal(reason)
    }
}

/// A whole number of type `T` that `rule` accepts.
pub fn count<T>(rule: Rule<T>) -> impl Fn(&str) -> Result<T, Refusal> + Clone + Send + Sync
where
    T: TryFrom<u64> + Copy + Send + Sync + 'static,
{
    move |given: &str| {
        let n = parse_count(given, false)?;
        let n = T::try_from(n).map_err(|_| Refusal(format!("{given:?} is too large")))?;
        rule(n)?;
        Ok(n)
    }
}

/// Any whole number of type `T`.
pub fn any_count<T>() -> impl Fn(&str) -> Result<T, Refusal> + Clone + Send + Sync
where
    T: TryFrom<u64> + Copy + Send + Sync + 'static,
{
    count::<T>(|_| Ok(()))
}

/// A whole number from `min` to `max`.
pub fn count_in<T>(min: u64, max: u64) -> impl Fn(&str) -> Result<T, Refusal> + Clone + Send + Sync
where
    T: TryFrom<u64> + Copy + Send + Sync + 'static,
{
    move |given: &str| {
        let n = parse_count(given, false)?;
        if !(min..=max).contains(&n) {
            let reason = schedlab_core::workload::definition::out_of_range(n, min, max);
            return Err(Refusal(reason));
        }
        T::try_from(n).map_err(|_| Refusal(format!("{given:?} is too large")))
    }
}

/// A decimal number that `rule` accepts (it says why an infinity or NaN is refused).
pub fn number(rule: Rule<f64>) -> impl Fn(&str) -> Result<f64, Refusal> + Clone + Send + Sync {
    move |given: &str| {
        let x: f64 = given
            .trim()
            .parse()
            .map_err(|_| Refusal(format!("{given:?} is not a number")))?;
        rule(x)?;
        Ok(x)
    }
}

/// A duration in whole milliseconds that `rule` accepts: a number of seconds (`10`, `0.5`) or a
/// number with its unit (`500ms`, `10s`, `2m`, as humantime reads them).
pub fn duration_ms(rule: Rule<u64>) -> impl Fn(&str) -> Result<u64, Refusal> + Clone + Send + Sync {
    move |given: &str| {
        let text = given.trim();
        let ms = match text.parse::<f64>() {
            Ok(sec) if sec.is_finite() && sec >= 0.0 && sec <= u64::MAX as f64 / 1000.0 => {
                (sec * 1000.0).round() as u64
            }
            Ok(_) => return Err(Refusal(format!("{given:?} is not a duration"))),
            Err(_) => humantime::parse_duration(text)
                .map_err(|_| {
                    Refusal(format!(
                        "{given:?} is not a duration (seconds, or a number with a unit: 500ms, \
                         10s, 2m)"
                    ))
                })?
                .as_millis()
                .try_into()
                .map_err(|_| Refusal(format!("{given:?} is too long")))?,
        };
        rule(ms)?;
        Ok(ms)
    }
}

/// Text `rule` accepts (a label, a kernel release).
pub fn text(
    rule: fn(&str) -> Result<(), String>,
) -> impl Fn(&str) -> Result<String, Refusal> + Clone + Send + Sync {
    move |given: &str| {
        rule(given)?;
        Ok(given.to_string())
    }
}

/// ministat's confidence levels, the only ones its t table (and so the ministat style) knows.
pub const CONFIDENCE_LEVELS: [f64; 6] = [80.0, 90.0, 95.0, 98.0, 99.0, 99.5];

/// The widest plot `stat -w` may ask for.
pub const MAX_PLOT_WIDTH: u64 = 10_000;

/// `--min-effect`: δ in percent.
pub fn check_min_effect(pct: f64) -> Result<(), String> {
    if pct.is_finite() && pct > 0.0 && pct < 100.0 {
        Ok(())
    } else {
        Err("must be a percentage above 0 and below 100".into())
    }
}

/// `--fdr`: the false discovery rate.
pub fn check_fdr(q: f64) -> Result<(), String> {
    if q > 0.0 && q < 1.0 {
        Ok(())
    } else {
        Err("must be between 0 and 1 (e.g. 0.05)".into())
    }
}

/// `--noise-cap`: a percentage.
pub fn check_noise_cap(pct: f64) -> Result<(), String> {
    if pct.is_finite() && pct > 0.0 {
        Ok(())
    } else {
        Err("must be a positive percentage".into())
    }
}

/// `--confidence`: one of ministat's levels.
pub fn check_confidence(pct: f64) -> Result<(), String> {
    if CONFIDENCE_LEVELS.contains(&pct) {
        Ok(())
    } else {
        Err(format!(
            "must be one of ministat's levels: 80, 90, 95, 98, 99, 99.5 (not {pct})"
        ))
    }
}

/// `--column`: ministat's columns count from 1.
pub fn check_column(column: usize) -> Result<(), String> {
    if column == 0 {
        Err("starts at 1".into())
    } else {
        Ok(())
    }
}

/// `--delimiter`: at least one character.
pub fn check_delimiters(chars: &str) -> Result<(), String> {
    if chars.is_empty() {
        Err("must not be empty".into())
    } else {
        Ok(())
    }
}

/// `--suite`: a built-in suite's name or a suite file, taken as given (the plan reads it); the
/// built-in names are its possible values, so shell completions offer them
/// (`schedlab run --suite <TAB>`).
#[derive(Debug, Clone, Copy)]
pub struct SuiteName;

impl clap::builder::TypedValueParser for SuiteName {
    type Value = String;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(
            schedlab_core::suite::BUILTIN_SUITES
                .iter()
                .map(|(name, _)| clap::builder::PossibleValue::new(*name)),
        ))
    }
}

/// A percentile in tenths of a percent, as `--percentiles` takes each (the histograms' percentiles
/// are read at that resolution, schbench's own: 99.9th).
pub fn per_mille(given: &str) -> Result<PerMille, Refusal> {
    let bad = |why: &str| Refusal(format!("{given:?}: {why}"));
    let p: f64 = given
        .trim()
        .parse()
        .ok()
        .filter(|p: &f64| !p.is_nan())
        .ok_or_else(|| bad("not a number"))?;
    // An infinity (`inf`, `1e999`) is a number, out of range like 100.
    if !(p > 0.0 && p < 100.0) {
        return Err(bad("a percentile is above 0 and below 100"));
    }
    let tenths = (p * 10.0).round();
    if (p * 10.0 - tenths).abs() > 1e-6 {
        return Err(bad("tenths of a percent are the finest (99.9, not 99.95)"));
    }
    // 0.00000001 is within the tolerance of a whole tenth, 0.0, which is no percentile.
    if !(1.0..=999.0).contains(&tenths) {
        return Err(bad(
            "tenths of a percent are the finest, so a percentile is 0.1 to 99.9",
        ));
    }
    Ok(tenths as PerMille)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_read_and_held_to_their_rules() {
        let refused = |reason: &str| Refusal(reason.to_string());
        let iterations = count::<u32>(schedlab_core::plan::check_iterations);
        assert_eq!(iterations("5"), Ok(5));
        assert_eq!(iterations("1_000"), Ok(1_000));
        let zero = iterations("0");
        assert_eq!(zero, Err(refused("must be between 1 and 100000, not 0")));
        assert!(iterations("4294967296")
            .unwrap_err()
            .0
            .contains("too large"));
        assert!(iterations("-1")
            .unwrap_err()
            .0
            .contains("not a whole number"));
        let boots = count_in::<u32>(4, 10);
        assert_eq!(
            boots("11"),
            Err(refused("must be between 4 and 10, not 11"))
        );
        let cooldown = number(schedlab_core::plan::check_cooldown_sec);
        assert_eq!(cooldown("2.5"), Ok(2.5));
        assert!(cooldown("x").unwrap_err().0.contains("not a number"));
        assert!(cooldown("NaN").unwrap_err().0.contains("not NaN"));
        let printable = text(schedlab_core::words::check_printable);
        assert_eq!(printable(" "), Err(refused("must be printable text")));
        let confidence = number(check_confidence);
        assert_eq!(confidence("99.5"), Ok(99.5));
        assert!(confidence("97")
            .unwrap_err()
            .0
            .contains("ministat's levels"));
        assert!(number(check_fdr)("1").is_err() && number(check_fdr)("0.05").is_ok());
        assert!(number(check_min_effect)("-1").is_err());
        assert!(number(check_noise_cap)("inf").is_err());
        assert_eq!(
            count::<usize>(check_column)("0"),
            Err(refused("starts at 1"))
        );
        assert_eq!(
            text(check_delimiters)(""),
            Err(refused("must not be empty"))
        );
    }
}
