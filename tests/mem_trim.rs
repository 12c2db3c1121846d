//! `axe-mem-trim`: the M7 TrimEntries cases and the trim-target rule,
//! through the executable.

use std::fs;

use serde::Deserialize;

use crate::util::{Env, entries, entry, header_count, mode, read, set_mode, stdout};

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Json {
    agent: Option<String>,
    path: String,
    keep: u64,
    trimmed: bool,
    kept: u64,
    removed: Option<u64>,
    removed_bytes: u64,
}

fn trim(env: &Env, args: &[&str]) -> String {
    let out = env.cmd("axe-mem-trim").args(args).assert().success();
    stdout(out.get_output())
}

fn trim_json(env: &Env, args: &[&str]) -> Json {
    serde_json::from_str(&trim(env, &[args, &["--json"]].concat())).unwrap()
}

#[test]
fn missing_log_needs_no_trimming() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 5");
    assert_eq!(
        trim(&env, &["rev"]),
        "No trimming needed: 0 entries within limit (5).\n"
    );
    assert!(!env.log_path("rev").exists());
}

#[test]
fn empty_log_stays_empty() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 5");
    env.write(&env.log_path("rev"), "");
    assert_eq!(
        trim(&env, &["rev"]),
        "No trimming needed: 0 entries within limit (5).\n"
    );
    assert_eq!(read(&env.log_path("rev")), "");
}

#[test]
fn keep_zero_keeps_everything() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 2");
    env.write(&env.log_path("rev"), entries(5));
    assert_eq!(
        trim(&env, &["rev", "--keep", "0"]),
        "No trimming needed: --keep 0 keeps all 5 entries.\n"
    );
    assert_eq!(read(&env.log_path("rev")), entries(5));
}

#[test]
fn negative_keep_is_exit_1() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.write(&env.log_path("rev"), entries(5));
    env.cmd("axe-mem-trim")
        .args(["rev", "--keep", "-1"])
        .assert()
        .code(1)
        .stderr("--keep must be non-negative\n");
    assert_eq!(read(&env.log_path("rev")), entries(5));
}

#[test]
fn within_and_equal_to_the_limit_leave_the_file_alone() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let log = env.log_path("rev");
    for (n, keep, message) in [
        (3, "5", "No trimming needed: 3 entries within limit (5).\n"),
        (5, "5", "No trimming needed: 5 entries within limit (5).\n"),
        (1, "1", "No trimming needed: 1 entries within limit (1).\n"),
    ] {
        env.write(&log, entries(n));
        assert_eq!(trim(&env, &["rev", "--keep", keep]), message);
        assert_eq!(read(&log), entries(n));
    }
}

#[test]
fn trims_old_entries_to_what_load_returned() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let log = env.log_path("rev");
    env.write(&log, entries(10));
    let last3 = stdout(
        env.cmd("axe-mem-load")
            .args(["rev", "--last", "3"])
            .assert()
            .get_output(),
    );
    assert_eq!(
        trim(&env, &["rev", "--keep", "3", "--count"]),
        "Trimmed: 7 entries removed, 3 entries kept.\n"
    );
    assert_eq!(read(&log), last3);
    assert_eq!(read(&log), entry(7) + &entry(8) + &entry(9));
}

#[test]
fn without_count_the_bytes_removed_are_reported() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.write(&env.log_path("rev"), entries(10));
    let removed: usize = (0..7).map(|i| entry(i).len()).sum();
    assert_eq!(
        trim(&env, &["rev", "--keep", "3"]),
        format!("Trimmed: {removed} bytes removed, 3 entries kept.\n")
    );
}

#[test]
fn preserves_entry_format() {
    let env = Env::new();
    let log = env.root().join("m.md");
    let keep = "## b\n**Task:** t\n**Result:** multi\n\n  indented\n\n\n## c\n**Task:** t\n**Result:** tabs\there  \n\n";
    env.write(&log, format!("## a\n**Task:** t\n**Result:** x\n\n{keep}"));
    trim(&env, &["--file", log.to_str().unwrap(), "--keep", "2"]);
    assert_eq!(read(&log), keep);
}

