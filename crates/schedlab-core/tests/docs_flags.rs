//! docs/cli.md's flag table of every workload is generated from the workload's definition, the
//! one that builds its flags and help: this test fails when the file differs, naming the
//! workload, and `UPDATE_DOCS=1 cargo test -p schedlab-core --test docs_flags` rewrites the tables.
use schedlab_core::workload::WORKLOADS;

fn begin(name: &str) -> String {
    format!("<!-- flags of {name}: generated from its definition (crates/schedlab-core/tests/docs_flags.rs) -->\n")
}

fn end(name: &str) -> String {
    format!("<!-- end of flags of {name} -->")
}

#[test]
fn docs_flag_tables_are_the_definitions() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/cli.md");
    let mut text = std::fs::read_to_string(path).unwrap();
    let update = std::env::var_os("UPDATE_DOCS").is_some();
    let mut stale = Vec::new();
    for definition in WORKLOADS {
        let (begin, end) = (begin(definition.name), end(definition.name));
        let start = text
            .find(&begin)
            .unwrap_or_else(|| panic!("docs/cli.md has no `{}` block", begin.trim()))
            + begin.len();
        let stop = start
            + text[start..]
                .find(&end)
                .unwrap_or_else(|| panic!("docs/cli.md: no `{end}`"));
        let generated = definition.markdown_flags();
        if text[start..stop] != generated {
            stale.push(definition.name);
            text.replace_range(start..stop, &generated);
        }
    }
    if update {
        std::fs::write(path, text).unwrap();
    } else {
        assert!(
            stale.is_empty(),
            "docs/cli.md's flag tables of {stale:?} differ from the definitions; run \
             UPDATE_DOCS=1 cargo test -p schedlab-core --test docs_flags"
        );
    }
}
