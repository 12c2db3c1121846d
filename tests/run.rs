//! `axe-run` against a local provider: prompt building, context files,
//! memory (M6 7.5-7.6), sub-agents, dry-run and verbose output, exit codes.

use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use predicates::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::server::{Answer, Gate, PATIENCE, Recorded, Server};
use crate::util::{AgentFile, Env, entries, entry, header_count, read, stdout};
use crate::wire::{KEY, anthropic_reply, served_by, stream_answer, system_text};

/// `axe-run` with every provider pointed at `url` and keys set.
pub fn run(env: &Env, url: &str) -> Command {
    served_by(env.cmd("axe-run"), url)
}

/// A reply that calls tools: `(id, input)` per `call_agent` call.
pub fn tool_use(calls: &[(&str, Value)]) -> Value {
    let content: Vec<Value> = calls
        .iter()
        .map(|(id, input)| json!({"type": "tool_use", "id": id, "name": "call_agent", "input": input}))
        .collect();
    json!({
        "model": "claude-test", "content": content, "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 3}
    })
}

fn ok(text: &str) -> Answer {
    Answer::json(200, &anthropic_reply(text))
}

fn system_of(r: &Recorded) -> String {
    system_text(&r.json())
}

/// The agent `name` with a system prompt naming it, so a routing server
/// can tell whose request it got; to write as it is or with more TOML.
fn named<'e>(env: &'e Env, name: &str) -> AgentFile<'e> {
    env.agent_file(name).prompt(&format!("You are {name}."))
}

const STAMP: &str = r"## \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n";

fn matches_entry(text: &str, task: &str, result: &str) -> bool {
    let re = format!(
        "^{STAMP}\\*\\*Task:\\*\\* {}\\n\\*\\*Result:\\*\\* {}\\n\\n$",
        regex_escape(task),
        regex_escape(result)
    );
    predicate::str::is_match(re).unwrap().eval(text)
}

fn regex_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| {
            if "\\.+*?()|[]{}^$".contains(c) {
                vec!['\\', c]
            } else {
                vec![c]
            }
        })
        .collect()
}

// --- the request ---------------------------------------------------------

#[test]
fn request_carries_persona_skill_files_params_and_stdin() {
    let env = Env::new();
    let server = Server::start(vec![ok("LGTM")]);
    env.write(
        &env.config_dir().join("axe/skills/review/SKILL.md"),
        "Be strict.",
    );
    let work = env.root().join("repo");
    env.write(&work.join("src/lib.rs"), "pub fn f() {}\n");
    env.write(&work.join("README.md"), "# Repo");
    env.agent(
        "reviewer",
        &format!(
            "name = \"reviewer\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"You review.\"\n\
             skill = \"skills/review/SKILL.md\"\nfiles = [\"src/**/*.rs\", \"README.md\"]\nworkdir = \"{}\"\n\
             [params]\ntemperature = 0.2\nmax_tokens = 512\n",
            work.display()
        ),
    );
    run(&env, &server.url)
        .arg("reviewer")
        .write_stdin("diff --git a b\n")
        .assert()
        .success()
        .stdout("LGTM")
        .stderr("");
    let req = server.only_request();
    assert_eq!(req.path, "/v1/messages");
    assert_eq!(req.header("x-api-key"), Some(KEY));
    assert_eq!(
        req.json(),
        json!({
            "model": "claude-test",
            "max_tokens": 512,
            "temperature": 0.2,
            "system": "You review.\n\n---\n\n## Skill\n\nBe strict.\n\n---\n\n## Context Files\n\n\
                       ### README.md\n```md\n# Repo\n```\n\n### src/lib.rs\n```rs\npub fn f() {}\n\n```",
            "messages": [{"role": "user", "content": "diff --git a b\n"}],
        })
    );
}

#[test]
fn an_agent_without_a_persona_sends_no_leading_separator() {
    let env = Env::new();
    let server = Server::start(vec![ok("ok"), ok("ok")]);
    env.write(&env.config_dir().join("axe/skills/s.md"), "Be strict.");
    env.write(&env.log_path("bare"), entries(1));
    env.agent(
        "bare",
        "name = \"bare\"\nmodel = \"anthropic/claude-test\"\nskill = \"skills/s.md\"\n",
    );
    run(&env, &server.url)
        .args(["bare", "go"])
        .assert()
        .success();
    // Nothing before the first section: no separator before it either.
    assert_eq!(system_of(&server.requests()[0]), "## Skill\n\nBe strict.");
    // Memory alone is its own first section too.
    env.agent(
        "bare",
        "name = \"bare\"\nmodel = \"anthropic/claude-test\"\n[memory]\nenabled = true\n",
    );
    run(&env, &server.url)
        .args(["bare", "go"])
        .assert()
        .success();
    assert_eq!(
        system_of(&server.requests()[1]),
        format!("## Memory\n\n{}", entries(1))
    );
}

#[test]
fn blank_stdin_sends_the_default_message_and_overrides_apply() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(
        200,
        &json!({"model": "gpt-x", "choices": [{"message": {"role": "assistant", "content": "done"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1}}),
    )]);
    named(&env, "a").write();
    let skill = env.root().join("other.md");
    env.write(&skill, "Other skill.");
    run(&env, &server.url)
        .args(["a", "--model", "openai/gpt-x", "--skill"])
        .arg(&skill)
        .write_stdin(" \n\t\n")
        .assert()
        .success()
        .stdout("done");
    let req = server.only_request();
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(
        req.json()["messages"],
        json!([
            {"role": "system", "content": "You are a.\n\n---\n\n## Skill\n\nOther skill."},
            {"role": "user", "content": "Execute the task described in your instructions."}
        ])
    );
}

// --- context files -------------------------------------------------------

/// The relative paths `axe-run --dry-run --json` reports for `files`.
fn resolved(env: &Env, files: &str, workdir: &std::path::Path) -> Vec<String> {
    named(env, "g").toml(&format!("files = {files}")).write();
    let out = env
        .cmd("axe-run")
        .args(["g", "--dry-run", "--json", "--workdir"])
        .arg(workdir)
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    serde_json::from_value(doc["files"].clone()).unwrap()
}

