//! Talking to LLM providers: Anthropic, OpenAI-compatible servers, Ollama,
//! OpenRouter, Google Gemini.
//!
//! A [`Conversation`] is provider-neutral (it is also the `--request` file
//! format of `axe-llm`); each provider's [`wire::Wire`] turns it into its
//! JSON and its reply back into a [`Reply`]. [`complete`] adds what every
//! call shares: one deadline for the whole call, retries, streaming, the
//! `<category>: <message>` errors, and keeping the API key out of
//! everything we print.
//!
//! The modules read top-down: `complete` here uses `providers`, which
//! lists the wire modules (`anthropic`, `openai`, `ollama`, `openrouter`,
//! `gemini`, `gateway`), which use
//! `wire`, `stream`, `http` and `conversation`; nothing imports upward.

mod anthropic;
mod body;
mod conversation;
pub mod error;
mod gateway;
mod gemini;
mod http;
mod ollama;
mod openai;
mod openrouter;
mod parse;
mod providers;
pub mod retry;
mod stream;
mod wire;

use std::time::{Duration, Instant};

pub use conversation::{
    Conversation, Message, Reply, ResponseFormat, Role, ToolCall, ToolDef, ToolResult, Usage,
};
pub use providers::{
    Endpoint, PLACEHOLDER_MODEL, Provider, key_vars, names, parse_model, variables,
};
pub use retry::{Backoff, RetryPolicy};

use axe_base::error::{Category, Error, Result};
use error::LlmError;
use http::Failure;
use stream::Redactor;

/// The most of a provider's error text we show: servers have sent whole
/// HTML pages and megabytes of JSON, which no terminal line should carry.
const ERROR_TEXT_LIMIT: usize = 1000;

/// `text` held to [`ERROR_TEXT_LIMIT`] characters, saying how many more
/// there were.
fn cut(mut text: String) -> String {
    if let Some((at, _)) = text.char_indices().nth(ERROR_TEXT_LIMIT) {
        let more = text[at..].chars().count();
        text.truncate(at);
        text.push_str(&format!("... ({more} more characters)"));
    }
    text
}

/// When a call must be over, and the limit to name when it is not.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub limit: Duration,
}

impl Deadline {
    /// `limit` from now. Limits are at most [`axe_base::timeout::MAX_SECONDS`];
    /// a longer one is held to that rather than overflowing the clock.
    pub fn after(limit: Duration) -> Deadline {
        let limit = limit.min(Duration::from_secs(axe_base::timeout::MAX_SECONDS));
        let now = Instant::now();
        Deadline {
            at: now.checked_add(limit).unwrap_or(now),
            limit,
        }
    }

    /// The earlier of the two: a sub-agent's own limit inside the run's.
    pub fn min(self, other: Deadline) -> Deadline {
        if other.at < self.at { other } else { self }
    }
}

/// How to make a call.
#[derive(Debug, Clone)]
pub struct CallOptions {
    /// Bounds the whole call: connecting, every read, retries and waits.
    pub deadline: Deadline,
    /// Further attempts after a 408, 429, 529, 5xx or dropped connection,
    /// and the waits before them.
    pub retry: RetryPolicy,
    pub stream: bool,
    /// The HTTP client: one for a run, shared by its agents, so each
    /// endpoint is one connection kept alive from turn to turn.
    pub client: axe_net::Client,
}

/// A retry about to be made: attempt `attempt` of `attempts` (the first
/// call is 1), after a failure of category `after`, in `wait`.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    pub attempt: u32,
    pub attempts: u32,
    pub after: Category,
    pub wait: Duration,
}

impl std::fmt::Display for Retry {
    /// Go's `-v` line: `[retry] Attempt 2/3 after rate_limit, waiting 1000ms`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[retry] Attempt {}/{} after {}, waiting {}ms",
            self.attempt,
            self.attempts,
            self.after,
            self.wait.as_millis()
        )
    }
}

