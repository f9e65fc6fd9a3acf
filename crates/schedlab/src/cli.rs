//! The command line as clap parses it: raw arguments mirroring the flags one to one (ripgrep's
//! LowArgs). Nothing here is validated beyond its type; `plan.rs` turns it into a checked plan, and
//! no clap type goes below this crate.
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "schedlab",
    version,
    about = "A Linux scheduler and IPC performance lab: run workloads, store results, compare runs",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List workloads and built-in suites, one line each.
    List,
    /// Run one workload or a suite, store the results and print a summary.
    Run(RunArgs),
    /// List stored runs, newest first.
    Runs(RunsArgs),
    /// Show stored runs by run id or label (a label may name several runs).
    Show(ShowArgs),
    /// Compare stored runs: a baseline and one or more candidates (run ids or labels).
    Compare(CompareArgs),
    /// Compare plain data files, one number per line (ministat-compatible).
    Stat(StatArgs),
    /// Print this machine's fingerprint, as stored with every run.
    Env(EnvArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct DbArg {
    /// Results database [default: $XDG_DATA_HOME/schedlab/results.db]
    #[arg(long, env = "SCHEDLAB_DB", value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run a built-in suite (see `schedlab list`) or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE")]
    pub suite: Option<String>,
    #[command(flatten)]
    pub options: RunOptions,
    #[command(subcommand)]
    pub workload: Option<WorkloadCommand>,
}

#[derive(Debug, Args)]
pub struct RunOptions {
    /// Measured iterations per case [default: the suite's, else 5]
    #[arg(long, value_name = "N", global = true)]
    pub iterations: Option<u32>,
    /// Warm-up iterations per case, stored but not summarised [default: the suite's, else 1]
    #[arg(long, value_name = "N", global = true)]
    pub warmup: Option<u32>,
    /// Name this run; many runs may share a label (e.g. several boots of one kernel).
    #[arg(long, value_name = "TEXT", global = true)]
    pub label: Option<String>,
    /// Output format of the summary on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, global = true)]
    pub format: OutputFormat,
    /// Do not store the run.
    #[arg(long, global = true)]
    pub no_store: bool,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Subcommand)]
pub enum WorkloadCommand {
    /// Two tasks ping-pong a 4-byte token over two pipes (perf bench sched pipe).
    Pipe(PipeArgs),
    /// Groups of senders and receivers over sockets or pipes (hackbench, perf bench sched messaging).
    #[command(alias = "hackbench")]
    Messaging(MessagingArgs),
    /// Deterministic synthetic results, for testing the pipeline.
    Fake(FakeArgs),
}

#[derive(Debug, Args)]
pub struct PipeArgs {
    /// Round trips per iteration.
    #[arg(long, short = 'l', value_name = "N", default_value_t = 1_000_000)]
    pub loops: u64,
    /// Use two threads instead of two processes.
    #[arg(long, short = 'T')]
    pub threads: bool,
    /// Pin the two tasks to CPUs A and B (`0,0`: both on CPU 0; `0,1`: apart).
    #[arg(long, value_name = "A,B")]
    pub cpus: Option<String>,
}

#[derive(Debug, Args)]
pub struct MessagingArgs {
    /// Number of groups.
    #[arg(long, short = 'g', value_name = "G", default_value_t = 10)]
    pub groups: u64,
    /// Senders and receivers per group.
    #[arg(long, short = 'f', value_name = "F", default_value_t = 20)]
    pub fds: u64,
    /// Messages each sender sends to each receiver.
    #[arg(long, short = 'l', value_name = "L", default_value_t = 100)]
    pub loops: u64,
    /// Bytes per message.
    #[arg(long, short = 's', value_name = "BYTES", default_value_t = 100)]
    pub datasize: u64,
    /// Use pipes instead of AF_UNIX stream sockets.
    #[arg(long, short = 'p')]
    pub pipe: bool,
    /// Use threads instead of processes.
    #[arg(long, short = 'T')]
    pub threads: bool,
}

