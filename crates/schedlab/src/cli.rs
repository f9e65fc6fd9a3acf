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
    /// Print this machine's fingerprint, as stored with every run.
    Env(EnvArgs),
    /// Check the results database, or upgrade its schema.
    Db(DbArgs),
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
    /// Results database [default: $XDG_DATA_HOME/schedlab/results.db]
    #[arg(long, env = "SCHEDLAB_DB", value_name = "PATH", global = true)]
    pub db: Option<PathBuf>,
}

/// The help heading of the options that shape a run, apart from the workload's own flags.
pub const RUN_OPTIONS: &str = "Run options";
/// The help heading of the options that decide a comparison's rows.
pub const DECISION_OPTIONS: &str = "Decision options";

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Run a built-in suite (see `schedlab list`) or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE")]
    pub suite: Option<String>,
    #[command(flatten)]
    pub plan: PlanOptions,
    /// Name this run; many runs may share a label (e.g. several boots of one kernel).
    #[arg(long, value_name = "TEXT", global = true, help_heading = RUN_OPTIONS)]
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
pub struct PlanOptions {
    /// Measured iterations per case [default: the suite's, else 5]
    #[arg(long, value_name = "N", global = true, help_heading = RUN_OPTIONS)]
    pub iterations: Option<u32>,
    /// Warm-up iterations per case, stored but not summarised [default: the suite's, else 1]
    #[arg(long, value_name = "N", global = true, help_heading = RUN_OPTIONS)]
    pub warmup: Option<u32>,
    /// Multiply every case's work size by F: pipe and messaging --loops, wakeup --runtime,
    /// semaphore --items, syscall --calls, fanout --rounds, cpudl and cpupri --ops.
    #[arg(long, value_name = "F", global = true, help_heading = RUN_OPTIONS)]
    pub scale: Option<f64>,
    /// Case order [default: the suite's, else listed]
    #[arg(long, value_enum, global = true, help_heading = RUN_OPTIONS)]
    pub order: Option<OrderArg>,
    /// Seed of the random case order [default: drawn and recorded with the run]
    #[arg(long, value_name = "N", global = true, help_heading = RUN_OPTIONS)]
    pub order_seed: Option<u64>,
    /// Pause between cases, seconds [default: the suite's, else 0]
    #[arg(long, value_name = "SEC", global = true, help_heading = RUN_OPTIONS)]
    pub cooldown: Option<f64>,
    /// Add iterations to each case until its 95% CI half-width is under PCT percent.
    #[arg(
        long,
        value_name = "PCT",
        global = true,
        requires = "max_iterations",
        help_heading = RUN_OPTIONS
    )]
    pub until_ci: Option<f64>,
    /// With --until-ci: the most measured iterations a case may get.
    #[arg(
        long,
        value_name = "N",
        global = true,
        requires = "until_ci",
        help_heading = RUN_OPTIONS
    )]
    pub max_iterations: Option<u32>,
    /// Deadline of every iteration, seconds: at it the tasks that had not finished are named and
    /// stopped, and the case fails [default: 10 × the case's median iteration or estimate, at least 30]
    #[arg(
        long,
        value_name = "SEC",
        global = true,
        allow_negative_numbers = true,
        help_heading = RUN_OPTIONS
    )]
    pub iteration_timeout: Option<f64>,
    /// When a case fails (an error, or its deadline), record it and go on to the next case; the
    /// run then ends `partial` (exit 1).
    #[arg(long, global = true, help_heading = RUN_OPTIONS)]
    pub keep_going: bool,
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

const PIPE_REFERENCE: &str = "perf bench sched pipe's -l/--loop and -T/--threaded are taken as \
spelt there; its -G/--cgroups is refused, with the reason (docs/cli.md).";

const MESSAGING_REFERENCE: &str =
    "hackbench's flags (-g -f -l -s -p -T -P, short or long) and perf \
bench sched messaging's (-g/--group, -l/--nr_loops, -t/--thread, -p/--pipe) are taken as spelt \
there, with their meaning; hackbench's -F/--fifo and -i/--inet are refused, with the reason \
(docs/cli.md).";

