//! Fills a results store with a synthetic fleet for `bench/fleet-history.sh`: H hosts × C cases ×
//! N nights of nightly runs, written straight into the store's tables (PostgreSQL's COPY, or one
//! SQLite transaction per night) with every summary a writer keeps, and steps planted in some
//! series, which it writes to a JSON file for the bench to check `changes` against.
//!
//!   cargo run --release -p schedlab-store --example fleet_generate -- \
//!       --db postgres://postgres@127.0.0.1:5432/fleet --hosts 100 --cases 10 --nights 1000 \
//!       --planted planted.json
//!
//! Built as an example of the store crate (its Cargo.toml points here), so it compiles and lints
//! with the workspace.
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Instant;

use schedlab_store::generate::{generate, FleetSpec};
use schedlab_store::Location;

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fleet_generate: {e}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), String> {
    let mut spec = FleetSpec::default();
    let mut db: Option<OsString> = None;
    let mut planted_file: Option<String> = None;
    let mut args = std::env::args_os().skip(1);
    while let Some(flag) = args.next() {
        let flag = flag.to_string_lossy().into_owned();
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        let number = |v: OsString| {
            v.to_string_lossy()
                .parse::<usize>()
                .map_err(|e| format!("{flag}: {e}"))
        };
        match flag.as_str() {
            "--db" => db = Some(value()?),
            "--hosts" => spec.hosts = number(value()?)?,
            "--cases" => spec.cases = number(value()?)?,
            "--nights" => spec.nights = number(value()?)?,
            "--iterations" => spec.iterations = number(value()?)? as u32,
            "--step-every" => spec.step_every = number(value()?)?,
            "--seed" => spec.seed = number(value()?)? as u64,
            "--planted" => planted_file = Some(value()?.to_string_lossy().into_owned()),
            other => return Err(format!("unknown flag {other}")),
        }
    }
    let db = db.ok_or("--db PATH|URL is required")?;
    let location = Location::parse(&db).map_err(|e| e.to_string())?;
    let total = spec.hosts * spec.cases * spec.nights;
    let started = Instant::now();
    let mut last_report = Instant::now();
    let planted = generate(&location, &spec, &mut |written| {
        if last_report.elapsed().as_secs() >= 30 || written == total {
            last_report = Instant::now();
            eprintln!(
                "fleet_generate: {written} of {total} runs in {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    })
    .map_err(|e| e.to_string())?;
    eprintln!(
        "fleet_generate: {total} runs ({} hosts × {} cases × {} nights), {} steps planted, {:.1} s",
        spec.hosts,
        spec.cases,
        spec.nights,
        planted.len(),
        started.elapsed().as_secs_f64()
    );
    if let Some(file) = planted_file {
        let json = serde_json::to_string_pretty(&planted).map_err(|e| e.to_string())?;
        std::fs::write(&file, json + "\n").map_err(|e| format!("{file}: {e}"))?;
    }
    Ok(())
}
