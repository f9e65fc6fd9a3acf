//! The layering docs/architecture.md describes, read from the sources so that it cannot drift: no
//! two files import each other (directly or round a longer circle), no workload names another
//! (each is one file, or one folder, plus one registry line), workloads sit below the plan and
//! suites, and the crate's leaf modules import only what the document says. Every import form
//! counts: `use` trees with their groups (`use crate::{plan, sys::{self, pipe}}`), paths in code
//! (`crate::plan::check`, `super::super::pipe::run()`), and a child module named from its
//! parent (`run::Config`). Test code (a `#[cfg(test)]` module, a `tests.rs`) may reach further:
//! an import parser's tests compare its metric names with the native workload's.
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
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

/// A file's text before its test module (`#[cfg(test)]` then `mod NAME {` at the left margin).
fn code_of(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap();
    let mut at = 0;
    while let Some(found) = text[at..].find("\n#[cfg(test)]\n") {
        let start = at + found + 1;
        let next = &text[start + "#[cfg(test)]\n".len()..];
        let inline_module = next.lines().next().is_some_and(|line| {
            let line = line.trim_start_matches("pub(crate) ");
            line.starts_with("mod ") && line.ends_with('{')
        });
        if inline_module {
            return text[..start].to_string();
        }
        at = start + 1;
    }
    text
}

