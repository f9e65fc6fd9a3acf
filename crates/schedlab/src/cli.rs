//! The command line as clap parses it: raw arguments mirroring the flags one to one (ripgrep's
//! LowArgs), each value read and held to its own rule by clap (`flag_values.rs`); rules across
//! flags are checked where the flags meet (`plan.rs` turns them into a checked plan, a command
//! its own). No clap type goes below this crate.
use std::path::PathBuf;

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, CommandFactory, Parser, Subcommand, ValueEnum};
use schedlab_core::import::{Tool, TOOLS};
use schedlab_core::plan;
use schedlab_core::words::check_printable;

use crate::flag_values::{
    any_count, check_column, check_confidence, check_delimiters, check_fdr, check_min_effect,
    check_noise_cap, count, count_in, duration_ms, number, text, SuiteName, MAX_PLOT_WIDTH,
};

pub use crate::workload_flags::WorkloadCommand;

/// The widest a line of help may be; help wraps to the terminal, and to this at most.
pub const HELP_COLUMNS: usize = 100;

/// schedlab's command line as clap parses it: [`Cli`]'s, with each usage line that would pass
/// [`HELP_COLUMNS`] broken onto two (a workload under `campaign start` repeats that command's
/// required arguments in its usage). The parser, the man pages and the completions all take it
/// from here.
pub fn command() -> clap::Command {
    let mut command = Cli::command();
    command.build();
    fit_usage(&mut command);
    command
}

fn fit_usage(command: &mut clap::Command) {
    const TITLE: &str = "Usage: ";
    for sub in command.get_subcommands_mut() {
        let usage = sub.render_usage().to_string();
        let usage = usage
            .strip_prefix(TITLE)
            .unwrap_or(&usage)
            .trim_end()
            .to_string();
        if TITLE.len() + usage.chars().count() > HELP_COLUMNS {
            let room = HELP_COLUMNS - TITLE.len();
            let cut = usage
                .char_indices()
                .take_while(|(at, _)| *at <= room)
                .filter(|(_, c)| *c == ' ')
                .map(|(at, _)| at)
                .last()
                .unwrap_or(usage.len());
            let (first, rest) = usage.split_at(cut);
            let indent = " ".repeat(TITLE.len() + 2);
            let broken = format!("{first}\n{indent}{}", rest.trim_start());
            *sub = std::mem::take(sub).override_usage(broken);
        }
        fit_usage(sub);
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "schedlab",
    version,
    about = "A Linux scheduler and IPC performance lab: run workloads, store results, compare runs",
    propagate_version = true,
    // Help wraps to the terminal, and to HELP_COLUMNS at most (also when it is not a terminal).
    max_term_width = HELP_COLUMNS
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List workloads and built-in suites, one line each.
    List(ListArgs),
    /// Run one workload or a suite, store the results and print a summary.
    Run(RunArgs),
    /// List stored runs, newest first.
    Runs(RunsArgs),
    /// List the machines with stored runs, each with its newest run.
    Hosts(HostsArgs),
    /// Show one case's metric over time on one machine: a run summary per run, with its kernel.
    History(HistoryArgs),
    /// Find change points in cases' histories (E-divisive means, judged against the machine's
    /// noise) and name the first run and kernel after each.
    Changes(ChangesArgs),
    /// Show stored runs by run id or label (a label may name several runs).
    Show(ShowArgs),
    /// Interleave two settings A and B in ABBA order and store the runs as one paired experiment.
    Ab(AbArgs),
    /// Drive a per-boot kernel A/B campaign (ABBA boots); its state lives in the database.
    Campaign(CampaignArgs),
    /// Measure this machine's run-to-run noise: run the same cases several times and store a
    /// calibration that `compare` uses when a side has too few runs of its own.
    Calibrate(CalibrateArgs),
    /// Compare stored runs: a baseline and one or more candidates (run ids or labels).
    Compare(CompareArgs),
    /// Write a comparison of stored runs as one self-contained HTML page (tables and plots).
    Report(ReportArgs),
    /// Compare plain data files, one number per line (ministat-compatible).
    Stat(StatArgs),
    /// Store results a reference tool printed (perf bench, hackbench, schbench, number files) as
    /// one run, one iteration per result, to compare like measured runs.
    Import(ImportArgs),
    /// Print this machine's fingerprint, as stored with every run.
    Env(EnvArgs),
    /// Check the results database, or upgrade its schema.
    Db(DbArgs),
    // A build without the `postgres` feature copies into SQLite files only (README).
    #[cfg_attr(
        feature = "postgres",
        doc = "Copy this store's runs (with their experiments and calibrations) into another store, a \
               PostgreSQL database or an SQLite file; runs already there are skipped."
    )]
    #[cfg_attr(
        not(feature = "postgres"),
        doc = "Copy this store's runs (with their experiments and calibrations) into another SQLite \
               file; runs already there are skipped."
    )]
    Push(PushArgs),
    /// Print a shell completion script for schedlab (workloads and their flags included).
    Completions(CompletionsArgs),
    /// Write schedlab's man pages: schedlab(1) on stdout, or one page per command into a folder.
    Man(ManArgs),
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write schedlab.1 and a page per command and subcommand (schedlab-run.1,
    /// schedlab-run-pipe.1, …) into DIR instead of schedlab(1) to stdout.
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Aligned text for people
    Text,
    /// One JSON document for programs (see docs/json-schema.md)
    Json,
}

#[derive(Debug, Args)]
pub struct DbArg {
    #[cfg_attr(
        feature = "postgres",
        doc = "Results database: a file, sqlite:PATH or postgres://USER@HOST/DATABASE"
    )]
    #[cfg_attr(
        not(feature = "postgres"),
        doc = "Results database: a file or sqlite:PATH (built without PostgreSQL)"
    )]
    /// [default: $SCHEDLAB_DB, else $XDG_DATA_HOME/schedlab/results.db]
    #[arg(long, value_name = "PATH|URL", global = true)]
    pub db: Option<PathBuf>,
}

