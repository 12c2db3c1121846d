//! What bounds a run besides its tokens: standard input read within the
//! run's deadline and a size limit (`axe-run`, `axe-llm`), and parallel
//! tool calls held to one pool for the whole tree of agents.

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::mcp_client::ok;
use crate::server::Server;
use crate::util::Env;
use crate::wire::KEY;
use serde_json::{Value, json};

/// The most of standard input a prompt takes (docs/reference.md).
const STDIN_LIMIT: usize = 16 << 20;

/// `bin` with `args` against `server`, its standard input a pipe this
/// test holds.
fn spawn(env: &Env, server: &Server, bin: &str, args: &[&str]) -> Child {
    let mut cmd = env.std_cmd(bin);
    for p in ["ANTHROPIC", "OPENAI", "OLLAMA"] {
        cmd.env(format!("AXE_{p}_BASE_URL"), &server.url);
    }
    cmd.env("ANTHROPIC_API_KEY", KEY)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits for `child` at most `limit` (killing it then, and failing):
/// its exit code and stderr.
fn ended_within(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let until = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut err = String::new();
            std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
            return (status.code(), err);
        }
        if Instant::now() > until {
            let _ = child.kill();
            let _ = child.wait();
            panic!("still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The commands that read a prompt from standard input, with what they
/// need besides it.
fn readers(env: &Env) -> [(&'static str, Vec<&'static str>); 2] {
    env.agent_file("a").workdir(env.root()).write();
    [
        ("axe-run", vec!["a"]),
        ("axe-llm", vec!["-m", "anthropic/claude-test"]),
    ]
}

#[test]
fn a_pipe_that_never_closes_ends_at_the_deadline() {
    let env = Env::new();
    let server = Server::start(vec![ok("never")]);
    for (bin, args) in readers(&env) {
        let mut child = spawn(
            &env,
            &server,
            bin,
            &[&args[..], &["--timeout", "2"]].concat(),
        );
        // Some input, and the write end held open: no end of file comes.
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(b"the task\n").unwrap();
        let (code, err) = ended_within(child, Duration::from_secs(20));
        drop(pipe);
        assert_eq!(code, Some(3), "{bin}: {err}");
        assert_eq!(
            err, "timeout: standard input did not end within 2s\n",
            "{bin}"
        );
    }
    assert!(server.requests().is_empty(), "nothing was sent");
}

#[test]
fn standard_input_over_the_limit_is_refused_without_waiting_for_its_end() {
    let env = Env::new();
    let server = Server::start(vec![ok("never")]);
    for (bin, args) in readers(&env) {
        // A long deadline: the refusal comes from the size alone.
        let mut child = spawn(
            &env,
            &server,
            bin,
            &[&args[..], &["--timeout", "600"]].concat(),
        );
        let mut pipe = child.stdin.take().unwrap();
        let big = vec![b'x'; STDIN_LIMIT + 1];
        // The command may stop reading once it has seen enough.
        let _ = pipe.write_all(&big);
        let (code, err) = ended_within(child, Duration::from_secs(60));
        drop(pipe);
        assert_eq!(code, Some(1), "{bin}: {err}");
        assert_eq!(
            err, "failed to read standard input: over the limit of 16 MiB\n",
            "{bin}"
        );
    }
    assert!(server.requests().is_empty(), "nothing was sent");
}

/// How many sub-agents' requests the provider is answering at once, and
/// the most there ever were: each request is held a moment, so calls that
/// run together overlap there.
#[derive(Clone, Default)]
struct Overlap(std::sync::Arc<std::sync::Mutex<(usize, usize)>>);

impl Overlap {
    fn hold(&self) {
        {
            let mut now = self.0.lock().unwrap();
            now.0 += 1;
            now.1 = now.1.max(now.0);
        }
        std::thread::sleep(Duration::from_millis(20));
        self.0.lock().unwrap().0 -= 1;
    }

    fn peak(&self) -> usize {
        self.0.lock().unwrap().1
    }
}

/// A provider for `parent`, which calls `child` `fan` times, each child
/// calling `leaf` `fan_out` times (none when 0). Every sub-agent's request
/// is held in `overlap`; a sub-agent's answer names its task and what
/// its own calls answered.
fn tree_server(fan: usize, fan_out: usize, overlap: Overlap) -> Server {
    use crate::mcp_client::calls;
    Server::route(move |req| {
        let body = req.json();
        let system = crate::wire::system_text(&body);
        let messages = body["messages"].as_array().unwrap();
        let task = messages[0]["content"].as_str().unwrap_or_default();
        let fan_to = |to: &str, n: usize| {
            let list: Vec<(String, Value)> = (0..n)
                .map(|i| {
                    (
                        format!("c{i}"),
                        json!({"agent": to, "task": format!("{i}")}),
                    )
                })
                .collect();
            let list: Vec<(&str, &str, Value)> = list
                .iter()
                .map(|(id, input)| (id.as_str(), "call_agent", input.clone()))
                .collect();
            calls(&list)
        };
        let answered = || -> String {
            let results = messages.last().unwrap()["content"].as_array().unwrap();
            results
                .iter()
                .map(|r| r["content"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
                .join(",")
        };
        if system.starts_with("You are parent.") {
            return match messages.len() {
                1 => fan_to("child", fan),
                _ => ok("parent done"),
            };
        }
        overlap.hold();
        match (system.starts_with("You are child."), messages.len()) {
            (true, 1) if fan_out > 0 => fan_to("leaf", fan_out),
            (true, 1) => ok(&format!("[{task}]")),
            (true, _) => ok(&format!("[{task}: {}]", answered())),
            (false, _) => ok(task),
        }
    })
}

/// The parent's second request: the results of its calls, in call order.
fn parents_results(server: &Server) -> Vec<Value> {
    let second = server
        .requests()
        .into_iter()
        .find(|r| {
            crate::wire::system_text(&r.json()).starts_with("You are parent.")
                && r.json()["messages"].as_array().unwrap().len() == 3
        })
        .expect("the parent's second turn");
    second.json()["messages"][2]["content"]
        .as_array()
        .unwrap()
        .clone()
}

fn family(env: &Env, parent_tables: &str) {
    env.agent_file("parent")
        .workdir(env.root())
        .toml("system_prompt = \"You are parent.\"\nsub_agents = [\"child\"]")
        .toml(parent_tables)
        .write();
    env.agent_file("child")
        .workdir(env.root())
        .toml("system_prompt = \"You are child.\"\nsub_agents = [\"leaf\"]")
        .write();
    env.agent_file("leaf")
        .workdir(env.root())
        .toml("system_prompt = \"You are leaf.\"")
        .write();
}

#[test]
fn a_reply_of_500_calls_runs_at_most_8_at_once_and_answers_all_in_order() {
    let env = Env::new();
    family(&env, "");
    let overlap = Overlap::default();
    let server = tree_server(500, 0, overlap.clone());
    crate::run::run(&env, &server.url)
        .arg("parent")
        .assert()
        .success()
        .stdout("parent done");
    let results = parents_results(&server);
    assert_eq!(results.len(), 500);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["tool_use_id"], format!("c{i}"));
        assert_eq!(r["content"], format!("[Task: {i}]"), "{r}");
        assert_eq!(r["is_error"], false);
    }
    let peak = overlap.peak();
    // That they still run at once is run.rs's
    // sub_agents_run_in_parallel_and_results_keep_call_order.
    assert!(peak <= 8, "{peak} calls ran at once, over the default of 8");
}

#[test]
fn max_parallel_bounds_the_whole_tree_and_nested_calls_never_wait_on_their_callers() {
    let env = Env::new();
    family(&env, "[sub_agents_config]\nmax_parallel = 3");
    let overlap = Overlap::default();
    // 20 children calling 10 leaves each: 220 sub-agents in one tree.
    let server = tree_server(20, 10, overlap.clone());
    crate::run::run(&env, &server.url)
        .arg("parent")
        .assert()
        .success()
        .stdout("parent done");
    let results = parents_results(&server);
    let leaves: Vec<String> = (0..10).map(|i| format!("Task: {i}")).collect();
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r["content"], format!("[Task: {i}: {}]", leaves.join(",")));
    }
    assert_eq!(results.len(), 20);
    let peak = overlap.peak();
    assert!(
        peak <= 3,
        "{peak} sub-agents ran at once, over max_parallel = 3"
    );
}

/// The memory tools that take standard input hold at most 64 MiB of it
/// (docs/reference.md): more is refused as soon as it is seen, nothing
/// written, rather than held in memory to the pipe's end.
#[test]
fn memory_tools_refuse_standard_input_over_their_limit() {
    const MEMORY_LIMIT: usize = 64 << 20;
    let env = Env::new();
    env.agent(
        "m",
        "name = \"m\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\n[state]\nenabled = true\n",
    );
    let big = vec![b'x'; MEMORY_LIMIT + 1];
    for args in [
        &["axe-notes-remember", "m"][..],
        &["axe-notes-reflect", "m"],
        &["axe-notes-learn", "--agent", "m", "topic"],
        &["axe-state-ingest", "m"],
    ] {
        let mut child = env
            .std_cmd(args[0])
            .args(&args[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut pipe = child.stdin.take().unwrap();
        // The command may stop reading once it has seen enough.
        let _ = pipe.write_all(&big);
        let (code, err) = ended_within(child, Duration::from_secs(60));
        drop(pipe);
        assert_eq!(code, Some(1), "{args:?}: {err}");
        assert!(
            err.ends_with("failed to read standard input: over the limit of 64 MiB\n"),
            "{args:?}: {err}"
        );
    }
    let written: Vec<_> = walk(&env.data_dir());
    assert!(written.is_empty(), "nothing written: {written:?}");
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| match e.file_type().is_ok_and(|t| t.is_dir()) {
            true => walk(&e.path()),
            false => vec![e.path()],
        })
        .collect()
}
