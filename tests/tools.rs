//! `axe-run` with built-in tools (`tools = [...]`): the local provider
//! scripts the model's calls, and the results it is sent back are checked
//! against Go's messages and shapes; artifacts, `tool_call_details`, `-v`
//! lines, `--dry-run`, `web_search` against a local Tavily, and an agent
//! file as the Go version's documentation writes one.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::run::run;
use crate::server::{Answer, Server};
use crate::util::{Env, stdout};
use crate::wire::anthropic_reply;

/// A reply of the model calling `calls` (tool name, input), ids `t0`...
pub fn calls(calls: &[(&str, Value)]) -> Answer {
    let content: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (name, input))| json!({"type": "tool_use", "id": format!("t{i}"), "name": name, "input": input}))
        .collect();
    Answer::json(
        200,
        &json!({"model": "claude-test", "content": content, "stop_reason": "tool_use",
                "usage": {"input_tokens": 5, "output_tokens": 3}}),
    )
}

/// A server that makes each call of `turns` in its own turn, then answers
/// "done".
pub fn script(turns: Vec<Vec<(&str, Value)>>) -> Server {
    let mut answers: Vec<Answer> = turns.iter().map(|t| calls(t)).collect();
    answers.push(Answer::json(200, &anthropic_reply("done")));
    Server::start(answers)
}

/// `(content, is_error)` of every result sent back after turn `turn`
/// (from 0).
pub fn results(server: &Server, turn: usize) -> Vec<(String, bool)> {
    crate::notes::tool_results(&server.requests()[turn + 1])
}

/// The one result of a one-call run.
pub fn only_result(server: &Server) -> (String, bool) {
    results(server, 0).remove(0)
}

/// Agent `a` working in `<root>/work` with `tools` (a TOML list's inside)
/// and `extra` lines; the workdir is made and returned.
pub fn tool_agent(env: &Env, tools: &str, extra: &str) -> PathBuf {
    let work = env.root().join("work");
    fs::create_dir_all(&work).unwrap();
    env.agent_file("a")
        .workdir(&work)
        .tools(tools)
        .toml(extra)
        .write();
    work
}

/// Runs agent `a` against `server`, successfully, with `args`; its stdout
/// and stderr.
pub fn run_a(env: &Env, server: &Server, args: &[&str]) -> (String, String) {
    let out = run(env, &server.url).arg("a").args(args).assert().success();
    let output = out.get_output();
    (
        stdout(output),
        String::from_utf8(output.stderr.clone()).unwrap(),
    )
}

fn names_offered(server: &Server) -> Vec<String> {
    server.requests()[0].json()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn an_unknown_tool_is_a_config_error_naming_it() {
    let env = Env::new();
    tool_agent(&env, "\"read_file\", \"rm_rf\"", "");
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "unknown tool \"rm_rf\" in tools config",
        ));
}

#[test]
fn file_tools_write_read_list_and_edit_with_gos_results() {
    let env = Env::new();
    let work = tool_agent(
        &env,
        "\"list_directory\", \"read_file\", \"write_file\", \"edit_file\"",
        "",
    );
    fs::write(work.join("bin"), b"\x7fELF\0\0\x01").unwrap();
    let server = script(vec![
        vec![(
            "write_file",
            json!({"path": "notes/deep/todo.txt", "content": "one\ntwo\nthree\ntwo\n"}),
        )],
        vec![
            (
                "read_file",
                json!({"path": "notes/deep/todo.txt", "offset": 2, "limit": 2}),
            ),
            (
                "read_file",
                json!({"path": "notes/deep/todo.txt", "offset": 9}),
            ),
            ("read_file", json!({"path": "bin"})),
            ("read_file", json!({"path": "notes"})),
            ("list_directory", json!({"path": "."})),
            ("read_file", json!({"path": "missing.txt"})),
        ],
        vec![(
            "edit_file",
            json!({"path": "notes/deep/todo.txt", "old_string": "two", "new_string": "2"}),
        )],
        vec![(
            "edit_file",
            json!({"path": "notes/deep/todo.txt", "old_string": "two", "new_string": "2", "replace_all": true}),
        )],
        vec![(
            "edit_file",
            json!({"path": "notes/deep/todo.txt", "old_string": "zzz", "new_string": "y"}),
        )],
    ]);
    let (out, _) = run_a(&env, &server, &[]);
    assert_eq!(out, "done");
    assert_eq!(
        names_offered(&server),
        ["list_directory", "read_file", "write_file", "edit_file"]
    );
    assert_eq!(
        only_result(&server),
        ("wrote 18 bytes to notes/deep/todo.txt".into(), false)
    );
    assert_eq!(
        results(&server, 1),
        [
            ("2: two\n3: three".into(), false),
            ("offset 9 exceeds file length of 4 lines".into(), true),
            ("binary file detected".into(), true),
            ("path is a directory, not a file".into(), true),
            ("bin\nnotes/".into(), false),
            ("open missing.txt: no such file or directory".into(), true),
        ]
    );
    assert_eq!(
        results(&server, 2),
        [(
            "old_string found 2 times; set replace_all to true or provide a more unique string"
                .into(),
            true
        )]
    );
    assert_eq!(
        results(&server, 3),
        [(
            "replaced 2 occurrence(s) in notes/deep/todo.txt".into(),
            false
        )]
    );
    assert_eq!(
        results(&server, 4),
        [("old_string not found in file".into(), true)]
    );
    assert_eq!(
        fs::read_to_string(work.join("notes/deep/todo.txt")).unwrap(),
        "one\n2\nthree\n2\n"
    );
}