/// The help heading of the options that shape a run, apart from the workload's own flags.
pub const RUN_OPTIONS: &str = "Run options";
/// The help heading of the options that decide a comparison's rows.
pub const DECISION_OPTIONS: &str = "Decision options";

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run a built-in suite (see `schedlab list`) or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE", value_parser = SuiteName, hide_possible_values = true)]
    pub suite: Option<String>,
    #[command(flatten)]
    pub plan: PlanOptions,
    /// Name this run; many runs may share a label (e.g. several boots of one kernel).
    #[arg(
        long,
        value_name = "TEXT",
        global = true,
        help_heading = RUN_OPTIONS,
        value_parser = text(plan::check_label)
    )]
    pub label: Option<String>,
    /// Output format on stdout: the run's summary, or with --dry-run the plan and its estimate.
    #[arg(
        long,
        value_enum,
        default_value_t = OutputFormat::Text,
        global = true,
        help_heading = RUN_OPTIONS
    )]
    pub format: OutputFormat,
    /// Do not store the run.
    #[arg(long, global = true, help_heading = RUN_OPTIONS)]
    pub no_store: bool,
    /// List the cases and an estimated duration, and run nothing (with --format json: the plan).
    #[arg(long, global = true, help_heading = RUN_OPTIONS)]
    pub dry_run: bool,
    /// No progress bar on stderr.
    #[arg(long, short = 'q', global = true, help_heading = RUN_OPTIONS)]
    pub quiet: bool,
    #[command(flatten, next_help_heading = RUN_OPTIONS)]
    pub db: DbArg,
    #[command(subcommand)]
    pub workload: Option<WorkloadCommand>,
}

/// What every command that runs cases takes (`run`, `ab`, `campaign start`, `calibrate`): how
/// many iterations, in what order, how big, with what deadline. Global, so they may come before
/// or after the workload name; shown under their own heading, apart from the workload's flags.
#[derive(Debug, Args)]
#[command(next_help_heading = RUN_OPTIONS)]
pub struct PlanOptions {
    /// Measured iterations per case [default: the suite's, else 5]
    #[arg(
        long,
        value_name = "N",
        global = true,
        allow_negative_numbers = true,
        value_parser = count::<u32>(plan::check_iterations)
    )]
    pub iterations: Option<u32>,
    /// Warm-up iterations per case, stored but not summarised [default: the suite's, else 1]
    #[arg(
        long,
        value_name = "N",
        global = true,
        allow_negative_numbers = true,
        value_parser = count::<u32>(plan::check_warmup)
    )]
    pub warmup: Option<u32>,
    #[arg(
        long,
        value_name = "F",
        global = true,
        help = "Multiply every case's work size by F (see --help for each workload's).",
        long_help = scale_help(),
        allow_negative_numbers = true,
        value_parser = number(plan::check_scale)
    )]
    pub scale: Option<f64>,
    /// Case order [default: the suite's, else listed]
    #[arg(long, value_enum, global = true)]
    pub order: Option<OrderArg>,
    /// Seed of the random case order [default: drawn and recorded with the run]
    #[arg(
        long,
        value_name = "N",
        global = true,
        allow_negative_numbers = true,
        value_parser = any_count::<u64>()
    )]
    pub order_seed: Option<u64>,
    /// Pause between cases, seconds [default: the suite's, else 0]
    #[arg(
        long,
        value_name = "SEC",
        global = true,
        allow_negative_numbers = true,
        value_parser = number(plan::check_cooldown_sec)
    )]
    pub cooldown: Option<f64>,
    /// Add iterations to each case until its 95% CI half-width is under PCT percent.
    #[arg(
        long,
        value_name = "PCT",
        global = true,
        requires = "max_iterations",
        allow_negative_numbers = true,
        value_parser = number(plan::check_until_ci)
    )]
    pub until_ci: Option<f64>,
    /// With --until-ci: the most measured iterations a case may get.
    #[arg(
        long,
        value_name = "N",
        global = true,
        requires = "until_ci",
        allow_negative_numbers = true,
        value_parser = count::<u32>(plan::check_iterations)
    )]
    pub max_iterations: Option<u32>,
    /// Deadline of every iteration, seconds: at it the tasks that had not finished are named and
    /// stopped, and the case fails [default: 10 × the case's median iteration or estimate, at least 30]
    #[arg(
        long,
        value_name = "SEC",
        global = true,
        allow_negative_numbers = true,
        value_parser = number(plan::check_iteration_timeout_sec)
    )]
    pub iteration_timeout: Option<f64>,
    /// When a case fails (an error, or its deadline), record it and go on to the next case; the
    /// run then ends `partial` (exit 1).
    #[arg(long, global = true)]
    pub keep_going: bool,
    /// Run a workload beside every iteration: 'WORKLOAD [ARGS…]', as `run` takes it; repeatable
    ///
    /// Run a workload beside every iteration of every case: 'WORKLOAD [ARGS…]' in one argument,
    /// as `run` takes a workload ('pipe --loops 1000', 'scenario --file hog.toml'). It starts
    /// before each iteration and stops after it, repeating its own iterations meanwhile; what it
    /// achieved is stored with the iteration as background_* metrics. Repeatable, one per workload
    #[arg(
        long,
        value_name = "'WORKLOAD [ARGS…]'",
        global = true,
        action = clap::ArgAction::Append,
        value_parser = crate::workload_flags::workload_line
    )]
    pub background: Vec<WorkloadCommand>,
    #[command(flatten)]
    pub probes: ProbeOptions,
    #[command(flatten)]
    pub quiet: QuietOptions,
}

/// The quiet-machine guard: wait before each iteration until CPU pressure is low, or mark it.
#[derive(Debug, Args)]
#[command(next_help_heading = RUN_OPTIONS)]
pub struct QuietOptions {
    /// Before each iteration wait until CPU pressure (PSI) is below PCT %, else mark it disturbed
    ///
    /// Before each iteration, look at the CPU pressure (/proc/pressure/cpu `some`, percent of
    /// wall time) over 0.2 s windows until one is below PCT, for at most --quiet-wait; then run
    /// it anyway, marked disturbed. An iteration under pressure at or above PCT while it ran is
    /// marked too. `compare --drop-disturbed` leaves marked iterations out. Exit 2 without PSI.
    #[arg(
        long,
        value_name = "PCT",
        global = true,
        allow_negative_numbers = true,
        value_parser = number(schedlab_core::quiet::check_below_pct)
    )]
    pub quiet_below: Option<f64>,
    /// With --quiet-below: the longest wait before an iteration, e.g. 500ms, 10s [default: 10s]
    #[arg(
        long,
        value_name = "DURATION",
        global = true,
        requires = "quiet_below",
        allow_negative_numbers = true,
        value_parser = duration_ms(schedlab_core::quiet::check_wait_ms)
    )]
    pub quiet_wait: Option<u64>,
}

