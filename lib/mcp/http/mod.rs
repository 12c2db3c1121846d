//! `axe-mcp --http ADDR`: the same server over MCP's streamable HTTP
//! transport, one endpoint per agent (`/mcp/<AGENT>`), for a team whose
//! agents and CI jobs share one memory.
//!
//! HTTP/1.1 over `std::net`, heads parsed by httparse, no server crate
//! and no async runtime: an MCP endpoint needs POST with a sized body, a
//! few headers, and answers of JSON or one SSE event. Each connection has
//! a thread of its own, which reads a request under bounds and deadlines
//! ([`wire`]); the work itself (the memory's tools) runs only while the
//! thread holds one of a few worker slots, so clients that are slow to
//! send or to read hold their own thread and no slot. A connection is
//! bounded apart until its head shows a token ([`admission`]): the token
//! is checked on the head, a refused request's body is never read, and a
//! client without one can hold only a few connections, for a few
//! seconds. `SIGTERM` (and `SIGINT`, `SIGHUP`) stop the accepting;
//! requests in flight are answered and their writes finish, then the
//! process ends of the signal.

mod admission;
mod endpoint;
#[cfg(test)]
mod hostile;
mod sessions;
pub mod tls;
pub mod tokens;
mod wire;

use std::borrow::Cow;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_base::report::{Batched, Report};
use axe_tools::Memory;

use admission::{Admission, Admitted, Ticket};
pub use endpoint::Opener;
use tokens::Live;
use wire::{Conn, Refused, Response, Source};

/// How long a request waits for a worker slot before it is answered 503.
const SLOT_WAIT: Duration = Duration::from_secs(30);

/// What `axe-mcp --http` serves.
pub struct Http {
    pub addr: String,
    pub tokens: Option<Live>,
    /// `--read-only`: no token may write.
    pub read_only: bool,
    /// Opens an agent's memory as the stdio server would.
    pub open: Opener,
    /// The data directory whose memory `open` serves (`--team-dir`).
    pub served: std::path::PathBuf,
    /// Whether that is the owner's own data directory, asked for by name.
    pub own: bool,
    /// `--tls-cert` and `--tls-key`: HTTPS.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Where the server's lines go: where it serves, a line per request,
    /// a tokens file that no longer reads.
    pub report: Arc<dyn Report>,
}

/// Shared by every connection's thread.
struct Shared {
    endpoint: endpoint::Endpoint,
    tls: Option<Arc<rustls::ServerConfig>>,
    slots: Slots,
    stopping: AtomicBool,
    admission: Arc<Admission>,
    report: Arc<dyn Report>,
}

