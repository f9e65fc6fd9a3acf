//! The reference tools' command lines: schbench's, hackbench's and `perf bench sched`'s flags
//! under the workloads that stand in for them, the flags schedlab refuses (with why), every
//! command line the docs quote (read from the docs, so they cannot drift), and the help and
//! small behaviours of issue 14: run options under their own heading, described values,
//! `--dry-run --format json`, `-V` on subcommands, aligned `list` and `runs`, benchstat's
//! footnotes, and `stat` with ministat's switches.
use std::path::{Path, PathBuf};

use schedlab_core::workload::WORKLOADS;
use serde_json::Value;

mod common;
use common::*;

// ---- item 1: the reference tools' flags ----

#[test]
fn schbench_short_and_long_spellings_mean_what_they_mean_in_schbench() {
    let (_d, db) = temp_db();
    let short = workload(
        &db,
        &words("schbench -m 2 -t 3 -r 4 -w 1 -s 50 -n 2 -F 128 -L"),
    );
    let long = workload(
        &db,
        &words(
            "schbench --message-threads 2 --threads 3 --runtime 4 --warmuptime 1 \
             --sleep_usec 50 --operations 2 --cache_footprint 128 --no-locking",
        ),
    );
    let ours = workload(
        &db,
        &words(
            "wakeup --message-threads=2 --workers=3 --runtime=4 --warmup-sec=1 \
             --sleep-usec=50 --operations=2 --cache-footprint=128 --no-lock",
        ),
    );
    assert_eq!(short, long);
    assert_eq!(short, ours);
    assert_eq!(short["message_threads"], 2);
    assert_eq!(short["workers"], 3);
    assert_eq!(short["runtime"], 4);
    assert_eq!(short["warmup_sec"], 1);
    assert_eq!(short["sleep_usec"], 50);
    assert_eq!(short["operations"], 2);
    assert_eq!(short["cache_footprint"], 128);
    assert_eq!(short["no_lock"], true);

    for (line, key, value) in [
        ("schbench -p 4096", "pipe", 4096),
        ("schbench --pipe 4096", "pipe", 4096),
        ("schbench -R 500", "rps", 500),
        ("schbench --rps 500", "rps", 500),
    ] {
        assert_eq!(workload(&db, &words(line))[key], value, "{line:?}");
    }
    // schbench's 0 means the default for -t and "off" for -p and -R.
    let zeros = workload(&db, &words("schbench -t 0 -p 0 -R 0"));
    for key in ["workers", "pipe", "rps"] {
        assert!(zeros.get(key).is_none(), "{key} in {zeros}");
    }
    // -J/--jobname names the run, as --label does.
    for flag in ["-J", "--jobname"] {
        let plan = dry_plan(&db, &["schbench", flag, "nightly"]);
        assert_eq!(plan["label"], "nightly");
    }
    let stderr = assert_bad_input(&db, &words("run schbench -J a --label b --dry-run"));
    assert!(stderr.contains("--jobname"), "{stderr}");
}

#[test]
fn warmuptime_is_schbench_seconds_not_a_typo_of_warmup() {
    let (_d, db) = temp_db();
    let out = expect_success(schedlab(&db).args(words("run schbench --warmuptime 3 --dry-run")));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("did you mean"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("warmup=3"), "{stdout}");
    // ... and the warm-up iterations are untouched.
    assert_eq!(
        dry_plan(&db, &words("schbench --warmuptime 3"))["warmup"],
        1
    );
}

/// The CPUs this process may run on, from /proc (the test's own affinity is schedlab's).
fn allowed_cpus() -> Vec<u32> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    let mut cpus = Vec::new();
    for part in list.split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>().unwrap()..=b.parse::<u32>().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

#[test]
fn auto_pinning_gives_message_threads_their_own_cpus_and_workers_the_rest() {
    let (_d, db) = temp_db();
    let allowed = allowed_cpus();
    for line in [
        "schbench -M auto",
        "schbench -W auto",
        "schbench -M auto -W auto",
    ] {
        if allowed.len() < 2 {
            assert_bad_input(&db, &words(&format!("run {line} --dry-run")));
            continue;
        }
        let w = workload(&db, &words(line));
        let cpus = |key: &str| -> Vec<u32> {
            w[key]
                .as_array()
                .unwrap_or_else(|| panic!("no {key} in {w}"))
                .iter()
                .map(|c| c.as_u64().unwrap() as u32)
                .collect()
        };
        assert_eq!(cpus("message_cpus"), allowed[..1]);
        assert_eq!(cpus("worker_cpus"), allowed[1..]);
    }
    // auto places both kinds of thread: a list for the other one is ambiguous.
    let stderr = assert_bad_input(&db, &words("run schbench -M auto -W 0 --dry-run"));
    assert!(stderr.contains("auto"), "{stderr}");
    // More message threads than CPUs leaves no CPU for the workers.
    let too_many = allowed.len() + 1;
    assert_bad_input(
        &db,
        &words(&format!("run schbench -m {too_many} -M auto --dry-run")),
    );
}