#[test]
fn json_lists_every_call_with_its_turn_and_cut_output() {
    let env = Env::new();
    let work = tool_agent(&env, "\"read_file\"", "");
    fs::write(work.join("long.txt"), "x".repeat(3000)).unwrap();
    let server = script(vec![
        vec![("read_file", json!({"path": "long.txt"}))],
        vec![("read_file", json!({"path": "/etc/passwd"}))],
    ]);
    let (out, _) = run_a(&env, &server, &["--json"]);
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["tool_calls"], 2);
    let details = doc["tool_call_details"].as_array().unwrap();
    assert_eq!(details.len(), 2);
    let first = &details[0];
    assert_eq!(first["name"], "read_file");
    assert_eq!(first["input"], json!({"path": "long.txt"}));
    assert_eq!(
        (first["turn"].clone(), first["is_error"].clone()),
        (json!(0), json!(false))
    );
    let output = first["output"].as_str().unwrap();
    assert_eq!(output, format!("1: {}... (truncated)", "x".repeat(1021)));
    assert!(first["duration_ms"].is_u64());
    assert_eq!(
        (
            details[1]["turn"].clone(),
            details[1]["is_error"].clone(),
            details[1]["output"].clone()
        ),
        (
            json!(1),
            json!(true),
            json!("absolute paths are not allowed")
        )
    );
    assert_eq!(doc["artifacts"], json!([]));
}

#[test]
fn a_result_with_terminal_escapes_is_escaped_on_stderr_and_exact_in_json() {
    let env = Env::new();
    let work = tool_agent(&env, "\"read_file\"", "");
    fs::write(work.join("evil.txt"), "\x1b]0;pwned\x07\x1b[2J").unwrap();
    let server = script(vec![vec![("read_file", json!({"path": "evil.txt"}))]]);
    let (out, err) = run_a(&env, &server, &["--json", "-v"]);
    assert!(
        !err.contains('\x1b'),
        "a raw escape reached the terminal: {err:?}"
    );
    assert!(
        err.contains("[tool] read_file {\"path\":\"evil.txt\"} (success, ")
            && err.contains("): 1: \\x1b]0;pwned\\x07\\x1b[2J"),
        "{err}"
    );
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        doc["tool_call_details"][0]["output"],
        "1: \x1b]0;pwned\x07\x1b[2J"
    );
    assert_eq!(only_result(&server).0, "1: \x1b]0;pwned\x07\x1b[2J");
}

#[test]
fn run_command_runs_in_the_workdir_with_gos_results() {
    let env = Env::new();
    let work = tool_agent(&env, "\"run_command\"", "");
    fs::write(work.join("in.txt"), "hello\n").unwrap();
    let server = script(vec![vec![
        ("run_command", json!({"command": "cat in.txt; pwd"})),
        ("run_command", json!({"command": "echo boom >&2; exit 3"})),
        (
            "run_command",
            json!({"command": "head -c 200000 /dev/zero | tr '\\0' a"}),
        ),
        ("run_command", json!({"command": ""})),
    ]]);
    run_a(&env, &server, &[]);
    let got = results(&server, 0);
    assert_eq!(got[0], (format!("hello\n{}\n", work.display()), false));
    assert_eq!(got[1], ("exit code 3\nboom\n".into(), true));
    let long = &got[2].0;
    assert_eq!(
        long,
        &format!(
            "{}\n... [output truncated, exceeded 100KB]",
            "a".repeat(102_400)
        )
    );
    assert_eq!(got[3], ("command is required".into(), true));
}

