//! A local HTTP/1.1 server standing in for a provider: it answers from a
//! script and records every request it gets.
//!
//! Tests that need events in an order force it with a [`Gate`] rather than
//! hoping for it with sleeps and clock thresholds: a route handler waits
//! at a gate until something else happened (another request came, an
//! answer was sent, the program under test ended), and a wait that runs
//! out is remembered, so a test whose order never comes fails, not hangs.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

/// What the server does with one request.
pub enum Answer {
    /// A whole response with a Content-Length.
    Full {
        status: u16,
        headers: Vec<(String, String)>,
        body: Vec<u8>,
    },
    /// A chunked response: `first`, then, once the gate opens, `rest`.
    Stream {
        content_type: &'static str,
        first: Vec<u8>,
        gate: Option<Receiver<()>>,
        rest: Vec<Vec<u8>>,
    },
    /// Close the connection without a word.
    Drop,
    /// Read the request, then say nothing for this long.
    Hang(Duration),
    /// A chunked 200 that sends `piece` again and again, one every
    /// `every`, and never ends until `until` opens (or [`PATIENCE`]
    /// passes, which `until` then remembers): a server that is never
    /// silent long but never done.
    Drip {
        content_type: &'static str,
        piece: Vec<u8>,
        every: Duration,
        until: Gate,
    },
    /// `answer`, and once it is sent in full and the connection closed,
    /// `gate` opens.
    Then(Box<Answer>, Gate),
}

/// How long a [`Gate`] holds anything by default: far longer than any
/// order a test forces takes to come, short enough that a test whose
/// order never comes fails in reasonable time.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A gate to force an order of events: shut until [`Gate::open`], and
/// open for good after. Clones are the same gate, so a route handler
/// can wait at it while another handler or the test opens it.
#[derive(Clone, Default)]
pub struct Gate(Arc<(Mutex<GateState>, Condvar)>);

#[derive(Default)]
struct GateState {
    open: bool,
    ran_out: bool,
}

impl Gate {
    pub fn new() -> Gate {
        Gate::default()
    }

    pub fn open(&self) {
        let (state, changed) = &*self.0;
        state.lock().unwrap().open = true;
        changed.notify_all();
    }

    /// Waits until the gate is open, but at most `limit`: true if it
    /// opened; false if the limit passed first, which the gate remembers
    /// ([`Gate::ran_out`]).
    pub fn wait(&self, limit: Duration) -> bool {
        let opened = self.opens_within(limit);
        if !opened {
            self.note_ran_out();
        }
        opened
    }

    /// Whether a [`Gate::wait`] (or a [`Answer::Drip`] it ends) gave up
    /// before the gate opened.
    pub fn ran_out(&self) -> bool {
        self.0.0.lock().unwrap().ran_out
    }

    fn note_ran_out(&self) {
        self.0.0.lock().unwrap().ran_out = true;
    }

    /// Waits until open, at most `limit`, remembering nothing.
    fn opens_within(&self, limit: Duration) -> bool {
        let (state, changed) = &*self.0;
        let (state, _) = changed
            .wait_timeout_while(state.lock().unwrap(), limit, |s| !s.open)
            .unwrap();
        state.open
    }
}

impl Answer {
    pub fn json(status: u16, body: &Value) -> Answer {
        Answer::Full {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: body.to_string().into_bytes(),
        }
    }

    pub fn raw(status: u16, body: &str) -> Answer {
        Answer::Full {
            status,
            headers: Vec::new(),
            body: body.as_bytes().to_vec(),
        }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Answer {
        if let Answer::Full { headers, .. } = &mut self {
            headers.push((name.into(), value.into()));
        }
        self
    }

    /// Server-sent events, all at once.
    pub fn sse(events: &[String]) -> Answer {
        Answer::Stream {
            content_type: "text/event-stream",
            first: Vec::new(),
            gate: None,
            rest: events.iter().map(|e| e.clone().into_bytes()).collect(),
        }
    }

    /// JSON lines, all at once.
    pub fn lines(lines: &[Value]) -> Answer {
        Answer::Stream {
            content_type: "application/x-ndjson",
            first: Vec::new(),
            gate: None,
            rest: lines
                .iter()
                .map(|l| format!("{l}\n").into_bytes())
                .collect(),
        }
    }

    /// This answer, then `gate` opens once it is sent in full and the
    /// connection closed: whatever waits at `gate` comes after it.
    pub fn then_open(self, gate: &Gate) -> Answer {
        Answer::Then(Box::new(self), gate.clone())
    }

    /// Sends the first `n` pieces now and the rest only after the returned
    /// sender is used (or dropped).
    pub fn gated_after(self, n: usize) -> (Answer, Sender<()>) {
        let (tx, rx) = channel();
        let answer = match self {
            Answer::Stream {
                content_type,
                mut rest,
                ..
            } => {
                let first = rest.drain(..n).flatten().collect();
                Answer::Stream {
                    content_type,
                    first,
                    gate: Some(rx),
                    rest,
                }
            }
            other => other,
        };
        (answer, tx)
    }
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

pub struct Server {
    pub url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Server {
    /// Serves `answers` in order, one per request; the last one repeats.
    pub fn start(answers: Vec<Answer>) -> Server {
        let answers = Mutex::new(VecDeque::from(answers));
        Server::route(move |_| next_answer(&mut answers.lock().unwrap()))
    }

    /// Answers each request with `handler`'s answer for it. Every
    /// connection has its own thread, so parallel callers are served at
    /// the same time.
    pub fn route(handler: impl Fn(&Recorded) -> Answer + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&requests);
        let handler = Arc::new(handler);
        thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let (recorded, handler) = (Arc::clone(&recorded), Arc::clone(&handler));
                thread::spawn(move || {
                    let Some(request) = read_request(&conn) else {
                        return;
                    };
                    recorded.lock().unwrap().push(request.clone());
                    respond(conn, handler(&request));
                });
            }
        });
        Server { url, requests }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    pub fn only_request(&self) -> Recorded {
        let all = self.requests();
        assert_eq!(all.len(), 1, "expected one request, got {}", all.len());
        all.into_iter().next().unwrap()
    }
}