#[derive(Debug, Args)]
pub struct FakeArgs {
    /// Centre of the generated usec_per_op values.
    #[arg(long, value_name = "USEC", default_value_t = 100.0)]
    pub value_usec: f64,
    /// Standard deviation of the values, percent of the centre.
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub spread_pct: f64,
    /// Seed of the generator (run-to-run noise; not part of the case name).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Make every value this many percent larger, as a slower kernel would (not part of the case name).
    #[arg(
        long,
        value_name = "PCT",
        default_value_t = 0.0,
        allow_negative_numbers = true
    )]
    pub effect_pct: f64,
    /// Fail at this 0-based iteration (warm-ups count).
    #[arg(long, value_name = "N")]
    pub fail_at: Option<u32>,
    /// Sleep this long in each iteration.
    #[arg(long, value_name = "MS", default_value_t = 0)]
    pub sleep_ms: u64,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Show at most N runs.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A run id (digits) or a label.
    #[arg(value_name = "RUN-ID|LABEL")]
    pub run: String,
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct EnvArgs {
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CompareFormat {
    Text,
    Markdown,
    Csv,
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
    #[arg(long, value_name = "PCT", default_value_t = 1.0)]
    pub min_effect: f64,
    /// False discovery rate q for the multiple-comparison adjustment.
    #[arg(long, value_name = "Q", default_value_t = 0.05)]
    pub fdr: f64,
    /// Multiple-comparison adjustment over every row of the report.
    #[arg(long, value_enum, default_value_t = AdjustArg::Bh)]
    pub adjust: AdjustArg,
    /// A side whose std exceeds this percent of its mean is marked ?? (too noisy).
    #[arg(long, value_name = "PCT", default_value_t = 10.0)]
    pub noise_cap: f64,
    /// Confidence level in percent: one of ministat's 80, 90, 95, 98, 99, 99.5.
    #[arg(long, short = 'c', value_name = "PCT", default_value_t = 95.0)]
    pub confidence: f64,
    /// Exit with status 1 when any row is marked a regression (for CI gates).
    #[arg(long)]
    pub fail_on_regression: bool,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline: a run id or a label (a label may span runs from several boots).
    #[arg(value_name = "BASE")]
    pub base: String,
    /// One or more candidates, each a run id or a label.
    #[arg(value_name = "CAND", required = true)]
    pub candidates: Vec<String>,
    #[arg(long, value_enum, default_value_t = CompareStyle::Schedtests)]
    pub style: CompareStyle,
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    /// Compare only this metric (repeatable) [default: every primary metric]
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Compare secondary metrics too (CPU time, context switches, migrations, RES IPIs).
    #[arg(long)]
    pub all_metrics: bool,
    /// Compare even when CPU model, CPU count, SMT or governor differ between the runs.
    #[arg(long)]
    pub allow_fingerprint_mismatch: bool,
    #[command(flatten)]
    pub decision: DecisionArgs,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct StatArgs {
    /// Data files: one number per line (`#` starts a comment); the first is the baseline.
    #[arg(value_name = "FILE", required = true, num_args = 2..)]
    pub files: Vec<std::path::PathBuf>,
    /// Column to read (1-based), as ministat's -C.
    #[arg(long = "column", short = 'C', value_name = "N", default_value_t = 1)]
    pub column: usize,
    /// Column delimiters, as ministat's -d.
    #[arg(
        long = "delimiter",
        short = 'd',
        value_name = "CHARS",
        default_value = " \t"
    )]
    pub delimiters: String,
    /// The numbers improve when they grow (default: lower is better, like times).
    #[arg(long)]
    pub higher_is_better: bool,
    #[arg(long, value_enum, default_value_t = CompareStyle::Ministat)]
    pub style: CompareStyle,
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
    #[command(flatten)]
    pub decision: DecisionArgs,
}
