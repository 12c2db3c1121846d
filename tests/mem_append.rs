//! `axe-mem-append`: the M6 AppendEntry cases, through the executable.

use std::fs;

use predicates::prelude::*;
use serde::Deserialize;

use crate::util::{Env, header_count, mode, read, set_mode, stdout};

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Json {
    agent: Option<String>,
    path: String,
    timestamp: String,
    bytes: u64,
    truncated: bool,
    task_truncated: bool,
    redacted: Vec<serde_json::Value>,
}

fn append(env: &Env, args: &[&str]) -> assert_cmd::assert::Assert {
    env.cmd("axe-mem-append").args(args).assert()
}

#[test]
fn exact_format_with_a_fixed_time() {
    let env = Env::new();
    env.memory_agent("rev", "");
    append(
        &env,
        &[
            "rev",
            "--task",
            "do the thing",
            "--result",
            "it worked",
            "--timestamp",
            "2026-02-28T15:04:05Z",
        ],
    )
    .success()
    .stdout("");
    assert_eq!(
        read(&env.log_path("rev")),
        "## 2026-02-28T15:04:05Z\n**Task:** do the thing\n**Result:** it worked\n\n"
    );
}

#[test]
fn timestamp_is_stored_in_utc() {
    let env = Env::new();
    let log = env.root().join("m.md");
    let log_arg = log.to_str().unwrap();
    append(
        &env,
        &[
            "--file",
            log_arg,
            "--task",
            "t",
            "--timestamp",
            "2026-03-01T01:30:00+02:00",
        ],
    )
    .success();
    assert!(read(&log).starts_with("## 2026-02-28T23:30:00Z\n"));
}

#[test]
fn without_timestamp_it_is_now_in_utc() {
    let env = Env::new();
    let log = env.root().join("m.md");
    let before = time::OffsetDateTime::now_utc()
        .replace_nanosecond(0)
        .unwrap();
    append(&env, &["--file", log.to_str().unwrap(), "--task", "t"]).success();
    let after = time::OffsetDateTime::now_utc();
    let text = read(&log);
    let stamp = text.lines().next().unwrap().strip_prefix("## ").unwrap();
    assert!(stamp.ends_with('Z'), "{stamp}");
    let at =
        time::OffsetDateTime::parse(stamp, &time::format_description::well_known::Rfc3339).unwrap();
    assert!(before <= at && at <= after, "{stamp}");
}

#[test]
fn creates_file_and_directories_with_go_permissions() {
    let env = Env::new();
    env.memory_agent("rev", "");
    append(&env, &["rev", "--task", "t", "--result", "r"]).success();
    let log = env.log_path("rev");
    assert_eq!(header_count(&read(&log)), 1);
    // The test process's umask is 022 under cargo; 0644 and 0755 survive it.
    assert_eq!(mode(&log), 0o644);
    assert_eq!(mode(log.parent().unwrap()), 0o755);
}

#[test]
fn appends_to_an_existing_file() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let log = env.log_path("rev");
    env.write(&log, crate::util::entries(1));
    append(&env, &["rev", "--task", "second", "--result", "r2"]).success();
    let text = read(&log);
    assert!(text.starts_with(&crate::util::entry(0)));
    assert_eq!(header_count(&text), 2);
    assert!(text.contains("**Task:** second\n**Result:** r2\n\n"));
}

#[test]
fn empty_task_and_result_are_none() {
    let env = Env::new();
    let log = env.root().join("m.md");
    append(&env, &["--file", log.to_str().unwrap(), "--task", ""]).success();
    let text = read(&log);
    assert!(
        text.contains("**Task:** (none)\n**Result:** (none)\n\n"),
        "{text}"
    );
}

#[test]
fn result_comes_from_stdin() {
    let env = Env::new();
    env.memory_agent("reviewer", "");
    env.cmd("axe-mem-append")
        .args(["reviewer", "--task", "review PR 42"])
        .write_stdin("looks good\nship it")
        .assert()
        .success();
    assert!(
        read(&env.log_path("reviewer"))
            .ends_with("**Task:** review PR 42\n**Result:** looks good\nship it\n\n")
    );
}