#[test]
fn hackbench_and_perf_messaging_spellings() {
    let (_d, db) = temp_db();
    let hackbench = workload(
        &db,
        &words("hackbench --groups 3 --fds 4 --loops 5 --datasize 64 --pipe --threads"),
    );
    let short = workload(&db, &words("hackbench -g 3 -f 4 -l 5 -s 64 -p -T"));
    assert_eq!(hackbench, short);
    assert_eq!(hackbench["groups"], 3);
    assert_eq!(hackbench["fds"], 4);
    assert_eq!(hackbench["loops"], 5);
    assert_eq!(hackbench["datasize"], 64);
    assert_eq!(hackbench["pipe"], true);
    assert_eq!(hackbench["threads"], true);
    // hackbench: -P (--process, --processes) is process mode, and the last of -T and -P wins.
    for (line, threads) in [
        ("hackbench -P", false),
        ("hackbench --process", false),
        ("hackbench --processes", false),
        ("hackbench -T -P", false),
        ("hackbench -P -T", true),
    ] {
        assert_eq!(workload(&db, &words(line))["threads"], threads, "{line:?}");
    }
    // perf bench sched messaging: -t/--thread, -g/--group, -l/--nr_loops, -p/--pipe.
    let perf = workload(
        &db,
        &words("messaging --thread --group 3 --nr_loops 5 --pipe"),
    );
    let perf_short = workload(&db, &words("messaging -t -g 3 -l 5 -p"));
    assert_eq!(perf, perf_short);
    assert_eq!(perf["threads"], true);
    assert_eq!(perf["groups"], 3);
    assert_eq!(perf["loops"], 5);
    assert_eq!(perf["pipe"], true);
}

#[test]
fn perf_pipe_spellings() {
    let (_d, db) = temp_db();
    let long = workload(&db, &words("pipe --loop 1000 --threaded"));
    let ours = workload(&db, &words("pipe --loops 1000 --threads"));
    let short = workload(&db, &words("pipe -l 1000 -T"));
    assert_eq!(long, ours);
    assert_eq!(long, short);
    assert_eq!(long["loops"], 1000);
    assert_eq!(long["threads"], true);
}

#[test]
fn reference_flags_without_a_counterpart_are_refused_with_the_reason() {
    let (_d, db) = temp_db();
    let refused = [
        ("schbench -C", "--calibrate"),
        ("schbench --calibrate", "--calibrate"),
        ("schbench -A 90", "--auto-rps"),
        ("schbench --auto-rps 90", "--auto-rps"),
        ("schbench -i 5", "--intervaltime"),
        ("schbench --intervaltime 5", "--intervaltime"),
        ("schbench -z 5", "--zerotime"),
        ("schbench --zerotime 5", "--zerotime"),
        ("schbench -j out.json", "--json"),
        ("schbench --json out.json", "--json"),
        ("schbench --split 50", "--split"),
        ("hackbench -F", "--fifo"),
        ("hackbench --fifo", "--fifo"),
        ("hackbench -i", "--inet"),
        ("hackbench --inet", "--inet"),
        ("pipe -G a,b", "--cgroups"),
        ("pipe --cgroups a,b", "--cgroups"),
    ]
    .map(|(line, flag)| (format!("run {line} --dry-run"), flag));
    for stderr in assert_each_refusal_names(&db, &refused) {
        assert!(stderr.contains("not supported: "), "{stderr}");
    }
}