/// Processes whose command line holds `marker`.
pub fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmdline) = fs::read(entry.path().join("cmdline")) {
            let line = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if line.contains(marker) && !line.contains("cargo") {
                found.push(line);
            }
        }
    }
    found
}

/// A `PATH` of the programs the tests' commands use, without
/// bubblewrap.
pub fn path_without_bwrap(env: &Env) -> PathBuf {
    let bin = env.root().join("bin");
    fs::create_dir_all(&bin).unwrap();
    for program in ["sh", "cat", "echo", "printf", "sleep"] {
        let found = ["/bin", "/usr/bin"]
            .iter()
            .map(|d| Path::new(d).join(program))
            .find(|p| p.exists())
            .unwrap();
        symlink(found, bin.join(program)).unwrap();
    }
    bin
}

#[test]
fn nothing_a_command_started_outlives_it_or_the_deadline() {
    // Inside bubblewrap where it works, and with the plain process group.
    for (i, plain) in [false, true].into_iter().enumerate() {
        let env = Env::new();
        tool_agent(&env, "\"run_command\"", "");
        // A background child outliving its shell, then a command that
        // would outlive the run: both are gone when axe-run is.
        // Markers of this test process alone: another test binary on the
        // machine (a second checkout's) may run the same test meanwhile.
        let pid = std::process::id();
        let (child, long) = (
            format!("sleep 1000.{pid}424{i}"),
            format!("sleep 1000.{pid}434{i}"),
        );
        let server = script(vec![
            vec![(
                "run_command",
                json!({"command": format!("{child} & echo started")}),
            )],
            vec![("run_command", json!({"command": long}))],
        ]);
        let mut cmd = run(&env, &server.url);
        if plain {
            cmd.env("PATH", path_without_bwrap(&env));
        }
        let out = cmd.args(["a", "--timeout", "3"]).assert().code(3);
        assert_eq!(only_result(&server), ("started\n".into(), false));
        assert!(
            processes_with(&child).is_empty(),
            "the background child survived"
        );
        assert!(
            processes_with(&long).is_empty(),
            "the command outlived the deadline ({plain}): {:?}",
            processes_with(&long)
        );
        let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
        assert!(err.contains("timeout"), "{err}");
    }
}

