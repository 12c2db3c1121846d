//! One memory, two doors: what `axe-mcp` serves for a name with no agent
//! file is what every memory executable reads and writes for that name.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::util::{Env, stdout};

/// Runs `axe-mcp NAME` over a pipe, as a client does: the handshake, then
/// one `tools/call` a line; stdin closes after the last, so the server
/// answers each in order and ends. Every call must succeed; their texts.
fn through_mcp(env: &Env, name: &str, calls: &[(&str, Value)]) -> Vec<String> {
    let mut lines = vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ];
    for (i, (tool, arguments)) in calls.iter().enumerate() {
        lines.push(json!({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}));
    }
    let mut child = env
        .std_cmd("axe-mcp")
        .arg(name)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let replies: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(replies.len(), calls.len() + 1, "{replies:?}");
    replies[1..]
        .iter()
        .zip(calls)
        .map(|(r, (tool, _))| {
            assert_eq!(r["result"]["isError"], false, "{tool}: {r}");
            r["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// `bin args...` succeeds; its stdout.
fn shell(env: &Env, bin: &str, args: &[&str], stdin: &str) -> String {
    let out = env
        .cmd(bin)
        .args(args)
        .write_stdin(stdin)
        .assert()
        .success();
    stdout(out.get_output())
}

#[test]
fn what_axe_mcp_writes_for_a_name_without_a_file_every_shell_tool_reads() {
    let env = Env::new();
    through_mcp(
        &env,
        "team",
        &[
            ("remember", json!({"content": "Ada likes tea."})),
            ("reflect", json!({"content": "The team ships on Fridays."})),
            (
                "learn_fact",
                json!({"topic": "deploys", "content": "Deploys are blue-green."}),
            ),
            (
                "state_record",
                json!({"signals": "AXE_MEMORY: KEY_FACT Postgres 16", "task": "main"}),
            ),
            (
                "log_append",
                json!({"task": "review PR 42", "result": "two problems"}),
            ),
        ],
    );
    let data = env.data_dir();
    let recall = shell(&env, "axe-notes-recall", &["team"], "");
    for part in ["Ada likes tea.", "The team ships on Fridays.", "blue-green"] {
        assert!(recall.contains(part), "{part}: {recall}");
    }
    let search = shell(
        &env,
        "axe-notes-search",
        &["--agent", "team", "Fridays"],
        "",
    );
    assert!(search.contains("MEMORY.md"), "{search}");
    let notes = shell(&env, "axe-notes-path", &["team"], "");
    assert_eq!(notes, format!("{}\n", data.join("axe/notes").display()));
    shell(
        &env,
        "axe-notes-prune",
        &["--older-than", "30d", "--dry-run", "team"],
        "",
    );

    let log = data.join("axe/memory/team.md");
    assert_eq!(
        shell(&env, "axe-mem-path", &["team"], ""),
        format!("{}\n", log.display())
    );
    let load = shell(&env, "axe-mem-load", &["team"], "");
    assert!(load.contains("**Task:** review PR 42"), "{load}");
    assert_eq!(shell(&env, "axe-mem-count", &["team"], ""), "1\n");
    shell(&env, "axe-mem-trim", &["--keep", "5", "team"], "");

    let state = data.join("axe/state/team.json");
    assert_eq!(
        shell(&env, "axe-state-path", &["team"], ""),
        format!("{}\n", state.display())
    );
    for bin in ["axe-state-show", "axe-state-context"] {
        let text = shell(&env, bin, &["team"], "");
        assert!(text.contains("Postgres 16"), "{bin}: {text}");
    }
    let block = shell(&env, "axe-context", &["team"], "");
    for part in ["Postgres 16", "Fridays", "review PR 42", "blue-green"] {
        assert!(block.contains(part), "{part}: {block}");
    }
}

#[test]
fn what_the_shell_tools_write_for_a_name_without_a_file_axe_mcp_serves() {
    let env = Env::new();
    shell(&env, "axe-notes-remember", &["team", "Ada likes tea."], "");
    shell(
        &env,
        "axe-notes-reflect",
        &["team"],
        "The team ships on Fridays.\n",
    );
    shell(
        &env,
        "axe-notes-learn",
        &["--agent", "team", "deploys"],
        "Deploys are blue-green.\n",
    );
    shell(
        &env,
        "axe-state-record",
        &["--task", "main", "--success", "team"],
        "",
    );
    shell(
        &env,
        "axe-state-ingest",
        &["team"],
        "AXE_MEMORY: KEY_FACT Postgres 16\n",
    );
    shell(
        &env,
        "axe-mem-append",
        &["--task", "review PR 42", "--result", "two problems", "team"],
        "",
    );
    let texts = through_mcp(
        &env,
        "team",
        &[
            ("recall", json!({})),
            ("state_context", json!({})),
            ("log_recent", json!({})),
        ],
    );
    for part in ["Ada likes tea.", "The team ships on Fridays.", "blue-green"] {
        assert!(texts[0].contains(part), "{part}: {}", texts[0]);
    }
    assert!(texts[1].contains("Postgres 16"), "{}", texts[1]);
    assert!(texts[2].contains("review PR 42"), "{}", texts[2]);
}

#[test]
fn a_name_without_a_file_must_still_be_a_name() {
    let env = Env::new();
    for (bin, args) in [
        ("axe-notes-recall", &[][..]),
        ("axe-notes-remember", &["x"][..]),
        ("axe-state-show", &[][..]),
        ("axe-state-context", &[][..]),
        ("axe-context", &[][..]),
        ("axe-mem-load", &[][..]),
    ] {
        for name in ["../team", "..", "a/b"] {
            env.cmd(bin)
                .arg(name)
                .args(args)
                .assert()
                .code(2)
                .stdout("")
                .stderr(predicates::str::contains("agent name"));
        }
    }
    assert!(!env.data_dir().exists(), "nothing written");
}

#[test]
fn reading_a_name_without_a_file_creates_nothing() {
    let env = Env::new();
    for (bin, args) in [
        ("axe-notes-recall", &["team"][..]),
        ("axe-notes-path", &["team"][..]),
        ("axe-state-show", &["team"][..]),
        ("axe-state-context", &["team"][..]),
        ("axe-state-path", &["team"][..]),
        ("axe-context", &["team"][..]),
        ("axe-mem-load", &["team"][..]),
        ("axe-mem-count", &["team"][..]),
        ("axe-mem-path", &["team"][..]),
    ] {
        env.cmd(bin).args(args).assert().success();
    }
    assert!(!env.data_dir().exists(), "a read must not create memory");
}

/// Flags are read before the agent is, as cobra parsed them first in Go:
/// with a broken agent file (exit 2 when the flags are right), a
/// malformed flag is the error (exit 1), and nothing is read or written.
#[test]
fn a_malformed_flag_is_the_error_before_a_broken_agent() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let env = Env::new();
    env.agent("rev", "name = \n");
    let not_utf8 = OsStr::from_bytes(b"a \xff b");
    let cases: [(&str, Vec<&OsStr>, &str); 12] = [
        (
            "axe-mem-load",
            vec!["--last".as_ref(), "ten".as_ref()],
            "error parsing flag --last: invalid number",
        ),
        (
            "axe-mem-trim",
            vec!["--keep".as_ref(), "ten".as_ref()],
            "error parsing flag --keep: invalid number",
        ),
        (
            "axe-mem-append",
            vec![
                "--task".as_ref(),
                "t".as_ref(),
                "--timestamp".as_ref(),
                "noon".as_ref(),
            ],
            "error parsing flag --timestamp: \"noon\" is not an RFC 3339 time",
        ),
        (
            "axe-state-context",
            vec!["--budget".as_ref(), "ten".as_ref()],
            "error parsing flag --budget: invalid number",
        ),
        (
            "axe-state-show",
            vec!["--task".as_ref(), not_utf8],
            "error parsing flag --task: not valid UTF-8",
        ),
        (
            "axe-state-ingest",
            vec!["--phase".as_ref(), not_utf8],
            "error parsing flag --phase: not valid UTF-8",
        ),
        (
            "axe-state-record",
            vec![
                "--success".as_ref(),
                "--task".as_ref(),
                "t".as_ref(),
                "--pr".as_ref(),
                not_utf8,
            ],
            "error parsing flag --pr: not valid UTF-8",
        ),
        (
            "axe-context",
            vec!["--budget".as_ref(), "ten".as_ref()],
            "error parsing flag --budget: invalid number",
        ),
        (
            "axe-notes-recall",
            vec!["--days".as_ref(), "ten".as_ref()],
            "error parsing flag --days: invalid number",
        ),
        (
            "axe-notes-reflect",
            vec!["--if-match".as_ref(), not_utf8],
            "error parsing flag --if-match: not valid UTF-8",
        ),
        (
            "axe-notes-learn",
            vec![
                "topic".as_ref(),
                "--agent".as_ref(),
                "rev".as_ref(),
                "--if-match".as_ref(),
                not_utf8,
            ],
            "error parsing flag --if-match: not valid UTF-8",
        ),
        (
            "axe-notes-search",
            vec![
                "word".as_ref(),
                "--agent".as_ref(),
                "rev".as_ref(),
                "--timeout".as_ref(),
                "0".as_ref(),
            ],
            "--timeout must be a positive number of seconds",
        ),
    ];
    for (bin, args, want) in cases {
        let agent = match bin {
            "axe-notes-search" | "axe-notes-learn" => None,
            _ => Some("rev"),
        };
        env.cmd(bin)
            .args(agent)
            .args(&args)
            .write_stdin("")
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicates::str::contains(want));
    }
    // The right flags meet the broken agent.
    env.cmd("axe-mem-load")
        .args(["rev", "--last", "1"])
        .assert()
        .code(2);
    assert!(!env.data_dir().exists(), "nothing written");
}