const WAKEUP_REFERENCE: &str =
    "schbench's flags are taken as schbench spells them, with schbench's \
meaning where it differs: -t/--threads (0: the default), -w/--warmuptime (seconds), \
-s/--sleep_usec, -F/--cache_footprint, -L/--no-locking, -p and -R (0: off), -M/-W auto, \
-J/--jobname. Its -C, -A, -i, -z, -j and --split are refused, with the reason (docs/cli.md).";

#[derive(Debug, Subcommand)]
pub enum WorkloadCommand {
    /// Two tasks ping-pong a 4-byte token over two pipes (perf bench sched pipe).
    #[command(after_help = PIPE_REFERENCE)]
    Pipe(PipeArgs),
    /// Groups of senders and receivers over sockets or pipes (hackbench, perf bench sched messaging).
    #[command(alias = "hackbench", after_help = MESSAGING_REFERENCE)]
    Messaging(MessagingArgs),
    /// Deterministic synthetic results, for testing the pipeline.
    Fake(FakeArgs),
    /// Message threads wake workers through futexes: wakeup and request latency, RPS (schbench).
    #[command(alias = "schbench", after_help = WAKEUP_REFERENCE)]
    Wakeup(WakeupArgs),
    /// A producer and a consumer hand items through two futex semaphores (seed 001's sem test).
    Semaphore(SemaphoreArgs),
    /// Threads making raw system calls in a tight loop (seeds 001 and 003).
    Syscall(SyscallArgs),
    /// A dispatcher and worker threads over bounded channels (seed 001's server.go).
    Fanout(FanoutArgs),
    /// The sched/deadline CPU heap: time a variant, or check two in lock step (cpudl-bench).
    Cpudl(CpudlArgs),
    /// RT cpupri priority masks set and searched by many threads (shared or per-node bitmaps).
    Cpupri(CpupriArgs),
}

/// `perf bench sched pipe`'s flags are accepted as spelt there: `-l/--loop`, `-T/--threaded`.
#[derive(Debug, Args)]
pub struct PipeArgs {
    /// Round trips per iteration.
    #[arg(
        long,
        short = 'l',
        value_name = "N",
        default_value_t = 1_000_000,
        visible_alias = "loop"
    )]
    pub loops: u64,
    /// Use two threads instead of two processes.
    #[arg(long, short = 'T', visible_alias = "threaded")]
    pub threads: bool,
    /// Pin the two tasks to CPUs A and B (`0,0`: both on CPU 0; `0,1`: apart).
    #[arg(long, value_name = "A,B")]
    pub cpus: Option<String>,
    /// perf's -G/--cgroups: refused (schedlab does not move its tasks into cgroups).
    #[arg(long = "cgroups", short = 'G', value_name = "SEND,RECV", hide = true)]
    pub refused_cgroups: Option<String>,
}

