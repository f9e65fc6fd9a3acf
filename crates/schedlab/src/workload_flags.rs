//! The workload subcommands (`run pipe`, `ab … messaging`, …), built from the workload definitions
//! in schedlab-core: each [`ParamDef`] becomes one flag with its spellings, help, default, and
//! its range or choices checked by clap, so a new workload needs no line here. What clap matched is kept as each flag's place
//! in the definition and its [`Given`] value, which `plan.rs` hands to the workload's definition
//! to set its typed fields; no clap type leaves this crate.
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{value_parser, Arg, ArgAction, ArgMatches, Command, FromArgMatches, Subcommand};
use schedlab_core::fingerprint::topology;
use schedlab_core::workload::definition::out_of_range;

use crate::flag_values::Refusal;
use schedlab_core::workload::{
    parse_count, parse_task_count, Given, ParamDef, ParamKind, WorkloadDefinition, RELATIVE_COUNT,
    RELATIVE_COUNT_LONG, WORKLOADS,
};

/// The workload chosen on the command line and the flags given for it.
#[derive(Debug, Clone)]
pub struct WorkloadCommand {
    pub definition: &'static WorkloadDefinition,
    /// Each flag given, by its place in the definition's parameters, in that order.
    pub given: Vec<(usize, Given)>,
}

/// The subcommand of one workload: its summary as the help's first line, its reference note
/// after the flags.
fn workload_command(definition: &'static WorkloadDefinition) -> Command {
    let mut command = Command::new(definition.name)
        .about(sentence(definition.summary))
        .visible_aliases(definition.aliases.iter().copied());
    if let Some(note) = definition.reference_note {
        command = command.after_help(note);
    }
    for (index, def) in definition.params.iter().enumerate() {
        command = command.arg(flag(definition, index, def));
    }
    command
}

/// The summary as a sentence: capitalised, with a full stop.
fn sentence(summary: &str) -> String {
    let mut chars = summary.chars();
    match chars.next() {
        Some(first) => format!("{}{}.", first.to_uppercase(), chars.as_str()),
        None => String::new(),
    }
}

/// The flag of `def`, the `index`-th parameter of `definition`.
fn flag(definition: &WorkloadDefinition, index: usize, def: &'static ParamDef) -> Arg {
    // `-h` gives the one line, `--help` the whole story in its place, each with the default.
    let finish = |mut text: String, relative: &str| {
        if def.task_count {
            if !text.ends_with('.') {
                text.push('.');
            }
            text.push_str(relative);
        }
        if let Some(default) = definition.default_text(index) {
            text.push_str(&format!(" [default: {default}]"));
        }
        text
    };
    let help = finish(def.help.to_string(), RELATIVE_COUNT);
    let long_help = finish(def.whole_help(), RELATIVE_COUNT_LONG);
    if matches!(def.kind, ParamKind::Command) {
        // Everything after `--`, flags of the program included.
        return Arg::new(def.key)
            .help(help)
            .value_name(def.value_name)
            .num_args(1..)
            .last(true)
            .allow_hyphen_values(true);
    }
    let mut arg = Arg::new(def.key)
        .long(def.long)
        .help(help.clone())
        .visible_aliases(def.aliases.iter().copied())
        .visible_short_aliases(def.short_aliases.iter().copied());
    if long_help != help {
        arg = arg.long_help(long_help);
    }
    if let Some(short) = def.short {
        arg = arg.short(short);
    }
    if !def.value_name.is_empty() {
        arg = arg.value_name(def.value_name);
    }
    match def.kind {
        ParamKind::Switch => {
            arg = arg.action(ArgAction::SetTrue);
            // The switch another one turns off: the last of the two wins.
            if let Some(off) = definition
                .params
                .iter()
                .find(|other| matches!(other.kind, ParamKind::SwitchOff { of } if of == def.key))
            {
                arg = arg.overrides_with(off.key);
            }
            arg
        }
        ParamKind::SwitchOff { of } => arg.action(ArgAction::SetTrue).overrides_with(of),
        // A negative count is taken as a value, so its error names the flag and what a count
        // is, not "unexpected argument '-1'".
        ParamKind::Count { .. } => arg
            .value_parser(move |given: &str| {
                let count = if def.task_count {
                    parse_task_count(given, &topology())
                } else {
                    parse_count(given, def.size)
                };
                count
                    .and_then(|count| in_range(def, count))
                    .map_err(Refusal)
            })
            .allow_negative_numbers(true),
        ParamKind::Number => arg
            .value_parser(value_parser!(f64))
            .allow_negative_numbers(true),
        ParamKind::Choice(choices) => arg.value_parser(PossibleValuesParser::new(
            choices
                .iter()
                .map(|(name, help)| PossibleValue::new(*name).help(*help)),
        )),
        ParamKind::Text | ParamKind::Label | ParamKind::Command => arg,
        ParamKind::Refused { takes_value, .. } => {
            let arg = arg.hide(true);
            if takes_value {
                arg
            } else {
                arg.action(ArgAction::SetTrue)
            }
        }
    }
}