#[test]
fn discards_text_before_the_first_entry() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.write(&log, format!("# My agent's log\n\n{}", entries(5)));
    trim(&env, &["--file", log.to_str().unwrap(), "--keep", "3"]);
    assert_eq!(read(&log), entries(5)[entry(0).len() * 2..]);
}

#[test]
fn default_target_is_last_n_then_max_entries() {
    let env = Env::new();
    for (name, memory, kept) in [
        ("both", "last_n = 5\nmax_entries = 100", 5),
        ("last", "last_n = 5", 5),
        ("max", "max_entries = 7", 7),
        ("bigger_last", "last_n = 8\nmax_entries = 3", 8),
    ] {
        env.memory_agent(name, memory);
        env.write(&env.log_path(name), entries(20));
        assert_eq!(
            trim(&env, &[name, "--count"]),
            format!(
                "Trimmed: {} entries removed, {kept} entries kept.\n",
                20 - kept
            )
        );
        assert_eq!(header_count(&read(&env.log_path(name))), kept);
    }
}

#[test]
fn no_target_configured_skips_the_trim() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.write(&env.log_path("rev"), entries(10));
    assert_eq!(
        trim(&env, &["rev"]),
        "No trim target configured (last_n and max_entries are both 0). Skipping trim.\n"
    );
    assert_eq!(read(&env.log_path("rev")), entries(10));
    let json = trim_json(&env, &["rev"]);
    assert_eq!((json.keep, json.trimmed, json.kept), (0, false, 10));
}

#[test]
fn file_needs_an_explicit_keep() {
    let env = Env::new();
    env.cmd("axe-mem-trim")
        .args(["--file", "m.md"])
        .assert()
        .code(1)
        .stderr("--keep is required with --file\n");
}

#[test]
fn json_reports_the_figures() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 4");
    let log = env.log_path("rev");
    env.write(&log, entries(10));
    let removed_bytes: usize = (0..6).map(|i| entry(i).len()).sum();
    assert_eq!(
        trim_json(&env, &["rev", "--count"]),
        Json {
            agent: Some("rev".into()),
            path: log.to_string_lossy().into_owned(),
            keep: 4,
            trimmed: true,
            kept: 4,
            removed: Some(6),
            removed_bytes: removed_bytes as u64,
        }
    );
    let again = trim_json(&env, &["rev"]);
    assert_eq!(
        (
            again.trimmed,
            again.kept,
            again.removed,
            again.removed_bytes
        ),
        (false, 4, Some(0), 0)
    );
    env.write(&log, entries(10));
    assert_eq!(trim_json(&env, &["rev"]).removed, None, "not counted");
}

#[test]
fn keeps_the_log_mode_and_leaves_no_temporary_files() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 2");
    let log = env.log_path("rev");
    env.write(&log, entries(10));
    set_mode(&log, 0o600);
    trim(&env, &["rev"]);
    assert_eq!(mode(&log), 0o600);
    let names: Vec<_> = fs::read_dir(log.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["rev.md"]);
}

#[test]
fn original_unmodified_when_the_new_file_cannot_be_written() {
    let env = Env::new();
    let dir = env.root().join("ro");
    let log = dir.join("m.md");
    env.write(&log, entries(5));
    set_mode(&log, 0o666);
    set_mode(&dir, 0o555);
    env.unprivileged("axe-mem-trim")
        .args(["--file", log.to_str().unwrap(), "--keep", "2"])
        .assert()
        .code(1)
        .stderr(predicates::str::starts_with(format!(
            "failed to trim memory file: replace {}: permission denied",
            log.display()
        )));
    set_mode(&dir, 0o755);
    assert_eq!(read(&log), entries(5));
    assert_eq!(
        fs::read_dir(&dir).unwrap().count(),
        1,
        "nothing left behind"
    );
}

#[test]
fn unreadable_log_is_exit_1() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.write(&log, entries(5));
    set_mode(&log, 0o000);
    env.unprivileged("axe-mem-trim")
        .args(["--file", log.to_str().unwrap(), "--keep", "2"])
        .assert()
        .code(1)
        .stderr(format!(
            "failed to trim memory file: open {}: permission denied\n",
            log.display()
        ));
}