/// hackbench's flags (`-g -f -l -s -p -T -P`, long or short) and `perf bench sched messaging`'s
/// (`-g/--group`, `-l/--nr_loops`, `-t/--thread`, `-p/--pipe`) are accepted as spelt there.
#[derive(Debug, Args)]
pub struct MessagingArgs {
    /// Number of groups.
    #[arg(
        long,
        short = 'g',
        value_name = "G",
        default_value_t = 10,
        visible_alias = "group"
    )]
    pub groups: u64,
    /// Senders and receivers per group.
    #[arg(long, short = 'f', value_name = "F", default_value_t = 20)]
    pub fds: u64,
    /// Messages each sender sends to each receiver.
    #[arg(
        long,
        short = 'l',
        value_name = "L",
        default_value_t = 100,
        visible_alias = "nr_loops"
    )]
    pub loops: u64,
    /// Bytes per message.
    #[arg(long, short = 's', value_name = "BYTES", default_value_t = 100)]
    pub datasize: u64,
    /// Use pipes instead of AF_UNIX stream sockets.
    #[arg(long, short = 'p')]
    pub pipe: bool,
    /// Use threads instead of processes (the last of -T and -P wins, as in hackbench).
    #[arg(
        long,
        short = 'T',
        visible_short_alias = 't',
        visible_alias = "thread",
        overrides_with = "process"
    )]
    pub threads: bool,
    /// Use processes (the default; hackbench's -P).
    #[arg(
        long,
        short = 'P',
        visible_alias = "processes",
        overrides_with = "threads"
    )]
    pub process: bool,
    /// hackbench's -F/--fifo: refused (schedlab's parent does not switch to SCHED_FIFO).
    #[arg(long = "fifo", short = 'F', hide = true)]
    pub refused_fifo: bool,
    /// hackbench's -i/--inet: refused (no TCP over loopback; sockets are AF_UNIX, or pipes).
    #[arg(long = "inet", short = 'i', hide = true)]
    pub refused_inet: bool,
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
    /// Test hook: run two tasks per iteration, and at this 0-based iteration one never finishes.
    #[arg(long, value_name = "N")]
    pub stall_at: Option<u32>,
    /// Test hook: the tasks are threads (the stalled one waits for a wake-up that never comes)
    /// or processes (the stalled one stops itself with SIGSTOP) [default: thread]
    #[arg(long, value_enum, value_name = "WHERE", requires = "stall_at")]
    pub stall_in: Option<StallInArg>,
    /// Test hook: the stalled task spins in an endless loop instead.
    #[arg(long, requires = "stall_at")]
    pub stall_spin: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum StallInArg {
    /// The tasks are threads; the stalled one waits for a wake-up that never comes
    Thread,
    /// The tasks are processes; the stalled one stops itself with SIGSTOP
    Process,
}

/// schbench's flags are accepted as spelt there (`-t/--threads`, `-w/--warmuptime`,
/// `-s/--sleep_usec`, `-F/--cache_footprint`, `-L/--no-locking`, `-M/-W auto`, `-J/--jobname`, ...)
/// with schbench's meaning; those with no counterpart here are refused with the reason.
#[derive(Debug, Args)]
pub struct WakeupArgs {
    /// Message threads.
    #[arg(long, short = 'm', value_name = "M", default_value_t = 1)]
    pub message_threads: u64,
    /// Workers per message thread; 0 means the default, as in schbench [default: ceil(usable CPUs / M)]
    #[arg(long, short = 't', value_name = "T", visible_alias = "threads")]
    pub workers: Option<u64>,
    /// Seconds measured per iteration. Not schbench's 30: schedlab measures --iterations windows
    /// per case (5 + 1 warm-up by default, one minute at 10 s), and case names hold the runtime,
    /// so a new default would part new runs from stored ones.
    #[arg(long, short = 'r', value_name = "SEC", default_value_t = 10)]
    pub runtime: u64,
    /// Seconds run before each iteration's measured window, samples discarded (schbench's
    /// --warmuptime; not --warmup, which counts warm-up iterations).
    #[arg(
        long,
        short = 'w',
        value_name = "SEC",
        default_value_t = 0,
        visible_alias = "warmuptime"
    )]
    pub warmup_sec: u64,
    /// Request mode: sleep at the start of each request [default: 100]
    #[arg(long, short = 's', value_name = "USEC", visible_alias = "sleep_usec")]
    pub sleep_usec: Option<u64>,
    /// Request mode: matrix multiplies per request [default: 5]
    #[arg(long, short = 'n', value_name = "N")]
    pub operations: Option<u64>,
    /// Request mode: KiB the three matrices of each worker fill [default: 256]
    #[arg(
        long,
        short = 'F',
        value_name = "KB",
        visible_alias = "cache_footprint"
    )]
    pub cache_footprint: Option<u64>,
    /// Request mode: no per-CPU lock (and no preemption penalty) around the math.
    #[arg(long, short = 'L', visible_alias = "no-locking")]
    pub no_lock: bool,
    /// Pipe mode: no sleep and no math; worker and message thread exchange BYTES per round (at
    /// most 1 MiB; 0: off, as in schbench).
    #[arg(long, short = 'p', value_name = "BYTES")]
    pub pipe: Option<u64>,
    /// Open-loop mode: N requests per second arrive whatever the service time; latency counts
    /// queueing (0: off, as in schbench).
    #[arg(long, short = 'R', value_name = "N")]
    pub rps: Option<u64>,
    /// Pin message thread i to the (i mod n)-th CPU of LIST (e.g. 0-1,4). `auto`, as in schbench:
    /// message thread i alone on the i-th usable CPU, every worker on the usable CPUs left.
    #[arg(long, short = 'M', value_name = "LIST|auto")]
    pub message_cpus: Option<String>,
    /// Let every worker run only on the CPUs of LIST (e.g. 2-7); `auto` as for --message-cpus.
    #[arg(long, short = 'W', value_name = "LIST|auto")]
    pub worker_cpus: Option<String>,
    /// schbench's job name: becomes the run's --label.
    #[arg(long, short = 'J', value_name = "NAME")]
    pub jobname: Option<String>,
    /// schbench's -C/--calibrate: refused (see docs/cli.md).
    #[arg(long = "calibrate", short = 'C', hide = true)]
    pub refused_calibrate: bool,
    /// schbench's -A/--auto-rps: refused.
    #[arg(long = "auto-rps", short = 'A', value_name = "PCT", hide = true)]
    pub refused_auto_rps: Option<String>,
    /// schbench's -i/--intervaltime: refused.
    #[arg(long = "intervaltime", short = 'i', value_name = "SEC", hide = true)]
    pub refused_intervaltime: Option<String>,
    /// schbench's -z/--zerotime: refused.
    #[arg(long = "zerotime", short = 'z', value_name = "SEC", hide = true)]
    pub refused_zerotime: Option<String>,
    /// schbench's -j/--json FILE: refused.
    #[arg(long = "json", short = 'j', value_name = "FILE", hide = true)]
    pub refused_json: Option<String>,
    /// schbench's --split PCT: refused.
    #[arg(long = "split", value_name = "PCT", hide = true)]
    pub refused_split: Option<String>,
}