/// `--explain` and `--profile`: iterations of their own after a case's measured ones, stored
/// apart from them (docs/explain.md).
#[derive(Debug, Args)]
#[command(next_help_heading = RUN_OPTIONS)]
pub struct ProbeOptions {
    /// Run N more iterations of each case under scheduler probes, stored apart [default N: 1]
    ///
    /// After each case's measured iterations, run N more under scheduler probes (run-queue delay,
    /// wake placement, migrations, switches, system calls, PSI, schedstat, hardware counters) and
    /// store what they saw apart from the measured ones, so no verdict mixes them [default N: 1]
    #[arg(
        long,
        value_name = "N",
        global = true,
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "1"
    )]
    pub explain: Option<u32>,
    /// After those, profile one more iteration of each case (cpu-clock samples, kernel and user
    /// symbols) and store its top symbols.
    #[arg(long, global = true)]
    pub profile: bool,
}

/// `--scale`'s help, naming each workload's work size as its definition marks it.
fn scale_help() -> String {
    let sizes: Vec<String> = schedlab_core::workload::WORKLOADS
        .iter()
        .flat_map(|w| {
            w.work_size_keys()
                .map(move |p| format!("{} --{}", w.name, p.long))
        })
        .collect();
    format!(
        "Multiply every case's work size by F: {}.",
        sizes.join(", ")
    )
}

/// The most runs a calibration makes.
const MAX_CALIBRATION_RUNS: u64 = 1_000;

/// `calibrate --pause`, in seconds.
fn check_pause_sec(seconds: f64) -> Result<(), String> {
    if !(seconds.is_finite() && (0.0..=3600.0).contains(&seconds)) {
        return Err("must be between 0 and 3600 seconds".to_string());
    }
    Ok(())
}

/// The most boots of a campaign.
const MAX_BOOTS: u32 = 1000;

/// `campaign start --boots`: ABBA pairs of pairs.
fn check_boots(boots: u32) -> Result<(), String> {
    if boots < 4 || !boots.is_multiple_of(2) || boots > MAX_BOOTS {
        return Err(format!(
            "must be even, at least 4 and at most {MAX_BOOTS} (ABBA pairs), not {boots}"
        ));
    }
    Ok(())
}

/// `import --tool`: one of the parsers, by name.
fn tool() -> impl TypedValueParser<Value = Tool> {
    PossibleValuesParser::new(
        TOOLS
            .iter()
            .map(|(name, what)| PossibleValue::new(*name).help(*what)),
    )
    .try_map(|name| Tool::parse(&name).ok_or_else(|| format!("{name:?} is no parser")))
}

impl PlanOptions {
    /// The first of these options given, for commands that run nothing and must not ignore one
    /// silently.
    pub fn first_given(&self) -> Option<&'static str> {
        let given = [
            ("--iterations", self.iterations.is_some()),
            ("--warmup", self.warmup.is_some()),
            ("--scale", self.scale.is_some()),
            ("--order", self.order.is_some()),
            ("--order-seed", self.order_seed.is_some()),
            ("--cooldown", self.cooldown.is_some()),
            ("--until-ci", self.until_ci.is_some()),
            ("--max-iterations", self.max_iterations.is_some()),
            ("--iteration-timeout", self.iteration_timeout.is_some()),
            ("--keep-going", self.keep_going),
            ("--explain", self.probes.explain.is_some()),
            ("--profile", self.probes.profile),
            ("--quiet-below", self.quiet.quiet_below.is_some()),
            ("--quiet-wait", self.quiet.quiet_wait.is_some()),
        ];
        given.iter().find(|(_, g)| *g).map(|(flag, _)| *flag)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OrderArg {
    /// As written in the suite
    Listed,
    /// Shuffled with a recorded seed
    Random,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Show at most N runs.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub limit: Option<usize>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub db: DbArg,
}

/// Which stored runs a fleet command looks at.
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Only runs of this machine (its hostname, as `schedlab hosts` lists it).
    #[arg(long, value_name = "HOST")]
    pub host: Option<String>,
    /// Only runs on this kernel release, as `uname -r` prints it.
    #[arg(long, value_name = "RELEASE")]
    pub kernel: Option<String>,
    /// Only runs whose fingerprint field KEY reads VALUE (repeatable).
    ///
    /// `schedlab env --format json` shows the fields; lists read joined with `,`, `map.key`
    /// reads one entry of a map.
    #[arg(long = "where", value_name = "KEY=VALUE")]
    pub fields: Vec<String>,
    /// Only runs started at or after WHEN: a date (2026-11-01), a UTC time
    /// (2026-11-01T18:30:00Z) or an age (36h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Only runs started before WHEN (as --since takes it).
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
}

#[derive(Debug, Args)]
pub struct HostsArgs {
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub db: DbArg,
}

/// The formats of `history` and `changes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum HistoryFormat {
    /// Aligned text for people
    Text,
    /// One JSON document for programs
    Json,
    /// One row per line
    Csv,
}

/// How `changes` (and `history`'s marks) find and judge change points.
#[derive(Debug, Args)]
pub struct ChangeArgs {
    /// Report a change only when it moves the level by at least K times the machine's noise.
    ///
    /// The noise is the machine's run-to-run noise: the larger of its calibration's and the
    /// series' own, at least what the runs' own iterations allow.
    #[arg(
        long,
        value_name = "K",
        default_value_t = 3.0,
        allow_negative_numbers = true
    )]
    pub noise_multiple: f64,
    /// Smallest change reported, in percent.
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 1.0,
        allow_negative_numbers = true
    )]
    pub min_effect: f64,
    /// Significance level of E-divisive's permutation test.
    #[arg(
        long,
        value_name = "P",
        default_value_t = 0.01,
        allow_negative_numbers = true
    )]
    pub alpha: f64,
    /// Fewest runs either side of a change.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3,
        allow_negative_numbers = true
    )]
    pub min_runs: usize,
    /// Use runs that did not complete (partial, interrupted, failed, abandoned) too.
    #[arg(long)]
    pub include_incomplete: bool,
    /// Calibration that supplies the machine's noise: `auto` (the newest that covers the case),
    /// `none`, or a calibration id.
    #[arg(long, value_name = "auto|none|ID", default_value = "auto")]
    pub calibration: String,
}