impl Http {
    /// Serves until an ending signal; says where on its report first.
    pub fn serve(self) -> Result<()> {
        let addrs: Vec<SocketAddr> = std::net::ToSocketAddrs::to_socket_addrs(&self.addr)
            .map_err(|e| Error::Usage(format!("--http {}: {e}", self.addr)))?
            .collect();
        let loopback = !addrs.is_empty() && addrs.iter().all(|a| a.ip().is_loopback());
        if !loopback && self.tokens.is_none() {
            return Err(Error::Usage(format!(
                "--http {}: not a loopback address; serving other machines needs --tokens FILE",
                self.addr
            )));
        }
        let listener = TcpListener::bind(&addrs[..])
            .map_err(|e| Error::Config(format!("cannot listen on {}: {e}", self.addr)))?;
        let local = listener
            .local_addr()
            .map_err(|e| Error::Config(format!("cannot listen on {}: {e}", self.addr)))?;
        let memory = match self.own {
            false => format!(
                "the memory in {}, a data directory of its own (not your own memory)",
                self.served.display()
            ),
            true => format!(
                "your own memory in {}: its world topics, what axe-import brought in, every local agent's notes",
                self.served.display()
            ),
        };
        let mut reaches = Vec::new();
        let guard = match &self.tokens {
            Some(live) => {
                let tokens = live.current(&*self.report);
                let n = tokens.all().len();
                for t in tokens.all() {
                    reaches.push(format!(
                        "axe-mcp: token \"{}\" {}",
                        t.name,
                        t.reach(&self.served, self.own)
                    ));
                }
                format!(
                    "{n} token{} of {} decide who reaches which agent",
                    if n == 1 { "" } else { "s" },
                    live.path().display()
                )
            }
            None => format!(
                "no token guards it: anyone who can connect to {local} reads and writes every agent's memory"
            ),
        };
        // Held for the server's life: an ending signal is noted, the
        // accepting stops, and the hold's end re-delivers it once every
        // request in flight is answered, its write made whole.
        let hold = axe_base::signals::drain();
        // A line per request, from many threads: in batches under load.
        let report: Arc<dyn Report> = Arc::new(Batched::new(self.report));
        let shared = Arc::new(Shared {
            endpoint: endpoint::Endpoint::new(
                self.tokens,
                self.read_only,
                loopback,
                self.open,
                Arc::clone(&report),
            ),
            tls: self.tls,
            slots: Slots::new(workers()),
            stopping: AtomicBool::new(false),
            admission: Arc::default(),
            report,
        });
        watch_signals(&shared, local);
        let scheme = match shared.tls {
            Some(_) => "https",
            None => "http",
        };
        shared.report.note(format_args!(
            "axe-mcp: serving {scheme}://{local}/mcp/<AGENT>: {memory}; {guard}"
        ));
        for line in reaches {
            shared.report.note(format_args!("{line}"));
        }
        let mut threads = Vec::new();
        for stream in listener.incoming() {
            if shared.stopping.load(Ordering::SeqCst) || hold.signalled() {
                break;
            }
            let Ok(stream) = stream else { continue };
            threads.retain(|t: &std::thread::JoinHandle<()>| !t.is_finished());
            let Some(ticket) = shared.admission.enter(&stream) else {
                continue;
            };
            let own = Arc::clone(&shared);
            let spawned = std::thread::Builder::new()
                .stack_size(1 << 20)
                .spawn(move || connection(&own, stream, ticket));
            if let Ok(t) = spawned {
                threads.push(t);
            }
        }
        shared.stopping.store(true, Ordering::SeqCst);
        // No new connection waits in the backlog for a server that stops.
        drop(listener);
        // Requests in flight are answered; idle connections notice the
        // stop within their read's bound.
        for t in threads {
            let _ = t.join();
        }
        drop(hold);
        Ok(())
    }
}

/// Worker slots: eight a core, at least sixteen. A memory call mostly
/// waits on the disk (each write is synced) or on a file's lock, not the
/// CPU, so more calls than cores overlap their waits; a few long searches
/// still leave room for quick calls.
fn workers() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get() * 8)
        .unwrap_or(16)
        .max(16)
}

/// Wakes the accepting loop when an ending signal comes: a connection to
/// ourselves, after the flag is set.
fn watch_signals(shared: &Arc<Shared>, local: SocketAddr) {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP]) else {
        return;
    };
    let shared = Arc::clone(shared);
    std::thread::spawn(move || {
        if signals.forever().next().is_some() {
            shared.stopping.store(true, Ordering::SeqCst);
            let _ = TcpStream::connect_timeout(&local, Duration::from_secs(1));
        }
    });
}

/// A plain TCP connection whose read timeout is set only when a read's
/// bound asks for another than the one set: one `setsockopt` a read was a
/// system call a request more than stdio's server makes.
struct Plain {
    stream: TcpStream,
    bound: Option<Duration>,
}

/// How much later than asked a read's bound may end and be kept: a
/// request's head is due within [`wire::HEAD_TIME`] of its start, so the
/// bound set for one request's head serves the next one's.
const SLACK: Duration = Duration::from_millis(50);

impl io::Read for Plain {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream.read(buf)
    }
}

impl io::Write for Plain {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stream.flush()
    }
}

