//! `schedlab import`: results a reference tool printed, stored as one run with one iteration per
//! result (or, with `--run-per-result`, a run per result), so `compare`, `show` and `report`
//! treat them as measured runs. Every file is read and
//! parsed before the store is opened: a file that does not parse is bad input naming the file and
//! line, and nothing is stored. The run's fingerprint says what is known of the machine (`--host`,
//! `--kernel`, `--this-machine`, or what a file records) and leaves the rest empty.
use std::collections::BTreeMap;
use std::process::ExitCode;

use schedlab_core::fingerprint::{Fingerprint, ImportOrigin};
use schedlab_core::import::{PlainOptions, Tool, ToolResult};
use schedlab_core::plan::RunPlan;
use schedlab_core::record::{IterationRecord, RunStatus};
use schedlab_core::sys;
use schedlab_core::words;
use schedlab_core::workload::external::ExternalParams;
use schedlab_core::workload::WorkloadSpec;

use crate::cli::ImportArgs;
use crate::failure::Failure;
use crate::input;
use crate::output::emit;
use crate::store_path::{db_location, open_writer};

/// A case of the run: its name, the files it came from, its results in file order.
struct ImportedCase {
    name: String,
    files: Vec<String>,
    results: Vec<ToolResult>,
}

/// A fact about the machine and where it came from (`--host`, or the file that records it).
type Fact = Option<(String, String)>;

pub fn import(args: &ImportArgs) -> Result<ExitCode, Failure> {
    let (tool, plain) = checked_options(args)?;
    let files = input::files_or_stdin(&args.files, Some("the tool's output"))?;
    let read = read_files(tool, &plain, args, &files)?;
    let (host, kernel) = machine_facts(args, read.host, read.kernel)?;
    let cases = read.cases;
    let origin = ImportOrigin {
        tool: tool.as_str().to_string(),
        tool_version: args.tool_version.clone(),
        files: files.iter().map(|p| input::display_name(p)).collect(),
        known: BTreeMap::new(),
        imported_by: sys::hostname(),
    };
    let fingerprint = Fingerprint::for_import(origin, host, kernel, args.this_machine);
    let layout = layout(args, &cases);
    let plans = plans(tool, args, &cases, &layout)?;
    // Everything parsed: only now is the store opened and written.
    let run_ids = store_runs(args, &layout, &plans, &fingerprint)?;
    summary(tool, args, &cases, files.len(), &run_ids)
}

/// The tool and, for `plain`, how its numbers are read (each flag's own value clap has
/// checked).
fn checked_options(args: &ImportArgs) -> Result<(Tool, PlainOptions), Failure> {
    let tool = args.tool;
    let plain = PlainOptions {
        name: args.metric.clone(),
        higher_is_better: args.higher_is_better,
        column: args.columns.column,
        delimiters: args.columns.delimiters.clone(),
    };
    if tool == Tool::Plain {
        plain.check().map_err(Failure::bad_input)?;
    } else if plain != PlainOptions::default() {
        return Err(Failure::bad_input(
            "--metric, --higher-is-better, --column and --delimiter are for --tool plain (the \
             other tools' outputs name their metrics)",
        ));
    }
    Ok((tool, plain))
}

/// What the files hold: the cases, and the host and kernel the files say they came from.
struct Read {
    cases: Vec<ImportedCase>,
    host: Fact,
    kernel: Fact,
}

