//! For tests only (this crate's and the binary's): a new, empty database on the PostgreSQL server
//! `scripts/with-postgres` starts, so the store's tests run against SQLite and a real server. A
//! test without a server (plain `cargo test`) is skipped with a notice, unless
//! `SCHEDLAB_REQUIRE_PG` is set, as `scripts/check` sets it: then it fails.
use std::sync::atomic::{AtomicU32, Ordering};

/// The variable naming the test server (a superuser URL of its `postgres` database).
pub const TEST_PG_URL: &str = "SCHEDLAB_TEST_PG_URL";

/// A line for whoever runs the tests; the test harness captures it.
#[allow(clippy::print_stderr)]
fn note(line: &str) {
    eprintln!("{line}");
}

/// A URL of a new, empty database named after `test`, or `None` when no server is configured
/// and none is required.
pub fn fresh_pg_database(test: &str) -> Option<String> {
    let Some(admin) = std::env::var(TEST_PG_URL).ok().filter(|u| !u.is_empty()) else {
        let required = std::env::var_os("SCHEDLAB_REQUIRE_PG").is_some_and(|v| !v.is_empty());
        assert!(
            !required,
            "SCHEDLAB_REQUIRE_PG is set but {TEST_PG_URL} is not: run the tests under \
             scripts/with-postgres (scripts/check does)"
        );
        note(&format!(
            "note: {test} skipped its PostgreSQL half: no {TEST_PG_URL} (see scripts/with-postgres)"
        ));
        return None;
    };
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let suffix: String = test
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    let name = format!(
        "t{}_{}_{suffix}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    );
    let mut client = postgres::Client::connect(&admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot reach the test server {admin}: {e}"));
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap_or_else(|e| panic!("cannot create test database {name}: {e}"));
    Some(with_database(&admin, &name))
}

/// `url` naming database `name` instead of its own.
pub fn with_database(url: &str, name: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((base, query)) => (base, Some(query)),
        None => (url, None),
    };
    let authority_start = base.find("://").map_or(0, |i| i + 3);
    let host_end = base[authority_start..]
        .find('/')
        .map_or(base.len(), |i| authority_start + i);
    let mut out = format!("{}/{name}", &base[..host_end]);
    if let Some(query) = query {
        out.push('?');
        out.push_str(query);
    }
    out
}

/// Another session's `ACCESS EXCLUSIVE` lock on tables of the database at `url`, held until this
/// is dropped: every statement that touches them waits, as behind a migration or `VACUUM FULL`.
pub struct HeldTables(postgres::Client);

impl HeldTables {
    pub fn lock(url: &str, tables: &[&str]) -> HeldTables {
        let mut client = postgres::Client::connect(url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("cannot reach the test server {url}: {e}"));
        client
            .batch_execute(&format!(
                "BEGIN; LOCK TABLE {} IN ACCESS EXCLUSIVE MODE",
                tables.join(", ")
            ))
            .unwrap_or_else(|e| panic!("cannot lock {tables:?}: {e}"));
        HeldTables(client)
    }
}

impl Drop for HeldTables {
    fn drop(&mut self) {
        let _ = self.0.batch_execute("ROLLBACK");
    }
}