/// `code` with comments, string literals and character literals blanked out, so that only paths
/// the code really names are read.
fn strip(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::with_capacity(code.len());
    let mut i = 0;
    while i < chars.len() {
        let rest = |k: usize| chars.get(i + k).copied();
        match chars[i] {
            '/' if rest(1) == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if rest(1) == Some('*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    i += 1;
                }
                i += 2;
            }
            'r' if matches!(rest(1), Some('"' | '#'))
                && !chars[..i]
                    .last()
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_') =>
            {
                // A raw string: r"…", r#"…"#.
                let hashes = chars[i + 1..].iter().take_while(|c| **c == '#').count();
                if chars.get(i + 1 + hashes) != Some(&'"') {
                    out.push(chars[i]);
                    i += 1;
                    continue;
                }
                i += 2 + hashes;
                while i < chars.len() {
                    if chars[i] == '"' && chars[i + 1..].iter().take(hashes).all(|c| *c == '#') {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
                out.push_str("\"\"");
            }
            '"' => {
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    i += if chars[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' => {
                // A character literal ('x', '\n', '\u{1F600}'), not a lifetime ('a).
                let end = if rest(1) == Some('\\') {
                    chars[i + 2..]
                        .iter()
                        .position(|c| *c == '\'')
                        .map(|p| i + 2 + p)
                } else if rest(2) == Some('\'') {
                    Some(i + 2)
                } else {
                    None
                };
                match end {
                    Some(end) => {
                        out.push_str("' '");
                        i = end + 1;
                    }
                    None => {
                        out.push('\'');
                        i += 1;
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// A word or punctuation of a `use` tree.
#[derive(Debug, Clone, PartialEq)]
enum Token {
    Word(String),
    Path,
    Open,
    Close,
    Comma,
    Star,
}

fn tokens(tree: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let mut chars = tree.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ':' if chars.peek() == Some(&':') => {
                chars.next();
                out.push(Token::Path);
            }
            '{' => out.push(Token::Open),
            '}' => out.push(Token::Close),
            ',' => out.push(Token::Comma),
            '*' => out.push(Token::Star),
            c if c.is_alphanumeric() || c == '_' || c == '$' => {
                let mut word = c.to_string();
                while let Some(&c) = chars.peek().filter(|c| c.is_alphanumeric() || **c == '_') {
                    word.push(c);
                    chars.next();
                }
                out.push(Token::Word(word));
            }
            _ => {}
        }
    }
    out
}

/// A path a `use` tree imports: its segments, the name it takes (`as NAME`), and whether it is a
/// glob (`path::*`).
#[derive(Debug, Clone)]
struct Imported {
    path: Vec<String>,
    alias: Option<String>,
    glob: bool,
}

/// Every path a `use` tree imports, its groups expanded: `crate::{plan, sys::{self, pipe}}` →
/// `crate::plan`, `crate::sys::self`, `crate::sys::pipe`.
fn expand(tokens: &[Token], at: &mut usize, prefix: Vec<String>, out: &mut Vec<Imported>) {
    let mut path = prefix;
    let (mut alias, mut glob) = (None, false);
    while let Some(token) = tokens.get(*at) {
        *at += 1;
        match token {
            Token::Word(word) if word == "as" => {
                if let Some(Token::Word(name)) = tokens.get(*at) {
                    alias = Some(name.clone());
                }
                *at += 1;
                break;
            }
            Token::Word(word) => path.push(word.clone()),
            Token::Path => {}
            Token::Star => {
                glob = true;
                break;
            }
            Token::Open => loop {
                expand(tokens, at, path.clone(), out);
                match tokens.get(*at) {
                    Some(Token::Comma) => {
                        *at += 1;
                        if tokens.get(*at) == Some(&Token::Close) {
                            *at += 1;
                            return;
                        }
                    }
                    Some(Token::Close) => {
                        *at += 1;
                        return;
                    }
                    _ => return,
                }
            },
            Token::Close | Token::Comma => {
                *at -= 1;
                break;
            }
        }
    }
    out.push(Imported { path, alias, glob });
}

/// Every path the `use` declarations of `code` import; with `exported`, only those it passes on
/// (`pub use`, `pub(crate) use`, `pub(super) use`).
fn use_trees(code: &str, exported: bool) -> Vec<Imported> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices("use ") {
        let before = code[..at].trim_end();
        let public = before.ends_with("pub") || before.ends_with(')') && before.contains("pub(");
        let word_start = !code[..at]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$');
        if !word_start || (exported && !public) {
            continue;
        }
        let Some(end) = code[at..].find(';') else {
            continue;
        };
        let tokens = tokens(&code[at + 4..at + end]);
        expand(&tokens, &mut 0, Vec::new(), &mut out);
    }
    out
}

/// The code of each module a file holds: the file's own, and each inline `mod NAME { … }`'s
/// under `at::NAME`, so that a `super::` inside one is read from there. `code` is stripped.
fn scopes(at: &[String], code: &str) -> Vec<(Vec<String>, String)> {
    let mut outer = String::with_capacity(code.len());
    let mut inner = Vec::new();
    let mut rest = code;
    while let Some(found) = rest.find("mod ") {
        let starts_word = !rest[..found]
            .chars()
            .last()
            .is_some_and(|c| c.is_alphanumeric() || c == '_');
        let after = &rest[found + 4..];
        let name: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let opens = after[name.len()..].trim_start().starts_with('{');
        if !(starts_word && opens && !name.is_empty()) {
            outer.push_str(&rest[..found + 4]);
            rest = after;
            continue;
        }
        let open = found + 4 + name.len() + after[name.len()..].find('{').unwrap();
        let mut depth = 0;
        let mut close = rest.len();
        for (i, c) in rest[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                _ => {}
            }
            if depth == 0 {
                close = open + i;
                break;
            }
        }
        outer.push_str(&rest[..found]);
        let mut path = at.to_vec();
        path.push(name);
        inner.extend(scopes(&path, &rest[open + 1..close]));
        rest = &rest[(close + 1).min(rest.len())..];
    }
    outer.push_str(rest);
    let mut all = vec![(at.to_vec(), outer)];
    all.extend(inner);
    all
}

/// Every path `code` names as written: each `use` tree's paths, and each path in code that
/// starts with `crate::`, `super::` or `self::`, or with the name of one of `children` (the
/// module's own child modules).
fn written_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let code = strip(code);
    let mut out = Vec::new();
    let word_at = |at: usize| {
        at == 0
            || !code[..at]
                .chars()
                .last()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$')
    };
    out.extend(
        use_trees(&code, false)
            .into_iter()
            .map(|imported| imported.path),
    );
    // Paths in code: `crate::a::b`, `super::super::a`, `child::item`.
    let mut at = 0;
    while at < code.len() {
        let rest = &code[at..];
        let word: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if word.is_empty() {
            at += rest.chars().next().map_or(1, char::len_utf8);
            continue;
        }
        let starts = word_at(at)
            && rest[word.len()..].starts_with("::")
            && (matches!(word.as_str(), "crate" | "super" | "self") || children.contains(&word));
        if starts {
            let mut path = Vec::new();
            let mut end = at;
            for segment in code[at..].split("::") {
                let name: String = segment
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                end += name.len();
                let whole = name.len() == segment.len();
                if !name.is_empty() {
                    path.push(name);
                }
                if !whole {
                    break;
                }
                end += 2;
            }
            // `crate::{…}` alone is a `use` tree's, read above.
            if path.len() > 1 {
                out.push(path);
            }
            at = end.min(code.len());
        } else {
            at += word.len();
        }
    }
    out
}

/// The crate's source files as modules: `src/lib.rs` is the root (no segments),
/// `src/workload/mod.rs` is `workload`, `src/workload/contention/locks.rs` is
/// `workload::contention::locks`. Test-only files (`tests.rs`) are left out.
fn modules(root: &Path) -> BTreeMap<Vec<String>, PathBuf> {
    let mut modules = BTreeMap::new();
    for file in rust_files_under(root) {
        if file.ends_with("tests.rs") || file.ends_with("build.rs") {
            continue;
        }
        let relative = file.strip_prefix(root).unwrap().with_extension("");
        let mut path: Vec<String> = relative
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if matches!(
            path.last().map(String::as_str),
            Some("mod" | "lib" | "main")
        ) {
            path.pop();
        }
        modules.insert(path, file);
    }
    modules
}

/// A written path resolved from the module `at`: `super` and `self` taken, a leading child
/// module's name put under `at`; `None` for a path outside the crate.
fn resolve(at: &[String], written: &[String], children: &BTreeSet<String>) -> Option<Vec<String>> {
    let (mut base, mut rest) = match written.first()?.as_str() {
        "crate" | "$crate" => (Vec::new(), &written[1..]),
        "self" => (at.to_vec(), &written[1..]),
        "super" => {
            let mut base = at.to_vec();
            base.pop();
            (base, &written[1..])
        }
        name if children.contains(name) => (at.to_vec(), written),
        _ => return None,
    };
    while rest.first().is_some_and(|s| s == "super") {
        base.pop();
        rest = &rest[1..];
    }
    base.extend(
        rest.iter()
            .filter(|s| *s != "self" && !s.is_empty())
            .cloned(),
    );
    Some(base)
}

/// What the graph needs of a module's file: its code (tests left out), its child modules, the
/// names it defines, and the paths it passes on (`pub use`), resolved.
struct Module {
    file: PathBuf,
    code: String,
    children: BTreeSet<String>,
    defines: BTreeSet<String>,
    passes_on: Vec<Imported>,
}

/// The names a module's code defines at its top level (functions, types, constants, macros).
fn defined_names(code: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in code.lines() {
        let line = line.trim_start();
        let line = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub(super) "))
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        let line = line.strip_prefix("const fn ").map_or(line, |rest| rest);
        let line = line.strip_prefix("unsafe ").unwrap_or(line);
        for keyword in [
            "fn ",
            "struct ",
            "enum ",
            "const ",
            "static ",
            "type ",
            "trait ",
            "mod ",
            "union ",
            "macro_rules! ",
        ] {
            if let Some(rest) = line.strip_prefix(keyword) {
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    names.insert(name);
                }
                if keyword == "fn " {
                    // `pub const fn` was taken above; a `const` here is a constant.
                    break;
                }
            }
        }
    }
    names
}

/// The crate's modules, each read once.
struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
}

impl Crate {
    fn read(root: &Path) -> Crate {
        let files = modules(root);
        let mut modules = BTreeMap::new();
        for (at, file) in &files {
            let children: BTreeSet<String> = files
                .keys()
                .filter(|m| m.len() == at.len() + 1 && m.starts_with(at))
                .map(|m| m.last().unwrap().clone())
                .collect();
            let code = strip(&code_of(file));
            let passes_on = use_trees(&code, true)
                .into_iter()
                .filter_map(|imported| {
                    let path = resolve(at, &imported.path, &children)?;
                    Some(Imported { path, ..imported })
                })
                .collect();
            let module = Module {
                file: file.clone(),
                defines: defined_names(&code),
                children,
                code,
                passes_on,
            };
            modules.insert(at.clone(), module);
        }
        Crate { modules }
    }

    /// The file an item's path leads to: the module that defines it, following the re-exports
    /// (`pub use`, named or glob) of the modules on the way.
    fn land(&self, path: &[String], depth: usize) -> &Path {
        let n = (0..=path.len())
            .rev()
            .find(|n| self.modules.contains_key(&path[..*n]))
            .unwrap();
        let module = &self.modules[&path[..n]];
        let (Some(name), true) = (path.get(n), depth < 8) else {
            return &module.file;
        };
        if module.defines.contains(name) {
            return &module.file;
        }
        let rest = &path[n + 1..];
        for imported in module.passes_on.iter().filter(|i| !i.glob) {
            let last = imported.alias.as_ref().or(imported.path.last());
            if last == Some(name) {
                let mut target = imported.path.clone();
                target.extend(rest.iter().cloned());
                return self.land(&target, depth + 1);
            }
        }
        for imported in module.passes_on.iter().filter(|i| i.glob) {
            let mut target = imported.path.clone();
            target.push(name.clone());
            let landing = self.land(&target, depth + 1);
            let source = self.modules.values().find(|m| m.file == landing);
            if source.is_some_and(|m| m.defines.contains(name)) {
                target.extend(rest.iter().cloned());
                return self.land(&target, depth + 1);
            }
        }
        &module.file
    }

    /// Which file imports which: an edge from every file to each file that defines what its
    /// code names.
    fn graph(&self) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
        let mut graph = BTreeMap::new();
        for (at, module) in &self.modules {
            let mut targets = BTreeSet::new();
            for (scope, code) in scopes(at, &module.code) {
                let children = if scope == *at {
                    module.children.clone()
                } else {
                    BTreeSet::new()
                };
                for written in written_paths(&code, &children) {
                    let Some(path) = resolve(&scope, &written, &children) else {
                        continue;
                    };
                    let landing = self.land(&path, 0);
                    if landing != module.file {
                        targets.insert(landing.to_path_buf());
                    }
                }
            }
            graph.insert(module.file.clone(), targets);
        }
        graph
    }
}

