//! The man pages name only pages that are written (no `schedlab-help(1)`) and end with EXIT
//! STATUS, ENVIRONMENT and FILES; completions offer the built-in suites for `--suite` and every
//! workload (with its flags and aliases); `show`
//! prints counts as whole numbers.
mod common;

use common::*;

/// Every `schedlab…(1)` a page names, as written in roff (`schedlab\-run(1)`).
fn named_pages(page: &str) -> Vec<String> {
    let text = page.replace("\\-", "-");
    let mut names = Vec::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("schedlab") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(tail.len());
        if tail[end..].starts_with("(1)") {
            names.push(tail[..end].to_string());
        }
        rest = &tail[end..];
    }
    names
}

#[test]
fn man_pages_name_only_written_pages_and_say_exit_status_environment_and_files() {
    let dir = tempfile::tempdir().unwrap();
    let man = dir.path().join("man");
    expect_success(schedlab_without_db().arg("man").arg("--dir").arg(&man));
    let mut pages = 0;
    for entry in std::fs::read_dir(&man).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        assert!(!name.split('-').any(|w| w == "help"), "{name}");
        let page = std::fs::read_to_string(&path).unwrap();
        for named in named_pages(&page) {
            assert!(
                man.join(format!("{named}.1")).exists(),
                "{name}(1) names {named}(1), which is not written"
            );
        }
        for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES"] {
            assert!(page.contains(section), "{name}(1) lacks {section}");
        }
        assert!(page.contains("SCHEDLAB_DB"), "{name}");
        pages += 1;
    }
    assert!(pages > 20, "{pages} pages");
    let top = expect_success(schedlab_without_db().arg("man")).stdout;
    let top = String::from_utf8(top).unwrap();
    assert!(named_pages(&top).contains(&"schedlab-run".to_string()));
    assert!(!top.contains("help(1)"), "{top}");
}

#[test]
fn completions_offer_the_built_in_suites_and_the_workloads() {
    let list = expect_success(schedlab_without_db().args(["list", "--format", "json"])).stdout;
    let list = json_of(&list);
    let names = |key: &str| -> Vec<String> {
        list[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (workloads, suites) = (names("workloads"), names("suites"));
    assert!(workloads.len() >= 10 && suites.len() >= 5, "{list}");
    for shell in ["bash", "zsh", "fish"] {
        let script = expect_success(schedlab_without_db().args(["completions", shell])).stdout;
        let script = String::from_utf8(script).unwrap();
        for name in suites.iter().chain(&workloads) {
            assert!(script.contains(name.as_str()), "{shell}: no {name}");
        }
        // A workload's own flags, and an alias.
        for word in ["schbench", "message-cpus", "cpudl", "variant"] {
            assert!(script.contains(word), "{shell}: no {word}");
        }
    }
    // Offered, not imposed: a suite file is still taken.
    let (dir, db) = temp_db();
    let file = write_file(dir.path(), "mine.toml", three_fake_cases(1, [0.0; 3]));
    run_suite(&db, &file, &["-q", "--no-store"]);
}

/// Counts are whole numbers: the median of an even number of them reads `55`, not `54.500`.
#[test]
fn show_prints_counts_as_whole_numbers() {
    let (_dir, db) = temp_db();
    expect_success(schedlab(&db).args(words("run pipe --loops 2000 --iterations 2 --warmup 0 -q")));
    let text = stdout_of_success(&db, &words("show 1"));
    let counts: Vec<&str> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("voluntary_csw_count"))
        .collect();
    assert_eq!(counts.len(), 1, "{text}");
    for line in counts {
        let numbers: Vec<&str> = line.split_whitespace().skip(2).take(3).collect();
        assert!(
            numbers
                .iter()
                .all(|n| n.chars().all(|c| c.is_ascii_digit())),
            "{line}"
        );
    }
}
