//! One parameter of a workload, declared once as a [`Param`]: its flag and spellings, help, range
//! or choices, and the typed field it writes ([`Field`], made by [`field!`]), as ripgrep's
//! `Flag::update` writes its field of `LowArgs`. From that declaration come the command-line flag
//! (the binary turns a [`ParamDef`] into a clap argument), the value a flag gives ([`Given`],
//! written into the field without passing through JSON), the suite key (the field's name, which
//! serde reads), `--scale`, range checks, the default shown in help, docs/cli.md's tables, and
//! which testcases or modes the parameter applies to ([`Param::applies_to`]).
use crate::cpu_list::{CpuList, CpuPair, CpuPerTask};
use crate::{Error, Result};

/// What the command line gave a parameter, typed by its kind: the binary turns clap's match into
/// this, and the parameter's [`Field`] writes it into its typed field.
#[derive(Debug, Clone, PartialEq)]
pub enum Given {
    Switch,
    Count(u64),
    Number(f64),
    Text(String),
    /// The words after `--`.
    List(Vec<String>),
}

/// A parameter's value read back from its field: what help shows as the default, and what range
/// checks, `--scale` and the relevance check read.
#[derive(Debug, Clone, PartialEq)]
pub enum ParamValue {
    /// An optional parameter left out.
    Unset,
    Switch(bool),
    Count(u64),
    Number(f64),
    Text(String),
    List(Vec<String>),
}

impl ParamValue {
    /// As help and docs/cli.md show a default: numbers and text, nothing for switches and lists.
    pub fn shown(&self) -> Option<String> {
        match self {
            ParamValue::Count(n) => Some(n.to_string()),
            // `{:?}` keeps the decimal point of a whole number (`100.0`), as stored runs write it.
            ParamValue::Number(x) => Some(format!("{x:?}")),
            ParamValue::Text(text) => Some(text.clone()),
            ParamValue::Unset | ParamValue::Switch(_) | ParamValue::List(_) => None,
        }
    }
}

/// A type a parameter's field may have: how it takes the value the command line gave, and how it
/// reads back. The reason of an error follows the flag (`expects two CPU numbers like 0,1, …`).
pub trait FieldValue: Sized {
    fn from_given(given: Given) -> std::result::Result<Self, String>;
    fn value(&self) -> ParamValue;
}

/// An enum a `Choice` parameter holds: its names are the choices the parameter lists.
pub trait Choice: Copy + 'static {
    const ALL: &'static [Self];
    /// The name, as the command line and suite files write it.
    fn name(self) -> &'static str;
}

fn unexpected(given: &Given, wanted: &str) -> String {
    format!("takes {wanted}, not {given:?}")
}

impl FieldValue for u64 {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        match given {
            Given::Count(n) => Ok(n),
            other => Err(unexpected(&other, "a count")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::Count(*self)
    }
}

impl FieldValue for u32 {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        let n = u64::from_given(given)?;
        u32::try_from(n).map_err(|_| format!("must be at most {}, not {n}", u32::MAX))
    }

    fn value(&self) -> ParamValue {
        ParamValue::Count(u64::from(*self))
    }
}

impl FieldValue for f64 {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        match given {
            Given::Number(x) if x.is_finite() => Ok(x),
            Given::Number(_) => Err("must be a finite number".to_string()),
            other => Err(unexpected(&other, "a number")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::Number(*self)
    }
}

impl FieldValue for bool {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        match given {
            Given::Switch => Ok(true),
            other => Err(unexpected(&other, "no value")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::Switch(*self)
    }
}

impl FieldValue for String {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        match given {
            Given::Text(text) => Ok(text),
            other => Err(unexpected(&other, "text")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::Text(self.clone())
    }
}

impl FieldValue for Vec<String> {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        match given {
            Given::List(words) => Ok(words),
            other => Err(unexpected(&other, "a program and its arguments")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::List(self.clone())
    }
}

impl<T: FieldValue> FieldValue for Option<T> {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        T::from_given(given).map(Some)
    }

