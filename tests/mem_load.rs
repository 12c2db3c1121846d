//! `axe-mem-load`: the M6 LoadEntries cases, through the executable.

use std::io::Read;
use std::process::Stdio;

use serde::Deserialize;

use crate::util::{Env, entries, entry, read, set_mode, stdout};

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Record {
    timestamp: String,
    task: Option<String>,
    result: String,
}

fn load(env: &Env, args: &[&str]) -> String {
    let out = env.cmd("axe-mem-load").args(args).assert().success();
    stdout(out.get_output())
}

fn load_json(env: &Env, args: &[&str]) -> Vec<Record> {
    let text = load(env, &[args, &["--json"]].concat());
    assert!(text.ends_with("]\n") && text.lines().count() == 1, "{text}");
    serde_json::from_str(&text).unwrap()
}

#[test]
fn missing_and_empty_logs_print_nothing() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 3");
    assert_eq!(load(&env, &["rev"]), "");
    assert_eq!(load_json(&env, &["rev"]), []);
    env.write(&env.log_path("rev"), "");
    assert_eq!(load(&env, &["rev", "--last", "0"]), "");
    assert_eq!(load_json(&env, &["rev"]), []);
}

#[test]
fn last_zero_prints_the_whole_file() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let content = format!("# notes before\n\n{}", entries(3));
    env.write(&env.log_path("rev"), &content);
    assert_eq!(load(&env, &["rev"]), content, "agent's last_n is 0");
    assert_eq!(load(&env, &["rev", "--last", "0"]), content);
}

#[test]
fn last_n_prints_the_last_entries() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.write(&env.log_path("rev"), entries(5));
    assert_eq!(load(&env, &["rev", "--last", "2"]), entry(3) + &entry(4));
    assert_eq!(load(&env, &["rev", "-n", "1"]), entry(4));
    assert_eq!(load(&env, &["rev", "--last=10"]), entries(5));
}

#[test]
fn default_count_is_the_agents_last_n() {
    let env = Env::new();
    env.memory_agent("rev", "last_n = 2");
    env.write(&env.log_path("rev"), entries(5));
    assert_eq!(load(&env, &["rev"]), entry(3) + &entry(4));
    assert_eq!(
        load(&env, &["rev", "--last", "3"]),
        entries(5)[entry(0).len() * 2..]
    );
}

#[test]
fn content_before_the_first_entry() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.write(&log, format!("preamble\n{}", entries(2)));
    let file = log.to_str().unwrap();
    assert_eq!(load(&env, &["--file", file, "--last", "2"]), entries(2));
    assert_eq!(
        load(&env, &["--file", file]),
        format!("preamble\n{}", entries(2))
    );
    let records = load_json(&env, &["--file", file]);
    assert_eq!(records.len(), 2, "the preamble is not an entry");
}

#[test]
fn json_gives_each_entry_in_parts() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.write(
        &env.log_path("rev"),
        format!("{}## note\nhand written\n\n", entries(2)),
    );
    assert_eq!(
        load_json(&env, &["rev"]),
        [
            Record {
                timestamp: "2026-01-01T00:00:00Z".into(),
                task: Some("task 0".into()),
                result: "result 0".into()
            },
            Record {
                timestamp: "2026-01-01T00:01:00Z".into(),
                task: Some("task 1".into()),
                result: "result 1".into()
            },
            Record {
                timestamp: "note".into(),
                task: None,
                result: "hand written".into()
            },
        ]
    );
    assert_eq!(load_json(&env, &["rev", "--last", "1"]).len(), 1);
}

#[test]
fn go_written_logs_read_back_exactly() {
    // What the Go axe wrote for a multi-line result and a truncated one.
    let env = Env::new();
    env.memory_agent("rev", "");
    let go = format!(
        "## 2026-02-28T15:04:05Z\n**Task:** review\n**Result:** line 1\nline 2\n\n## 2026-02-28T16:00:00Z\n**Task:** (none)\n**Result:** {}...\n\n",
        "x".repeat(1000)
    );
    env.write(&env.log_path("rev"), &go);
    assert_eq!(load(&env, &["rev"]), go);
    let records = load_json(&env, &["rev"]);
    assert_eq!(records[0].result, "line 1\nline 2");
    assert_eq!(records[1].task.as_deref(), Some("(none)"));
    assert_eq!(records[1].result.len(), 1003);
}

#[test]
fn bytes_that_are_not_utf8_are_printed_as_they_are() {
    let env = Env::new();
    let log = env.root().join("m.md");
    let content = b"## \xff\n**Task:** \xfe\n**Result:** \x80\n\n".to_vec();
    env.write(&log, &content);
    let out = env
        .cmd("axe-mem-load")
        .args(["--file", log.to_str().unwrap(), "--last", "1"])
        .assert()
        .success();
    assert_eq!(out.get_output().stdout, content);
    let out = env
        .cmd("axe-mem-load")
        .args(["--file", log.to_str().unwrap(), "--json"])
        .assert()
        .success();
    let records: Vec<Record> = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(records[0].timestamp, "\u{fffd}");
}

#[test]
fn unreadable_log_is_exit_1_with_go_message() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.write(&log, entries(2));
    set_mode(&log, 0o000);
    env.unprivileged("axe-mem-load")
        .args(["--file", log.to_str().unwrap()])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("open {}: permission denied\n", log.display()));
}

#[test]
fn a_directory_is_not_a_log() {
    let env = Env::new();
    env.cmd("axe-mem-load")
        .args(["--file", env.root().to_str().unwrap()])
        .assert()
        .code(1)
        .stderr(format!("read {}: is a directory\n", env.root().display()));
}

#[test]
fn bad_last_value_is_exit_1() {
    let env = Env::new();
    env.memory_agent("rev", "");
    for bad in ["-1", "ten", ""] {
        env.cmd("axe-mem-load")
            .args(["rev", "--last", bad])
            .assert()
            .code(1)
            .stderr(format!(
                "error parsing flag --last: invalid number \"{bad}\"\n"
            ));
    }
}

#[test]
fn a_closed_pipe_ends_quietly_with_success() {
    let env = Env::new();
    let log = env.root().join("big.md");
    env.write(&log, entries(100).repeat(500));
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("axe-mem-load"))
        .args(["--file", log.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // The pipe's read end is dropped here, like `| head -c 16`.
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out.status);
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(&first, b"## 2026-01-01T00");
}

#[test]
fn reads_the_custom_path_of_an_agent() {
    let env = Env::new();
    let custom = env.root().join("custom.md");
    env.memory_agent("rev", &format!("path = \"{}\"", custom.display()));
    env.write(&custom, entries(1));
    assert_eq!(load(&env, &["rev"]), read(&custom));
}