#[test]
fn result_flag_wins_over_stdin() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.cmd("axe-mem-append")
        .args([
            "--file",
            log.to_str().unwrap(),
            "--task",
            "t",
            "--result",
            "flag",
        ])
        .write_stdin("stdin")
        .assert()
        .success();
    assert!(read(&log).contains("**Result:** flag\n"));
}

#[test]
fn result_truncation_at_1000_characters() {
    let env = Env::new();
    let log = env.root().join("m.md");
    let long = "é".repeat(1001);
    let out = env
        .cmd("axe-mem-append")
        .args(["--file", log.to_str().unwrap(), "--task", "t", "--json"])
        .write_stdin(long.clone())
        .assert()
        .success();
    let json: Json = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert!(json.truncated);
    assert!(json.redacted.is_empty(), "nothing to take out");
    assert!(read(&log).ends_with(&format!("**Result:** {}...\n\n", "é".repeat(1000))));

    fs::remove_file(&log).unwrap();
    let exact = "x".repeat(1000);
    append(
        &env,
        &[
            "--file",
            log.to_str().unwrap(),
            "--task",
            "t",
            "--result",
            &exact,
        ],
    )
    .success();
    assert!(read(&log).ends_with(&format!("**Result:** {exact}\n\n")));
}

#[test]
fn huge_stdin_is_consumed_and_cut() {
    let env = Env::new();
    let log = env.root().join("m.md");
    let big = "y".repeat(5 << 20);
    env.cmd("axe-mem-append")
        .args(["--file", log.to_str().unwrap(), "--task", "big"])
        .write_stdin(big)
        .assert()
        .success();
    assert!(read(&log).ends_with(&format!("**Result:** {}...\n\n", "y".repeat(1000))));
}

#[test]
fn task_newlines_become_spaces_and_result_newlines_stay() {
    let env = Env::new();
    let log = env.root().join("m.md");
    append(
        &env,
        &[
            "--file",
            log.to_str().unwrap(),
            "--task",
            "line one\nline two",
            "--result",
            "a\nb\n\nc",
        ],
    )
    .success();
    assert!(read(&log).ends_with("**Task:** line one line two\n**Result:** a\nb\n\nc\n\n"));
}

#[test]
fn result_lines_starting_with_a_header_do_not_split_the_entry() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let result = "Summary below\n## Findings\n- ok\n## Verdict\nship";
    append(&env, &["rev", "--task", "t", "--result", result]).success();
    let text = read(&env.log_path("rev"));
    assert_eq!(header_count(&text), 1, "{text}");
    assert!(text.contains("\n ## Findings\n"), "escaped with one space");
    env.cmd("axe-mem-count").arg("rev").assert().stdout("1\n");
    let out = env
        .cmd("axe-mem-load")
        .args(["rev", "--json"])
        .assert()
        .success();
    let records: Vec<serde_json::Value> = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(records[0]["result"], result, "JSON gives it back unescaped");
}

#[test]
fn non_utf8_input_is_stored_byte_for_byte() {
    let env = Env::new();
    let log = env.root().join("m.md");
    env.cmd("axe-mem-append")
        .args(["--file", log.to_str().unwrap(), "--task", "t"])
        .write_stdin(b"ok \xff\xfe bytes".to_vec())
        .assert()
        .success();
    assert!(
        fs::read(&log)
            .unwrap()
            .ends_with(b"**Result:** ok \xff\xfe bytes\n\n")
    );
}

#[test]
fn json_describes_the_entry() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let out = append(
        &env,
        &[
            "rev",
            "--task",
            "t",
            "--result",
            "r",
            "--timestamp",
            "2026-02-28T15:04:05Z",
            "--json",
        ],
    )
    .success();
    let json: Json = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(json.agent.as_deref(), Some("rev"));
    assert_eq!(json.path, env.log_path("rev").to_string_lossy());
    assert_eq!(json.timestamp, "2026-02-28T15:04:05Z");
    assert_eq!(json.bytes, fs::metadata(env.log_path("rev")).unwrap().len());
    assert!(!json.truncated && !json.task_truncated);
}

