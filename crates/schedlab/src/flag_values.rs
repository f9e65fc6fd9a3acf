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

/// Text `rule` accepts (a label, a kernel release).
pub fn text(
    rule: fn(&str) -> Result<(), String>,
) -> impl Fn(&str) -> Result<String, Refusal> + Clone + Send + Sync {
    move |given: &str| {
        rule(given)?;
        Ok(given.to_string())
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
    }
}
