//! What bounds a run besides its tokens: standard input read within the
//! run's deadline and a size limit (`axe-run`, `axe-llm`), and parallel
//! tool calls held to one pool for the whole tree of agents.

use std::io::Write;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::mcp_client::{agent, ok};
use crate::server::Server;
use crate::util::Env;
use crate::wire::KEY;

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
    agent(env, "a", "", "");
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