#[test]
fn globs_double_star_dedupe_and_sort() {
    let env = Env::new();
    let w = env.root().join("w");
    for f in [
        "a.md",
        "b/c.md",
        "b/d/e.md",
        "b/d/e.txt",
        "z.md",
        ".hidden/h.md",
    ] {
        env.write(&w.join(f), f);
    }
    assert_eq!(
        resolved(&env, r#"["**/*.md"]"#, &w),
        [".hidden/h.md", "a.md", "b/c.md", "b/d/e.md", "z.md"]
    );
    // `**` as zero directories, a trailing `**`, and the same file twice.
    assert_eq!(
        resolved(&env, r#"["b/**/e.*", "b/**", "b/c.md", "*.md"]"#, &w),
        ["a.md", "b/c.md", "b/d/e.md", "b/d/e.txt", "z.md"]
    );
    assert_eq!(
        resolved(&env, r#"["b/*/*.txt", "?.md"]"#, &w),
        ["a.md", "b/d/e.txt", "z.md"]
    );
    assert_eq!(
        resolved(&env, r#"["[ab].md", "/b/c.md"]"#, &w),
        ["a.md", "b/c.md"]
    );
    assert!(resolved(&env, r#"["nothing/**", "missing.md"]"#, &w).is_empty());
}

#[test]
fn binary_files_and_directories_are_skipped() {
    let env = Env::new();
    let w = env.root().join("w");
    env.write(&w.join("text.txt"), "plain");
    let mut late_nul = vec![b'x'; 600];
    late_nul[550] = 0;
    env.write(&w.join("late.txt"), &late_nul);
    env.write(&w.join("bin.txt"), b"ab\0cd");
    fs::create_dir_all(w.join("dir.txt")).unwrap();
    assert_eq!(resolved(&env, r#"["*.txt"]"#, &w), ["late.txt", "text.txt"]);
}

#[test]
fn dry_run_and_verbose_say_what_was_converted_or_left_out_and_why() {
    let env = Env::new();
    let server = Server::start(vec![ok("ok")]);
    let w = env.root().join("w");
    env.write(&w.join("good.txt"), "fine");
    env.write(&w.join("latin.txt"), b"caf\xe9");
    env.write(&w.join("bin.txt"), b"ab\0cd");
    named(&env, "g")
        .toml(&format!(
            "files = [\"*.txt\", \"*.md\", \"missing.rs\"]\nworkdir = \"{}\"",
            w.display()
        ))
        .write();
    let out = env
        .cmd("axe-run")
        .args(["g", "--dry-run"])
        .assert()
        .success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains(
            "--- Files (2) ---\ngood.txt\nlatin.txt\n\
             Converted (1):\n- latin.txt: not UTF-8, its bad bytes sent as U+FFFD\n\
             Left out (3):\n- *.md: matched no file\n- bin.txt: binary (a NUL byte in its first 512 bytes)\n\
             - missing.rs: no such file\n\n"
        ),
        "{text}"
    );
    let out = env
        .cmd("axe-run")
        .args(["g", "--dry-run", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        doc["files_converted"],
        json!(["latin.txt: not UTF-8, its bad bytes sent as U+FFFD"])
    );
    assert_eq!(doc["files_left_out"].as_array().unwrap().len(), 3);
    let out = run(&env, &server.url)
        .args(["g", "-v", "go"])
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains(
            "Files:    2 file(s)\nConverted: latin.txt: not UTF-8, its bad bytes sent as U+FFFD\n\
             Left out: *.md: matched no file\nLeft out: bin.txt: binary (a NUL byte in its first 512 bytes)\n\
             Left out: missing.rs: no such file\n"
        ),
        "{err}"
    );
}

#[test]
fn nothing_outside_the_workdir_is_read() {
    let env = Env::new();
    let w = env.root().join("w");
    let outside = env.root().join("outside");
    env.write(&outside.join("secret.md"), "secret");
    env.write(&w.join("in.md"), "in");
    env.write(&w.join("sub/real.md"), "real");
    symlink(outside.join("secret.md"), w.join("link-out.md")).unwrap();
    symlink(w.join("in.md"), w.join("link-in.md")).unwrap();
    symlink(&outside, w.join("dir-out")).unwrap();
    symlink(w.join("sub"), w.join("dir-in")).unwrap();
    symlink(&w, w.join("sub/loop")).unwrap();
    assert_eq!(
        resolved(
            &env,
            r#"["*.md", "dir-out/*.md", "dir-in/*.md", "../outside/*.md", "**/secret.md"]"#,
            &w
        ),
        ["dir-in/real.md", "in.md", "link-in.md"]
    );
    // `**` does not follow directory links, so the loop ends.
    assert_eq!(
        resolved(&env, r#"["**/*.md"]"#, &w),
        ["in.md", "link-in.md", "sub/real.md"]
    );
}

#[test]
fn invalid_glob_and_missing_workdir_are_config_errors() {
    let env = Env::new();
    named(&env, "g").toml(r#"files = ["src/[a-"]"#).write();
    env.cmd("axe-run")
        .args(["g", "--dry-run"])
        .assert()
        .code(2)
        .stderr("invalid glob pattern \"src/[a-\": syntax error in pattern\n");
    named(&env, "g").toml(r#"files = ["*"]"#).write();
    env.cmd("axe-run")
        .args(["g", "--dry-run", "--workdir", "/nonexistent/w"])
        .assert()
        .code(2)
        .stderr("failed to resolve workdir /nonexistent/w: no such file or directory\n");
}

#[test]
fn skill_paths_and_errors() {
    let env = Env::new();
    named(&env, "s")
        .toml(r#"skill = "skills/none/SKILL.md""#)
        .write();
    let expected = env.config_dir().join("axe/skills/none/SKILL.md");
    env.cmd("axe-run")
        .args(["s", "--dry-run"])
        .assert()
        .code(2)
        .stderr(format!("skill not found: {}\n", expected.display()));
}

// --- dry run and verbose -------------------------------------------------

#[test]
fn dry_run_output_line_by_line() {
    let env = Env::new();
    let w = env.root().join("w");
    env.write(&w.join("notes.txt"), "n1");
    env.write(&env.config_dir().join("axe/skills/s.md"), "Skill text.");
    env.write(&env.log_path("dr"), entries(3));
    named(&env, "dr").toml(&format!(
            "skill = \"skills/s.md\"\nfiles = [\"*.txt\"]\nworkdir = \"{}\"\nsub_agents = [\"x\", \"y\"]\n\
             [sub_agents_config]\nmax_depth = 2\nparallel = false\ntimeout = 30\n\
             [memory]\nenabled = true\nlast_n = 2\n[params]\ntemperature = 0.5\nmax_tokens = 100\n",
            w.display()
        )).write();
    let memory = format!("{}{}", entry(1), entry(2));
    let expected = format!(
        "=== Dry Run ===\n\nModel:    anthropic/claude-test\nWorkdir:  {w}\nTimeout:  45s\n\
         Params:   temperature=0.5, max_tokens=100\n\n--- System Prompt ---\n\
         You are dr.\n\n---\n\n## Skill\n\nSkill text.\n\n---\n\n## Context Files\n\n### notes.txt\n```txt\nn1\n```\
         \n\n--- Skill ---\nSkill text.\n\n--- Files (1) ---\nnotes.txt\n\n\
         --- Stdin ---\nthe task\n\n\n--- Memory ---\n{memory}\n\n--- Sub-Agents ---\nx, y\nMax Depth: 2\n\
         Parallel:  no\nTimeout:   30s\n",
        w = w.display()
    );
    env.cmd("axe-run")
        .args(["dr", "--dry-run", "--timeout", "45"])
        .write_stdin("the task\n")
        .assert()
        .success()
        .stdout(expected)
        .stderr("");
    assert_eq!(
        read(&env.log_path("dr")),
        entries(3),
        "dry run appends nothing"
    );
}

#[test]
fn dry_run_of_a_plain_agent_shows_none_everywhere() {
    let env = Env::new();
    env.agent("p", "name = \"p\"\nmodel = \"ollama/llama3\"\n");
    let cwd = env.root().display().to_string();
    // Params shows what is sent: here nothing.
    env.cmd("axe-run")
        .args(["p", "--dry-run"])
        .write_stdin("")
        .assert()
        .success()
        .stdout(format!(
            "=== Dry Run ===\n\nModel:    ollama/llama3\nWorkdir:  {cwd}\nTimeout:  120s\n\
             Params:   (none)\n\n--- System Prompt ---\n\n\n--- Skill ---\n(none)\n\n\
             --- Files (0) ---\n(none)\n\n--- Stdin ---\n(none)\n\n--- Sub-Agents ---\n(none)\n"
        ));
}

#[test]
fn dry_run_params_are_what_is_sent() {
    let env = Env::new();
    let params = |agent: &str, flags: &[&str]| {
        let out = env
            .cmd("axe-run")
            .arg(agent)
            .arg("--dry-run")
            .args(flags)
            .assert()
            .success();
        let text = stdout(out.get_output());
        let line = text.lines().find(|l| l.starts_with("Params:")).unwrap();
        line.to_owned()
    };
    env.agent(
        "o",
        "name = \"o\"\nmodel = \"ollama/llama3\"\n[params]\ntemperature = 0\nmax_tokens = 0\n",
    );
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/claude\"\n");
    // The agent file's 0s are "not set" (Go's); Anthropic's API needs a
    // max_tokens, and gets 4096; an explicit --temperature 0 is sent.
    assert_eq!(params("o", &[]), "Params:   (none)");
    assert_eq!(params("a", &[]), "Params:   max_tokens=4096");
    assert_eq!(
        params("o", &["--temperature", "0"]),
        "Params:   temperature=0"
    );
    assert_eq!(
        params("o", &["-m", "openai/x", "--max-tokens", "5"]),
        "Params:   max_tokens=5"
    );
    let out = env
        .cmd("axe-run")
        .args(["o", "--dry-run", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (&doc["temperature"], &doc["max_tokens"]),
        (&json!(null), &json!(null))
    );
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run", "--json", "--temperature", "0"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (&doc["temperature"], &doc["max_tokens"]),
        (&json!(0.0), &json!(4096))
    );
}

#[test]
fn dry_run_shows_the_words_as_the_task_and_stdin_as_stdin() {
    let env = Env::new();
    env.agent("p", "name = \"p\"\nmodel = \"ollama/llama3\"\n");
    let dry = |json: bool, stdin: &str| {
        let mut cmd = env.cmd("axe-run");
        cmd.args(["p", "--dry-run", "check", "this"]);
        if json {
            cmd.arg("--json");
        }
        stdout(cmd.write_stdin(stdin).assert().success().get_output())
    };
    let text = dry(false, "");
    assert!(
        text.contains("\n--- Task ---\ncheck this\n\n--- Stdin ---\n(none)\n\n"),
        "{text}"
    );
    let text = dry(false, "piped\n");
    assert!(
        text.contains("\n--- Task ---\ncheck this\n\n--- Stdin ---\npiped\n\n\n"),
        "{text}"
    );
    let doc: DryRunJson = serde_json::from_str(&dry(true, "piped\n")).unwrap();
    assert_eq!(
        (doc.task.as_deref(), doc.stdin.as_str()),
        (Some("check this"), "piped\n")
    );
}

#[test]
fn dry_run_needs_no_key_and_no_server() {
    let env = Env::new();
    named(&env, "k").write();
    env.cmd("axe-run")
        .args(["k", "--dry-run"])
        .assert()
        .success();
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DryRunJson {
    agent: String,
    model: String,
    workdir: String,
    timeout: u64,
    temperature: Option<f64>,
    max_tokens: Option<u64>,
    system_prompt: String,
    skill: String,
    files: Vec<String>,
    task: Option<String>,
    stdin: String,
    memory: Option<DryRunMemory>,
    sub_agents: Vec<String>,
    max_depth: u32,
    parallel: bool,
    sub_agent_timeout: i64,
    notes: Option<DryRunNotes>,
    session_memory: Option<String>,
    context: Option<serde_json::Value>,
    mcp_servers: Vec<serde_json::Value>,
    tools: Vec<String>,
    sandbox: Option<String>,
    allowed_hosts: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
pub struct DryRunNotes {
    pub workspace: String,
    pub tools: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct DryRunMemory {
    path: Option<String>,
    entries_loaded: u64,
    entries: String,
    error: Option<String>,
}

#[test]
fn dry_run_json_is_one_document() {
    let env = Env::new();
    env.write(&env.log_path("j"), entries(4));
    named(&env, "j")
        .toml("sub_agents = [\"x\"]")
        .memory("last_n = 3")
        .write();
    let out = env
        .cmd("axe-run")
        .args(["j", "--dry-run", "--json"])
        .assert()
        .success();
    let doc: DryRunJson = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let mem = doc.memory.unwrap();
    assert_eq!(mem.entries_loaded, 3);
    assert_eq!(mem.entries, format!("{}{}{}", entry(1), entry(2), entry(3)));
    assert_eq!(mem.path.unwrap(), env.log_path("j").display().to_string());
    assert!(doc.system_prompt.ends_with(&mem.entries));
    assert_eq!((doc.max_depth, doc.parallel), (3, true));
    assert_eq!(doc.tools, ["call_agent"]);
    assert_eq!(doc.sandbox, None);
}

#[test]
fn verbose_lines_around_a_single_call() {
    let env = Env::new();
    let server = Server::start(vec![ok("fine")]);
    env.write(&env.log_path("v"), entries(3));
    named(&env, "v").memory("").write();
    let out = run(&env, &server.url)
        .args(["v", "-v", "--timeout", "9"])
        .write_stdin("go")
        .assert()
        .success()
        .stdout("fine");
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let lines: Vec<&str> = err.lines().collect();
    let cwd = env.root().display().to_string();
    let log = env.log_path("v").display().to_string();
    assert_eq!(
        lines[..8],
        [
            "Model:    anthropic/claude-test",
            &format!("Workdir:  {cwd}"),
            "Skill:    (none)",
            "Files:    0 file(s)",
            "Stdin:    yes",
            "Timeout:  9s",
            "Params:   max_tokens=4096",
            &format!("Memory:   3 entries loaded from {log}"),
        ]
    );
    assert!(
        predicate::str::is_match(r"^Duration: \d+ms$")
            .unwrap()
            .eval(lines[8])
    );
    assert_eq!(
        lines[9..],
        ["Tokens:   11 input, 7 output", "Stop:     end_turn"]
    );
}

#[test]
fn verbose_says_stdin_no_when_only_words_were_given() {
    let env = Env::new();
    let server = Server::start(vec![ok("fine")]);
    named(&env, "v").write();
    run(&env, &server.url)
        .args(["v", "-v", "do", "it"])
        .write_stdin("")
        .assert()
        .success()
        .stderr(predicate::str::contains("\nStdin:    no\n"));
    assert_eq!(
        server.only_request().json()["messages"],
        json!([{"role": "user", "content": "do it"}])
    );
}

#[test]
fn verbose_without_a_log_says_so() {
    let env = Env::new();
    let server = Server::start(vec![ok("fine")]);
    named(&env, "v").memory("").write();
    run(&env, &server.url)
        .args(["v", "--verbose"])
        .assert()
        .success()
        .stderr(predicate::str::contains(
            "\nMemory:   0 entries (no memory file)\n",
        ));
}

// --- memory (M6 7.5) -------------------------------------------------------

#[test]
fn memory_disabled_creates_no_file() {
    let env = Env::new();
    let server = Server::start(vec![ok("r")]);
    named(&env, "off")
        .toml("[memory]\nenabled = false\nlast_n = 3")
        .write();
    run(&env, &server.url).arg("off").assert().success();
    // The ledger's line of the call and the run's conversation are all
    // the data directory holds.
    let mut held: Vec<_> = fs::read_dir(env.data_dir().join("axe"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    held.sort();
    assert_eq!(held, ["conversations", "ledger"]);
    assert!(!system_of(&server.only_request()).contains("## Memory"));
}

#[test]
fn memory_enabled_appends_an_entry() {
    let env = Env::new();
    let server = Server::start(vec![ok("it worked\nline two")]);
    named(&env, "m").memory("").write();
    run(&env, &server.url)
        .arg("m")
        .write_stdin("do the\nthing")
        .assert()
        .success()
        .stdout("it worked\nline two");
    let log = read(&env.log_path("m"));
    assert!(
        matches_entry(&log, "do the thing", "it worked\nline two"),
        "{log}"
    );
    assert!(
        !system_of(&server.only_request()).contains("## Memory"),
        "first run: no section"
    );
}

#[test]
fn memory_enabled_loads_into_the_prompt() {
    let env = Env::new();
    let server = Server::start(vec![ok("r")]);
    env.write(&env.log_path("m"), entries(2));
    named(&env, "m").memory("").write();
    run(&env, &server.url).arg("m").assert().success();
    assert_eq!(
        system_of(&server.only_request()),
        format!("You are m.\n\n---\n\n## Memory\n\n{}", entries(2))
    );
}

#[test]
fn memory_last_n_limits_what_is_loaded() {
    let env = Env::new();
    let server = Server::start(vec![ok("r")]);
    env.write(&env.log_path("m"), entries(5));
    named(&env, "m").memory("last_n = 2").write();
    run(&env, &server.url).arg("m").assert().success();
    assert_eq!(
        system_of(&server.only_request()),
        format!("You are m.\n\n---\n\n## Memory\n\n{}{}", entry(3), entry(4))
    );
    assert_eq!(header_count(&read(&env.log_path("m"))), 6);
}

#[test]
fn max_entries_warning_at_and_only_at_the_limit() {
    let env = Env::new();
    let server = Server::start(vec![ok("r")]);
    env.write(&env.log_path("m"), entries(3));
    named(&env, "m").memory("max_entries = 3").write();
    run(&env, &server.url).arg("m").assert().success().stderr(
        "Warning: agent \"m\" memory has 3 entries (max_entries: 3); runs only warn, nothing is trimmed. \
         Run 'axe mem trim m' to keep the last 3 (no model call), or 'axe gc m' to have the model review it first.\n",
    );
    named(&env, "m").memory("max_entries = 10").write();
    run(&env, &server.url)
        .arg("m")
        .assert()
        .success()
        .stderr("");
}

#[test]
fn api_error_appends_nothing() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(
        500,
        &json!({"type": "error", "error": {"type": "api_error", "message": "boom"}}),
    )]);
    named(&env, "m").memory("").write();
    run(&env, &server.url)
        .arg("m")
        .assert()
        .code(3)
        .stdout("")
        .stderr(format!(
            "server: boom ({}/v1/messages answered 500)\n",
            server.url
        ));
    assert!(!env.log_path("m").exists());
}

#[test]
fn dry_run_shows_memory_and_appends_nothing() {
    let env = Env::new();
    env.write(&env.log_path("m"), entries(2));
    named(&env, "m").memory("").write();
    env.cmd("axe-run")
        .args(["m", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains(format!(
            "--- Memory ---\n{}\n\n--- Sub-Agents ---",
            entries(2)
        )));
    assert_eq!(read(&env.log_path("m")), entries(2));
    fs::remove_file(env.log_path("m")).unwrap();
    env.cmd("axe-run")
        .args(["m", "--dry-run"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--- Memory ---\n(none)\n\n"));
    assert!(!env.log_path("m").exists());
}

#[test]
fn custom_memory_path_is_read_and_written() {
    let env = Env::new();
    let server = Server::start(vec![ok("new")]);
    let custom = env.root().join("custom.md");
    env.write(&custom, entries(1));
    named(&env, "m")
        .toml(&format!(
            "[memory]\nenabled = true\npath = \"{}\"",
            custom.display()
        ))
        .write();
    run(&env, &server.url)
        .arg("m")
        .write_stdin("t")
        .assert()
        .success();
    assert!(system_of(&server.only_request()).ends_with(&entries(1)));
    let log = read(&custom);
    assert!(matches_entry(&log[entries(1).len()..], "t", "new"), "{log}");
    assert!(!env.log_path("m").exists());
}

#[test]
fn unreadable_and_unwritable_memory_are_warnings() {
    let env = Env::new();
    let server = Server::start(vec![ok("answer")]);
    let dir = env.root().join("locked");
    let log = dir.join("m.md");
    env.write(&log, entries(1));
    crate::util::set_mode(&log, 0o000);
    crate::util::set_mode(&dir, 0o555);
    named(&env, "m")
        .toml(&format!(
            "[memory]\nenabled = true\npath = \"{}\"",
            log.display()
        ))
        .write();
    let l = log.display();
    // No ledger: the unprivileged user could not write one here either,
    // and this is about memory's warnings.
    served_by(env.unprivileged("axe-run"), &server.url)
        .args(["m", "--no-log"])
        .assert()
        .success()
        .stdout("answer")
        .stderr(format!(
            "Warning: failed to load memory for \"m\": open {l}: permission denied\n\
             Warning: failed to save memory for \"m\": failed to open memory file: open {l}: permission denied\n"
        ));
    assert!(!system_of(&server.only_request()).contains("## Memory"));
    crate::util::set_mode(&log, 0o644);
    assert_eq!(read(&log), entries(1));
}

#[test]
fn json_output_still_records_memory() {
    let env = Env::new();
    let server = Server::start(vec![ok("jr")]);
    named(&env, "m").memory("").write();
    let out = run(&env, &server.url)
        .args(["m", "--json"])
        .write_stdin("jt")
        .assert()
        .success();
    let doc = parse_envelope(&stdout(out.get_output()));
    assert_eq!((doc.content.as_str(), doc.tool_calls), ("jr", 0));
    assert!(matches_entry(&read(&env.log_path("m")), "jt", "jr"));
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Envelope {
    model: String,
    content: String,
    input_tokens: Option<u64>,
    output_tokens: Option<u64>,
    stop_reason: String,
    duration_ms: u64,
    tool_calls: u64,
    retry_attempts: u64,
    redacted: Vec<Value>,
    tool_call_details: Vec<Value>,
    artifacts: Vec<Value>,
    /// With a run-log entry: whether it cut the answer and the task.
    truncated: Option<bool>,
    task_truncated: Option<bool>,
    /// Always there: the conversation the run was kept in, or null.
    conversation_id: Value,
}

fn parse_envelope(text: &str) -> Envelope {
    assert!(text.ends_with('\n') && text.lines().count() == 1, "{text}");
    serde_json::from_str(text).unwrap()
}

// --- streaming -----------------------------------------------------------

#[test]
fn stream_prints_as_it_arrives_and_memory_gets_the_whole_answer() {
    use std::io::Read;
    let env = Env::new();
    let (answer, gate) =
        stream_answer("anthropic", &["Hello", " there", ", friend"]).gated_after(3);
    let server = Server::start(vec![answer]);
    named(&env, "s").memory("").write();
    let mut cmd = env.std_cmd("axe-run");
    cmd.args(["s", "--stream"])
        .env("AXE_ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", KEY)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut first = [0u8; 5];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(
        &first, b"Hello",
        "the first words come before the rest is sent"
    );
    gate.send(()).unwrap();
    let mut rest = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut rest)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(rest, " there, friend");
    assert_eq!(server.only_request().json()["stream"], json!(true));
    let log = read(&env.log_path("s"));
    assert!(
        matches_entry(
            &log,
            "Execute the task described in your instructions.",
            "Hello there, friend"
        ),
        "{log}"
    );
}

#[test]
fn stream_with_json_streams_the_call_and_prints_one_document() {
    let env = Env::new();
    let server = Server::start(vec![stream_answer("anthropic", &["a", "b", "c"])]);
    named(&env, "s").memory("").write();
    let out = run(&env, &server.url)
        .args(["s", "--stream", "--json", "go"])
        .assert()
        .success()
        .stderr("");
    // As axe-llm does: no text before the document, which has it all.
    let doc = parse_envelope(&stdout(out.get_output()));
    assert_eq!((doc.content.as_str(), doc.tool_calls), ("abc", 0));
    assert_eq!((doc.input_tokens, doc.output_tokens), (Some(11), Some(7)));
    assert_eq!(server.only_request().json()["stream"], json!(true));
    assert!(matches_entry(&read(&env.log_path("s")), "go", "abc"));
}

// --- sub-agents ------------------------------------------------------------

/// A server that answers by who is asking: the parent's first turn calls
/// the sub-agents, its second turn echoes their results; each sub-agent's
/// answer goes through `around(name, answer)` first, which may hold it at
/// a [`Gate`] or make it open one.
fn family_server(
    calls: Vec<(&'static str, Value)>,
    around: impl Fn(&str, Answer) -> Answer + Send + Sync + 'static,
) -> Server {
    Server::route(move |req| {
        let body = req.json();
        let system = system_text(&body);
        let messages = body["messages"].as_array().unwrap().clone();
        if system.starts_with("You are parent.") {
            if messages.len() == 1 {
                let calls: Vec<(&str, Value)> =
                    calls.iter().map(|(i, v)| (*i, v.clone())).collect();
                return Answer::json(200, &tool_use(&calls));
            }
            let results = messages.last().unwrap()["content"].clone();
            return ok(&format!("parent saw {results}"));
        }
        let me = system
            .trim_start_matches("You are ")
            .split('.')
            .next()
            .unwrap()
            .to_owned();
        let task = messages[0]["content"].as_str().unwrap().to_owned();
        around(&me, ok(&format!("{me} did [{task}]")))
    })
}

/// For [`family_server`]: every answer as it is, at once.
fn as_is(_: &str, answer: Answer) -> Answer {
    answer
}

fn results_sent_back(server: &Server) -> Vec<Value> {
    let last = server
        .requests()
        .into_iter()
        .rfind(|r| {
            system_of(r).starts_with("You are parent.")
                && r.json()["messages"].as_array().unwrap().len() == 3
        })
        .expect("the parent's second turn");
    last.json()["messages"][2]["content"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn sub_agents_run_in_parallel_and_results_keep_call_order() {
    let env = Env::new();
    named(&env, "parent")
        .toml("sub_agents = [\"slow\", \"fast\"]")
        .write();
    named(&env, "slow").write();
    named(&env, "fast").write();
    // The first call's answer is held until the second call's answer has
    // been sent: run one after the other, the second call would never
    // come while the first waits, and the wait would run out.
    let fast_answered = Gate::new();
    let gate = fast_answered.clone();
    let server = family_server(
        vec![
            ("c1", json!({"agent": "slow", "task": "one"})),
            (
                "c2",
                json!({"agent": "fast", "task": "two", "context": "ctx"}),
            ),
        ],
        move |me, answer| {
            if me == "slow" {
                gate.wait(PATIENCE);
                answer
            } else {
                answer.then_open(&gate)
            }
        },
    );
    let out = run(&env, &server.url)
        .args(["parent", "--json"])
        .assert()
        .success();
    assert!(
        !fast_answered.ran_out(),
        "calls were not concurrent: the second never came while the first was held"
    );
    let doc = parse_envelope(&stdout(out.get_output()));
    assert_eq!(doc.tool_calls, 2);
    assert_eq!(
        (doc.input_tokens, doc.output_tokens),
        (Some(16), Some(10)),
        "summed over turns"
    );
    // The second call was answered first; the results are in call order.
    let results = results_sent_back(&server);
    assert_eq!(
        results,
        [
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "slow did [Task: one]", "is_error": false}),
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "fast did [Task: two\n\nContext:\nctx]", "is_error": false}),
        ]
    );
    let reqs = server.requests();
    // The tool offered to the parent.
    assert_eq!(
        reqs[0].json()["tools"],
        json!([{
            "name": "call_agent",
            "description": "Delegate a task to a sub-agent. The sub-agent runs independently with its own context and returns only its final result. Available agents: slow, fast",
            "input_schema": {
                "type": "object",
                "properties": {
                    "agent": {"type": "string", "description": "Name of the sub-agent to invoke (must be one of: slow, fast)"},
                    "task": {"type": "string", "description": "What you need the sub-agent to do"},
                    "context": {"type": "string", "description": "Additional context from your conversation to pass along"}
                },
                "required": ["agent", "task"]
            }
        }])
    );
}

#[test]
fn parallel_false_runs_calls_one_after_another() {
    let env = Env::new();
    named(&env, "parent")
        .toml("sub_agents = [\"slow\", \"fast\"]\n[sub_agents_config]\nparallel = false")
        .write();
    named(&env, "slow").write();
    named(&env, "fast").write();
    // The first call's answer is held for a second, or until the second
    // call comes: one after the other, it cannot come while the first is
    // unanswered, so the hold must run out every time. At once, it would
    // come within the second.
    let fast_came = Gate::new();
    let gate = fast_came.clone();
    let server = family_server(
        vec![
            ("c1", json!({"agent": "slow", "task": "one"})),
            ("c2", json!({"agent": "fast", "task": "two"})),
        ],
        move |me, answer| {
            if me == "slow" {
                gate.wait(Duration::from_secs(1));
            } else {
                gate.open();
            }
            answer
        },
    );
    run(&env, &server.url).arg("parent").assert().success();
    assert!(
        fast_came.ran_out(),
        "the second call came while the first was unanswered"
    );
    assert_eq!(
        results_sent_back(&server),
        [
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "slow did [Task: one]", "is_error": false}),
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "fast did [Task: two]", "is_error": false}),
        ]
    );
}

#[test]
fn refused_calls_come_back_as_error_results() {
    let env = Env::new();
    named(&env, "parent")
        .toml("sub_agents = [\"ghost\", \"broken\", \"keyless\"]")
        .write();
    env.agent("broken", "name = \"broken\"\nmodel = \"nope\"\n");
    env.agent("keyless", "name = \"keyless\"\nmodel = \"openai/gpt\"\n");
    let server = family_server(
        vec![
            ("c1", json!({"agent": "stranger", "task": "x"})),
            ("c2", json!({"agent": "", "task": "x"})),
            ("c3", json!({"agent": "ghost"})),
            ("c4", json!({"agent": "ghost", "task": "x"})),
            ("c5", json!({"agent": "broken", "task": "x"})),
            ("c6", json!({"agent": "keyless", "task": "x"})),
        ],
        as_is,
    );
    // The hosted API (no base URL of one's own) refuses to go keyless.
    run(&env, &server.url)
        .env_remove("OPENAI_API_KEY")
        .env_remove("AXE_OPENAI_BASE_URL")
        .arg("parent")
        .assert()
        .success();
    let contents: Vec<(String, bool)> = results_sent_back(&server)
        .iter()
        .map(|r| {
            (
                r["content"].as_str().unwrap().to_owned(),
                r["is_error"].as_bool().unwrap(),
            )
        })
        .collect();
    let fail = |name: &str, why: &str| {
        (
            format!(
                "Error: sub-agent \"{name}\" failed - {why}. You may retry or proceed without this result."
            ),
            true,
        )
    };
    assert_eq!(
        contents,
        [
            (
                "call_agent error: agent \"stranger\" is not in this agent's sub_agents list"
                    .to_owned(),
                true
            ),
            (
                "call_agent error: \"agent\" argument is required".to_owned(),
                true
            ),
            (
                "call_agent error: \"task\" argument is required".to_owned(),
                true
            ),
            fail(
                "ghost",
                "failed to load agent \"ghost\": agent config not found: ghost"
            ),
            fail(
                "broken",
                "invalid model for agent \"broken\": invalid model format \"nope\": expected provider/model-name"
            ),
            fail(
                "keyless",
                format!(
                    "API key for provider \"openai\" is not configured: OPENAI_API_KEY is not set, and there is no {}",
                    env.config_dir().join("axe/config.toml").display()
                )
                .as_str()
            ),
        ]
    );
}

#[test]
fn unknown_tools_get_an_error_result() {
    let env = Env::new();
    named(&env, "parent").toml("sub_agents = [\"x\"]").write();
    let server = Server::start(vec![
        Answer::json(
            200,
            &json!({"model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
                    "content": [{"type": "tool_use", "id": "t1", "name": "rm_rf", "input": {}}]}),
        ),
        ok("ok then"),
    ]);
    run(&env, &server.url)
        .arg("parent")
        .assert()
        .success()
        .stdout("ok then");
    assert_eq!(
        server.requests()[1].json()["messages"][2]["content"][0]["content"],
        json!("Unknown tool: \"rm_rf\"")
    );
}

#[test]
fn depth_limit_stops_offering_the_tool() {
    let env = Env::new();
    named(&env, "parent")
        .toml("sub_agents = [\"mid\"]\n[sub_agents_config]\nmax_depth = 1")
        .write();
    named(&env, "mid").toml("sub_agents = [\"leaf\"]").write();
    let server = family_server(vec![("c1", json!({"agent": "mid", "task": "t"}))], as_is);
    run(&env, &server.url).arg("parent").assert().success();
    let mid = server
        .requests()
        .into_iter()
        .find(|r| system_of(r) == "You are mid.")
        .unwrap();
    assert!(
        mid.json().get("tools").is_none(),
        "depth 1 of 1: no call_agent"
    );

    // With room for it, the middle agent is offered the tool too.
    named(&env, "parent")
        .toml("sub_agents = [\"mid\"]\n[sub_agents_config]\nmax_depth = 2")
        .write();
    let server = family_server(vec![("c1", json!({"agent": "mid", "task": "t"}))], as_is);
    run(&env, &server.url).arg("parent").assert().success();
    let mid = server
        .requests()
        .into_iter()
        .find(|r| system_of(r) == "You are mid.")
        .unwrap();
    assert_eq!(mid.json()["tools"][0]["name"], "call_agent");
}

#[test]
fn sub_agent_timeout_bounds_each_call() {
    let env = Env::new();
    named(&env, "parent")
        .toml("sub_agents = [\"sleepy\"]\n[sub_agents_config]\ntimeout = 1")
        .write();
    named(&env, "sleepy").write();
    // The sub-agent's answer is held until the run is over: the run can
    // only end by giving up on it.
    let run_over = Gate::new();
    let gate = run_over.clone();
    let server = family_server(
        vec![("c1", json!({"agent": "sleepy", "task": "t"}))],
        move |me, answer| {
            if me == "sleepy" {
                gate.wait(PATIENCE);
            }
            answer
        },
    );
    let started = Instant::now();
    run(&env, &server.url).arg("parent").assert().success();
    let took = started.elapsed();
    run_over.open();
    assert!(!run_over.ran_out(), "the run waited for the held answer");
    assert_eq!(
        results_sent_back(&server)[0]["content"],
        json!(
            "Error: sub-agent \"sleepy\" failed - timeout: no complete reply within 1s. You may retry or proceed without this result."
        )
    );
    // Not before the sub-agent's second was up (less a timer tick: the
    // kernel may wake a read that much early), and nowhere near the
    // held answer's patience.
    assert!(
        took >= Duration::from_millis(990) && took < Duration::from_secs(15),
        "took {took:?}"
    );
}

#[test]
fn sub_agent_memory_is_its_own() {
    let env = Env::new();
    named(&env, "parent")
        .toml("sub_agents = [\"rem\", \"plain\"]")
        .memory("")
        .write();
    named(&env, "rem").memory("").write();
    named(&env, "plain").write();
    env.write(&env.log_path("rem"), entries(1));
    let server = family_server(
        vec![
            (
                "c1",
                json!({"agent": "rem", "task": "remember", "context": "c"}),
            ),
            ("c2", json!({"agent": "plain", "task": "forget"})),
        ],
        as_is,
    );
    run(&env, &server.url)
        .arg("parent")
        .write_stdin("top task")
        .assert()
        .success();
    let rem_req = server
        .requests()
        .into_iter()
        .find(|r| system_of(r).starts_with("You are rem."))
        .unwrap();
    assert_eq!(
        system_of(&rem_req),
        format!("You are rem.\n\n---\n\n## Memory\n\n{}", entries(1))
    );
    let rem_log = read(&env.log_path("rem"));
    assert!(
        matches_entry(
            &rem_log[entries(1).len()..],
            "Task: remember  Context: c",
            "rem did [Task: remember\n\nContext:\nc]"
        ),
        "{rem_log}"
    );
    assert!(!env.log_path("plain").exists(), "memory disabled: no file");
    let parent_log = read(&env.log_path("parent"));
    assert_eq!(header_count(&parent_log), 1);
    assert!(parent_log.contains("**Task:** top task\n**Result:** parent saw"));
}

#[test]
fn a_sub_agent_with_a_context_budget_gets_its_one_block() {
    let env = Env::new();
    named(&env, "parent").toml("sub_agents = [\"ctx\"]").write();
    named(&env, "ctx")
        .toml("[memory]\nenabled = true\n[context]\nbudget = 1000")
        .write();
    env.write(&env.log_path("ctx"), entries(2));
    let server = family_server(vec![("c1", json!({"agent": "ctx", "task": "go"}))], as_is);
    run(&env, &server.url)
        .arg("parent")
        .write_stdin("top task")
        .assert()
        .success();
    let req = server
        .requests()
        .into_iter()
        .find(|r| system_of(r).starts_with("You are ctx."))
        .unwrap();
    assert_eq!(
        system_of(&req),
        "You are ctx.",
        "no entries in the system prompt"
    );
    assert_eq!(
        req.json()["messages"][0]["content"],
        format!(
            "Task: go\n\n# Recent Runs\n\n{}\n\n{}\n",
            entry(1).trim_end(),
            entry(0).trim_end()
        )
    );
}

#[test]
fn failed_sub_agent_appends_nothing() {
    let env = Env::new();
    named(&env, "parent").toml("sub_agents = [\"rem\"]").write();
    named(&env, "rem").memory("").write();
    let server = Server::route(|req| {
        if system_of(req).starts_with("You are rem.") {
            return Answer::json(500, &json!({"error": {"message": "down"}}));
        }
        if req.json()["messages"].as_array().unwrap().len() == 1 {
            return Answer::json(
                200,
                &tool_use(&[("c1", json!({"agent": "rem", "task": "t"}))]),
            );
        }
        ok("carried on")
    });
    run(&env, &server.url)
        .args(["parent", "-v"])
        .assert()
        .success()
        .stdout("carried on")
        .stderr(predicate::str::contains(format!(
            "[sub-agent] \"rem\" failed: server: down ({}/v1/messages answered 500)\n",
            server.url
        )));
    assert!(!env.log_path("rem").exists());
}

#[test]
fn verbose_traces_turns_and_sub_agents() {
    let env = Env::new();
    named(&env, "parent").toml("sub_agents = [\"kid\"]").write();
    named(&env, "kid").write();
    let server = family_server(vec![("c1", json!({"agent": "kid", "task": "play"}))], as_is);
    let out = run(&env, &server.url)
        .args(["parent", "-v"])
        .assert()
        .success();
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    let tail: Vec<&str> = err.lines().skip(7).collect();
    assert_eq!(
        tail[0],
        "[turn 1] Sending request (1 messages, 0 tool calls pending)"
    );
    assert_eq!(
        tail[1],
        "[turn 1] Received response: tool_use (1 tool calls)"
    );
    assert_eq!(
        tail[2],
        "[sub-agent] Calling \"kid\" (depth 1) with task: play"
    );
    assert!(
        predicate::str::is_match(
            r#"^\[sub-agent\] "kid" completed in \d+ms \(20 chars returned\)$"#
        )
        .unwrap()
        .eval(tail[3]),
        "{}",
        tail[3]
    );
    // Every call, as it ends: its arguments, outcome and result.
    assert!(
        predicate::str::is_match(
            r#"^\[tool\] call_agent \{"agent":"kid","task":"play"\} \(success, \d+ms\): kid did \[Task: play\]$"#
        )
        .unwrap()
        .eval(tail[4]),
        "{}",
        tail[4]
    );
    assert_eq!(
        tail[5],
        "[turn 2] Sending request (3 messages, 1 tool calls pending)"
    );
    assert_eq!(
        tail[6],
        "[turn 2] Received response: end_turn (0 tool calls)"
    );
    assert_eq!(
        tail[8..],
        [
            "Tokens:   16 input, 10 output (cumulative)",
            "Stop:     end_turn"
        ]
    );
}

#[test]
fn endless_tool_calls_hit_the_turn_limit() {
    let env = Env::new();
    named(&env, "loop")
        .toml("sub_agents = [\"x\"]")
        .memory("")
        .write();
    let server = Server::start(vec![Answer::json(
        200,
        &tool_use(&[("c", json!({"agent": "nobody", "task": "t"}))]),
    )]);
    run(&env, &server.url)
        .arg("loop")
        .assert()
        .code(1)
        .stderr("agent exceeded maximum conversation turns (50)\n");
    assert_eq!(server.requests().len(), 50);
    assert!(!env.log_path("loop").exists());
}

// --- exit codes ----------------------------------------------------------

#[test]
fn every_exit_code() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(
        400,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
    )]);
    named(&env, "a").write();
    env.agent("badmodel", "name = \"badmodel\"\nmodel = \"gpt4\"\n");
    env.agent("gemini", "name = \"gemini\"\nmodel = \"gemini/pro\"\n");
    env.agent("broken", "name = \"broken\"\nmodel = [\n");
    env.agent(
        "invalid",
        "name = \"invalid\"\nmodel = \"a/b\"\n[memory]\nlast_n = -1\n",
    );
    let bad = format!(
        "bad_request: bad ({}/v1/messages answered 400)\n",
        server.url
    );
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (
            vec![],
            1,
            "agent name is required; usage: axe-run [OPTIONS] <AGENT> [PROMPT]...\n",
        ),
        (
            vec!["a", "--temperature", "warm"],
            1,
            "error parsing flag --temperature: invalid number \"warm\"\n",
        ),
        (
            vec!["a", "--timeout", "0"],
            1,
            "--timeout must be a positive number of seconds\n",
        ),
        (vec!["a", "--bogus"], 1, "unrecognized flag --bogus\n"),
        (vec!["ghost"], 2, "agent config not found: ghost\n"),
        // Flags are read before any file, as cobra parsed them in Go: a
        // malformed one is the error even when the agent is missing too.
        (
            vec!["ghost", "--max-tokens", "many"],
            1,
            "error parsing flag --max-tokens: invalid number \"many\"\n",
        ),
        (
            vec!["ghost", "--temperature", "warm"],
            1,
            "error parsing flag --temperature: invalid number \"warm\"\n",
        ),
        (
            vec!["../x"],
            2,
            "agent name \"../x\" must not contain path separators or be \".\" or \"..\"\n",
        ),
        (vec!["invalid"], 2, "memory.last_n must be non-negative\n"),
        (
            vec!["badmodel"],
            1,
            "invalid model format \"gpt4\": expected provider/model-name\n",
        ),
        (
            vec!["gemini"],
            1,
            "unsupported provider \"gemini\": supported providers are anthropic, openai, ollama, openrouter, google, requesty, atlascloud, edenai\n",
        ),
        (vec!["a"], 1, &bad),
    ];
    for (args, code, err) in cases {
        run(&env, &server.url)
            .args(&args)
            .assert()
            .code(code)
            .stderr(err.to_owned());
    }
    run(&env, &server.url)
        .arg("broken")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "failed to parse agent config \"broken\": line ",
        ));
    env.cmd("axe-run")
        .arg("a")
        .assert()
        .code(2)
        .stderr(format!(
            "API key for provider \"anthropic\" is not configured: ANTHROPIC_API_KEY is not set, and there is no {}\n",
            env.config_dir().join("axe/config.toml").display()
        ));
    env.write(&env.config_dir().join("axe/config.toml"), "[providers\n");
    run(&env, &server.url)
        .arg("a")
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "failed to parse config.toml: line 1",
        ));
}

#[test]
fn top_level_timeout_is_exit_3() {
    let env = Env::new();
    let server = Server::start(vec![Answer::Hang(Duration::from_secs(4))]);
    named(&env, "slow").memory("").write();
    run(&env, &server.url)
        .args(["slow", "--timeout", "1"])
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 1s\n");
    assert!(!env.log_path("slow").exists());
}

// --- the agent's own timeout and stream -------------------------------------

#[test]
fn the_agents_timeout_bounds_the_run_unless_timeout_is_given() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::Hang(Duration::from_secs(5)),
        Answer::Hang(Duration::from_secs(5)),
    ]);
    named(&env, "slow").toml("timeout = 1").write();
    run(&env, &server.url)
        .arg("slow")
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 1s\n");
    run(&env, &server.url)
        .args(["slow", "--timeout", "2"])
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 2s\n");
    assert_eq!(server.requests().len(), 2);
    // The dry run shows the timeout in effect.
    let out = run(&env, &server.url)
        .args(["slow", "--dry-run"])
        .assert()
        .success();
    assert!(stdout(out.get_output()).contains("Timeout:  1s\n"));
}