#[derive(Debug, Args)]
pub struct HistoryArgs {
    /// The case, by its canonical name (as `schedlab show` prints it).
    #[arg(value_name = "CASE")]
    pub case: String,
    /// The metric [default: the case's first primary metric]
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Output format on stdout [default: text]; not with --html on stdout.
    #[arg(long, value_enum)]
    pub format: Option<HistoryFormat>,
    /// Also write the history as a self-contained HTML page with an SVG plot (replaced whole; `-`
    /// or /dev/stdout: on stdout, instead of the table).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct ChangesArgs {
    /// Cases by canonical name [default: every case the selected runs measured]
    #[arg(value_name = "CASE")]
    pub cases: Vec<String>,
    /// Judge every host's history of each case (with the hosts --where and the other
    /// selections take), host by host, instead of one host's.
    #[arg(long, conflicts_with = "host")]
    pub all_hosts: bool,
    /// The metric [default: each case's first primary metric]
    #[arg(long, value_name = "NAME")]
    pub metric: Option<String>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = HistoryFormat::Text)]
    pub format: HistoryFormat,
    #[command(flatten)]
    pub select: SelectArgs,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub db: DbArg,
}

/// The formats of `show`: those of `run`, and the raw samples as CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ShowFormat {
    /// Each run's cases with median, min, max and std% per metric
    Text,
    /// Every run, case and sample (docs/json-schema.md)
    Json,
    /// The raw samples in long form, one row per measurement, for R, pandas or gnuplot
    Csv,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id (digits) or a label.
    #[arg(value_name = "RUN-ID|LABEL")]
    pub run: String,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = ShowFormat::Text)]
    pub format: ShowFormat,
    /// The latency tables (wakeup, timer-latency) at these percentiles instead of the defaults.
    ///
    /// A list such as 50,75,90,95,99,99.5,99.9: each above 0 and below 100, in tenths at the
    /// finest.
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = crate::flag_values::per_mille
    )]
    pub percentiles: Vec<schedlab_core::latency::PerMille>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The tool whose output the files are.
    #[arg(long, value_name = "TOOL", value_parser = tool())]
    pub tool: Tool,
    /// Files the tool's output was kept in, `-` for standard input (also when no file is named);
    /// every one is read and checked before anything is stored.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Name the run, as `run --label` does (many runs may share a label).
    #[arg(long, value_name = "TEXT", value_parser = text(plan::check_label))]
    pub label: Option<String>,
    /// Name the case instead of what the output says was run (all results must be of one kind).
    #[arg(long, value_name = "NAME", value_parser = text(check_printable))]
    pub case: Option<String>,
    /// The host the files came from [default: unknown, unless a file says].
    #[arg(long, value_name = "NAME", value_parser = text(check_printable))]
    pub host: Option<String>,
    /// The kernel release (`uname -r`) the files came from [default: unknown, unless a file says].
    #[arg(long, value_name = "RELEASE", value_parser = text(check_printable))]
    pub kernel: Option<String>,
    /// The files were measured on this machine: take its hardware fields into the fingerprint.
    ///
    /// Its CPU model, CPUs, SMT, governors and the other hardware fields; not its kernel's.
    #[arg(long)]
    pub this_machine: bool,
    /// The tool's version [default: unknown].
    #[arg(long, value_name = "TEXT", value_parser = text(check_printable))]
    pub tool_version: Option<String>,
    /// `plain`: the metric the numbers are (snake_case with a unit suffix: `wakeup_p99_usec`).
    #[arg(long, value_name = "NAME", default_value = "value")]
    pub metric: String,
    /// `plain`: a higher number is better (default: lower, like times).
    #[arg(long)]
    pub higher_is_better: bool,
    /// Store each result as a run of its own (the k-th result of every case in run k).
    ///
    /// For logs of separate invocations of the tool: each is then a unit of `compare`, not an
    /// iteration.
    #[arg(long)]
    pub run_per_result: bool,
    #[command(flatten)]
    pub db: DbArg,
    #[command(flatten, next_help_heading = "Columns (`--tool plain`)")]
    pub columns: ColumnArgs,
}

/// Which column of each line holds the number, as ministat's `-C` and `-d` (`stat`, and
/// `import --tool plain`).
#[derive(Debug, Args)]
pub struct ColumnArgs {
    /// The column to read (1-based), as ministat's -C.
    #[arg(
        long,
        short = 'C',
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true,
        value_parser = count::<usize>(check_column)
    )]
    pub column: usize,
    /// Column delimiters, as ministat's -d.
    #[arg(
        long = "delimiter",
        short = 'd',
        value_name = "CHARS",
        default_value = " \t",
        value_parser = text(check_delimiters)
    )]
    pub delimiters: String,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareStyle {
    /// case, load, baseline(std%), compare%(std%), mark (as kernel developers post schedtests tables)
    Schedtests,
    /// Min, Amean or Hmean, Stddev, CoeffVar, Max rows with * marks (compare-mmtests)
    Mmtests,
    /// ministat's plot, vitals and Student's t difference
    Ministat,
    /// benchstat's median ± CI and `vs base` column
    Benchstat,
    /// base ± %stddev, %change, candidate ± %stddev, then the name (0-day's regression mails)
    Lkp,
}

/// How a comparison's text and Markdown look besides their style.
#[derive(Debug, Args)]
pub struct ShapeArgs {
    /// The statistics footer in one line: the tally and what a mark needs (text, markdown).
    #[arg(long)]
    pub brief: bool,
    /// --style mmtests: the mean rows only, normalised to the baseline (1.00).
    #[arg(long)]
    pub normalise: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    /// The style's layout as aligned text, then the statistics footer
    Text,
    /// The style's tables as Markdown (ministat's plot in a fenced block), the footer as a list
    Markdown,
    /// Every figure of every row, one row per line, whatever the style
    Csv,
    /// Every figure of every row and the footer, whatever the style (see docs/json-schema.md)
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AdjustArg {
    /// Benjamini-Hochberg (false discovery rate)
    Bh,
    /// Benjamini-Yekutieli (false discovery rate under any dependence)
    By,
    /// Holm (family-wise error rate; strict gates)
    Holm,
}

/// Options shared by `compare` and `stat`: how rows are decided and shown.
#[derive(Debug, Args)]
pub struct DecisionArgs {
    /// Smallest change worth a mark, in percent (δ).
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 1.0,
        allow_negative_numbers = true,
        value_parser = number(check_min_effect)
    )]
    pub min_effect: f64,
    /// False discovery rate q for the multiple-comparison adjustment.
    #[arg(
        long,
        value_name = "Q",
        default_value_t = 0.05,
        allow_negative_numbers = true,
        value_parser = number(check_fdr)
    )]
    pub fdr: f64,
    /// Multiple-comparison adjustment over every row of the report.
    #[arg(long, value_enum, default_value_t = AdjustArg::Bh)]
    pub adjust: AdjustArg,
    /// A row neither marked nor ≈ whose side's units vary more than this percent (for pairs: whose
    /// differences do) is ?? (too noisy).
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 10.0,
        allow_negative_numbers = true,
        value_parser = number(check_noise_cap)
    )]
    pub noise_cap: f64,
    /// Confidence level in percent: one of ministat's 80, 90, 95, 98, 99, 99.5.
    #[arg(
        long,
        short = 'c',
        value_name = "PCT",
        default_value_t = 95.0,
        allow_negative_numbers = true,
        value_parser = number(check_confidence)
    )]
    pub confidence: f64,
    /// Exit with status 1 when any row is marked a regression (for CI gates).
    #[arg(long)]
    pub fail_on_regression: bool,
}

