//! The layering docs/architecture.md describes, read from the sources so that it cannot drift: no
//! workload names another (each is one file, or one folder, plus one registry line), and the
//! crate's leaf modules import only what the document says. Test code (after `#[cfg(test)]`) may
//! reach further: an import parser's tests compare its metric names with the native workload's.
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The Rust files of a module: `NAME.rs`, or every file under the folder `NAME/`.
fn module_files(parent: &Path, name: &str) -> Vec<PathBuf> {
    let file = parent.join(format!("{name}.rs"));
    if file.is_file() {
        return vec![file];
    }
    let mut files: Vec<PathBuf> = fs::read_dir(parent.join(name))
        .unwrap_or_else(|e| panic!("{name}: {e}"))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    files
}

/// A file's text before its tests.
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    match text.find("#[cfg(test)]") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// The words that follow `prefix` in `code` (`crate::` → `metric`, `sys`, …).
fn names_after(code: &str, prefix: &str) -> BTreeSet<String> {
    code.match_indices(prefix)
        .map(|(at, _)| {
            code[at + prefix.len()..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect::<String>()
        })
        // `super::super::pipe` names `pipe` through its second `super::`.
        .filter(|name| !name.is_empty() && name != "super")
        .collect()
}

/// The workload modules, as the `registry!` invocation in workload/mod.rs lists them
/// (`Pipe: pipe => PipeParams,`).
fn registered_workloads() -> Vec<String> {
    let registry = fs::read_to_string(src().join("workload/mod.rs")).unwrap();
    let invocation = &registry[registry.find("registry! {").expect("the registry")..];
    let invocation = &invocation[..invocation.find('}').unwrap()];
    let modules: Vec<String> = invocation
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once(':')?;
            let (module, _) = rest.split_once("=>")?;
            Some(module.trim().to_string())
        })
        .collect();
    assert!(modules.len() >= 9, "{modules:?}");
    modules
}

#[test]
fn no_workload_names_another() {
    let workloads = registered_workloads();
    let folder = src().join("workload");
    for workload in &workloads {
        for file in module_files(&folder, workload) {
            let code = code_of(&file);
            let named: BTreeSet<String> = ["super::", "crate::workload::"]
                .iter()
                .flat_map(|prefix| names_after(&code, prefix))
                .collect();
            for other in workloads.iter().filter(|other| *other != workload) {
                assert!(
                    !named.contains(other),
                    "{} names the workload `{other}`: what two workloads share belongs in \
                     workload/definition.rs, tasks.rs or work_units.rs, or outside workload/",
                    file.display()
                );
            }
        }
    }
}

#[test]
fn leaf_modules_import_only_what_architecture_md_says() {
    let root = src();
    for (module, allowed) in [
        ("sys", &["sys"][..]),
        ("attachment", &[]),
        ("rng", &[]),
        ("metric", &[]),
        ("latency", &["attachment"]),
        ("import", &["import", "metric"]),
    ] {
        for file in module_files(&root, module) {
            let imported = names_after(&code_of(&file), "crate::");
            let beyond: Vec<&String> = imported
                .iter()
                .filter(|name| !allowed.contains(&name.as_str()))
                .collect();
            assert!(
                beyond.is_empty(),
                "{} imports crate::{beyond:?}; docs/architecture.md allows {allowed:?}",
                file.display()
            );
        }
    }
}

/// Every Rust file under `dir`, its subfolders included.
fn rust_files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files_under(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files.sort();
    files
}

/// From a flag to a workload's parameters nothing travels as JSON keyed by name: the binary's
/// parsing (`workload_flags.rs`, `plan.rs`) hands each flag's declaration and value to the
/// workload's definition, which writes the typed field. Only `workload/keys.rs`, how suite files
/// and stored runs are read, holds serde_json, and the command line does not go through it.
#[test]
fn no_json_between_the_command_line_and_a_workload() {
    let binary = src().join("../../schedlab/src");
    let mut path: Vec<PathBuf> = vec![binary.join("workload_flags.rs"), binary.join("plan.rs")];
    path.extend(
        rust_files_under(&src().join("workload"))
            .into_iter()
            .filter(|file| !file.ends_with("workload/keys.rs")),
    );
    for file in &path {
        let code = code_of(file);
        for json in ["serde_json", "Value::Object", "json!"] {
            assert!(
                !code.contains(json),
                "{} uses `{json}` on the way from a flag to a workload's parameters",
                file.display()
            );
        }
    }
    for file in &path[..2] {
        let code = code_of(file);
        for suite_reading in ["from_keys", "read_keys"] {
            assert!(
                !code.contains(suite_reading),
                "{} reads the command line as suite keys (`{suite_reading}`)",
                file.display()
            );
        }
    }
}

/// The checks above read real paths: a workload named beside another is seen.
#[test]
fn the_reader_sees_a_workload_named_by_another() {
    let code = "use super::semaphore::burn;\nuse super::tasks::TaskLaunch;\nfn f() { \
                super::super::pipe::run(); crate::workload::fanout::X; }";
    let named: BTreeSet<String> = ["super::", "crate::workload::"]
        .iter()
        .flat_map(|prefix| names_after(code, prefix))
        .collect();
    for name in ["semaphore", "tasks", "pipe", "fanout"] {
        assert!(named.contains(name), "{name}: {named:?}");
    }
    assert!(!named.contains("super"), "{named:?}");
}