/// The next scripted answer; the last one repeats (a stream only once).
fn next_answer(answers: &mut VecDeque<Answer>) -> Answer {
    if answers.len() > 1 {
        return answers.pop_front().unwrap();
    }
    match answers.front() {
        Some(Answer::Full {
            status,
            headers,
            body,
        }) => Answer::Full {
            status: *status,
            headers: headers.clone(),
            body: body.clone(),
        },
        Some(Answer::Hang(d)) => Answer::Hang(*d),
        _ => answers.pop_front().unwrap_or(Answer::Drop),
    }
}

fn read_request(conn: &TcpStream) -> Option<Recorded> {
    let mut reader = BufReader::new(conn);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let path = parts.next()?.to_owned();
    let mut headers = Vec::new();
    let mut length = 0;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        let (name, value) = h.split_once(':')?;
        let (name, value) = (name.trim().to_lowercase(), value.trim().to_owned());
        if name == "content-length" {
            length = value.parse().ok()?;
        }
        headers.push((name, value));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
    })
}

fn respond(mut conn: TcpStream, answer: Answer) {
    match answer {
        Answer::Full {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} X\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = conn.write_all(head.as_bytes());
            let _ = conn.write_all(&body);
        }
        Answer::Stream {
            content_type,
            first,
            gate,
            rest,
        } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            let _ = conn.write_all(head.as_bytes());
            let chunk = |conn: &mut TcpStream, data: &[u8]| {
                if !data.is_empty() {
                    let _ = conn.write_all(format!("{:x}\r\n", data.len()).as_bytes());
                    let _ = conn.write_all(data);
                    let _ = conn.write_all(b"\r\n");
                    let _ = conn.flush();
                }
            };
            chunk(&mut conn, &first);
            if let Some(gate) = gate {
                let _ = gate.recv_timeout(Duration::from_secs(10));
            }
            for data in rest {
                chunk(&mut conn, &data);
            }
            let _ = conn.write_all(b"0\r\n\r\n");
        }
        Answer::Drop => {}
        Answer::Hang(d) => thread::sleep(d),
        Answer::Drip {
            content_type,
            piece,
            every,
            until,
        } => {
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            );
            let _ = conn.write_all(head.as_bytes());
            // Each chunk in one write: between chunks the client waits
            // for the next one's length line.
            let mut chunk = format!("{:x}\r\n", piece.len()).into_bytes();
            chunk.extend_from_slice(&piece);
            chunk.extend_from_slice(b"\r\n");
            let give_up = Instant::now() + PATIENCE;
            while !until.opens_within(every) {
                if Instant::now() > give_up {
                    until.note_ran_out();
                    break;
                }
                // Errors ignored: the client may be long gone.
                let _ = conn.write_all(&chunk);
            }
            let _ = conn.write_all(b"0\r\n\r\n");
        }
        Answer::Then(answer, gate) => {
            respond(conn, *answer);
            gate.open();
        }
    }
}

/// What a [`not_http`] listener does with each connection.
pub enum Raw {
    /// Read what the client sends first, answer these bytes, close.
    Say(&'static [u8]),
    /// Read what the client sends first and close without a word.
    HangUp,
    /// Accept, and say nothing until [`PATIENCE`] passes.
    Silent,
    /// Send these bytes without reading the request, give the client
    /// time to read them, then close: with the request still unread, the
    /// close is a reset, which the client sees in the middle of the body.
    CutOff(&'static [u8]),
}

/// `127.0.0.1:PORT` of a listener that is no HTTP server at all: the
/// other ends a client meets behind a broken proxy or a wrong scheme.
/// A TLS client hello has no line to read, so this one reads a single
/// chunk of whatever comes.
pub fn not_http(what: Raw) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { continue };
            let mut first = [0; 4096];
            match what {
                Raw::Say(bytes) => {
                    let _ = conn.read(&mut first);
                    let _ = conn.write_all(bytes);
                    close_after_client(&mut conn);
                }
                Raw::HangUp => {
                    let _ = conn.read(&mut first);
                    close_after_client(&mut conn);
                }
                Raw::CutOff(bytes) => {
                    let _ = conn.write_all(bytes);
                    thread::sleep(Duration::from_millis(300));
                }
                Raw::Silent => {
                    thread::spawn(move || {
                        thread::sleep(PATIENCE);
                        drop(conn);
                    });
                }
            }
        }
    });
    addr
}

/// Ends our side of `conn` and reads on until the client ends its own.
/// Closed while part of its request (more than the one chunk read) is
/// still unread, the socket would send a reset, which the client could
/// see before the end: a test would then depend on which came first.
fn close_after_client(conn: &mut TcpStream) {
    let _ = conn.shutdown(std::net::Shutdown::Write);
    let _ = conn.set_read_timeout(Some(PATIENCE));
    let mut rest = [0; 4096];
    while matches!(conn.read(&mut rest), Ok(n) if n > 0) {}
}

/// A port on which nothing listens.
pub fn closed_port_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

pub fn sse_event(event: &str, data: &Value) -> String {
    format!("event: {event}\ndata: {data}\n\n")
}

pub fn sse_data(data: &str) -> String {
    format!("data: {data}\n\n")
}
