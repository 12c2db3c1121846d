//! The stdio transport: the server is a child process in a process group of
//! its own, one JSON-RPC message a line each way. A thread reads its output
//! (lines bounded as the server's own reader bounds them) and hands each
//! answer to its request; another drains its stderr, to `-v` or nowhere,
//! so a chatty server never blocks on a full pipe. Closing it follows the
//! protocol: stdin closed, then SIGTERM, then SIGKILL, to the whole group.
//!
//! A server may stop reading its input at any moment, and a write to it
//! then blocks for good once the pipe is full (64 KiB: one large tool
//! call). So only the writer thread ever writes: callers queue a message
//! and wait for its answer under their deadline, the reader queues its
//! answers to the server's own requests (a capped number of them: a
//! server that asks and never reads loses the rest), and closing takes no
//! lock the writer can hold while it is stuck. A stuck writer is freed
//! when the group is killed (the write fails: nobody reads the pipe).

use std::collections::VecDeque;
use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio as Piped};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::error::McpError;
use super::jsonrpc::{self, Line, MAX_LINE};
use super::pending::Pending;
use super::transport::Transport;
use axe_base::lock::Recover;
use axe_base::report::Report;
use axe_base::signals::{self, Stop};

/// What of our own environment a server gets besides its `env`: where
/// programs and home are, who and where the user is, how text is encoded,
/// and the XDG directories (so `axe-mcp` finds its agent). Never a key.
const PASSED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TERM",
    "TZ",
    "TMPDIR",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "XDG_CONFIG_HOME",
    "XDG_DATA_HOME",
    "XDG_CACHE_HOME",
    "XDG_STATE_HOME",
    "XDG_RUNTIME_DIR",
];

/// How long a server has to go after each step of closing it.
const GRACE: Duration = Duration::from_millis(500);

/// The most answers to the server's own requests waiting to be written:
/// a server that reads its input takes them far quicker than it asks.
const MAX_REPLIES: usize = 64;

pub struct Stdio {
    outbox: Arc<Outbox>,
    child: Arc<Mutex<Child>>,
    pending: Arc<Pending>,
}

/// What is on its way to the server, for the writer thread.
#[derive(Default)]
struct Outbox {
    queue: Mutex<Queue>,
    changed: Condvar,
}

#[derive(Default)]
struct Queue {
    /// Whole lines, each with whether it answers the server.
    lines: VecDeque<(Vec<u8>, bool)>,
    replies: usize,
    /// Set by close: the writer drops the server's input at once.
    closed: bool,
    /// Why writing stopped, once it has.
    failed: Option<String>,
}

/// What starts a server.
pub struct Launch<'a> {
    pub name: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    /// Its `env`, expanded.
    pub env: Vec<(String, String)>,
    pub cwd: &'a Path,
    /// Where its standard error's lines go (`-v`), if anywhere.
    pub stderr_to: Option<Arc<dyn Report>>,
}

impl Stdio {
    pub fn start(launch: Launch) -> Result<Stdio, McpError> {
        let mut cmd = Command::new(launch.command);
        cmd.args(launch.args)
            .env_clear()
            .envs(
                PASSED
                    .iter()
                    .filter_map(|k| Some((*k, std::env::var_os(k)?))),
            )
            .envs(launch.env)
            .current_dir(launch.cwd)
            .stdin(Piped::piped())
            .stdout(Piped::piped())
            .stderr(Piped::piped());
        let mut child = signals::spawn_group(&mut cmd).map_err(|source| McpError::Start {
            command: launch.command.to_owned(),
            source,
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("its standard streams could not be opened".into());
        };
        let child = Arc::new(Mutex::new(child));
        let pending = Arc::new(Pending::default());
        let outbox = Arc::new(Outbox::default());
        let transport = Stdio {
            outbox: Arc::clone(&outbox),
            child: Arc::clone(&child),
            pending: Arc::clone(&pending),
        };
        let name = launch.name.to_owned();
        drain(stderr, launch.stderr_to.map(|report| (report, name)));
        let writes = Arc::clone(&outbox);
        thread::spawn(move || write(stdin, &writes));
        let replies = move |message: Value| {
            let _ = outbox.put(&message, true);
        };
        thread::spawn(move || read(stdout, &pending, &child, &replies));
        Ok(transport)
    }
}

impl Outbox {
    fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().recover()
    }