#[test]
fn artifacts_go_to_a_run_directory_removed_unless_kept() {
    let env = Env::new();
    let work = tool_agent(
        &env,
        "\"write_file\", \"read_file\", \"list_directory\"",
        "[artifacts]\nenabled = true",
    );
    let turns = || {
        script(vec![
            vec![(
                "write_file",
                json!({"path": "report/summary.md", "content": "# Sum", "artifact": true}),
            )],
            vec![
                (
                    "read_file",
                    json!({"path": "report/summary.md", "artifact": true}),
                ),
                ("list_directory", json!({"path": ".", "artifact": true})),
                ("read_file", json!({"path": "../x", "artifact": true})),
                ("write_file", json!({"path": "plain.txt", "content": "w"})),
            ],
        ])
    };
    let cache = env.root().join("cache");
    let server = turns();
    let out = run(&env, &server.url)
        .env("XDG_CACHE_HOME", &cache)
        .args(["a", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        doc["artifacts"],
        json!([{"path": "report/summary.md", "agent": "a", "size": 5}])
    );
    assert_eq!(
        only_result(&server),
        (
            "wrote 5 bytes to report/summary.md (artifact)".into(),
            false
        )
    );
    assert_eq!(
        results(&server, 1),
        [
            ("1: # Sum".into(), false),
            ("report/".into(), false),
            ("path escapes artifact directory".into(), true),
            ("wrote 1 bytes to plain.txt".into(), false),
        ]
    );
    assert!(work.join("plain.txt").exists());
    let runs = cache.join("axe/artifacts");
    assert_eq!(
        fs::read_dir(&runs).unwrap().count(),
        0,
        "the run's directory was left"
    );

    // Kept: said, and there.
    let server = turns();
    let out = run(&env, &server.url)
        .env("XDG_CACHE_HOME", &cache)
        .args(["a", "--keep-artifacts"])
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let kept = err
        .lines()
        .find_map(|l| l.strip_prefix("artifacts preserved: "))
        .expect(&err);
    assert!(Path::new(kept).starts_with(&runs), "{kept}");
    assert_eq!(
        fs::read_to_string(Path::new(kept).join("report/summary.md")).unwrap(),
        "# Sum"
    );

    // --artifact-dir: that directory, kept, nothing said.
    let mine = env.root().join("mine");
    let server = turns();
    let (_, err) = run_a(&env, &server, &["--artifact-dir", mine.to_str().unwrap()]);
    assert!(!err.contains("preserved"), "{err}");
    assert_eq!(
        fs::read_to_string(mine.join("report/summary.md")).unwrap(),
        "# Sum"
    );
}

#[test]
fn without_artifacts_the_parameter_is_refused_and_dir_is_relative_to_the_workdir() {
    let env = Env::new();
    tool_agent(&env, "\"write_file\"", "");
    let server = script(vec![vec![(
        "write_file",
        json!({"path": "x", "artifact": true}),
    )]]);
    run_a(&env, &server, &[]);
    assert_eq!(
        only_result(&server),
        (
            "artifact directory not configured for this agent".into(),
            true
        )
    );
    // A configured dir, from the workdir; default_write sends writes there.
    let work = tool_agent(
        &env,
        "\"write_file\"",
        "[artifacts]\nenabled = true\ndir = \"out/$AXE_TEST_PART\"\ndefault_write = true",
    );
    let server = script(vec![vec![(
        "write_file",
        json!({"path": "f.txt", "content": "c"}),
    )]]);
    run(&env, &server.url)
        .env("AXE_TEST_PART", "p1")
        .arg("a")
        .assert()
        .success();
    assert_eq!(fs::read_to_string(work.join("out/p1/f.txt")).unwrap(), "c");
    // `..` and a dir without enabled are config errors.
    tool_agent(&env, "", "[artifacts]\nenabled = true\ndir = \"../up\"");
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "artifacts.dir must not contain \"..\"",
        ));
}

#[test]
fn dry_run_and_verbose_list_the_tools_and_the_sandbox() {
    let env = Env::new();
    tool_agent(
        &env,
        "\"read_file\", \"url_fetch\"",
        "allowed_hosts = [\"example.com\"]",
    );
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success();
    let text = stdout(out.get_output());
    assert!(
        text.contains("\n--- Tools ---\nread_file, url_fetch\nAllowed hosts: example.com\n\n--- Sub-Agents ---\n"),
        "{text}"
    );
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["tools"], json!(["read_file", "url_fetch"]));
    assert_eq!(doc["allowed_hosts"], json!(["example.com"]));
}

#[test]
fn web_search_asks_tavily_and_formats_its_results() {
    let env = Env::new();
    tool_agent(&env, "\"web_search\"", "");
    let tavily = Server::start(vec![Answer::json(
        200,
        &json!({"results": [
            {"title": "Rust", "url": "https://rust-lang.org", "content": "A language"},
            {"title": "Axe", "url": "https://example.com/axe", "content": "A tool"}
        ]}),
    )]);
    let server = script(vec![vec![("web_search", json!({"query": "rust axe"}))]]);
    run(&env, &server.url)
        .env("TAVILY_API_KEY", "tvly-SECRET")
        .env("AXE_WEB_SEARCH_BASE_URL", &tavily.url)
        .arg("a")
        .assert()
        .success();
    assert_eq!(
        only_result(&server),
        (
            "Title: Rust\nURL: https://rust-lang.org\nSnippet: A language\n\nTitle: Axe\nURL: https://example.com/axe\nSnippet: A tool".into(),
            false
        )
    );
    let asked = tavily.only_request();
    assert_eq!(
        (asked.method.as_str(), asked.path.as_str()),
        ("POST", "/search")
    );
    assert_eq!(asked.json()["query"], "rust axe");
    assert_eq!(asked.header("authorization"), Some("Bearer tvly-SECRET"));
    // Without a key: Go's message, nothing sent.
    let server = script(vec![vec![("web_search", json!({"query": "q"}))]]);
    run(&env, &server.url).arg("a").assert().success();
    assert_eq!(
        only_result(&server),
        (
            "TAVILY_API_KEY environment variable is not set".into(),
            true
        )
    );
}