/// What `compare` and `report` compare: the sides, which metrics, and how rows are decided.
#[derive(Debug, Args)]
pub struct SidesArgs {
    /// The baseline: a run id or a label (a label may span runs from several boots); with
    /// --across, the first run selection.
    #[arg(value_name = "BASE")]
    pub base: String,
    /// One or more candidates, each a run id or a label; with --across, more run selections.
    #[arg(value_name = "CAND", required_unless_present = "across")]
    pub candidates: Vec<String>,
    /// Compare the values of one workload parameter (its suite key, e.g. `variant`).
    ///
    /// Within the runs that the positional arguments select together: KEY alone takes every
    /// value found, the first as the baseline; KEY=BASE,CAND[,CAND...] the values listed. A run
    /// holding both cases of a row is a pair.
    #[arg(long, value_name = "KEY[=BASE,CAND...]")]
    pub across: Option<String>,
    /// Compare only this metric (repeatable) [default: every primary metric]
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Compare secondary metrics too (CPU time, context switches, migrations, RES and CAL IPIs).
    #[arg(long)]
    pub all_metrics: bool,
    /// Compare even when CPU model, CPU count, SMT or governor differ between the runs.
    #[arg(long)]
    pub allow_fingerprint_mismatch: bool,
    /// Judge runs measured in guests QEMU emulated (TCG, no KVM) too.
    ///
    /// Their timings are the emulator's, so by default `compare` refuses them as a kernel
    /// comparison.
    #[arg(long)]
    pub allow_tcg: bool,
    /// Keep only each side's runs that match (a label shared by many machines).
    #[command(flatten)]
    pub select: SelectArgs,
    /// Use runs that did not complete (partial, interrupted, failed, abandoned) too; by default
    /// they are left out.
    #[arg(long)]
    pub include_incomplete: bool,
    /// Leave out iterations the quiet-machine guard marked disturbed (run --quiet-below).
    ///
    /// A run whose every measured iteration is marked is left out whole; the report says how many
    /// iterations of which runs were left out. Without this option it says how many are in.
    #[arg(long)]
    pub drop_disturbed: bool,
    /// The calibration that supplies the noise model: `auto`, `none`, or a calibration id.
    ///
    /// `auto` takes the newest one of this machine for each case and iteration count.
    #[arg(long, value_name = "auto|none|ID", default_value = "auto")]
    pub calibration: String,
    /// With --fail-on-regression: exit with CODE when nothing could be tested.
    ///
    /// Nothing could be tested when a side has no complete run, a candidate names no run, or no
    /// row could be judged; 125 makes `git bisect run` skip the commit.
    #[arg(
        long,
        value_name = "CODE",
        requires = "fail_on_regression",
        value_parser = clap::value_parser!(u8).range(1..)
    )]
    pub could_not_test_exit: Option<u8>,
    #[command(flatten)]
    pub db: DbArg,
    // Last: a flattened heading holds for every argument after it.
    #[command(flatten, next_help_heading = DECISION_OPTIONS)]
    pub decision: DecisionArgs,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The layout of text and markdown output.
    #[arg(long, value_enum, default_value_t = CompareStyle::Schedtests)]
    pub style: CompareStyle,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Beside each case's verdicts, what moved in the runs' probed and profiled iterations.
    ///
    /// The explanatory metrics of the runs' probed (--explain) iterations and the symbol shares of
    /// their profiles (--profile), judged as the rows are (the same units and test) in families of
    /// their own, so they spend none of the rows' error budget; each side's run-queue delay
    /// percentiles (docs/explain.md).
    #[arg(long)]
    pub explain: bool,
    #[command(flatten)]
    pub shape: ShapeArgs,
    #[command(flatten)]
    pub sides: SidesArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Write the report to this HTML file (replaced whole, never left half-written; `-` or
    /// /dev/stdout: on stdout, the summary line on stderr).
    #[arg(long, value_name = "FILE", required = true)]
    pub html: PathBuf,
    #[command(flatten)]
    pub sides: SidesArgs,
}

#[derive(Debug, Args)]
pub struct StatArgs {
    /// Data files: one number per line (`#` starts a comment); the first is the baseline, `-` is
    /// standard input (also when no file is given). One file: its statistics only.
    #[arg(value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    #[command(flatten)]
    pub columns: ColumnArgs,
    /// The numbers improve when they grow (default: lower is better, like times).
    #[arg(long)]
    pub higher_is_better: bool,
    /// The layout of text and markdown output.
    #[arg(long, value_enum, default_value_t = CompareStyle::Ministat)]
    pub style: CompareStyle,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    #[command(flatten)]
    pub shape: ShapeArgs,
    #[command(flatten)]
    pub ministat: MinistatArgs,
    #[command(flatten, next_help_heading = DECISION_OPTIONS)]
    pub decision: DecisionArgs,
}

/// ministat's own switches for its layout (`--style ministat`, text or markdown).
#[derive(Debug, Args)]
#[command(next_help_heading = "ministat options")]
pub struct MinistatArgs {
    /// No plot: the statistics and the comparisons only (ministat -A).
    #[arg(short = 'A', long = "no-plot")]
    pub no_plot: bool,
    /// The statistics of each file only: no plot, no comparison, no verdict (ministat -n).
    #[arg(short = 'n', long = "stats-only")]
    pub stats_only: bool,
    /// No legend of file names and no statistics header (ministat -q).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Each file's average, median and stddev bar on a line of its own in the plot (ministat -s).
    #[arg(short = 's', long = "separate-bars")]
    pub separate: bool,
    /// Width of the plot in characters (ministat -w) [default: 74]
    #[arg(
        short = 'w',
        long = "width",
        value_name = "WIDTH",
        allow_negative_numbers = true,
        value_parser = count_in::<usize>(2, MAX_PLOT_WIDTH)
    )]
    pub width: Option<usize>,
}

