//! Rebuilds the store when a migration file is added: refinery's `embed_migrations!` lists the
//! directory while compiling, and Cargo by itself only notices changes to files already included.
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