#[test]
fn wakeup_help_says_why_its_runtime_is_not_schbenchs_and_names_the_spellings() {
    let (_d, db) = temp_db();
    let help = stdout_of_success(&db, &words("run schbench --help"));
    // As one line: help wraps to the terminal, wherever a phrase falls.
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(help.contains("Not schbench's 30"), "{help}");
    for alias in [
        "--threads",
        "--warmuptime",
        "--sleep_usec",
        "--cache_footprint",
        "--no-locking",
        "--jobname",
        "auto",
    ] {
        assert!(help.contains(alias), "{alias} missing from:\n{help}");
    }
    // ... and says which are refused, without offering them as options: they are accepted only
    // to say why.
    let (options, after) = help
        .split_once("schbench's flags are taken")
        .unwrap_or_else(|| panic!("no note on schbench's flags:\n{help}"));
    assert!(after.contains("refused"), "{after}");
    for refused in [
        "--calibrate",
        "--auto-rps",
        "--intervaltime",
        "--zerotime",
        "--split",
    ] {
        assert!(!options.contains(refused), "{refused} offered in:\n{help}");
    }
}

// ---- item 1: every command line the docs quote ----

/// A command line quoted in the docs, and where.
#[derive(Debug)]
struct Quoted {
    place: String,
    words: Vec<String>,
}

const TOOLS: [&str; 5] = [
    "schedlab ",
    "schbench ",
    "./schbench ",
    "hackbench ",
    "perf bench ",
];

/// Every workload's name and alias, as the registry declares them.
fn workload_names() -> impl Iterator<Item = &'static str> {
    WORKLOADS
        .iter()
        .flat_map(|w| std::iter::once(w.name).chain(w.aliases.iter().copied()))
}

fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs")
}

/// Inline code spans of a line: the text between pairs of single backticks.
fn code_spans(line: &str) -> Vec<&str> {
    line.split('`').skip(1).step_by(2).collect()
}

/// The command lines of `text`: lines of fenced blocks and inline code spans that start with a
/// tool's name (`schedlab`, `schbench`, `hackbench`, `perf bench`) or with a workload name and a
/// flag (`wakeup -m 3 ...`, read as `schedlab run wakeup -m 3 ...`). A `$ ` prompt and a trailing
/// `# comment` are dropped; `a ; b` is two command lines. Lines with placeholders (`<X>`, `[..]`,
/// `|`, `...`) are syntax, not command lines.
fn quoted_commands(file: &Path) -> Vec<Quoted> {
    let text = std::fs::read_to_string(file).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut found = Vec::new();
    let mut fenced = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let candidates: Vec<&str> = if fenced { vec![line] } else { code_spans(line) };
        for candidate in candidates {
            let candidate = candidate.trim().trim_start_matches("$ ");
            let command = candidate.split(" #").next().unwrap().trim();
            for part in command.split(" ; ") {
                let part = part.trim();
                let tool = TOOLS.iter().any(|t| part.starts_with(t));
                let workload = workload_names().any(|w| {
                    part.strip_prefix(w)
                        .and_then(|rest| rest.strip_prefix(' '))
                        .is_some_and(|rest| rest.starts_with('-'))
                });
                if !(tool || workload) {
                    continue;
                }
                if ["<", "[", "|", "...", "…"].iter().any(|p| part.contains(p)) {
                    continue;
                }
                assert!(
                    !part.contains(['\'', '"', '\\', '$']),
                    "{name}:{}: quoting is not understood here: {part}",
                    n + 1
                );
                let mut words: Vec<String> = part.split_whitespace().map(String::from).collect();
                if workload && !tool {
                    words.splice(0..0, ["schedlab".to_string(), "run".to_string()]);
                }
                found.push(Quoted {
                    place: format!("{name}:{}", n + 1),
                    words,
                });
            }
        }
    }
    found
}

/// `import`'s flags that take a value: any other word that is not a flag is a file.
const IMPORT_VALUE_FLAGS: [&str; 9] = [
    "--tool",
    "--label",
    "--case",
    "--host",
    "--kernel",
    "--tool-version",
    "--metric",
    "--column",
    "--delimiter",
];

/// A quoted `import` with the reader's files (which this checkout does not have) replaced by a
/// captured output of the same tool, so its flags are checked on a file that parses.
fn with_a_captured_output(argv: &[&str]) -> Vec<String> {
    let tool = argv
        .windows(2)
        .find(|pair| pair[0] == "--tool")
        .map(|pair| pair[1])
        .expect("an import names its --tool");
    let captured = match tool {
        "perf-bench" => "perf-pipe-repeated.txt",
        "hackbench" => "hackbench-repeated.txt",
        "schbench" => "schbench-2021-pipe.txt",
        "plain" => "plain.txt",
        other => panic!("no captured output of {other}"),
    };
    let captured = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schedlab-core/tests/fixtures/import")
        .join(captured);
    let mut args = Vec::new();
    let mut file_replaced = false;
    for (i, word) in argv.iter().enumerate() {
        let value = i > 0 && IMPORT_VALUE_FLAGS.contains(&argv[i - 1]);
        if i == 0 || word.starts_with('-') || value {
            args.push(word.to_string());
        } else if !file_replaced {
            args.push(captured.to_str().unwrap().to_string());
            file_replaced = true;
        }
    }
    assert!(file_replaced, "an import without a file: {argv:?}");
    args
}