#[derive(Debug, Args)]
pub struct SemaphoreArgs {
    /// Items handed from the producer to the consumer per iteration.
    #[arg(long, value_name = "N", default_value_t = 800_000)]
    pub items: u64,
    /// Loop iterations of work per work phase (producer: two per item, consumer: one).
    #[arg(long, value_name = "K", default_value_t = 2_000)]
    pub work: u64,
    /// How a waiting side waits: block, spin, adaptive or adaptive:SPIN_NS.
    #[arg(long, value_name = "STRATEGY", default_value = "block")]
    pub wait: String,
    /// Two processes over shared memory instead of two threads.
    #[arg(long)]
    pub processes: bool,
    /// Pin the producer to CPU A and the consumer to CPU B (`0,0`: both on CPU 0; `0,1`: apart).
    #[arg(long, value_name = "A,B")]
    pub cpus: Option<String>,
}

#[derive(Debug, Args)]
pub struct SyscallArgs {
    /// Threads calling at once.
    #[arg(long, value_name = "T", default_value_t = 1)]
    pub threads: u64,
    /// System calls per thread per iteration.
    #[arg(long, value_name = "N", default_value_t = 1_000_000)]
    pub calls: u64,
    /// getpid, getrlimit, write-devnull or read-devzero.
    #[arg(long, value_name = "KIND", default_value = "getpid")]
    pub kind: String,
}

#[derive(Debug, Args)]
pub struct FanoutArgs {
    /// Worker threads.
    #[arg(long, value_name = "W", default_value_t = 50)]
    pub workers: u64,
    /// Rounds per iteration (one message to and one reply from every worker).
    #[arg(long, value_name = "R", default_value_t = 2_000)]
    pub rounds: u64,
    /// Loop iterations of work per message in a worker.
    #[arg(long, value_name = "K", default_value_t = 1_000)]
    pub work: u64,
    /// Messages a channel holds before a send blocks (0: rendezvous, like Go's unbuffered).
    #[arg(long, value_name = "C", default_value_t = 0)]
    pub capacity: u64,
}