impl Source for Plain {
    fn read_within(&mut self, time: Duration) -> io::Result<()> {
        let time = time.max(Duration::from_millis(1));
        if self.bound.is_some_and(|b| b >= time && b - time <= SLACK) {
            return Ok(());
        }
        self.stream.set_read_timeout(Some(time))?;
        self.bound = Some(time);
        Ok(())
    }
}

impl Conn for Plain {
    fn socket(&self) -> &TcpStream {
        &self.stream
    }
}

/// Serves one connection's requests until it closes, errs, idles out or
/// the server stops.
fn connection(shared: &Shared, stream: TcpStream, mut ticket: Ticket) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(wire::WRITE_TIME));
    match &shared.tls {
        None => {
            let mut conn = Plain {
                stream,
                bound: None,
            };
            serve(shared, &mut conn, &mut ticket);
        }
        Some(config) => {
            let Ok(mut conn) = tls::Tls::new(Arc::clone(config), stream) else {
                return;
            };
            serve(shared, &mut conn, &mut ticket);
            conn.close();
        }
    }
}

/// The requests of one connection, in turn: each head checked before its
/// body is read.
fn serve(shared: &Shared, conn: &mut dyn Conn, ticket: &mut Ticket) {
    let mut rest = Vec::new();
    let mut first = true;
    loop {
        // Kept alive between requests, a connection gives way to a stop.
        if !first && rest.is_empty() && !idle(shared, conn.socket()) {
            return;
        }
        first = false;
        // Until a head passes, the whole of it is due soon after the
        // connection began.
        let (wait, by) = match ticket.admitted() {
            true => (wire::HEAD_TIME, None),
            false => (
                admission::FIRST_HEAD_TIME,
                Some(ticket.since + admission::FIRST_HEAD_TIME),
            ),
        };
        let mut request = match wire::read_head(conn, &mut rest, wait, by) {
            Ok(r) => r,
            Err(Refused::Gone) => return,
            Err(Refused::Status(status, reason)) => {
                let r = Response::new(status, reason);
                let logged = endpoint::Logged::refused(status);
                return refuse(shared, conn, &r, &logged, Instant::now());
            }
        };
        let started = Instant::now();
        if let Some((r, logged)) = shared.endpoint.check_head(&request) {
            return refuse(shared, conn, &r, &logged, started);
        }
        if !ticket.admitted() {
            // A preflight carries no token: answered, it admits nothing.
            if request.method == "OPTIONS" {
                let (r, logged) = shared.endpoint.answer(&request, &shared.slots);
                return refuse(shared, conn, &r, &logged, started);
            }
            match ticket.admit() {
                Admitted::Yes => {}
                Admitted::CutOff => return,
                Admitted::Full => {
                    let r = Response::new(503, "Service Unavailable").header("Retry-After", "1");
                    return refuse(shared, conn, &r, &endpoint::Logged::refused(503), started);
                }
            }
        }
        if let Err(refused) = wire::read_body(conn, &mut request, &mut rest) {
            if let Refused::Status(status, reason) = refused {
                let r = Response::new(status, reason);
                refuse(
                    shared,
                    conn,
                    &r,
                    &endpoint::Logged::refused(status),
                    Instant::now(),
                );
            }
            return;
        }
        let (response, logged) = shared.endpoint.answer(&request, &shared.slots);
        let close = request.close || shared.stopping.load(Ordering::SeqCst);
        let written = wire::write_response(conn, &response, close);
        log_line(&*shared.report, &logged, started);
        if close || written.is_err() {
            return;
        }
    }
}

/// Answers `r` and closes, leaving unread whatever the request still
/// holds.
fn refuse(
    shared: &Shared,
    conn: &mut dyn Conn,
    r: &Response,
    logged: &endpoint::Logged,
    started: Instant,
) {
    let _ = wire::write_response(conn, r, true);
    log_line(&*shared.report, logged, started);
    linger(conn.socket());
}