#[derive(Debug, Args)]
pub struct AbArgs {
    /// Shell command that applies setting A (run with `sh -c` before every A visit).
    #[arg(
        long = "a",
        value_name = "SHELL CMD",
        required_unless_present_any = ["a_daemon", "write"]
    )]
    pub apply_a: Option<String>,
    /// Shell command that applies setting B.
    #[arg(
        long = "b",
        value_name = "SHELL CMD",
        required_unless_present_any = ["b_daemon", "write"]
    )]
    pub apply_b: Option<String>,
    /// Shell command that restores the original setting: run at the end, on Ctrl-C and on failure.
    #[arg(long, value_name = "SHELL CMD")]
    pub restore: Option<String>,
    /// Instead of --a/--b: write A, then B, into a kernel file (the original value is put back).
    ///
    /// PATH=A,B: schedlab writes A into PATH before every A visit and B before every B visit, and
    /// the value PATH held before at the end, on Ctrl-C and on failure. It is checked before any
    /// case runs: a PATH this machine lacks, one it cannot write and a value the kernel refuses
    /// are each refused (exit 2). E.g.
    /// /sys/devices/system/cpu/cpuidle/current_governor=menu,haltpoll or
    /// /sys/module/haltpoll/parameters/guest_halt_poll_ns=0,200000 (docs/seeds/001).
    #[arg(long, value_name = "PATH=A,B", conflicts_with_all = ["apply_a", "apply_b", "restore"])]
    pub write: Option<String>,
    /// Rounds: each runs every case under A and under B, in ABBA order (AB, BA, AB, ...).
    #[arg(
        long,
        value_name = "R",
        default_value_t = 4,
        conflicts_with = "until_decided",
        value_parser = count_in::<u32>(1, 1000)
    )]
    pub rounds: u32,
    /// Add rounds until every row is decided (`**` or `≈`) or --max-rounds are spent.
    ///
    /// Rows are decided after each round with O'Brien–Fleming alpha spending, so stopping early
    /// keeps the error rates.
    #[arg(long, requires = "max_rounds")]
    pub until_decided: bool,
    /// With --until-decided: the most rounds to run (the plan the alpha spending is made for).
    #[arg(
        long,
        value_name = "N",
        requires = "until_decided",
        allow_negative_numbers = true,
        value_parser = count_in::<u32>(2, 1000)
    )]
    pub max_rounds: Option<u32>,
    /// Run a built-in suite or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE", value_parser = SuiteName, hide_possible_values = true)]
    pub suite: Option<String>,
    #[command(flatten, next_help_heading = DAEMON_OPTIONS)]
    pub daemons: DaemonArgs,
    /// With --until-decided: how rows are decided after each round.
    #[command(flatten, next_help_heading = DECISION_OPTIONS)]
    pub decision: DecisionArgs,
    #[command(flatten)]
    pub plan: PlanOptions,
    /// Name of the experiment: its runs are labelled NAME-a and NAME-b [default: ab-<unix time>]
    #[arg(long, value_name = "NAME", global = true, help_heading = RUN_OPTIONS)]
    pub label: Option<String>,
    /// No progress bar on stderr, and no line per visit.
    #[arg(long, short = 'q', global = true, help_heading = RUN_OPTIONS)]
    pub quiet: bool,
    #[command(flatten, next_help_heading = RUN_OPTIONS)]
    pub db: DbArg,
    #[command(subcommand)]
    pub workload: Option<WorkloadCommand>,
}

#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// Runs of the same cases to make (at least 3) [default: 6]
    #[arg(
        long,
        value_name = "C",
        allow_negative_numbers = true,
        value_parser = count_in::<u32>(3, MAX_CALIBRATION_RUNS)
    )]
    pub runs: Option<u32>,
    /// Pause between runs, seconds, so the runs sample the machine apart in time [default: 5]
    #[arg(
        long,
        value_name = "SEC",
        allow_negative_numbers = true,
        value_parser = number(check_pause_sec)
    )]
    pub pause: Option<f64>,
    /// Compute a calibration from the stored complete runs of LABEL instead of running anything.
    #[arg(long, value_name = "LABEL", conflicts_with_all = ["list", "show", "suite"])]
    pub from: Option<String>,
    /// List stored calibrations.
    #[arg(long, conflicts_with_all = ["show", "suite"])]
    pub list: bool,
    /// Show one stored calibration.
    #[arg(
        long,
        value_name = "ID",
        conflicts_with = "suite",
        allow_negative_numbers = true
    )]
    pub show: Option<i64>,
    /// Calibrate a built-in suite or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE", value_parser = SuiteName, hide_possible_values = true)]
    pub suite: Option<String>,
    /// Output format of the calibration report (and of --list) on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, global = true)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub plan: PlanOptions,
    /// Label of the calibration runs [default: calibrate-<suite or workload>]; calibrating again
    /// under the same label on later boots adds the boot-to-boot component.
    #[arg(
        long,
        value_name = "TEXT",
        global = true,
        help_heading = RUN_OPTIONS,
        value_parser = text(plan::check_label)
    )]
    pub label: Option<String>,
    /// No progress bar on stderr, and no line per calibration run.
    #[arg(long, short = 'q', global = true, help_heading = RUN_OPTIONS)]
    pub quiet: bool,
    #[command(flatten, next_help_heading = RUN_OPTIONS)]
    pub db: DbArg,
    #[command(subcommand)]
    pub workload: Option<WorkloadCommand>,
}

#[derive(Debug, Args)]
pub struct CampaignArgs {
    #[command(subcommand)]
    pub action: CampaignAction,
}

#[derive(Debug, Subcommand)]
pub enum CampaignAction {
    /// Plan a campaign: which kernels, how many boots, what to run on each boot.
    Start(Box<CampaignStartArgs>),
    /// Run this boot's slot of the campaign if the running kernel is the one it expects.
    Next(CampaignNextArgs),
    /// Run every remaining slot of a --vm campaign: boot each slot's kernel in a QEMU guest,
    /// in ABBA order, and store the guest's runs as they arrive.
    Run(CampaignRunArgs),
    /// Show a campaign's plan and progress, or list the campaigns.
    Status(CampaignStatusArgs),
}