#[derive(Debug, Args)]
pub struct CpudlArgs {
    /// The variant timed: orig, bugfix or fast [default: fast]
    #[arg(long, value_name = "VARIANT")]
    pub variant: Option<String>,
    /// CPUs in the heap.
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub cpus: u32,
    /// Heap operations per iteration.
    #[arg(long, value_name = "N", default_value_t = 100_000)]
    pub ops: u64,
    /// Operation stream: cpudl-bench (its LCG driver, exactly) or realistic.
    #[arg(long, value_name = "MIX", default_value = "cpudl-bench")]
    pub mix: String,
    /// Seed of the realistic mix [default: 1]
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Realistic mix: round deadlines down to multiples of NS (coarse values make ties) [default: 1]
    #[arg(long, value_name = "NS")]
    pub deadline_granularity: Option<u64>,
    /// Replay with every heap invariant checked after every op (untimed).
    #[arg(long)]
    pub check: bool,
    /// Run two variants in lock step and fail at the first op where their heaps differ.
    #[arg(long)]
    pub equivalence: bool,
    /// The two variants of --equivalence [default: bugfix,fast]
    #[arg(long, value_name = "A,B")]
    pub variants: Option<String>,
    /// With --equivalence, a tie-order split does not fail: compare what must still agree.
    #[arg(long)]
    pub allow_ties: bool,
}

#[derive(Debug, Args)]
pub struct CpupriArgs {
    /// Threads setting and searching at once.
    #[arg(long, value_name = "T", default_value_t = 2)]
    pub threads: u64,
    /// Bitmap layout: shared (one per priority) or per-node.
    #[arg(long, value_name = "LAYOUT", default_value = "shared")]
    pub layout: String,
    /// Modelled NUMA nodes [default: this machine's]
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,
    /// Modelled CPUs in the map.
    #[arg(long, value_name = "N", default_value_t = 480)]
    pub cpus: u32,
    /// Set + find pairs per thread per iteration.
    #[arg(long, value_name = "N", default_value_t = 200_000)]
    pub ops: u64,
}