/// An agent file as the Go `axe`'s documentation shows one with every
/// built-in tool: it loads, offers each, and each does what it says.
#[test]
fn an_agent_file_from_gos_documentation_runs() {
    let env = Env::new();
    let work = env.root().join("project");
    fs::create_dir_all(&work).unwrap();
    fs::write(work.join("README.md"), "# Project\n").unwrap();
    env.agent(
        "coder",
        &format!(
            r#"name = "coder"
description = "Reads, edits and tests code in its workdir"
model = "anthropic/claude-test"
system_prompt = "You are a careful engineer."
workdir = "{}"
tools = ["list_directory", "read_file", "write_file", "edit_file", "run_command", "url_fetch", "web_search"]
allowed_hosts = ["docs.rs"]
timeout = 60

[artifacts]
enabled = true
"#,
            work.display()
        ),
    );
    // Calls of one reply run at once: what depends on a write comes in a
    // later turn.
    let server = script(vec![
        vec![
            ("list_directory", json!({"path": "."})),
            ("read_file", json!({"path": "README.md"})),
        ],
        vec![(
            "write_file",
            json!({"path": "src/main.rs", "content": "fn main() {}\n"}),
        )],
        vec![(
            "edit_file",
            json!({"path": "src/main.rs", "old_string": "fn main() {}", "new_string": "fn main() { println!(\"hi\"); }"}),
        )],
        vec![
            ("run_command", json!({"command": "cat src/main.rs"})),
            ("url_fetch", json!({"url": "https://example.com/"})),
            (
                "write_file",
                json!({"path": "notes.md", "content": "done", "artifact": true}),
            ),
        ],
    ]);
    let out = run(&env, &server.url)
        .args(["coder", "--json"])
        .assert()
        .success();
    assert_eq!(
        names_offered(&server),
        [
            "list_directory",
            "read_file",
            "write_file",
            "edit_file",
            "run_command",
            "url_fetch",
            "web_search"
        ]
    );
    assert_eq!(
        results(&server, 0),
        [("README.md".into(), false), ("1: # Project".into(), false)]
    );
    assert_eq!(
        results(&server, 1),
        [("wrote 13 bytes to src/main.rs".into(), false)]
    );
    assert_eq!(
        results(&server, 2),
        [("replaced 1 occurrence(s) in src/main.rs".into(), false)]
    );
    assert_eq!(
        results(&server, 3),
        [
            ("fn main() { println!(\"hi\"); }\n".into(), false),
            ("host \"example.com\" is not in allowed_hosts".into(), true),
            ("wrote 4 bytes to notes.md (artifact)".into(), false),
        ]
    );
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        doc["artifacts"],
        json!([{"path": "notes.md", "agent": "coder", "size": 4}])
    );
}

/// `kill -TERM` of `axe-run` while a command runs: the command goes with
/// it, inside bubblewrap and in its plain process group alike.
#[test]
fn a_command_goes_when_axe_run_is_stopped() {
    for (i, plain) in [false, true].into_iter().enumerate() {
        let env = Env::new();
        tool_agent(&env, "\"run_command\"", "");
        let marker = format!("sleep 1000.{}515{i}", std::process::id());
        let server = script(vec![vec![(
            "run_command",
            json!({"command": format!("{marker} & {marker}")}),
        )]]);
        let mut child = env.std_cmd("axe-run");
        child
            .env("AXE_ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", crate::wire::KEY)
            // Not the deadline: the signal must end it.
            .args(["a", "--timeout", "3600"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        if plain {
            child.env("PATH", path_without_bwrap(&env));
        }
        let mut child = child.spawn().unwrap();
        // Until both sleeps run (a state to wait for, not a race).
        let since = std::time::Instant::now();
        let sleeping = || {
            let found = processes_with(&marker);
            found.iter().filter(|p| p.starts_with(&marker)).count()
        };
        while sleeping() < 2 {
            assert!(
                since.elapsed() < crate::server::PATIENCE,
                "the command never ran"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        let since = std::time::Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if since.elapsed() > crate::server::PATIENCE {
                let _ = child.kill();
                panic!("axe-run held on to its command after SIGTERM ({plain})");
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        };
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(15), "{status:?}");
        // Killed as axe-run went; gone from the process table a moment
        // later (a dying process is still listed): waited for, bounded.
        let since = std::time::Instant::now();
        while !processes_with(&marker).is_empty() {
            assert!(
                since.elapsed() < crate::server::PATIENCE,
                "the command outlived axe-run ({plain})"
            );
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