/// Reads and parses every file, grouping the results into cases by name (`--case` names them
/// all); files that disagree about their machine are refused.
fn read_files(
    tool: Tool,
    plain: &PlainOptions,
    args: &ImportArgs,
    files: &[std::path::PathBuf],
) -> Result<Read, Failure> {
    let mut cases: Vec<ImportedCase> = Vec::new();
    let (mut host, mut kernel): (Fact, Fact) = (None, None);
    for path in files {
        let name = input::display_name(path);
        let text = input::read_text(path)?;
        let parsed = tool
            .parse_text(&text, plain)
            .map_err(|e| Failure::bad_input(format!("{name}:{}: {}", e.line, e.message)))?;
        for (fact, stated, what) in [
            (&mut host, parsed.hostname, "host"),
            (&mut kernel, parsed.kernel_release, "kernel"),
        ] {
            let Some(stated) = stated else { continue };
            match fact {
                Some((earlier, from)) if *earlier != stated => {
                    return Err(Failure::bad_input(format!(
                        "{name} says its {what} is {stated:?}, {from} says {earlier:?}: import \
                         results of different machines or kernels separately"
                    )))
                }
                Some(_) => {}
                None => *fact = Some((stated, name.clone())),
            }
        }
        for result in parsed.results {
            let case_name = args.case.clone().unwrap_or_else(|| result.case.clone());
            let index = match cases.iter().position(|c| c.name == case_name) {
                Some(i) => i,
                None => {
                    cases.push(ImportedCase {
                        name: case_name,
                        files: Vec::new(),
                        results: Vec::new(),
                    });
                    cases.len() - 1
                }
            };
            let case = &mut cases[index];
            if !case.files.contains(&name) {
                case.files.push(name.clone());
            }
            case.results.push(result);
        }
    }
    if args.case.is_some() {
        check_one_kind(&cases)?;
    }
    Ok(Read {
        cases,
        host,
        kernel,
    })
}

/// `--case` names one case: the results must all be of one kind.
fn check_one_kind(cases: &[ImportedCase]) -> Result<(), Failure> {
    let mut kinds: Vec<&str> = cases
        .iter()
        .flat_map(|c| c.results.iter().map(|r| r.case.as_str()))
        .collect();
    kinds.dedup();
    kinds.sort_unstable();
    kinds.dedup();
    if kinds.len() > 1 {
        return Err(Failure::bad_input(format!(
            "--case names one case, but the files hold results of {} kinds ({}); import \
             each kind on its own",
            kinds.len(),
            kinds.join(", ")
        )));
    }
    Ok(())
}

/// The host and kernel of the run: what `--host` and `--kernel` say, or else the files. A flag
/// overrides nothing a file records: both must agree.
fn machine_facts(
    args: &ImportArgs,
    mut host: Fact,
    mut kernel: Fact,
) -> Result<(Fact, Fact), Failure> {
    for (flag, given, fact) in [
        ("--host", &args.host, &mut host),
        ("--kernel", &args.kernel, &mut kernel),
    ] {
        if let Some(given) = given {
            if let Some((stated, file)) = fact.as_ref().filter(|(s, _)| s != given) {
                return Err(Failure::bad_input(format!(
                    "{flag} {given:?} contradicts {file}, which says {stated:?}"
                )));
            }
            *fact = Some((given.clone(), flag.to_string()));
        }
    }
    Ok((host, kernel))
}

/// Each run: its cases (indices into `cases`), each with its results in iteration order. One run
/// of every result, or with `--run-per-result` run k of every case's k-th result.
type Layout<'a> = Vec<Vec<(usize, Vec<&'a ToolResult>)>>;

fn layout<'a>(args: &ImportArgs, cases: &'a [ImportedCase]) -> Layout<'a> {
    if args.run_per_result {
        let most = cases.iter().map(|c| c.results.len()).max().unwrap_or(0);
        (0..most)
            .map(|k| {
                cases
                    .iter()
                    .enumerate()
                    .filter_map(|(i, c)| c.results.get(k).map(|r| (i, vec![r])))
                    .collect()
            })
            .collect()
    } else {
        vec![cases
            .iter()
            .enumerate()
            .map(|(i, c)| (i, c.results.iter().collect()))
            .collect()]
    }
}