/// Sends `conversation` to `model` at `endpoint` and returns the reply.
/// With `options.stream`, text is handed to `on_text` as it arrives; the
/// reply is the same as without streaming.
pub fn complete(
    endpoint: &Endpoint,
    model: &str,
    conversation: &Conversation,
    options: &CallOptions,
    on_text: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<Reply> {
    complete_observed(endpoint, model, conversation, options, on_text, &mut |_| {})
}

/// [`complete`], telling `on_retry` of each retry before its wait.
pub fn complete_observed(
    endpoint: &Endpoint,
    model: &str,
    conversation: &Conversation,
    options: &CallOptions,
    on_text: &mut dyn FnMut(&str) -> std::io::Result<()>,
    on_retry: &mut dyn FnMut(&Retry),
) -> Result<Reply> {
    if let Some(format) = &conversation.response_format {
        endpoint.provider.check_response_format(format)?;
    }
    let redactor = Redactor::new(&endpoint.api_key);
    let deadline = options.deadline.at;
    let wire = endpoint.provider.wire();
    let body = wire.body(model, conversation, options.stream).to_vec();
    let url = endpoint.call_url(model, options.stream);
    let headers = wire.headers(&endpoint.api_key);
    let post = || http::post(&options.client, &url, &headers, &body, deadline);
    let mut attempt = 0;
    loop {
        // Text already shown cannot be taken back, so a stream is retried
        // only when it failed before its first word.
        let mut shown = false;
        let mut sink = |text: &str| {
            shown = true;
            on_text(text)
        };
        let result = attempt_once(endpoint, model, &post, options, &redactor, &mut sink);
        let failure = match result {
            Ok(reply) => return Ok(redactor.reply(reply)),
            // A read that broke once the deadline had passed broke because
            // of it: the HTTP library's own timeout, as a generic error.
            Err(Failure::Dropped { .. }) if Instant::now() >= deadline => Failure::Timeout,
            // Reading the body, the connection's URL is ours to name.
            Err(Failure::Dropped { url: unnamed, err }) if unnamed.is_empty() => Failure::Dropped {
                url: url.clone(),
                err,
            },
            Err(f) => f,
        };
        let policy = &options.retry;
        let retry_in = match &failure {
            _ if attempt >= policy.max_retries || shown => None,
            Failure::Status {
                status,
                retry_after,
                ..
            } if matches!(status, 408 | 429 | 500..=599) => {
                let after = match status {
                    408 | 504 => Category::Timeout,
                    _ => wire.category(*status),
                };
                let wait = retry_after.unwrap_or_else(|| policy.delay(attempt));
                Some((after, wait))
            }
            Failure::Dropped { .. } => Some((Category::Server, policy.delay(attempt))),
            _ => None,
        };
        match retry_in {
            // A server's Retry-After can be any number: compare, never add.
            Some((after, wait)) if wait < deadline.saturating_duration_since(Instant::now()) => {
                attempt += 1;
                on_retry(&Retry {
                    attempt: attempt + 1,
                    attempts: policy.max_retries.saturating_add(1),
                    after,
                    wait,
                });
                std::thread::sleep(wait);
            }
            _ => {
                return Err(
                    match error(failure, endpoint, &url, options.deadline.limit) {
                        Ok(e) => redactor.llm(e).into(),
                        Err(output) => output,
                    },
                );
            }
        }
    }
}

/// One attempt: `post` sends the request, the reply is read as the
/// provider writes it.
fn attempt_once(
    endpoint: &Endpoint,
    model: &str,
    post: &dyn Fn() -> Result<axe_net::Response, Failure>,
    options: &CallOptions,
    redactor: &Redactor,
    on_text: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<Reply, Failure> {
    let response = post()?;
    let wire = endpoint.provider.wire();
    let mut reply = if options.stream {
        let mut out = redactor.stream(on_text);
        let mut body = response.into_reader();
        let reply = wire.read_stream(&mut body, &mut out)?;
        out.finish().map_err(Failure::Output)?;
        drain(body);
        reply
    } else {
        wire.parse_reply(&http::read_all(response)?)?
    };
    if reply.model.is_empty() {
        reply.model = model.to_owned();
    }
    Ok(reply)
}

/// What a stream sends past its end marker (the rest of the last event,
/// the chunked body's end): at most this much is read for it, waiting at
/// most this long.
const STREAM_TAIL_LIMIT: u64 = 64 << 10;
const STREAM_TAIL_WAIT: Duration = Duration::from_secs(1);

/// Reads what is left of a stream whose answer is whole, so that its
/// connection goes back to the client for the next turn: the tail has
/// come with the end marker, and reading it takes no time. A server that
/// keeps the stream open past its end marker holds a thread of its own
/// (until the call's deadline), not the run, which goes on after
/// [`STREAM_TAIL_WAIT`] and opens another connection next turn.
fn drain(body: impl std::io::Read + Send + 'static) {
    let (done, drained) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut body.take(STREAM_TAIL_LIMIT), &mut std::io::sink());
        let _ = done.send(());
    });
    let _ = drained.recv_timeout(STREAM_TAIL_WAIT);
}