    fn value(&self) -> ParamValue {
        self.as_ref().map_or(ParamValue::Unset, T::value)
    }
}

impl<T: Choice> FieldValue for T {
    fn from_given(given: Given) -> std::result::Result<Self, String> {
        let names = || {
            T::ALL
                .iter()
                .map(|c| c.name())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match given {
            Given::Text(text) => T::ALL
                .iter()
                .copied()
                .find(|choice| choice.name() == text)
                .ok_or_else(|| format!("must be one of {}, not {text:?}", names())),
            other => Err(unexpected(&other, "one of its names")),
        }
    }

    fn value(&self) -> ParamValue {
        ParamValue::Text(self.name().to_string())
    }
}

/// Text a type parses (`FromStr` with its reason) and prints back in the same form.
macro_rules! text_field {
    ($($type:ty),+) => {$(
        impl FieldValue for $type {
            fn from_given(given: Given) -> std::result::Result<Self, String> {
                match given {
                    Given::Text(text) => text.parse(),
                    other => Err(unexpected(&other, "text")),
                }
            }

            fn value(&self) -> ParamValue {
                ParamValue::Text(self.to_string())
            }
        }
    )+};
}

text_field!(CpuPair, CpuList, CpuPerTask);

/// The typed field a parameter writes and reads: its name is the suite key, so the key and the
/// field cannot drift apart. Made by [`field!`].
pub struct Field<P> {
    pub key: &'static str,
    /// Writes what the command line gave; an [`Error::InvalidParam`] names the key.
    pub set: fn(&mut P, Given) -> Result<()>,
    pub get: fn(&P) -> ParamValue,
}

impl<P> Clone for Field<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Field<P> {}

/// `field!(loops)`, inside the parameter type's `impl WorkloadParams`: the field `loops` of
/// `Self`, written through its
/// [`FieldValue`]; `field!(cpus, set: |params, given| …)` writes it by a setter of its own (a
/// command-line convention such as schbench's `auto` pinning), which returns a [`crate::Result`].
macro_rules! field {
    ($name:ident) => {
        $crate::workload::param::Field {
            key: stringify!($name),
            set: |params: &mut Self, given| {
                params.$name = $crate::workload::param::FieldValue::from_given(given)
                    .map_err(|reason| $crate::Error::param(stringify!($name), reason))?;
                Ok(())
            },
            get: |params: &Self| $crate::workload::param::FieldValue::value(&params.$name),
        }
    };
    ($name:ident, set: $set:expr) => {
        $crate::workload::param::Field {
            key: stringify!($name),
            set: $set,
            get: |params: &Self| $crate::workload::param::FieldValue::value(&params.$name),
        }
    };
}
pub(crate) use field;

/// How a parameter is written on the command line and checked.
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// A switch: present means true.
    Switch,
    /// A switch that turns another one off (hackbench's `-P` against `-T`): the last given wins.
    SwitchOff { of: &'static str },
    /// A whole number, checked against this range wherever it comes from.
    Count { min: u64, max: u64 },
    /// A real number (negative values may be given).
    Number,
    /// One of a fixed list of names, each with what it means.
    Choice(&'static [(&'static str, &'static str)]),
    /// Text the field's own type parses (a wait strategy, a CPU list).
    Text,
    /// Names the run instead of the case (schbench's `-J/--jobname` becomes `--label`).
    Label,
    /// A program and its arguments, everything after `--` on the command line (a list of
    /// strings in a suite file).
    Command,
    /// A reference tool's flag with no counterpart here: hidden, and refused with the reason.
    Refused {
        tool: &'static str,
        takes_value: bool,
        why: &'static str,
    },
}

/// What a parameter is on the command line and in help, without its type: what the binary builds
/// a flag from and suite files are checked by. The default is the parameter type's `Default`, so
/// it is written once.
#[derive(Debug, Clone, Copy)]
pub struct ParamDef {
    /// The key in suite files and stored runs (snake_case): the field's name.
    pub key: &'static str,
    /// The long flag, without `--`.
    pub long: &'static str,
    pub short: Option<char>,
    /// Other long spellings that work too: a reference tool's, or an older name of this flag.
    pub aliases: &'static [&'static str],
    pub short_aliases: &'static [char],
    /// The placeholder of the value in help (`N`, `A,B`); empty for switches.
    pub value_name: &'static str,
    pub help: &'static str,
    /// The whole story, for `--help` and docs/cli.md (ranges, what each value does, how it
    /// differs from the reference tool); empty when the one-line help says it all.
    pub details: &'static str,
    pub kind: ParamKind,
    /// The size of one iteration's work, multiplied by `--scale`.
    pub work_size: bool,
    /// A count of tasks, which a suite may give relative to the machine (`"2x"`, `"50%"`).
    pub task_count: bool,
    /// A size in bytes or KiB: a plain number on the command line, since `4k` bytes would read
    /// as 4096 where other counts' `k` is 1,000.
    pub size: bool,
    /// A count whose 0 on the command line leaves the parameter unset (schbench's `-p 0`: off).
    pub zero_off: bool,
    /// What the parameter applies to, when not to every case (`mmap and page-fault`).
    pub applies_to: Option<&'static str>,
    /// How the case name shows the parameter where it applies: `word=N` for a count, `word`
    /// for a switch that is on; `None` when the workload's own case name says it.
    pub case_word: Option<&'static str>,
}

impl ParamDef {
    /// Whether the flag takes a value.
    pub fn takes_value(&self) -> bool {
        match self.kind {
            ParamKind::Switch | ParamKind::SwitchOff { .. } => false,
            ParamKind::Refused { takes_value, .. } => takes_value,
            _ => true,
        }
    }