/// The plan of each run: its cases as `external` cases read from their files, with as many
/// iterations as its case with the most results.
fn plans(
    tool: Tool,
    args: &ImportArgs,
    cases: &[ImportedCase],
    layout: &Layout,
) -> Result<Vec<RunPlan>, Failure> {
    let spec = |case: &ImportedCase| {
        WorkloadSpec::External(ExternalParams {
            parser: Some(tool),
            case: Some(case.name.clone()),
            metric: args.metric.clone(),
            higher_is_better: args.higher_is_better,
            tool_version: args.tool_version.clone(),
            imported_from: case.files.clone(),
            ..ExternalParams::default()
        })
    };
    let mut plans = Vec::with_capacity(layout.len());
    for run in layout {
        let most = run
            .iter()
            .map(|(_, results)| results.len())
            .max()
            .unwrap_or(1);
        plans.push(RunPlan::new(
            None,
            args.label.clone(),
            u32::try_from(most).unwrap_or(u32::MAX),
            0,
            run.iter().map(|(i, _)| spec(&cases[*i])).collect(),
        )?);
    }
    Ok(plans)
}

/// Stores every run, one iteration per result; a stop signal ends the run under way as
/// interrupted. Returns the runs' ids.
fn store_runs(
    args: &ImportArgs,
    layout: &Layout,
    plans: &[RunPlan],
    fingerprint: &Fingerprint,
) -> Result<Vec<i64>, Failure> {
    sys::install_interrupt_handlers()
        .map_err(|e| Failure::failed(format!("cannot install signal handlers: {e}")))?;
    let mut store = open_writer(&db_location(&args.db)?)?;
    let now = sys::realtime_ns();
    let mut run_ids = Vec::with_capacity(layout.len());
    for (run, plan) in layout.iter().zip(plans) {
        // A run whose results say when they were taken starts then.
        let started = run
            .iter()
            .flat_map(|(_, results)| results.iter().filter_map(|r| r.at_ns))
            .min()
            .unwrap_or(now);
        let run_id = store.begin_run(plan, fingerprint, started)?;
        run_ids.push(run_id);
        for (case_index, (_, results)) in run.iter().enumerate() {
            for (index, result) in results.iter().enumerate() {
                if let Some(signal) = sys::interrupt_signal() {
                    let error = schedlab_core::Error::Interrupted(signal);
                    store.finish_run(
                        run_id,
                        RunStatus::Interrupted,
                        sys::realtime_ns(),
                        Some(&error.to_string()),
                    )?;
                    return Err(Failure::from(error));
                }
                let iteration = IterationRecord {
                    index: index as u32,
                    warmup: false,
                    started_at_ns: result.at_ns.unwrap_or(now),
                    measurements: result.measurements.clone(),
                    attachments: Vec::new(),
                    quiet: None,
                };
                store.record_iteration(run_id, case_index, &iteration)?;
            }
        }
        store.finish_run(run_id, RunStatus::Complete, sys::realtime_ns(), None)?;
    }
    Ok(run_ids)
}

/// `imported 6 hackbench results from 2 files as run 3 (label x)`, then a line per case.
fn summary(
    tool: Tool,
    args: &ImportArgs,
    cases: &[ImportedCase],
    files: usize,
    run_ids: &[i64],
) -> Result<ExitCode, Failure> {
    let total: usize = cases.iter().map(|c| c.results.len()).sum();
    let stored_as = stored_as(run_ids);
    emit(|out| {
        writeln!(
            out,
            "imported {total} {tool} {} from {} as {stored_as}{}",
            words::noun(total, "result"),
            words::counted(files, "file"),
            args.label
                .as_ref()
                .map_or(String::new(), |l| format!(" (label {l})"))
        )?;
        for case in cases {
            let count = case.results.len();
            if args.run_per_result {
                writeln!(
                    out,
                    "  {}: {} of 1 iteration",
                    case.name,
                    words::counted(count, "run")
                )?;
            } else {
                writeln!(
                    out,
                    "  {}: {}",
                    case.name,
                    words::counted(count, "iteration")
                )?;
            }
        }
        Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// `run 3`, `runs 3–5`, or `runs 3, 5` when another writer stored runs in between.
fn stored_as(run_ids: &[i64]) -> String {
    match run_ids {
        [one] => format!("run {one}"),
        [first, .., last] if run_ids.windows(2).all(|w| w[1] == w[0] + 1) => {
            format!("runs {first}–{last}")
        }
        [] => "no run".to_string(),
        many => format!(
            "runs {}",
            many.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}
