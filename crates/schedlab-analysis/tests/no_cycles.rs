//! The crate's modules import one another in one direction: no file reaches, through the
//! modules it names, back to itself (`calibration` → `units` → `series` → `calibration` and
//! `model` ↔ `scaling` were such circles). Every form counts: `use crate::a::B`, grouped
//! `use crate::{a, b::C}`, and paths in code (`crate::a::f()`); comments and `#[cfg(test)]`
//! modules do not.
use std::collections::BTreeMap;
use std::path::Path;

/// `source` without comments (string literals are kept; none names a module).
fn without_comments(source: &str) -> String {
    source
        .lines()
        .map(|line| match line.find("//") {
            Some(i) if !line[..i].contains('"') => &line[..i],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `source` up to its first `#[cfg(test)]` module: the tests come last in every file here.
fn without_tests(source: &str) -> &str {
    source
        .find("#[cfg(test)]\nmod ")
        .map_or(source, |i| &source[..i])
}

/// The crate's top-level modules that `code` names.
fn imports(code: &str, modules: &[String]) -> Vec<String> {
    let mut found = Vec::new();
    let mut add = |name: &str| {
        if modules.iter().any(|m| m == name) && !found.iter().any(|f: &String| f == name) {
            found.push(name.to_string());
        }
    };
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // A grouped import: every path at the group's top level.
            let end = group.find("};").unwrap_or(group.len());
            let mut depth = 0;
            let mut start = 0;
            for (k, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        add(first_segment(&group[start..k]));
                        start = k + 1;
                    }
                    _ => {}
                }
            }
            add(first_segment(&group[start..end]));
        } else {
            add(first_segment(rest));
        }
    }
    found
}

fn first_segment(path: &str) -> &str {
    let path = path.trim_start();
    let end = path
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(path.len());
    &path[..end]
}

/// Each top-level module's imports of the others, from the files under `src`.
fn graph(src: &Path) -> BTreeMap<String, Vec<String>> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(src).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_stem().unwrap().to_str().unwrap().to_string();
        if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "testutil" {
            files.push((name, std::fs::read_to_string(&path).unwrap()));
        }
    }
    let modules: Vec<String> = files.iter().map(|(n, _)| n.clone()).collect();
    files
        .iter()
        .map(|(name, text)| {
            let code = without_comments(without_tests(text));
            let mut to = imports(&code, &modules);
            to.retain(|m| m != name);
            (name.clone(), to)
        })
        .collect()
}

/// A circle through `graph`, as the modules along it, if there is one.
fn circle(graph: &BTreeMap<String, Vec<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, Vec<String>>,
        path: &mut Vec<String>,
        done: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut found = path[i..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if done.iter().any(|d| d == node) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(next, graph, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.push(node.to_string());
        None
    }
    let mut done = Vec::new();
    graph
        .keys()
        .find_map(|start| visit(start, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_module_of_the_analysis_reaches_back_to_itself() {
    let g = graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"));
    assert!(g["compare"].contains(&"model".to_string()), "{g:?}");
    assert_eq!(circle(&g), None, "{g:#?}");
}

#[test]
fn every_import_form_counts_and_a_circle_is_found() {
    let modules: Vec<String> = ["a", "b", "c"].map(String::from).to_vec();
    let code = "use crate::{a::X, b};\n// crate::c in a comment\nfn f() { crate::c::g() }";
    assert_eq!(imports(&without_comments(code), &modules), ["a", "b", "c"]);
    let g: BTreeMap<String, Vec<String>> = [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.into_iter().map(String::from).collect()))
        .collect();
    assert_eq!(circle(&g).unwrap(), ["a", "b", "c", "a"]);
}