/// Closes after a refusal without a reset: what the client still sends
/// (the rest of a head or body not taken) is read a little and dropped,
/// so its kernel does not throw the answer away before it is read.
fn linger(conn: &TcpStream) {
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let deadline = Instant::now() + Duration::from_secs(1);
    let mut sink = [0u8; 16 << 10];
    let mut left = 1usize << 20;
    while left > 0 && Instant::now() < deadline {
        let _ = conn.set_read_timeout(Some(Duration::from_millis(100)));
        match io::Read::read(&mut &*conn, &mut sink) {
            Ok(0) | Err(_) => return,
            Ok(n) => left = left.saturating_sub(n),
        }
    }
}

/// Waits for a request's first byte, at most [`wire::HEAD_TIME`], looking
/// now and then whether the server stops: false when it does, or the
/// connection idled out. One `poll` a wait (an end of the connection is
/// readable too, and found by the read that follows), and the socket's
/// read timeout stays as the reads set it.
fn idle(shared: &Shared, conn: &TcpStream) -> bool {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let deadline = Instant::now() + wire::HEAD_TIME;
    let look = Timespec {
        tv_sec: 0,
        tv_nsec: 200_000_000,
    };
    while !shared.stopping.load(Ordering::SeqCst) && Instant::now() < deadline {
        let mut fds = [PollFd::new(conn, PollFlags::IN)];
        match poll(&mut fds, Some(&look)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => {}
            Ok(_) => return true,
            Err(_) => return false,
        }
    }
    false
}

/// The request's line on the report: when, who, what, how it went, and
/// how long it took. Never a token, never memory text.
fn log_line(report: &dyn Report, logged: &endpoint::Logged, started: Instant) {
    let at = time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default();
    let ms = started.elapsed().as_millis();
    report.note(format_args!(
        "{at} axe-mcp: token={} agent={} method={} tool={} status={} ms={ms}",
        field(logged.token.as_deref()),
        field(logged.agent.as_deref()),
        field(logged.method.as_deref()),
        field(logged.tool.as_deref()),
        logged.status,
    ));
}

/// A field of the log line, most of them from the client: a plain word as
/// it is (`-` when missing), anything else quoted, with `"`, `\` and
/// every character but printable ASCII escaped, so that no value can pose
/// as another field or begin a line of its own.
fn field(value: Option<&str>) -> Cow<'_, str> {
    let Some(value) = value else {
        return Cow::Borrowed("-");
    };
    let plain = |c: char| c.is_ascii_graphic() && !matches!(c, '"' | '\\' | '=');
    if !value.is_empty() && value != "-" && value.chars().all(plain) {
        return Cow::Borrowed(value);
    }
    let mut quoted = String::with_capacity(value.len() + 2);
    quoted.push('"');
    for c in value.chars() {
        match c {
            '"' => quoted.push_str("\\\""),
            '\\' => quoted.push_str("\\\\"),
            '\n' => quoted.push_str("\\n"),
            '\r' => quoted.push_str("\\r"),
            '\t' => quoted.push_str("\\t"),
            ' ' => quoted.push(' '),
            c if c.is_ascii_graphic() => quoted.push(c),
            c => quoted.push_str(&format!("\\u{{{:x}}}", c as u32)),
        }
    }
    quoted.push('"');
    Cow::Owned(quoted)
}

/// A counting semaphore: the worker slots.
pub struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn new(n: usize) -> Slots {
        Slots {
            free: Mutex::new(n),
            freed: Condvar::new(),
        }
    }

    /// A slot, waited for at most [`SLOT_WAIT`].
    pub fn take(&self) -> Option<Slot<'_>> {
        let deadline = Instant::now() + SLOT_WAIT;
        let mut free = self.free.lock().recover();
        while *free == 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            free = self.freed.wait_timeout(free, left).recover().0;
        }
        *free -= 1;
        Some(Slot { slots: self })
    }
}

pub struct Slot<'a> {
    slots: &'a Slots,
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.slots.free.lock().recover() += 1;
        self.slots.freed.notify_one();
    }
}

/// What opens an agent's memory for a session or a request.
pub type Open = dyn Fn(&str) -> Result<(Memory, String)> + Send + Sync;