    /// The whole story, for `--help` and docs/cli.md: the details where there are some (ranges
    /// included), else the one-line help with the range or the choices spelt out.
    pub fn whole_help(&self) -> String {
        if !self.details.is_empty() {
            return self.details.to_string();
        }
        let mut whole = self.help.to_string();
        match self.kind {
            ParamKind::Count { min, max } => whole.push_str(&format!(" ({min} to {max})")),
            ParamKind::Choice(choices) => {
                let names: Vec<String> = choices
                    .iter()
                    .map(|(name, what)| format!("`{name}`: {what}"))
                    .collect();
                whole.push_str(&format!(" ({})", names.join("; ")));
            }
            _ => {}
        }
        whole
    }

    /// `-l/--loops`, as errors name a flag.
    pub fn spelling(&self) -> String {
        if matches!(self.kind, ParamKind::Command) {
            return format!("-- {} ARGS…", self.value_name);
        }
        match self.short {
            Some(short) => format!("-{short}/--{}", self.long),
            None => format!("--{}", self.long),
        }
    }

    /// The counts the command line takes: the range, and 0 too where 0 means off.
    pub fn command_line_range(&self) -> Option<(u64, u64)> {
        match self.kind {
            ParamKind::Count { max, .. } if self.zero_off => Some((0, max)),
            ParamKind::Count { min, max } => Some((min, max)),
            _ => None,
        }
    }