    /// Queues `message` for the writer; never waits on the server. An
    /// answer to the server (`reply`) past [`MAX_REPLIES`] is dropped.
    fn put(&self, message: &Value, reply: bool) -> Result<(), McpError> {
        let mut line = serde_json::to_vec(message).map_err(McpError::Encode)?;
        line.push(b'\n');
        let mut queue = self.queue();
        if queue.closed {
            return Err("the server was closed".into());
        }
        if let Some(why) = &queue.failed {
            return Err(why.clone().into());
        }
        if reply {
            if queue.replies >= MAX_REPLIES {
                return Ok(());
            }
            queue.replies += 1;
        }
        queue.lines.push_back((line, reply));
        self.changed.notify_one();
        Ok(())
    }

    /// The next line to write, or `None` once the server is closed.
    fn next(&self) -> Option<Vec<u8>> {
        let mut queue = self.queue();
        loop {
            if queue.closed {
                return None;
            }
            if let Some((line, reply)) = queue.lines.pop_front() {
                queue.replies -= usize::from(reply);
                return Some(line);
            }
            queue = self.changed.wait(queue).recover();
        }
    }

    fn close(&self) {
        self.queue().closed = true;
        self.changed.notify_one();
    }
}

/// The writer thread: the queue's lines, whole and in order, until the
/// server is closed (its input then dropped, which asks it to go) or a
/// write fails. It alone blocks when the server stops reading.
fn write(mut stdin: ChildStdin, outbox: &Outbox) {
    while let Some(line) = outbox.next() {
        if let Err(e) = stdin.write_all(&line).and_then(|()| stdin.flush()) {
            let mut queue = outbox.queue();
            queue.failed = Some(format!(
                "the server is not reading its input: {}",
                axe_base::error::describe_io(&e)
            ));
            queue.lines.clear();
            return;
        }
    }
}

impl Transport for Stdio {
    fn request(
        &self,
        id: u64,
        message: &Value,
        _headers: &[(String, String)],
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let rx = self.pending.expect(id)?;
        if let Err(e) = self.outbox.put(message, false) {
            self.pending.forget(id);
            return Err(e);
        }
        self.pending.wait(id, &rx, deadline)
    }

    fn notify(&self, message: &Value, _deadline: Instant) -> Result<(), McpError> {
        self.outbox.put(message, false)
    }

    fn close(&self) {
        // End of input asks the server to go, as soon as the writer is
        // not stuck in a write; if it is, the signals below free it.
        self.outbox.close();
        let mut child = self.child.lock().recover();
        let group = child.id();
        for step in [None, Some(Stop::Term), Some(Stop::Kill)] {
            if let Some(how) = step {
                signals::stop_group(group, how);
            }
            if exited_within(&mut child, GRACE) {
                break;
            }
        }
        // Whatever the leader left behind in its group goes with it.
        signals::stop_group(group, Stop::Kill);
        let _ = child.wait();
        signals::forget_group(group);
    }
}

fn exited_within(child: &mut Child, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        if !matches!(child.try_wait(), Ok(None)) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

/// Reads the server's messages until its output ends, then tells every
/// request still waiting why.
fn read(out: impl Read, pending: &Pending, child: &Mutex<Child>, reply: &dyn Fn(Value)) {
    let mut out = BufReader::new(out);
    loop {
        match jsonrpc::read_line(&mut out) {
            Ok(Line::Message(line)) => {
                // A line that is not JSON (a stray log) is not an answer.
                if let Ok(message) = serde_json::from_slice(&line) {
                    pending.handle(message, reply);
                }
            }
            Ok(Line::TooLong) => {
                return pending.end(format!(
                    "the server sent a message over {} MiB",
                    MAX_LINE >> 20
                ));
            }
            Ok(Line::End) | Err(_) => break,
        }
    }
    // The output closes as the server exits: say how, when it is quick.
    let status = {
        let mut child = child.lock().recover();
        exited_within(&mut child, Duration::from_millis(200))
            .then(|| child.try_wait().ok().flatten())
            .flatten()
    };
    pending.end(match status {
        Some(status) => format!("the server exited ({status})"),
        None => "the server closed its output".into(),
    });
}

/// Reads the server's stderr to its end, each line to the reporter as
/// `[mcp] NAME: line` when one is given (`-v`), else nowhere.
fn drain(err: impl Read + Send + 'static, to: Option<(Arc<dyn Report>, String)>) {
    thread::spawn(move || {
        let mut err = BufReader::new(err);
        loop {
            match jsonrpc::read_line(&mut err) {
                Ok(Line::Message(line)) => {
                    if let Some((report, name)) = &to {
                        report.note(format_args!(
                            "[mcp] {name}: {}",
                            String::from_utf8_lossy(&line).trim_end()
                        ));
                    }
                }
                Ok(Line::TooLong) => {}
                Ok(Line::End) | Err(_) => return,
            }
        }
    });
}