#[test]
fn a_negative_or_huge_agent_timeout_is_a_config_error() {
    let env = Env::new();
    named(&env, "neg").toml("timeout = -1").write();
    named(&env, "huge").toml("timeout = 86401").write();
    env.cmd("axe-run")
        .arg("neg")
        .assert()
        .code(2)
        .stderr("timeout must be non-negative\n");
    env.cmd("axe-run")
        .arg("huge")
        .assert()
        .code(2)
        .stderr("timeout cannot exceed 86400\n");
}

#[test]
fn stream_true_in_the_agent_streams_as_the_flag_does() {
    let env = Env::new();
    let server = Server::start(vec![stream_answer("anthropic", &["a", "b", "c"])]);
    named(&env, "s").toml("stream = true").write();
    run(&env, &server.url)
        .args(["s", "go"])
        .assert()
        .success()
        .stdout("abc")
        .stderr("");
    assert_eq!(server.only_request().json()["stream"], json!(true));
}

// --- [retry] -----------------------------------------------------------------

#[test]
fn retry_waits_out_rate_limits_and_server_errors_and_counts_them() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::json(
            429,
            &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
        ),
        Answer::json(503, &json!({})),
        ok("done"),
    ]);
    named(&env, "r")
        .toml("[retry]\nmax_retries = 2\nbackoff = \"fixed\"\ninitial_delay_ms = 10")
        .write();
    let out = run(&env, &server.url)
        .args(["r", "-v", "--json", "go"])
        .assert()
        .success();
    let doc: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        (doc["content"].clone(), doc["retry_attempts"].clone()),
        (json!("done"), json!(2))
    );
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("[retry] Attempt 2/3 after rate_limit, waiting 10ms\n"),
        "{err}"
    );
    assert!(
        err.contains("[retry] Attempt 3/3 after server, waiting 10ms\n"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn retry_honours_retry_after_and_gives_up_after_max_retries() {
    let env = Env::new();
    let limited = || {
        Answer::json(429, &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}))
            .with_header("retry-after", "1")
    };
    let server = Server::start(vec![limited(), limited(), ok("never")]);
    named(&env, "r")
        .toml("[retry]\nmax_retries = 1\nbackoff = \"linear\"\ninitial_delay_ms = 10")
        .write();
    run(&env, &server.url)
        .args(["r", "-v", "go"])
        .assert()
        .code(3)
        .stderr(predicate::str::contains(
            "[retry] Attempt 2/2 after rate_limit, waiting 1000ms\n",
        ))
        .stderr(predicate::str::ends_with(format!(
            "rate_limit: slow down ({}/v1/messages answered 429)\n",
            server.url
        )));
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn retry_never_repeats_auth_or_bad_requests_and_is_off_by_default() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::json(
            401,
            &json!({"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}),
        ),
        Answer::json(
            400,
            &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}}),
        ),
        Answer::json(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        ),
        ok("never"),
    ]);
    named(&env, "r")
        .toml("[retry]\nmax_retries = 3\ninitial_delay_ms = 10")
        .write();
    named(&env, "plain").write();
    run(&env, &server.url)
        .args(["r", "go"])
        .assert()
        .code(3)
        .stderr(format!(
            "auth: bad key ({}/v1/messages answered 401)\n",
            server.url
        ));
    run(&env, &server.url)
        .args(["r", "go"])
        .assert()
        .code(1)
        .stderr(format!(
            "bad_request: bad ({}/v1/messages answered 400)\n",
            server.url
        ));
    run(&env, &server.url)
        .args(["plain", "go"])
        .assert()
        .code(3)
        .stderr(format!(
            "overloaded: busy ({}/v1/messages answered 529)\n",
            server.url
        ));
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_stream_that_fails_before_its_first_byte_is_retried() {
    let env = Env::new();
    let server = Server::start(vec![
        Answer::json(
            529,
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}),
        ),
        stream_answer("anthropic", &["a", "b", "c"]),
    ]);
    named(&env, "s")
        .toml("stream = true\n[retry]\nmax_retries = 1\ninitial_delay_ms = 10")
        .write();
    run(&env, &server.url)
        .args(["s", "go"])
        .assert()
        .success()
        .stdout("abc")
        .stderr("");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[1].json()["stream"], json!(true));
}