/// The help heading of the options of a campaign whose kernels boot in QEMU guests.
pub const VM_OPTIONS: &str = "Guest options (with --vm)";
pub const DAEMON_OPTIONS: &str = "Daemon options";

/// `--daemon-ready`: seconds.
fn check_ready_sec(seconds: f64) -> Result<(), String> {
    if !(seconds.is_finite() && (0.0..=600.0).contains(&seconds)) {
        return Err("must be between 0 and 600 seconds".to_string());
    }
    Ok(())
}

/// An arm that runs a daemon beside its runs (`ab`, `campaign start`): a sched_ext scheduler.
#[derive(Debug, Args)]
pub struct DaemonArgs {
    /// Shell command run beside each of arm A's runs (a sched_ext scheduler: scx_rusty)
    ///
    /// Started with `sh -c` in a process group of its own before each run of arm A, checked
    /// still running before and after the run, stopped after it (SIGTERM to its group, SIGKILL
    /// 5 s later). A daemon that ended fails the run, recorded failed with its exit and last
    /// line of output, instead of measuring without it.
    #[arg(long, value_name = "SHELL CMD", allow_hyphen_values = true)]
    pub a_daemon: Option<String>,
    /// Shell command run beside each of arm B's runs (as --a-daemon)
    #[arg(long, value_name = "SHELL CMD", allow_hyphen_values = true)]
    pub b_daemon: Option<String>,
    /// The sched_ext scheduler --a-daemon loads, as /sys/kernel/sched_ext/root/ops names it
    ///
    /// Before and after each run, sched_ext must be `enabled` with this scheduler (the name, or
    /// the name then `_` and the version scx_utils appends: rusty_1.0.14_g…); an arm without a
    /// daemon is then held to the kernel's own scheduler (no BPF scheduler loaded).
    #[arg(long, value_name = "NAME", requires = "a_daemon", value_parser = text(check_printable))]
    pub a_scx: Option<String>,
    /// The sched_ext scheduler --b-daemon loads (as --a-scx)
    #[arg(long, value_name = "NAME", requires = "b_daemon", value_parser = text(check_printable))]
    pub b_scx: Option<String>,
    /// Seconds a daemon has to be ready [default: 30 with --a-scx/--b-scx, else 1]
    ///
    /// With a scheduler named, the most schedlab waits for sched_ext to show it loaded (it goes
    /// on as soon as it is); without, how long the daemon must stay up before the first run.
    #[arg(long, value_name = "SEC", value_parser = number(check_ready_sec))]
    pub daemon_ready: Option<f64>,
}

impl DaemonArgs {
    pub fn daemons(&self) -> crate::daemon::Daemons {
        let arm = |command: &Option<String>, scx: &Option<String>| crate::daemon::ArmDaemon {
            command: command.clone(),
            scx: scx.clone(),
        };
        crate::daemon::Daemons {
            a: arm(&self.a_daemon, &self.a_scx),
            b: arm(&self.b_daemon, &self.b_scx),
            ready_sec: self.daemon_ready,
        }
    }
}

#[derive(Debug, Args)]
pub struct CampaignStartArgs {
    /// The campaign's name; its runs are labelled NAME-a and NAME-b.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Kernel release of arm A, as `uname -r` prints it; with --vm, the kernel image (bzImage)
    /// arm A's guests boot.
    #[arg(long, value_name = "RELEASE|IMAGE", value_parser = text(check_printable))]
    pub a_kernel: String,
    /// Kernel release of arm B; with --vm, its kernel image (it may be A's, with another
    /// --b-append or --b-steal-time).
    #[arg(long, value_name = "RELEASE|IMAGE", value_parser = text(check_printable))]
    pub b_kernel: String,
    /// Boot each slot's kernel in a QEMU guest on this machine (`schedlab campaign run`).
    ///
    /// The guest boots an initramfs schedlab makes around its static binary, instead of the
    /// machine rebooting.
    #[arg(long, help_heading = VM_OPTIONS)]
    pub vm: bool,
    /// Kernel command-line parameters arm A's guests get after schedlab's own.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true, help_heading = VM_OPTIONS)]
    pub a_append: Option<String>,
    /// Kernel command-line parameters arm B's guests get after schedlab's own.
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true, help_heading = VM_OPTIONS)]
    pub b_append: Option<String>,
    /// vCPUs of each guest (more than this machine's CPUs over-commits them) [default: 2]
    #[arg(long, value_name = "N", allow_negative_numbers = true, help_heading = VM_OPTIONS)]
    pub vcpus: Option<u32>,
    /// Memory of each guest: MiB, or with a unit (512M, 2G) [default: 1G]
    #[arg(long, value_name = "SIZE", help_heading = VM_OPTIONS)]
    pub memory: Option<String>,
    /// The guest's NUMA nodes: N (the vCPUs and memory split evenly), or each node's vCPUs with
    /// `/` between nodes (0-1/2-3) [default: no NUMA]
    #[arg(long, value_name = "N|CPUS/CPUS...", help_heading = VM_OPTIONS)]
    pub numa: Option<String>,
    /// The accelerator: kvm, tcg or auto [default: auto]
    ///
    /// tcg: QEMU emulates every instruction, good for the mechanism and functional differences,
    /// not for timings. auto: kvm where it can run a stock kernel.
    #[arg(long, value_enum, help_heading = VM_OPTIONS)]
    pub accel: Option<AccelArg>,
    /// KVM's steal time for arm A's guests (x86's vcpu_is_preempted() rests on it); KVM only
    /// [default: on]
    #[arg(long, value_enum, value_name = "on|off", help_heading = VM_OPTIONS)]
    pub a_steal_time: Option<OnOff>,
    /// KVM's steal time for arm B's guests [default: on]
    #[arg(long, value_enum, value_name = "on|off", help_heading = VM_OPTIONS)]
    pub b_steal_time: Option<OnOff>,
    /// Pin each vCPU's thread to a host CPU, in vCPU order [default: not pinned]
    ///
    /// 0,1,0,1 puts 4 vCPUs on host CPUs 0 and 1, and keeps QEMU to those CPUs; under TCG one
    /// thread runs every vCPU, and QEMU is only kept to them.
    #[arg(long, value_name = "CPUS", help_heading = VM_OPTIONS)]
    pub pin_vcpus: Option<String>,
    /// --pin-vcpus for arm A's guests only.
    #[arg(long, value_name = "CPUS", help_heading = VM_OPTIONS)]
    pub a_pin_vcpus: Option<String>,
    /// --pin-vcpus for arm B's guests only.
    #[arg(long, value_name = "CPUS", help_heading = VM_OPTIONS)]
    pub b_pin_vcpus: Option<String>,
    /// A shell command run on this machine beside each guest [default: none]
    ///
    /// It runs from QEMU's start until the guest ends, when its process group gets SIGTERM. It
    /// gets $SCHEDLAB (this schedlab), $SCHEDLAB_DB (the campaign's database),
    /// $SCHEDLAB_CAMPAIGN, $SCHEDLAB_ARM (a or b) and $SCHEDLAB_SLOT; a load that ends before
    /// its guest fails the slot.
    #[arg(long, value_name = "SHELL CMD", allow_hyphen_values = true, help_heading = VM_OPTIONS)]
    pub host_load: Option<String>,
    /// --host-load for arm A's guests only.
    #[arg(long, value_name = "SHELL CMD", allow_hyphen_values = true, help_heading = VM_OPTIONS)]
    pub a_host_load: Option<String>,
    /// --host-load for arm B's guests only.
    #[arg(long, value_name = "SHELL CMD", allow_hyphen_values = true, help_heading = VM_OPTIONS)]
    pub b_host_load: Option<String>,
    /// A built-in guest campaign; the flags given override its settings.
    ///
    /// vcpu-preempt: seed 000's vcpu_is_preempted() study, a 4-vCPU guest on 2 host CPUs beside
    /// a host load, the vcpu-preempt suite, and (one image for both arms) steal time on in A and
    /// off in B.
    #[arg(long, value_enum, help_heading = VM_OPTIONS)]
    pub preset: Option<PresetArg>,
    /// Seconds from QEMU's start to the guest's first word [default: 120]
    ///
    /// A guest that does not boot, or panics or hangs before it, is stopped then and its slot
    /// fails.
    #[arg(long, value_name = "SEC", allow_negative_numbers = true, help_heading = VM_OPTIONS)]
    pub boot_timeout: Option<u64>,
    /// Seconds a running guest may report nothing before it is stopped and its slot fails
    /// [default: --iteration-timeout + 60, else 660]
    #[arg(long, value_name = "SEC", allow_negative_numbers = true, help_heading = VM_OPTIONS)]
    pub guest_timeout: Option<u64>,
    /// Boots of a slot that failed to try again before `campaign run` stops [default: 1]
    #[arg(long, value_name = "N", allow_negative_numbers = true, help_heading = VM_OPTIONS)]
    pub retries: Option<u32>,
    /// The QEMU program [default: qemu-system-x86_64]
    #[arg(long, value_name = "PROGRAM", help_heading = VM_OPTIONS)]
    pub qemu: Option<String>,
    /// Boots in all, in ABBA order (A B B A A B ...); even, at least 4.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 8,
        allow_negative_numbers = true,
        value_parser = count::<u32>(check_boots)
    )]
    pub boots: u32,
    /// Run a built-in suite or a suite file on each boot instead of one workload.
    #[arg(long, value_name = "NAME|FILE", value_parser = SuiteName, hide_possible_values = true)]
    pub suite: Option<String>,
    #[command(flatten, next_help_heading = DAEMON_OPTIONS)]
    pub daemons: DaemonArgs,
    #[command(flatten)]
    pub plan: PlanOptions,
    #[command(flatten, next_help_heading = RUN_OPTIONS)]
    pub db: DbArg,
    #[command(subcommand)]
    pub workload: Option<WorkloadCommand>,
}