fn import_graph(root: &Path) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    Crate::read(root).graph()
}

/// Every group of files that import each other round a circle (a strongly connected group of
/// two or more), each group sorted.
fn circles(graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>) -> Vec<Vec<PathBuf>> {
    let reaches = |from: &PathBuf| -> BTreeSet<PathBuf> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(file) = stack.pop() {
            for next in graph.get(&file).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reach: BTreeMap<&PathBuf, BTreeSet<PathBuf>> =
        graph.keys().map(|file| (file, reaches(file))).collect();
    let mut groups: Vec<Vec<PathBuf>> = Vec::new();
    for (file, reached) in &reach {
        if !reached.contains(*file) || groups.iter().any(|g| g.contains(file)) {
            continue;
        }
        let group: Vec<PathBuf> = reached
            .iter()
            .filter(|other| reach[other].contains(*file))
            .cloned()
            .collect();
        if group.len() > 1 {
            groups.push(group);
        }
    }
    groups
}

/// A file as messages name it: its path under `src/`.
fn shown(file: &Path) -> String {
    file.strip_prefix(src())
        .unwrap_or(file)
        .display()
        .to_string()
}

/// The module a file belongs to at the top of the crate (`workload`, `sys`, `plan`).
fn top(file: &Path) -> String {
    let relative = file.strip_prefix(src()).unwrap().with_extension("");
    let first = relative.components().next().unwrap();
    first.as_os_str().to_string_lossy().into_owned()
}

/// The workload a file under `workload/` belongs to, as the registry names it.
fn workload_of(file: &Path, workloads: &[String]) -> Option<String> {
    let relative = file.strip_prefix(src().join("workload")).ok()?;
    let first = relative.components().next()?.as_os_str().to_string_lossy();
    let name = first.trim_end_matches(".rs").to_string();
    workloads.contains(&name).then_some(name)
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
fn no_two_files_import_each_other() {
    let groups: Vec<String> = circles(&import_graph(&src()))
        .iter()
        .map(|group| {
            let files: Vec<String> = group.iter().map(|f| shown(f)).collect();
            files.join(", ")
        })
        .collect();
    assert!(
        groups.is_empty(),
        "these files import each other, round a circle: {}; move what they share below them",
        groups.join("; ")
    );
}

/// Every other crate of the workspace keeps the same rule: the binary's commands, the comparison,
/// the fleet's histories and the run selection import one another in one direction (`comparison`
/// ↔ `fleet` was a circle: the selection both used now sits below them in `select.rs`), and so
/// do the store's backends and checks, the report's formats and the analysis' models.
#[test]
fn no_two_files_of_another_crate_import_each_other() {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut checked = Vec::new();
    let mut groups: Vec<String> = Vec::new();
    for entry in fs::read_dir(crates).unwrap() {
        let root = entry.unwrap().path().join("src");
        if !root.is_dir() || root == src() {
            continue;
        }
        checked.push(root.clone());
        for group in circles(&import_graph(&root)) {
            let files: Vec<String> = group
                .iter()
                .map(|f| f.strip_prefix(crates).unwrap_or(f).display().to_string())
                .collect();
            groups.push(files.join(", "));
        }
    }
    assert_eq!(checked.len(), 6, "{checked:?}");
    assert!(
        groups.is_empty(),
        "these files import each other, round a circle: {}; move what they share below them",
        groups.join("; ")
    );
}

#[test]
fn no_workload_names_another() {
    let workloads = registered_workloads();
    for (file, targets) in import_graph(&src()) {
        let Some(workload) = workload_of(&file, &workloads) else {
            continue;
        };
        for target in targets {
            if let Some(other) = workload_of(&target, &workloads).filter(|w| *w != workload) {
                panic!(
                    "{} names the workload `{other}` ({}): what two workloads share belongs in \
                     workload/definition.rs, param.rs, tasks.rs or work_units.rs, or outside \
                     workload/",
                    shown(&file),
                    shown(&target)
                );
            }
        }
    }
}

/// The workloads sit below what plans and reads suites and records runs: a workload file may
/// import only the other files of `workload/` and the modules below them.
#[test]
fn workloads_sit_below_plans_and_suites() {
    let below = [
        "workload",
        "sys",
        "attachment",
        "rng",
        "metric",
        "latency",
        "import",
        "cpu_list",
        "error",
        "fingerprint",
        "words",
    ];
    for (file, targets) in import_graph(&src()) {
        if top(&file) != "workload" {
            continue;
        }
        for target in targets {
            assert!(
                below.contains(&top(&target).as_str()),
                "{} imports {}: a workload sits below it (docs/architecture.md); move what it \
                 needs down, or pass it in",
                shown(&file),
                shown(&target)
            );
        }
    }
}

#[test]
fn leaf_modules_import_only_what_architecture_md_says() {
    let graph = import_graph(&src());
    for (module, allowed) in [
        ("sys", &["sys"][..]),
        ("attachment", &[]),
        ("rng", &[]),
        ("metric", &[]),
        ("words", &[]),
        ("latency", &["attachment"]),
        ("import", &["import", "metric"]),
    ] {
        for (file, targets) in graph.iter().filter(|(file, _)| top(file) == module) {
            let beyond: Vec<String> = targets
                .iter()
                .filter(|target| !allowed.contains(&top(target).as_str()))
                .map(|target| shown(target))
                .collect();
            assert!(
                beyond.is_empty(),
                "{} imports {beyond:?}; docs/architecture.md allows {allowed:?}",
                shown(file)
            );
        }
    }
}

/// From a flag to a workload's parameters nothing travels as JSON keyed by name: the binary's
/// parsing (`workload_flags.rs`, `plan.rs`) hands each flag's declaration and value to the
/// workload's definition, which writes the typed field. Only `workload/keys.rs`, how suite files
/// and stored runs are read, holds serde_json, and the command line does not go through it; the
/// scenario workload's `stored.rs` is the same for its keys, and its `rtapp.rs` reads rt-app's
/// file format, which is JSON (`--file x.json` is read into a typed scenario there).
#[test]
fn no_json_between_the_command_line_and_a_workload() {
    let binary = src().join("../../schedlab/src");
    let mut path: Vec<PathBuf> = vec![binary.join("workload_flags.rs"), binary.join("plan.rs")];
    path.extend(
        rust_files_under(&src().join("workload"))
            .into_iter()
            .filter(|file| {
                ![
                    "workload/keys.rs",
                    "workload/scenario/stored.rs",
                    "workload/scenario/rtapp.rs",
                    "tests.rs",
                ]
                .iter()
                .any(|allowed| file.ends_with(allowed))
            }),
    );
    for file in &path {
        let code = strip(&code_of(file));
        for json in ["serde_json", "Value::Object", "json!"] {
            assert!(
                !code.contains(json),
                "{} uses `{json}` on the way from a flag to a workload's parameters",
                file.display()
            );
        }
    }
    for file in &path[..2] {
        let code = strip(&code_of(file));
        for suite_reading in ["from_keys", "read_keys"] {
            assert!(
                !code.contains(suite_reading),
                "{} reads the command line as suite keys (`{suite_reading}`)",
                file.display()
            );
        }
    }
}

/// The reader sees every import form: grouped `use` trees, paths in code, `super::` chains and
/// a child module named from its parent; not paths in comments or strings.
#[test]
fn the_reader_sees_every_import_form() {
    let children: BTreeSet<String> = ["run".to_string()].into();
    let code = "use crate::{plan, sys::{self, pipe as p}, workload::*};\n\
                pub(crate) use super::semaphore::burn;\n\
                fn f() { super::super::pipe::run(); crate::workload::fanout::X; run::go(); }\n\
                // crate::suite::Suite in a comment\n\
                const S: &str = \"crate::record\";";
    let at: Vec<String> = vec!["workload".into(), "wakeup".into(), "sync".into()];
    let resolved: BTreeSet<Vec<String>> = written_paths(code, &children)
        .iter()
        .filter_map(|written| resolve(&at, written, &children))
        .collect();
    let expect = |path: &str| -> Vec<String> { path.split("::").map(String::from).collect() };
    for path in [
        "plan",
        "sys",
        "sys::pipe",
        "workload",
        "workload::wakeup::semaphore::burn",
        "workload::pipe::run",
        "workload::fanout::X",
        "workload::wakeup::sync::run::go",
    ] {
        assert!(resolved.contains(&expect(path)), "{path}: {resolved:?}");
    }
    for unseen in ["suite", "record"] {
        assert!(
            !resolved
                .iter()
                .any(|p| p.first().is_some_and(|s| s == unseen)),
            "{unseen}: {resolved:?}"
        );
    }
}

/// The circle finder finds a circle of three, and none where there is none.
#[test]
fn the_circle_finder_finds_circles() {
    let edges = |pairs: &[(&str, &str)]| {
        let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
        for (from, to) in pairs {
            graph
                .entry(PathBuf::from(from))
                .or_default()
                .insert(PathBuf::from(to));
            graph.entry(PathBuf::from(to)).or_default();
        }
        graph
    };
    let found = circles(&edges(&[
        ("a", "b"),
        ("b", "c"),
        ("c", "a"),
        ("d", "a"),
        ("e", "e"),
    ]));
    let names = ["a", "b", "c"].map(PathBuf::from).to_vec();
    assert_eq!(found, vec![names]);
    assert!(circles(&edges(&[("a", "b"), ("b", "c"), ("a", "c")])).is_empty());
}
