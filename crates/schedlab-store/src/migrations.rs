//! The schema's migrations, embedded in the binary: each `migrations/<dialect>/V<N>__<name>.sql`
//! file with the version, name and checksum refinery gave it, so the schema histories that older
//! schedlab binaries (which embedded them with refinery) wrote stay valid, and theirs ours.
use std::hash::{Hash, Hasher};

use siphasher::sip::SipHasher13;

/// One embedded migration.
#[derive(Debug)]
pub struct Migration {
    pub version: i64,
    pub name: String,
    pub sql: String,
    pub checksum: u64,
}

impl Migration {
    /// The migration of the file `V<N>__<name>` holding `sql`: its checksum is refinery's (0.10),
    /// SipHash-1-3 of the name, the version as a 32-bit integer and the SQL, each hashed as Rust's
    /// `Hash` does, so every schema history refinery or schedlab wrote matches it.
    pub fn of_file(file: &str, sql: &str) -> Migration {
        let (version, name) = file
            .strip_prefix('V')
            .and_then(|rest| rest.split_once("__"))
            .and_then(|(version, name)| Some((version.parse::<i32>().ok()?, name)))
            .filter(|(version, name)| *version > 0 && !name.is_empty())
            .unwrap_or_else(|| panic!("migration file {file} is not named V<N>__<name>"));
        let mut hasher = SipHasher13::new();
        name.hash(&mut hasher);
        version.hash(&mut hasher);
        sql.hash(&mut hasher);
        Migration {
            version: i64::from(version),
            name: name.to_string(),
            sql: sql.to_string(),
            checksum: hasher.finish(),
        }
    }

    /// The migrations of one dialect's files, by version.
    pub fn all(files: &[(&str, &str)]) -> Vec<Migration> {
        let mut all: Vec<Migration> = files
            .iter()
            .map(|(file, sql)| Migration::of_file(file, sql))
            .collect();
        all.sort_by_key(|m| m.version);
        all
    }
}

/// `(file stem, contents)` of each named file of `migrations/<dialect>/`; a test holds each list
/// to its folder, so a file added there and not here fails it.
macro_rules! files {
    ($dialect:literal: $($file:ident),* $(,)?) => {
        &[$((
            stringify!($file),
            include_str!(concat!("../migrations/", $dialect, "/", stringify!($file), ".sql")),
        )),*]
    };
}

pub const SQLITE: &[(&str, &str)] = files!("sqlite":
    V1__initial, V2__attachments, V3__experiments, V4__calibrations, V5__run_owner,
    V6__partial_status, V7__metric_definitions, V8__run_uuid, V9__run_summaries, V10__probes,
    V11__quiet_guard,
);

// Its tests check both dialects' files in either build; only PostgreSQL's backend embeds these.
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub const POSTGRES: &[(&str, &str)] = files!("postgres":
    V1__initial, V2__attachments, V3__experiments, V4__calibrations, V5__run_owner,
    V6__partial_status, V7__metric_definitions, V8__run_uuid, V9__run_summaries, V10__probes,
    V11__quiet_guard,
);

/// The placeholder V9 some databases recorded ([`crate::schema::retired_v9`]).
pub const RETIRED_V9: (&str, &str) = (
    "V9__reserved_run_summaries",
    include_str!("../migrations/retired/V9__reserved_run_summaries.sql"),
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `.sql` file of the folder is in the list, and nothing else.
    fn listed_as_in(dialect: &str, files: &[(&str, &str)]) {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(dialect);
        let mut found: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter_map(|name| name.strip_suffix(".sql").map(str::to_string))
            .collect();
        found.sort();
        let mut listed: Vec<String> = files.iter().map(|(f, _)| f.to_string()).collect();
        listed.sort();
        assert_eq!(
            listed, found,
            "migrations/{dialect}: list every file in migrations.rs"
        );
    }

    #[test]
    fn every_migration_file_is_embedded() {
        listed_as_in("sqlite", SQLITE);
        listed_as_in("postgres", POSTGRES);
    }

    /// The checksums are refinery's, whose records older schedlab binaries wrote: for every
    /// file of both dialects and the retired one.
    #[test]
    fn checksums_are_refinerys() {
        for &(file, sql) in SQLITE.iter().chain(POSTGRES).chain([&RETIRED_V9]) {
            let ours = Migration::of_file(file, sql);
            let theirs = refinery::Migration::unapplied(file, sql).unwrap();
            assert_eq!(ours.checksum, theirs.checksum(), "{file}");
            assert_eq!(ours.name, theirs.name(), "{file}");
            assert_eq!(ours.version, i64::from(theirs.version()), "{file}");
        }
    }
}