#[test]
fn retry_fields_are_checked() {
    let env = Env::new();
    for (extra, message) in [
        (
            "backoff = \"random\"",
            "retry.backoff must be one of exponential, linear, fixed (not \"random\")\n",
        ),
        (
            "max_retries = -1",
            "retry.max_retries must be non-negative\n",
        ),
        (
            "initial_delay_ms = -5",
            "retry.initial_delay_ms must be non-negative\n",
        ),
        (
            "max_delay_ms = -5",
            "retry.max_delay_ms must be non-negative\n",
        ),
        (
            "initial_delay_ms = 2000\nmax_delay_ms = 1000",
            "retry.max_delay_ms must be at least retry.initial_delay_ms\n",
        ),
    ] {
        named(&env, "bad")
            .toml(&format!("[retry]\n{extra}"))
            .write();
        env.cmd("axe-run")
            .arg("bad")
            .assert()
            .code(2)
            .stderr(message);
    }
}

#[test]
fn a_run_says_when_the_run_log_cut_its_task_or_answer() {
    let env = Env::new();
    let long = "a".repeat(1500);
    let server = Server::start(vec![ok(&long), ok(&long), ok("short")]);
    named(&env, "m").memory("").write();
    let task = "t".repeat(1200);
    let out = run(&env, &server.url)
        .args(["m", "-v", &task])
        .assert()
        .success()
        .stdout(long.clone());
    let err = String::from_utf8(out.get_output().stderr.clone()).unwrap();
    assert!(
        err.contains("Memory:   task and answer cut to 1000 characters in the run log\n"),
        "{err}"
    );
    let out = run(&env, &server.url)
        .args(["m", "--json", "short task"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (&doc["truncated"], &doc["task_truncated"]),
        (&json!(true), &json!(false))
    );
    // Kept whole: said as false; nothing to say without a log entry.
    let out = run(&env, &server.url)
        .args(["m", "--json", "short task"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(
        (&doc["truncated"], &doc["task_truncated"]),
        (&json!(false), &json!(false))
    );
}

/// The guide's import recipe, end to end: Claude Code's project folder
/// imported (its `memory/` found in it), a 35 KB vault imported beside
/// it, and the agent, with `[context]` as the guide sets it, gets the
/// imported MEMORY.md (its links pointing at the topics' new names) and
/// its own logs of today and yesterday in the prompt it is sent; its
/// `recall` returns them too, however much the vault holds.
#[test]
fn imported_memory_and_todays_log_reach_the_models_prompt_and_recall() {
    let env = Env::new();
    env.agent(
        "app",
        "name = \"app\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nrecall_days = 2\n\
         [context]\nbudget = 12000\norder = [\"memory\", \"daily\", \"world\"]\n",
    );
    let memory = crate::import::claude_code_project(&env);
    let vault = crate::import::vault(&env, 35);
    for path in [memory.parent().unwrap(), &vault] {
        let source = match path == vault {
            true => "markdown",
            false => "claude-code",
        };
        env.cmd("axe-import")
            .args([source, path.to_str().unwrap(), "--agent", "app"])
            .assert()
            .success();
    }
    env.cmd("axe-notes-remember")
        .args(["app", "Today's own note."])
        .assert()
        .success();
    let yesterday = time::OffsetDateTime::now_utc().date() - time::Duration::days(1);
    let ws = crate::import::workspace(&env);
    env.write(
        &ws.join(format!("agents/app/daily/{yesterday}.md")),
        format!("# {yesterday}\n\n## 10:00\n\nYesterday's own note.\n"),
    );
    let recall = json!({
        "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "tool_use", "id": "c1", "name": "recall", "input": {}}]
    });
    let server = Server::start(vec![
        Answer::json(200, &recall),
        ok("You are a data scientist new to Rust."),
    ]);
    run(&env, &server.url)
        .args(["app", "Who am I?"])
        .assert()
        .success()
        .stdout("You are a data scientist new to Rust.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let prompt = String::from_utf8_lossy(&requests[0].body).into_owned();
    for said in [
        "a data scientist new to Rust",
        "(../../world/user-role.md)",
        "Today's own note.",
        "Yesterday's own note.",
    ] {
        assert!(
            prompt.contains(said),
            "{said:?} not in the prompt: {prompt}"
        );
    }
    let messages = requests[1].json()["messages"].clone();
    let recalled = messages.as_array().unwrap().last().unwrap()["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    for said in [
        "a data scientist new to Rust",
        "Today's own note.",
        "Yesterday's own note.",
        "Left out to keep within",
    ] {
        assert!(recalled.contains(said), "{said:?} not recalled: {recalled}");
    }
}