    /// Checks a whole number against this parameter's range, naming the parameter.
    pub fn check(&self, value: u64) -> Result<()> {
        if let ParamKind::Count { min, max } = self.kind {
            check_range(self.key, value, min, max)?;
        }
        Ok(())
    }
}

/// The reason a count is out of its range, as it follows the flag or key.
pub fn out_of_range(value: impl std::fmt::Display, min: u64, max: u64) -> String {
    format!("must be between {min} and {max}, not {value}")
}

/// The error of a parameter out of its range: it names the key, so the command line can say
/// `--flag` and a suite file `key` at its line and column.
pub fn check_range(key: &'static str, value: u64, min: u64, max: u64) -> Result<()> {
    if value < min || value > max {
        return Err(Error::param(key, out_of_range(value, min, max)));
    }
    Ok(())
}

/// Which cases a parameter applies to: given to another case it is refused, not ignored.
pub struct Applies<P> {
    pub when: fn(&P) -> bool,
}

impl<P> Clone for Applies<P> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<P> Copy for Applies<P> {}

/// One parameter of the workload whose parameter type is `P`, declared once: what it is on the
/// command line ([`ParamDef`]), the field it writes, and the cases it applies to.
pub struct Param<P: 'static> {
    pub def: ParamDef,
    /// `None` for flags that set no parameter: a refused one, a label, or a switch that turns
    /// another off.
    pub field: Option<Field<P>>,
    pub applies: Option<Applies<P>>,
}

impl<P> Param<P> {
    /// The parameter that writes `field` (its key), spelt `--long`.
    pub const fn new(field: Field<P>, long: &'static str, kind: ParamKind) -> Self {
        let mut param = Param::without_field(field.key, long, kind);
        param.field = Some(field);
        param
    }

    /// A flag that writes no field: a reference tool's refused flag, a label, or a switch that
    /// turns another off (`key` names it in errors).
    pub const fn without_field(key: &'static str, long: &'static str, kind: ParamKind) -> Self {
        Param {
            def: ParamDef {
                key,
                long,
                short: None,
                aliases: &[],
                short_aliases: &[],
                value_name: "",
                help: "",
                details: "",
                kind,
                work_size: false,
                task_count: false,
                size: false,
                zero_off: false,
                applies_to: None,
                case_word: None,
            },
            field: None,
            applies: None,
        }
    }

    pub const fn short(mut self, short: char) -> Self {
        self.def.short = Some(short);
        self
    }

    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.def.aliases = aliases;
        self
    }

    pub const fn short_aliases(mut self, short_aliases: &'static [char]) -> Self {
        self.def.short_aliases = short_aliases;
        self
    }

    pub const fn value(mut self, value_name: &'static str) -> Self {
        self.def.value_name = value_name;
        self
    }

    pub const fn help(mut self, help: &'static str) -> Self {
        self.def.help = help;
        self
    }

    pub const fn details(mut self, details: &'static str) -> Self {
        self.def.details = details;
        self
    }

    pub const fn work_size(mut self) -> Self {
        self.def.work_size = true;
        self
    }

    pub const fn task_count(mut self) -> Self {
        self.def.task_count = true;
        self
    }

    pub const fn size(mut self) -> Self {
        self.def.size = true;
        self
    }

    /// On the command line, 0 leaves the parameter unset (schbench's "0: off").
    pub const fn zero_off(mut self) -> Self {
        self.def.zero_off = true;
        self
    }

    /// The parameter applies only to the cases where `when` holds, described as `to`
    /// (`mmap and page-fault`): given a value other than its default elsewhere, it is refused
    /// with `--map-kib applies to mmap and page-fault only, not getppid`.
    pub const fn applies_to(mut self, to: &'static str, when: fn(&P) -> bool) -> Self {
        self.def.applies_to = Some(to);
        self.applies = Some(Applies { when });
        self
    }

    /// The case name shows the parameter where it applies, as `word=N` or, a switch, `word`.
    pub const fn in_case_name(mut self, word: &'static str) -> Self {
        self.def.case_word = Some(word);
        self
    }

    /// The value the parameter holds in `params`; `None` for a flag without a field.
    pub fn get(&self, params: &P) -> Option<ParamValue> {
        self.field.map(|field| (field.get)(params))
    }