/// The schedlab command lines a quoted line stands for: schedlab's own as they are, a reference
/// tool's under the workload that replaces it (`perf bench sched all` is its two cases).
fn translate(q: &Quoted) -> Vec<Vec<String>> {
    let words: Vec<&str> = q.words.iter().map(String::as_str).collect();
    let with = |head: &[&str], rest: &[&str]| -> Vec<String> {
        head.iter().chain(rest).map(|w| w.to_string()).collect()
    };
    match words.as_slice() {
        ["schedlab", ..] => vec![q.words[1..].to_vec()],
        ["schbench" | "./schbench", rest @ ..] => vec![with(&["run", "schbench"], rest)],
        ["hackbench", rest @ ..] => vec![with(&["run", "hackbench"], rest)],
        ["perf", "bench", "sched", "messaging", rest @ ..] => {
            vec![with(&["run", "messaging"], rest)]
        }
        ["perf", "bench", "sched", "pipe", rest @ ..] => vec![with(&["run", "pipe"], rest)],
        ["perf", "bench", "sched", "all"] => vec![
            with(&["run", "messaging"], &[]),
            with(&["run", "pipe"], &[]),
        ],
        _ => panic!(
            "{}: a quoted command line this test cannot run: {:?}; teach `translate` it",
            q.place, q.words
        ),
    }
}

