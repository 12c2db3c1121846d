//! The stdio transport: the server is a child process in a process group of
//! its own, one JSON-RPC message a line each way. A thread reads its output
//! (lines bounded as the server's own reader bounds them) and hands each
//! answer to its request; another drains its stderr, to `-v` or nowhere,
//! so a chatty server never blocks on a full pipe. Closing it follows the
//! protocol: stdin closed, then SIGTERM, then SIGKILL, to the whole group.

use std::io::{BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio as Piped};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::super::jsonrpc::{self, Line, MAX_LINE};
use super::pending::Pending;
use super::transport::Transport;
use crate::signals::{self, Stop};
use crate::stderr::note;

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

pub struct Stdio {
    stdin: Arc<Mutex<Option<ChildStdin>>>,
    child: Arc<Mutex<Child>>,
    pending: Arc<Pending>,
}

/// What starts a server.
pub struct Launch<'a> {
    pub name: &'a str,
    pub command: &'a str,
    pub args: &'a [String],
    /// Its `env`, expanded.
    pub env: Vec<(String, String)>,
    pub cwd: &'a Path,
    pub verbose: bool,
}

impl Stdio {
    pub fn start(launch: Launch) -> Result<Stdio, String> {
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
        let mut child = signals::spawn_group(&mut cmd)
            .map_err(|e| format!("{}: {}", launch.command, crate::error::describe_io(&e)))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err("its standard streams could not be opened".into());
        };
        let child = Arc::new(Mutex::new(child));
        let pending = Arc::new(Pending::default());
        let stdin = Arc::new(Mutex::new(Some(stdin)));
        let transport = Stdio {
            stdin,
            child: Arc::clone(&child),
            pending: Arc::clone(&pending),
        };
        drain(stderr, launch.verbose.then(|| launch.name.to_owned()));
        let replies = transport.writer();
        thread::spawn(move || read(stdout, &pending, &child, &replies));
        Ok(transport)
    }

    /// Something the reader thread can answer the server's requests with:
    /// the same handle, so closing it is closing the server's input.
    fn writer(&self) -> impl Fn(Value) + Send + 'static {
        let stdin = Arc::clone(&self.stdin);
        move |message: Value| {
            if let Some(out) = stdin.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                let _ = write_line(out, &message);
            }
        }
    }

    fn send(&self, message: &Value) -> Result<(), String> {
        let mut stdin = self.stdin.lock().unwrap_or_else(|e| e.into_inner());
        let out = stdin.as_mut().ok_or("the server was closed")?;
        write_line(out, message).map_err(|e| {
            format!(
                "the server is not reading its input: {}",
                crate::error::describe_io(&e)
            )
        })
    }
}

fn write_line(out: &mut impl Write, message: &Value) -> std::io::Result<()> {
    let mut line = serde_json::to_vec(message)?;
    line.push(b'\n');
    out.write_all(&line)?;
    out.flush()
}

impl Transport for Stdio {
    fn request(&self, id: u64, message: &Value, deadline: Instant) -> Result<Value, String> {
        let rx = self.pending.expect(id)?;
        if let Err(e) = self.send(message) {
            self.pending.forget(id);
            return Err(e);
        }
        self.pending.wait(id, &rx, deadline)
    }

    fn notify(&self, message: &Value, _deadline: Instant) -> Result<(), String> {
        self.send(message)
    }

    fn close(&self) {
        // End of input asks the server to go.
        self.stdin.lock().unwrap_or_else(|e| e.into_inner()).take();
        let mut child = self.child.lock().unwrap_or_else(|e| e.into_inner());
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
        let mut child = child.lock().unwrap_or_else(|e| e.into_inner());
        exited_within(&mut child, Duration::from_millis(200))
            .then(|| child.try_wait().ok().flatten())
            .flatten()
    };
    pending.end(match status {
        Some(status) => format!("the server exited ({status})"),
        None => "the server closed its output".into(),
    });
}

/// Reads the server's stderr to its end, each line to `-v` as
/// `[mcp] NAME: line` when `name` is given, else nowhere.
fn drain(err: impl Read + Send + 'static, name: Option<String>) {
    thread::spawn(move || {
        let mut err = BufReader::new(err);
        loop {
            match jsonrpc::read_line(&mut err) {
                Ok(Line::Message(line)) => {
                    if let Some(name) = &name {
                        note(format_args!(
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