    /// Whether the parameter applies to the case `params` describes.
    pub fn applies(&self, params: &P) -> bool {
        self.applies.is_none_or(|applies| (applies.when)(params))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::workload::WorkloadParams;

    /// Values to give a parameter: each choice, both ends of a count's range, a switch, the
    /// default's own text.
    fn samples<P: WorkloadParams>(param: &Param<P>) -> Vec<Given> {
        let default = param.get(&P::default());
        match param.def.kind {
            ParamKind::Count { min, max } => vec![Given::Count(min), Given::Count(max)],
            ParamKind::Switch => vec![Given::Switch],
            ParamKind::Number => vec![Given::Number(1.5)],
            ParamKind::Choice(choices) => choices
                .iter()
                .map(|(name, _)| Given::Text(name.to_string()))
                .collect(),
            ParamKind::Text => match default {
                Some(ParamValue::Text(text)) => vec![Given::Text(text)],
                _ => Vec::new(),
            },
            ParamKind::Command => vec![Given::List(vec!["true".into(), "-x".into()])],
            _ => Vec::new(),
        }
    }

    /// What every workload's declarations must hold (called for each by the registry's test):
    /// each parameter writes the field its key names, reads back what it was given, and that
    /// field is the key stored runs and suite files hold, a choice under its name.
    pub(crate) fn check_declaration<P: WorkloadParams>() {
        let default = P::default();
        for param in P::PARAMS {
            let (def, at) = (&param.def, format!("{} {}", P::NAME, param.def.key));
            assert_eq!(def.applies_to.is_some(), param.applies.is_some(), "{at}");
            let Some(field) = param.field else {
                assert!(
                    matches!(
                        def.kind,
                        ParamKind::Refused { .. } | ParamKind::Label | ParamKind::SwitchOff { .. }
                    ),
                    "{at}: only flags that set nothing may have no field"
                );
                continue;
            };
            assert_eq!(field.key, def.key, "{at}");
            let samples = samples(param);
            assert!(
                !samples.is_empty() || matches!(def.kind, ParamKind::Text),
                "{at}: nothing to check it with"
            );
            for given in samples {
                let mut params = P::default();
                (field.set)(&mut params, given.clone())
                    .unwrap_or_else(|e| panic!("{at}: {given:?}: {e}"));
                let read = (field.get)(&params);
                let expected = match given.clone() {
                    Given::Switch => ParamValue::Switch(true),
                    Given::Count(n) => ParamValue::Count(n),
                    Given::Number(x) => ParamValue::Number(x),
                    Given::Text(text) => ParamValue::Text(text),
                    Given::List(words) => ParamValue::List(words),
                };
                assert_eq!(read, expected, "{at}: {given:?} reads back otherwise");
                let stored = serde_json::to_value(&params).unwrap();
                let back: P = serde_json::from_value(stored.clone()).unwrap();
                assert_eq!(
                    back, params,
                    "{at}: {given:?} does not read back from {stored}"
                );
                if read == (field.get)(&default) {
                    continue;
                }
                let value = stored.get(def.key);
                assert!(
                    value.is_some(),
                    "{at}: {given:?} is not stored as `{}`",
                    def.key
                );
                if let (ParamKind::Choice(_), Given::Text(name)) = (def.kind, &given) {
                    assert_eq!(value, Some(&serde_json::json!(name)), "{at}");
                }
            }
        }
    }

    #[test]
    fn a_count_of_zero_that_means_off_leaves_its_parameter_unset() {
        use crate::workload::definition::from_command_line;
        use crate::workload::wakeup::WakeupParams;
        let def = |key: &str| {
            WakeupParams::PARAMS
                .iter()
                .position(|param| param.def.key == key)
                .unwrap()
        };
        let given = [
            (def("pipe"), Given::Count(0)),
            (def("workers"), Given::Count(3)),
        ];
        let params: WakeupParams = from_command_line(&given).unwrap();
        assert_eq!((params.pipe, params.workers), (None, Some(3)));
        let error = from_command_line::<WakeupParams>(&[(def("workers"), Given::Count(5_000))])
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "--workers must be between 1 and 4096, not 5000"
        );
    }
}