#[derive(Debug, Args)]
pub struct RunsArgs {
    /// Show at most N runs.
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
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
    #[command(flatten)]
    pub db: DbArg,
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

/// What `compare` and `report` compare: the sides, which metrics, and how rows are decided.
#[derive(Debug, Args)]
pub struct SidesArgs {
    /// The baseline: a run id or a label (a label may span runs from several boots).
    #[arg(value_name = "BASE")]
    pub base: String,
    /// One or more candidates, each a run id or a label.
    #[arg(value_name = "CAND", required = true)]
    pub candidates: Vec<String>,
    /// Compare only this metric (repeatable) [default: every primary metric]
    #[arg(long = "metric", value_name = "NAME")]
    pub metrics: Vec<String>,
    /// Compare secondary metrics too (CPU time, context switches, migrations, RES and CAL IPIs).
    #[arg(long)]
    pub all_metrics: bool,
    /// Compare even when CPU model, CPU count, SMT or governor differ between the runs.
    #[arg(long)]
    pub allow_fingerprint_mismatch: bool,
    /// Use runs that did not complete (partial, interrupted, failed, abandoned) too; by default
    /// they are left out.
    #[arg(long)]
    pub include_incomplete: bool,
    /// The calibration that supplies the noise model: `auto` (the newest one of this machine for
    /// each case and iteration count), `none`, or a calibration id.
    #[arg(long, value_name = "auto|none|ID", default_value = "auto")]
    pub calibration: String,
    /// With --fail-on-regression: exit with CODE when nothing could be tested (a side has no
    /// complete run, a candidate names no run, or no row could be judged); 125 makes
    /// `git bisect run` skip the commit.
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
    #[command(flatten)]
    pub sides: SidesArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Write the report to this HTML file (replaced whole, never left half-written).
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
    /// The layout of text and markdown output.
    #[arg(long, value_enum, default_value_t = CompareStyle::Ministat)]
    pub style: CompareStyle,
    /// Output format on stdout.
    #[arg(long, value_enum, default_value_t = CompareFormat::Text)]
    pub format: CompareFormat,
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
    #[arg(short = 'w', long = "width", value_name = "WIDTH")]
    pub width: Option<usize>,
}

#[derive(Debug, Args)]
pub struct AbArgs {
    /// Shell command that applies setting A (run with `sh -c` before every A visit).
    #[arg(long = "a", value_name = "SHELL CMD")]
    pub apply_a: String,
    /// Shell command that applies setting B.
    #[arg(long = "b", value_name = "SHELL CMD")]
    pub apply_b: String,
    /// Shell command that restores the original setting: run at the end, on Ctrl-C and on failure.
    #[arg(long, value_name = "SHELL CMD")]
    pub restore: Option<String>,
    /// Rounds: each runs every case under A and under B, in ABBA order (AB, BA, AB, ...).
    #[arg(
        long,
        value_name = "R",
        default_value_t = 4,
        conflicts_with = "until_decided"
    )]
    pub rounds: u32,
    /// Add rounds until every row is decided (`**` or `≈`) or --max-rounds are spent, deciding
    /// after each round with O'Brien–Fleming alpha spending so stopping early keeps the error rates.
    #[arg(long, requires = "max_rounds")]
    pub until_decided: bool,
    /// With --until-decided: the most rounds to run (the plan the alpha spending is made for).
    #[arg(long, value_name = "N", requires = "until_decided")]
    pub max_rounds: Option<u32>,
    /// Run a built-in suite or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE")]
    pub suite: Option<String>,
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
    #[arg(long, value_name = "C")]
    pub runs: Option<u32>,
    /// Pause between runs, seconds, so the runs sample the machine apart in time [default: 5]
    #[arg(long, value_name = "SEC")]
    pub pause: Option<f64>,
    /// Compute a calibration from the stored complete runs of LABEL instead of running anything.
    #[arg(long, value_name = "LABEL", conflicts_with_all = ["list", "show", "suite"])]
    pub from: Option<String>,
    /// List stored calibrations.
    #[arg(long, conflicts_with_all = ["show", "suite"])]
    pub list: bool,
    /// Show one stored calibration.
    #[arg(long, value_name = "ID", conflicts_with = "suite")]
    pub show: Option<i64>,
    /// Calibrate a built-in suite or a suite file instead of one workload.
    #[arg(long, value_name = "NAME|FILE")]
    pub suite: Option<String>,
    /// Output format of the calibration report (and of --list) on stdout.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text, global = true)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub plan: PlanOptions,
    /// Label of the calibration runs [default: calibrate-<suite or workload>]; calibrating again
    /// under the same label on later boots adds the boot-to-boot component.
    #[arg(long, value_name = "TEXT", global = true, help_heading = RUN_OPTIONS)]
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
    /// Show a campaign's plan and progress.
    Status(CampaignStatusArgs),
}

#[derive(Debug, Args)]
pub struct CampaignStartArgs {
    /// The campaign's name; its runs are labelled NAME-a and NAME-b.
    #[arg(value_name = "NAME")]
    pub name: String,
    /// Kernel release of arm A, as `uname -r` prints it.
    #[arg(long, value_name = "RELEASE")]
    pub a_kernel: String,
    /// Kernel release of arm B.
    #[arg(long, value_name = "RELEASE")]
    pub b_kernel: String,
    /// Boots in all, in ABBA order (A B B A A B ...); even, at least 4.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub boots: u32,
    /// Run a built-in suite or a suite file on each boot instead of one workload.
    #[arg(long, value_name = "NAME|FILE")]
    pub suite: Option<String>,
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
    /// After this boot's slot, run this command to reboot into the next kernel; it gets the
    /// kernel release in $SCHEDLAB_NEXT_KERNEL. Without it schedlab never reboots anything.
    #[arg(long, value_name = "SHELL CMD")]
    pub reboot_cmd: Option<String>,
    /// No progress bar on stderr.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    #[command(flatten)]
    pub db: DbArg,
}

#[derive(Debug, Args)]
pub struct CampaignStatusArgs {
    #[arg(value_name = "NAME")]
    pub name: String,
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
pub struct DbUpgradeArgs {
    #[command(flatten)]
    pub db: DbArg,
}