/// The `<category>: <message>` error for a failed call to `endpoint`, not
/// yet redacted; `Err` when it was our own output that failed.
fn error(
    failure: Failure,
    endpoint: &Endpoint,
    url: &str,
    timeout: Duration,
) -> std::result::Result<LlmError, Error> {
    let wire = endpoint.provider.wire();
    match failure {
        Failure::Status {
            status,
            reason,
            content_type,
            body,
            ..
        } => {
            // Every HTTP error says where the request went and what came
            // back: a wrong base URL or a server that is no model API
            // shows as what it is (never with a password or a key in the
            // query: see `http::shown`).
            let url = http::shown(url);
            let text = http::status_text(status, &reason);
            let message = match wire.error_message(&body) {
                Some(said) => format!("{} ({url} answered {status})", cut(said)),
                // Neither empty nor JSON: a web page, a proxy's text.
                None if !body.is_empty()
                    && serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err() =>
                {
                    let media = content_type.as_deref().unwrap_or("no content type");
                    format!(
                        "{url} answered {status} {} ({media}), not {} reply",
                        cut(text),
                        wire.api()
                    )
                }
                None => format!("{url} answered {status} {}", cut(text)),
            };
            Ok(LlmError::Api {
                category: wire.category(status),
                status: Some(status),
                message,
            })
        }
        Failure::Timeout => Ok(LlmError::Timeout { limit: timeout }),
        Failure::Dropped { url, err } => {
            let refused = err.kind() == std::io::ErrorKind::ConnectionRefused;
            let message = refused
                .then(|| wire.refused(&http::shown(&endpoint.base_url)))
                .flatten()
                .unwrap_or_else(|| {
                    format!(
                        "connection to {} failed: {}",
                        http::shown(&url),
                        axe_base::error::describe_io(&err)
                    )
                });
            Ok(LlmError::Connection {
                message: cut(message),
                source: err,
            })
        }
        Failure::Api(category, message) => Ok(LlmError::Api {
            category,
            status: None,
            message: cut(message),
        }),
        Failure::Output(e) => Err(Error::Output(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_format_rejects_unknown_fields() {
        let err = serde_json::from_str::<Conversation>(r#"{"messages": [], "temprature": 1}"#);
        assert!(err.is_err());
        let ok: Conversation = serde_json::from_str(
            r#"{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t"}]}"#,
        )
        .unwrap();
        assert_eq!(
            *ok.tools[0].parameters,
            serde_json::json!({"type": "object", "properties": {}})
        );
    }

    const KEY: &str = "sk-ant-secret-key-0123456789";

    /// One call to a server on 127.0.0.1 that reads the request and
    /// answers `reply` (raw bytes) before closing.
    fn call_answered(reply: Vec<u8>) -> Error {
        use std::io::{Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let server = std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buf = [0; 4096];
            // The whole request: its headers, then the body they announce.
            while let Ok(n @ 1..) = conn.read(&mut buf) {
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request);
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length: ")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if body.len() >= len {
                        break;
                    }
                }
            }
            let _ = conn.write_all(&reply);
        });
        let endpoint = Endpoint {
            provider: parse_model("anthropic/m").unwrap().0,
            base_url: format!("http://127.0.0.1:{port}"),
            api_key: KEY.into(),
        };
        let options = CallOptions {
            deadline: Deadline::after(Duration::from_secs(30)),
            retry: RetryPolicy::times(0),
            stream: false,
            client: axe_net::Client::from_env(),
        };
        let conversation = Conversation {
            messages: vec![Message::user("hi")],
            ..Default::default()
        };
        let e = complete(&endpoint, "m", &conversation, &options, &mut |_| Ok(())).unwrap_err();
        server.join().unwrap();
        e
    }

    /// Every level of `e`'s chain, as its line and its `Debug`.
    fn chain(e: &Error) -> Vec<String> {
        let mut seen = Vec::new();
        let mut at: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(level) = at {
            seen.push(format!("{level} | {level:?}"));
            at = level.source();
        }
        seen
    }

    /// A failed call whose server echoed the key, in an error reply or
    /// in a status line that is no HTTP: the key is in no line and no
    /// `Debug` of any cause reachable through `source()`, and the typed
    /// error and its cause are there to be followed.
    #[test]
    fn no_cause_of_a_failed_call_holds_the_key() {
        let body = format!(r#"{{"type":"error","error":{{"message":"invalid x-api-key {KEY}"}}}}"#);
        let said = call_answered(
            format!(
                "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n\
                 connection: close\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes(),
        );
        assert!(
            said.to_string()
                .starts_with("auth: invalid x-api-key [REDACTED]"),
            "{said}"
        );
        assert_eq!(said.exit_code(), 3);
        let levels = chain(&said);
        assert!(
            levels.len() >= 2,
            "the typed error is its source: {levels:?}"
        );
        assert!(levels.iter().all(|l| !l.contains(KEY)), "{levels:#?}");

        let garbled = call_answered(format!("SK {KEY} what\r\n\r\n").into_bytes());
        let levels = chain(&garbled);
        assert!(levels.iter().all(|l| !l.contains(KEY)), "{levels:#?}");
        let typed = std::error::Error::source(&garbled)
            .and_then(|s| s.downcast_ref::<LlmError>())
            .expect("the typed error");
        assert!(matches!(typed, LlmError::Connection { .. }), "{typed:?}");
        assert!(levels.len() >= 3, "the I/O error is its cause: {levels:#?}");
    }
}
