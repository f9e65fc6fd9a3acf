//! Records the git commit schedlab was built from, for the machine fingerprint.
use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|out| out.status.success())
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .map(|s| s.trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".to_string());
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .is_some_and(|status| !status.is_empty());
    let suffix = if dirty { "-dirty" } else { "" };
    println!("cargo:rustc-env=SCHEDLAB_GIT_COMMIT={commit}{suffix}");
    // A commit moves the branch's ref and appends to HEAD's log, not HEAD itself (which names
    // the branch); `--git-path` finds them in a linked worktree too. A path that does not exist
    // would make cargo rerun this script on every build, so only existing ones are named.
    let mut watched = vec![
        "HEAD".to_string(),
        "index".into(),
        "logs/HEAD".into(),
        "packed-refs".into(),
    ];
    watched.extend(git(&["symbolic-ref", "-q", "HEAD"]));
    for name in watched {
        if let Some(path) = git(&["rev-parse", "--git-path", &name]) {
            if Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            }
        }
    }
}