#[test]
fn every_command_line_the_docs_quote_runs() {
    let docs = docs_dir();
    let mut files: Vec<PathBuf> = std::fs::read_dir(docs.join("seeds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    files.sort();
    files.push(docs.join("workloads.md"));
    files.push(docs.join("wakeup.md"));
    let quoted: Vec<Quoted> = files.iter().flat_map(|f| quoted_commands(f)).collect();
    // A floor, so an extraction that silently finds nothing fails.
    assert!(
        quoted.len() >= 30,
        "only {} command lines: {quoted:?}",
        quoted.len()
    );
    assert!(
        quoted
            .iter()
            .any(|q| q.words[0] == "schbench" || q.words[0] == "perf"),
        "no reference tool's command line found"
    );

    let (_d, db) = temp_db();
    let mut checked = 0;
    // Labels an `import` quoted before a `compare` stored: that compare's sides as the docs mean.
    let mut imported_labels: Vec<String> = Vec::new();
    for q in &quoted {
        let reference = q.words[0] != "schedlab";
        for argv in translate(q) {
            let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
            // Printed before running, so that a failure below, which names only the command,
            // follows the place it was quoted.
            eprintln!("{}: {:?} -> schedlab {argv:?}", q.place, q.words.join(" "));
            match argv.first().copied() {
                Some("run") => {
                    // Every flag checked, nothing run.
                    expect_success(schedlab(&db).args(&argv).args(words("--dry-run --quiet")));
                    if reference {
                        // A reference tool's line really runs, at a tiny size.
                        expect_success(
                            schedlab(&db)
                                .args(&argv)
                                .args(words("--iterations=1 --warmup=0 --scale=0.001"))
                                .args(words("--no-store --quiet --iteration-timeout=60")),
                        );
                    }
                }
                Some("compare") => {
                    // Its sides, stored first: labelled fake runs of one case.
                    let labels = argv[1..].iter().filter(|a| !a.starts_with('-'));
                    for label in labels.filter(|l| !imported_labels.iter().any(|i| i == *l)) {
                        schedlab(&db)
                            .args(words("run fake --iterations=2 --warmup=0 --quiet"))
                            .args(["--label", label])
                            .assert()
                            .success();
                    }
                    expect_success(schedlab(&db).args(&argv));
                }
                Some("show") => {
                    // What it shows, stored first: a short labelled wakeup run, whose latency
                    // tables `--percentiles` reads.
                    schedlab(&db)
                        .args(words(
                            "run wakeup -m 1 -t 1 --runtime 1 --iterations 1 --warmup 0",
                        ))
                        .args(["--quiet", "--label", argv[1]])
                        .assert()
                        .success();
                    expect_success(schedlab(&db).args(&argv));
                }
                Some("list" | "env") => {
                    schedlab(&db).args(&argv).assert().success();
                }
                Some("campaign") => {
                    // A campaign of guests needs kernel images, and its suite file and name are
                    // the reader's: every flag is checked when the command gets as far as those.
                    let out = schedlab(&db).args(&argv).output().unwrap();
                    let stderr = String::from_utf8_lossy(&out.stderr);
                    assert!(
                        out.status.success()
                            || [
                                "cannot read the kernel image",
                                "no built-in suite or suite file named",
                                "no campaign named",
                            ]
                            .iter()
                            .any(|past_the_flags| stderr.contains(past_the_flags)),
                        "{}: schedlab {argv:?}: {stderr}",
                        q.place
                    );
                }
                // An `ab` line gets past its flags: with `--rounds 0` every flag is parsed and
                // the rounds are refused before any setting is written or any case runs.
                Some("ab") => {
                    let mut argv: Vec<&str> = argv.clone();
                    match argv.iter().position(|w| *w == "--rounds") {
                        Some(at) => argv[at + 1] = "0",
                        None => argv.extend(["--rounds", "0"]),
                    }
                    let output = schedlab(&db).args(&argv).output().unwrap();
                    let stderr = String::from_utf8_lossy(&output.stderr);
                    assert!(
                        output.status.code() == Some(2)
                            && stderr.contains("--rounds must be between 1 and 1000"),
                        "{}: schedlab {argv:?}: {stderr}",
                        q.place
                    );
                }
                Some("import") => {
                    expect_success(schedlab(&db).args(with_a_captured_output(&argv)));
                    let label = argv.windows(2).find(|pair| pair[0] == "--label");
                    imported_labels.extend(label.map(|pair| pair[1].to_string()));
                }
                _ => panic!(
                    "{}: schedlab {argv:?}: this test has no rule for that command; add one",
                    q.place
                ),
            }
            checked += 1;
        }
    }
    assert!(checked >= quoted.len());
}

// ---- item 2: help that reads like the tools' ----

/// `schedlab PATH -h` (`how`), or `--help`, which must succeed.
fn help_text(db: &Path, path: &str, how: &str) -> String {
    stdout_of_success(db, &words(&format!("{path} {how}")))
}

#[test]
fn run_options_have_their_own_heading_apart_from_workload_flags() {
    let (_d, db) = temp_db();
    for path in [
        "run wakeup",
        "run messaging",
        "run pipe",
        "ab fake",
        "calibrate fake",
        "campaign start fake",
    ] {
        let help = help_text(&db, path, "-h");
        let (options, run_options) = help
            .split_once("\nRun options:\n")
            .unwrap_or_else(|| panic!("{path:?}: no Run options heading:\n{help}"));
        assert!(options.contains("\nOptions:\n"), "{path:?}:\n{help}");
        assert!(run_options.contains("--iterations <"), "{path:?}:\n{help}");
        assert!(!options.contains("--iterations <"), "{path:?}:\n{help}");
        assert!(run_options.contains("--db"), "{path:?}:\n{help}");
    }
}

#[test]
fn flags_a_command_would_reject_or_ignore_are_not_offered() {
    let (_d, db) = temp_db();
    for (path, absent) in [
        ("ab fake", &["--no-store", "--dry-run", "--format"][..]),
        (
            "campaign start fake",
            &["--label", "--format", "--quiet", "--no-store", "--dry-run"],
        ),
        ("calibrate fake", &["--no-store", "--dry-run"]),
    ] {
        let help = help_text(&db, path, "--help");
        for flag in absent {
            assert!(
                !help.contains(&format!("{flag} ")) && !help.contains(&format!("{flag}\n")),
                "{path:?} offers {flag}:\n{help}"
            );
        }
    }
    // ... and given anyway, they are usage errors.
    for argv in [
        [&AB_OF_NOTHING[..], &words("--no-store fake")].concat(),
        [&AB_OF_NOTHING[..], &words("--dry-run fake")].concat(),
        campaign_start("x", "y", &words("--label l fake")),
        campaign_start("x", "y", &words("-q fake")),
        words("calibrate --dry-run fake"),
        // calibrate's read-only modes run nothing: an option for runs is refused, not ignored.
        words("calibrate --list --iterations 3"),
        words("calibrate --show 1 --runs 4"),
        words("calibrate --from x --label y"),
    ] {
        assert_bad_input(&db, &argv);
    }
}

#[test]
fn every_format_and_style_value_is_described() {
    let (_d, db) = temp_db();
    for path in [
        "run",
        "runs",
        "show",
        "env",
        "compare",
        "stat",
        "calibrate",
        "db check",
    ] {
        let help = help_text(&db, path, "--help");
        // The flag's entry: its line and the indented lines up to the next flag.
        let block = |flag: &str| -> Option<String> {
            let start = help.find(&format!("--{flag} <"))?;
            let rest = &help[start..];
            let end = rest[1..].find("\n  -").map_or(rest.len(), |i| i + 1);
            Some(rest[..end].to_string())
        };
        let format = block("format").unwrap_or_else(|| panic!("{path:?}: no --format"));
        assert!(format.contains("Possible values:"), "{path:?}:\n{format}");
        assert!(format.contains("- text:"), "{path:?}:\n{format}");
        assert!(format.contains("- json:"), "{path:?}:\n{format}");
        if let Some(style) = block("style") {
            for value in ["schedtests", "mmtests", "ministat", "benchstat"] {
                assert!(style.contains(&format!("- {value}:")), "{path:?}:\n{style}");
            }
        }
    }
}

#[test]
fn dry_run_json_is_the_plan_and_its_estimate() {
    let (_d, db) = temp_db();
    let out = expect_success(
        schedlab(&db)
            .args(words("run --suite quick --dry-run --format json"))
            .args(words("--order-seed 3 --order random")),
    );
    let doc = json_of(&out.stdout);
    assert_eq!(doc["dry_run"], true);
    assert_eq!(doc["plan"]["suite"], "quick");
    assert_eq!(doc["plan"]["order_seed"], 3);
    let cases = doc["plan"]["cases"].as_array().unwrap();
    let estimated = doc["estimate"]["cases"].as_array().unwrap();
    assert_eq!(cases.len(), estimated.len());
    for (case, est) in cases.iter().zip(estimated) {
        assert_eq!(case["name"], est["case"]);
        assert!(est["iteration_sec"].as_f64().unwrap() > 0.0, "{est}");
    }
    assert!(doc["estimate"]["known_sec"].as_f64().unwrap() > 0.0);
    assert!(!db.exists(), "a dry run stored something");
}

/// Once this host has run a case, `--dry-run` expects it to take what it took, and the same
/// workload's other cases their rule of thumb times how much slower or faster this host was at
/// it; a run stores that expectation with its plan, for its watchdog.
#[test]
fn dry_run_estimates_go_by_what_this_host_measured() {
    let (_d, db) = temp_db();
    let estimate = |loops: u32| {
        let doc = json_of_success(
            &db,
            &words(&format!("run pipe --loops {loops} --dry-run --format json")),
        );
        doc["estimate"]["cases"][0].clone()
    };
    let (before_small, before_large) = (estimate(2000), estimate(6000));
    assert_eq!(before_small["source"], "rule of thumb", "{before_small}");
    stdout_of_success(
        &db,
        &words("run pipe --loops 2000 --iterations 3 --warmup 0 -q"),
    );
    let small = estimate(2000);
    assert_eq!(small["source"], "history", "{small}");
    let took = small["iteration_sec"].as_f64().unwrap();
    let shown = json_of_success(&db, &words("show 1 --format json"));
    let metrics = shown["runs"][0]["cases"][0]["metrics"].as_array().unwrap();
    let wall = metrics
        .iter()
        .find(|m| m["name"] == "wall_time_sec")
        .unwrap();
    let mut walls: Vec<f64> = wall["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    walls.sort_by(f64::total_cmp);
    assert_eq!(took, walls[1], "the median of its 3 stored wall times");
    let factor = took / before_small["iteration_sec"].as_f64().unwrap();
    let large = estimate(6000);
    assert_eq!(large["source"], "scaled rule of thumb", "{large}");
    assert!((large["host_factor"].as_f64().unwrap() / factor - 1.0).abs() < 1e-9);
    let expected = before_large["iteration_sec"].as_f64().unwrap() * factor;
    assert!((large["iteration_sec"].as_f64().unwrap() / expected - 1.0).abs() < 1e-9);
    stdout_of_success(
        &db,
        &words("run pipe --loops 6000 --iterations 1 --warmup 0 -q"),
    );
    let plan: String = rusqlite::Connection::open(&db)
        .unwrap()
        .query_row("SELECT plan_json FROM runs WHERE id = 2", [], |r| r.get(0))
        .unwrap();
    let carried = json_of(plan.as_bytes())["expected_sec"]["pipe:process loops=6000"].as_f64();
    assert!((carried.unwrap() / expected - 1.0).abs() < 1e-9, "{plan}");
}

#[test]
fn version_on_any_subcommand_names_the_program() {
    let (_d, db) = temp_db();
    let expected = format!("schedlab {}\n", env!("CARGO_PKG_VERSION"));
    for path in [
        "-V",
        "--version",
        "run -V",
        "run wakeup -V",
        "stat --version",
        "campaign start -V",
        "db check -V",
    ] {
        assert_eq!(stdout_of_success(&db, &words(path)), expected, "{path:?}");
    }
}

#[test]
fn scale_multiplies_the_work_size_it_names() {
    let (_d, db) = temp_db();
    for (line, key, scaled) in [
        ("pipe --loops 1000", "loops", 500),
        ("messaging --loops 100", "loops", 50),
        ("wakeup --runtime 10", "runtime", 5),
        ("semaphore --items 1000", "items", 500),
        ("syscall --calls 1000", "calls", 500),
        ("fanout --rounds 1000", "rounds", 500),
        ("cpudl --ops 1000", "ops", 500),
        ("cpupri --ops 1000", "ops", 500),
        ("rump --syscalls 1000", "syscalls", 500),
    ] {
        let argv = format!("{line} --scale 0.5");
        assert_eq!(workload(&db, &words(&argv))[key], scaled, "{argv:?}");
    }
}

// ---- item 7: small things ----

#[test]
fn list_and_runs_align_their_columns_whatever_the_label() {
    let (_d, db) = temp_db();
    let text = stdout_of_success(&db, &["list"]);
    let column = |line: &str| {
        line.find(|c: char| c.is_whitespace())
            .map(|i| i + line[i..].find(|c: char| !c.is_whitespace()).unwrap())
    };
    // The third column starts at the same place on every line.
    let third: Vec<usize> = text
        .lines()
        .map(|l| {
            let second = column(l).unwrap();
            second + column(&l[second..]).unwrap()
        })
        .collect();
    assert!(third.windows(2).all(|w| w[0] == w[1]), "{text}");

    let long = "a-label-much-longer-than-twenty-characters";
    for label in ["s", long] {
        schedlab(&db)
            .args(words(&format!(
                "run fake --iterations=1 --warmup=0 -q --label {label}"
            )))
            .assert()
            .success();
    }
    let text = stdout_of_success(&db, &["runs"]);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    let status_at: Vec<usize> = lines
        .iter()
        .map(|l| {
            l.find("complete")
                .or_else(|| l.find("status"))
                .unwrap_or_else(|| panic!("{text}"))
        })
        .collect();
    assert!(status_at.windows(2).all(|w| w[0] == w[1]), "{text}");
    assert!(text.contains(long), "{text}");
}

#[test]
fn benchstat_says_it_counts_runs_not_iterations() {
    let (_d, db) = temp_db();
    for (label, seed) in [("base", "1"), ("cand", "2")] {
        schedlab(&db)
            .args(["run", "fake", "-q", "--label", label, "--seed", seed])
            .assert()
            .success();
    }
    let text = stdout_of_success(&db, &words("compare base cand --style benchstat"));
    assert!(
        text.contains("need >= 6 runs per side for a confidence interval"),
        "{text}"
    );
    assert!(text.contains("need >= 4 runs per side to detect"), "{text}");
    assert!(text.contains("not iterations"), "{text}");
}

struct DataFiles {
    _dir: tempfile::TempDir,
    a: String,
    b: String,
}

fn data_files() -> DataFiles {
    let dir = tempfile::tempdir().unwrap();
    let a = write_file(dir.path(), "a", "1.0\n1.1\n0.9\n1.05\n1.02\n");
    let b = write_file(dir.path(), "b", "1.2\n1.3\n1.1\n1.25\n1.22\n");
    DataFiles {
        a: a.display().to_string(),
        b: b.display().to_string(),
        _dir: dir,
    }
}

fn stat(db: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut cmd = schedlab(db);
    cmd.arg("stat").args(args);
    if let Some(input) = stdin {
        cmd.write_stdin(input);
    }
    String::from_utf8(expect_success(&mut cmd).stdout).unwrap()
}

const PLOT_BORDER: &str = "+-----";
const HEAD: &str = "    N           Min           Max";

#[test]
fn stat_takes_ministats_switches() {
    let (_d, db) = temp_db();
    let f = data_files();
    let full = stat(&db, &[&f.a, &f.b], None);
    for part in [
        "x ",
        "+ ",
        PLOT_BORDER,
        HEAD,
        "Difference at 95.0%",
        "\nverdict: ",
    ] {
        assert!(full.contains(part), "{part}:\n{full}");
    }
    // A result, not an error: no line starts as every error line does.
    assert!(!full.contains("schedlab: "), "{full}");
    // -A: no plot; statistics and comparison.
    let a = stat(&db, &["-A", &f.a, &f.b], None);
    assert!(!a.contains(PLOT_BORDER), "{a}");
    assert!(a.contains("Difference at 95.0%") && a.contains(HEAD), "{a}");
    // -n: the statistics only.
    let n = stat(&db, &["-n", &f.a, &f.b], None);
    assert!(!n.contains(PLOT_BORDER), "{n}");
    assert!(!n.contains("Difference"), "{n}");
    assert!(!n.contains("verdict: ") && !n.contains("marks:"), "{n}");
    assert!(n.contains(HEAD), "{n}");
    // -q: no legend, no header.
    let q = stat(&db, &["-q", "-n", &f.a, &f.b], None);
    assert_eq!(q.lines().count(), 2, "{q}");
    assert!(q.starts_with("x   5 "), "{q}");
    // -s: one bar line per file; -w: the plot's width.
    let s = stat(&db, &["-s", "-w", "40", &f.a, &f.b], None);
    let border = format!("+{}+", "-".repeat(40));
    assert_eq!(s.matches(&border).count(), 2, "{s}");
    let bars = s
        .lines()
        .filter(|l| l.contains("|_") || l.contains("_|"))
        .count();
    assert_eq!(bars, 2, "{s}");
    let one = stat(&db, &["-w", "40", &f.a, &f.b], None);
    let bars = one
        .lines()
        .filter(|l| l.contains("|_") || l.contains("_|"))
        .count();
    assert_eq!(bars, 1, "{one}");
    // -c: confidence, as ministat's.
    let c = stat(&db, &["-c", "80", &f.a, &f.b], None);
    assert!(c.contains("Difference at 80.0%"), "{c}");
    // The switches shape ministat's layout only.
    assert_bad_input(&db, &["stat", "-A", "--style", "mmtests", &f.a, &f.b]);
    assert_bad_input(&db, &["stat", "-n", "--format", "json", &f.a, &f.b]);
    assert_bad_input(&db, &["stat", "-w", "1", &f.a, &f.b]);
}

#[test]
fn stat_reads_standard_input_and_summarises_a_single_file() {
    let (_d, db) = temp_db();
    let f = data_files();
    let data = std::fs::read_to_string(&f.a).unwrap();
    // `-` and no file at all both read standard input.
    let dash = stat(&db, &["-", &f.b], Some(&data));
    assert!(dash.contains("x <stdin>"), "{dash}");
    assert!(dash.contains("Difference at 95.0%"), "{dash}");
    let none = stat(&db, &[], Some(&data));
    assert!(none.contains("x <stdin>"), "{none}");
    // One file: its summary, as ministat prints one dataset; nothing compared.
    let single = stat(&db, &[&f.a], None);
    for part in ["x ", PLOT_BORDER, HEAD, "x   5 "] {
        assert!(single.contains(part), "{part}:\n{single}");
    }
    for absent in ["Difference", "schedlab: ", "marks:", "units:"] {
        assert!(!single.contains(absent), "{absent}:\n{single}");
    }
    let json: Value = serde_json::from_str(&stat(&db, &[&f.a, "--format", "json"], None)).unwrap();
    assert_eq!(json["datasets"][0]["n"], 5);
    let csv = stat(&db, &[&f.a, "--format", "csv"], None);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "name,n,min,max,median,avg,stddev");
    let fields: Vec<&str> = lines[1].rsplitn(7, ',').collect();
    assert_eq!((fields[5], fields[6]), ("5", f.a.as_str()), "{csv}");
    assert_bad_input(&db, &["stat", "--style", "mmtests", &f.a]);
    assert_bad_input(&db, &words("stat - -"));
}

#[test]
fn stat_of_plain_files_says_nothing_of_boots() {
    let (_d, db) = temp_db();
    let f = data_files();
    for style in ["ministat", "schedtests", "mmtests", "benchstat"] {
        let text = stat(&db, &["--style", style, &f.a, &f.b], None);
        assert!(!text.to_lowercase().contains("boot"), "{style}:\n{text}");
    }
}