#[test]
fn appends_to_a_custom_memory_path() {
    let env = Env::new();
    let custom = env.root().join("custom/log.md");
    env.memory_agent("rev", &format!("path = \"{}\"", custom.display()));
    append(&env, &["rev", "--task", "t"]).success();
    assert_eq!(header_count(&read(&custom)), 1);
    assert!(!env.log_path("rev").exists());
}

#[test]
fn missing_task_is_exit_1() {
    let env = Env::new();
    env.memory_agent("rev", "");
    append(&env, &["rev", "--result", "r"])
        .code(1)
        .stderr("missing required flag --task (or --task-file)\n");
    assert!(!env.log_path("rev").exists());
}

#[test]
fn bad_timestamp_is_exit_1() {
    let env = Env::new();
    env.memory_agent("rev", "");
    append(&env, &["rev", "--task", "t", "--timestamp", "yesterday"])
        .code(1)
        .stderr(predicate::str::starts_with(
            "error parsing flag --timestamp: \"yesterday\"",
        ));
    assert!(!env.log_path("rev").exists());
}

#[test]
fn unwritable_directory_is_exit_1_with_go_message() {
    let env = Env::new();
    let locked = env.root().join("locked");
    fs::create_dir(&locked).unwrap();
    set_mode(&locked, 0o555);
    let log = locked.join("sub/m.md");
    env.unprivileged("axe-mem-append")
        .args(["--file", log.to_str().unwrap(), "--task", "t"])
        .assert()
        .code(1)
        .stderr(format!(
            "failed to create memory directory: mkdir {}: permission denied\n",
            log.parent().unwrap().display()
        ));
    let log = locked.join("m.md");
    env.unprivileged("axe-mem-append")
        .args(["--file", log.to_str().unwrap(), "--task", "t"])
        .assert()
        .code(1)
        .stderr(format!(
            "failed to open memory file: open {}: permission denied\n",
            log.display()
        ));
    assert!(!log.exists());
}

#[test]
fn a_write_that_cannot_finish_leaves_the_log_as_it_was() {
    // A file-size limit lets the first write through in part and refuses
    // the rest: the partial entry must be cut back off.
    let env = Env::new();
    let log = env.root().join("m.md");
    let before = crate::util::entries(12);
    assert!(before.len() < 1024);
    env.write(&log, &before);
    let result = "z".repeat(900);
    let bin = assert_cmd::cargo::cargo_bin("axe-mem-append");
    let script = "trap '' XFSZ; ulimit -f 1; exec \"$0\" \"$@\"";
    assert_cmd::Command::new("bash")
        .args(["-c", script])
        .arg(bin)
        .args([
            "--file",
            log.to_str().unwrap(),
            "--task",
            "t",
            "--result",
            &result,
        ])
        .assert()
        .code(1)
        .stderr(format!(
            "failed to write memory entry: write {}: file too large\n",
            log.display()
        ));
    assert_eq!(read(&log), before);
}

#[test]
fn task_file_is_read_byte_for_byte() {
    let env = Env::new();
    env.memory_agent("rev", "");
    let task = env.root().join("task.txt");
    env.write(&task, "line one\nline two\n\n");
    let task_arg = task.to_str().unwrap();
    append(
        &env,
        &[
            "rev",
            "--task-file",
            task_arg,
            "--result",
            "r",
            "--timestamp",
            "2026-01-01T00:00:00Z",
        ],
    )
    .success();
    assert_eq!(
        read(&env.log_path("rev")),
        "## 2026-01-01T00:00:00Z\n**Task:** line one line two  \n**Result:** r\n\n"
    );
    append(&env, &["rev", "--task", "t", "--task-file", task_arg])
        .code(1)
        .stderr("cannot use both --task and --task-file\n");
    append(&env, &["rev", "--task-file", "/nonexistent/task"])
        .code(1)
        .stderr("failed to read task file /nonexistent/task: no such file or directory\n");
    assert_eq!(header_count(&read(&env.log_path("rev"))), 1);
}
