//! `axe-mem-count`: the M6 CountEntries cases, through the executable.

use serde::Deserialize;

use crate::util::{Env, entries, set_mode, stdout};

#[derive(Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Json {
    agent: Option<String>,
    path: String,
    entries: u64,
    bytes: u64,
}

#[test]
fn missing_and_empty_logs_have_no_entries() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.cmd("axe-mem-count")
        .arg("rev")
        .assert()
        .success()
        .stdout("0\n");
    env.write(&env.log_path("rev"), "");
    env.cmd("axe-mem-count")
        .arg("rev")
        .assert()
        .success()
        .stdout("0\n");
}

#[test]
fn counts_header_lines() {
    let env = Env::new();
    env.memory_agent("rev", "");
    env.write(&env.log_path("rev"), entries(5));
    env.cmd("axe-mem-count")
        .arg("rev")
        .assert()
        .success()
        .stdout("5\n");
}

#[test]
fn text_without_headers_has_no_entries() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.write(&log, "# Title\n### Sub\n##tight\n text ## \n");
    env.cmd("axe-mem-count")
        .args(["--file", log.to_str().unwrap()])
        .assert()
        .success()
        .stdout("0\n");
}

#[test]
fn json_has_entries_and_bytes() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let content = entries(7);
    env.write(&env.log_path("rev"), &content);
    let out = env
        .cmd("axe-mem-count")
        .args(["rev", "--json"])
        .assert()
        .success();
    let json: Json = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        json,
        Json {
            agent: Some("rev".into()),
            path: env.log_path("rev").to_string_lossy().into_owned(),
            entries: 7,
            bytes: content.len() as u64
        }
    );
    let out = env
        .cmd("axe-mem-count")
        .args(["--json", "--file", "missing.md"])
        .assert()
        .success();
    let json: Json = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!((json.agent, json.entries, json.bytes), (None, 0, 0));
}

#[test]
fn unreadable_log_is_exit_1() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.write(&log, entries(2));
    set_mode(&log, 0o000);
    env.unprivileged("axe-mem-count")
        .args(["--file", log.to_str().unwrap()])
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!("open {}: permission denied\n", log.display()));
}