/// A count held to its parameter's range, as clap checks it (0 too where 0 means off).
fn in_range(def: &ParamDef, count: u64) -> Result<u64, String> {
    let Some((min, max)) = def.command_line_range() else {
        return Ok(count);
    };
    if !(min..=max).contains(&count) {
        let ParamKind::Count { min, max } = def.kind else {
            unreachable!("a range is a count's")
        };
        return Err(out_of_range(count, min, max));
    }
    Ok(count)
}

fn given(def: &'static ParamDef, matches: &ArgMatches) -> Option<Given> {
    match def.kind {
        ParamKind::Switch => matches.get_flag(def.key).then_some(Given::Switch),
        // clap has already let the last of the two switches win.
        ParamKind::SwitchOff { .. } => None,
        ParamKind::Count { .. } => matches.get_one::<u64>(def.key).map(|&n| Given::Count(n)),
        ParamKind::Number => matches.get_one::<f64>(def.key).map(|&x| Given::Number(x)),
        ParamKind::Choice(_) | ParamKind::Text | ParamKind::Label => matches
            .get_one::<String>(def.key)
            .map(|text| Given::Text(text.clone())),
        ParamKind::Command => matches
            .get_many::<String>(def.key)
            .map(|words| Given::List(words.cloned().collect())),
        ParamKind::Refused { takes_value, .. } => {
            let present = if takes_value {
                matches.contains_id(def.key)
            } else {
                matches.get_flag(def.key)
            };
            present.then_some(Given::Switch)
        }
    }
}

/// A workload's command line in one argument (`--background 'pipe --loops 1000'`), split into
/// words as a shell would and matched by the same subcommands as `run`'s own workload; the
/// values are checked when the plan is made, as `run`'s are.
pub fn workload_line(line: &str) -> Result<WorkloadCommand, Refusal> {
    let words = shlex::split(line).ok_or_else(|| {
        Refusal(format!(
            "{line:?}: an unclosed quote or a trailing backslash"
        ))
    })?;
    if words.is_empty() {
        return Err(Refusal(
            "is empty: give a workload and its flags".to_string(),
        ));
    }
    let command = WorkloadCommand::augment_subcommands(
        Command::new("schedlab")
            .no_binary_name(true)
            .subcommand_required(true)
            .disable_help_subcommand(true),
    );
    let matches = command.try_get_matches_from(&words).map_err(|e| {
        let message = e.render().to_string();
        let first = message.lines().next().unwrap_or_default();
        let reason = first.strip_prefix("error: ").unwrap_or(first);
        Refusal(format!("{line:?}: {reason}"))
    })?;
    WorkloadCommand::from_arg_matches(&matches)
        .map_err(|e| Refusal(format!("{line:?}: {}", e.kind())))
}

impl FromArgMatches for WorkloadCommand {
    fn from_arg_matches(matches: &ArgMatches) -> Result<Self, clap::Error> {
        let (name, matches) = matches.subcommand().ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::MissingSubcommand,
                "a workload is required",
            )
        })?;
        let definition = WorkloadDefinition::find(name).ok_or_else(|| {
            clap::Error::raw(
                clap::error::ErrorKind::InvalidSubcommand,
                format!("no workload named {name}"),
            )
        })?;
        let given = definition
            .params
            .iter()
            .enumerate()
            .filter_map(|(index, def)| given(def, matches).map(|value| (index, value)))
            .collect();
        Ok(WorkloadCommand { definition, given })
    }

    fn update_from_arg_matches(&mut self, matches: &ArgMatches) -> Result<(), clap::Error> {
        *self = WorkloadCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for WorkloadCommand {
    fn augment_subcommands(command: Command) -> Command {
        WORKLOADS.iter().fold(command, |command, definition| {
            command.subcommand(workload_command(definition))
        })
    }

    fn augment_subcommands_for_update(command: Command) -> Command {
        WorkloadCommand::augment_subcommands(command)
    }

    fn has_subcommand(name: &str) -> bool {
        WorkloadDefinition::find(name).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--help` says each flag once: the whole story replaces the one line instead of following
    /// it, and `-h` keeps the one line.
    #[test]
    fn long_help_replaces_the_one_line() {
        for definition in WORKLOADS {
            for (index, def) in definition.params.iter().enumerate() {
                if matches!(def.kind, ParamKind::Command) {
                    continue;
                }
                let arg = flag(definition, index, def);
                let short = arg.get_help().expect("every flag has help").to_string();
                assert!(short.starts_with(def.help), "{}: {short}", def.key);
                let Some(long) = arg.get_long_help() else {
                    assert_eq!(def.whole_help(), def.help, "{}", def.key);
                    continue;
                };
                let long = long.to_string();
                assert!(long.starts_with(&def.whole_help()), "{}: {long}", def.key);
                assert!(
                    !long.contains("\n\n"),
                    "{}: two paragraphs: {long}",
                    def.key
                );
            }
        }
    }
}