#[derive(Debug, Args)]
pub struct CampaignNextArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// After this boot's slot, run this command to reboot into the next kernel.
    ///
    /// It gets the kernel release in $SCHEDLAB_NEXT_KERNEL. Without it schedlab never reboots
    /// anything.
    #[arg(long, value_name = "SHELL CMD")]
    pub reboot_cmd: Option<String>,
    /// No progress bar on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Probe or profile this boot's run too, whatever `campaign start` said.
    #[command(flatten)]
    pub probes: ProbeOptions,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AccelArg {
    /// KVM where it can run a stock kernel, else TCG (and saying why)
    Auto,
    /// The host's CPU through KVM: the timings are the guest kernel's
    Kvm,
    /// QEMU's emulation of every instruction: the mechanism, not the timings
    Tcg,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PresetArg {
    /// Seed 000: 4 vCPUs pinned 0,1,0,1 on the first two host CPUs beside a pipe load there,
    /// the vcpu-preempt suite, steal time on in A and off in B when both boot one image
    VcpuPreempt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnOff {
    On,
    Off,
}

#[derive(Debug, Args)]
pub struct CampaignRunArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
    /// The static (musl) schedlab that becomes each guest's /init [default: this schedlab, if
    /// it is static]
    #[arg(
        long,
        value_name = "PATH",
        env = "SCHEDLAB_GUEST_BINARY",
        hide_env_values = true
    )]
    pub guest_binary: Option<PathBuf>,
    /// Only the line of each slot's end on stdout.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct CampaignStatusArgs {
    /// The campaign [default: list every campaign, newest first, one line each]
    #[arg(value_name = "NAME")]
    pub name: Option<String>,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct DbArgs {
    #[command(subcommand)]
    pub action: DbAction,
}

#[derive(Debug, Subcommand)]
pub enum DbAction {
    /// Check the database read-only: SQLite's integrity check, schema version, runs by status,
    /// abandoned runs. Exit 0 when sound, 1 when damaged.
    Check(DbCheckArgs),
    /// Bring the database's schema up to this schedlab's (readers never change it).
    Upgrade(DbUpgradeArgs),
}

#[derive(Debug, Args)]
pub struct DbCheckArgs {
    /// Run SQLite's quick_check instead of the full integrity_check (faster on big files).
    #[arg(long)]
    pub quick: bool,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct PushArgs {
    #[cfg_attr(
        feature = "postgres",
        doc = "The store to copy into: postgres://USER@HOST/DATABASE, or an SQLite file (created if"
    )]
    #[cfg_attr(
        not(feature = "postgres"),
        doc = "The store to copy into: an SQLite file or sqlite:PATH (created if"
    )]
    /// missing). The store copied from is --db.
    #[arg(long, value_name = "URL|PATH")]
    pub to: std::ffi::OsString,
    /// Copy only runs started at or after this time: a date (2026-11-01), a UTC time
    /// (2026-11-01T18:30:00Z) or an age (36h, 7d, 2w).
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct DbUpgradeArgs {
    #[command(flatten)]
    pub db: DbArg,
}
