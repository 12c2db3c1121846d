//! The ledger: one JSON line for every model call (every turn of
//! `axe-run` and its sub-agents, `axe-llm`, `axe-gc`, a consolidation),
//! under `<data>/ledger/`, read back by `axe-log`.
//!
//! One line per call rather than one per run: a call is what a provider
//! bills, what retries and fails, and a run killed mid-way has still made
//! (and paid for) the calls before. Appends are whole under concurrency,
//! as the run log's are ([`axe_memory::append`]): one `write` under the
//! file's exclusive lock, signals held. The files rotate by month
//! (`2026-11.jsonl`) and, past `[log] max_bytes`, by size
//! (`2026-11.2.jsonl`, `2026-11.3.jsonl`...).
//!
//! A ledger that cannot be written never fails the call it records: the
//! answer was had and paid for, so the run goes on and one warning line
//! (the first failure's; a run of many turns says it once) says what was
//! not kept.
//!
//! A line keeps the cost only as the provider reported it: `[pricing]` is
//! applied when the ledger is read ([`read::price`]), so a price added or
//! mended later prices the calls made before it too.

pub mod read;
pub mod settings;

use settings::LogConfig;

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use time::OffsetDateTime;

use axe_base::beneath::{Dir, Open};
use axe_base::error::Result;
use axe_base::report::Report;
use axe_llm::{CallOptions, Conversation, Endpoint, Reply, Retry};
use axe_memory::Wait;
use axe_memory::append::write_whole;
use axe_memory::lock::{Mode, open_locked};
use axe_memory::secrets::Secrets;

/// Where in the data directory the ledger's files are.
pub const DIR: &str = "ledger";

/// A month's file grows to this before the next is begun, unless
/// `[log] max_bytes` says otherwise: a year of busy use stays a dozen
/// files that `axe-log` reads in well under a second.
pub const DEFAULT_MAX_BYTES: u64 = 64 << 20;

/// The most files of one month: past it the last keeps growing rather
/// than the search for a free name going on.
const MAX_PARTS: u32 = 1000;

/// One line of the ledger.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// When the call began: RFC 3339, UTC, milliseconds.
    pub time: String,
    /// The agent whose call it was; `None` for `axe-llm`.
    pub agent: Option<String>,
    pub provider: String,
    /// The model as asked for, without the provider.
    pub model: String,
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_tokens: Option<u64>,
    pub cache_write_tokens: Option<u64>,
    /// US dollars. As written: what the provider reported, else `None`.
    /// As read by `axe-log`: that, else by `[pricing]` ([`read::price`]).
    pub cost: Option<f64>,
    /// Where `cost` came from; `None` with no cost, and in the lines of an
    /// axe before it, which wrote `[pricing]`'s cost as it stood then.
    #[serde(default)]
    pub cost_source: Option<CostSource>,
    pub duration_ms: u64,
    /// Calls made again after a failure.
    pub retries: u64,
    /// `ok`, or `error` with the exit code the failure maps to.
    pub status: String,
    pub exit_code: u8,
    /// The conversation the call belonged to (`axe-run -c`, `axe-chat`).
    pub conversation: Option<String>,
    /// With `[log] text = true`: the last user message and the answer,
    /// redacted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<String>,
}

/// Where a cost came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CostSource {
    /// The provider's reply said it (OpenRouter, Requesty): what was billed.
    Provider,
    /// `[pricing]` of config.toml, applied to the tokens when read.
    Pricing,
    /// The line of an older axe, which kept a cost without saying whence
    /// (the provider's, or `[pricing]`'s of the day).
    Recorded,
}

/// Who a call is for: what the ledger cannot learn from the call itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caller<'a> {
    pub agent: Option<&'a str>,
    pub conversation: Option<&'a str>,
}

/// Where a command's calls are recorded, and how.
pub struct Ledger {
    /// `None`: `--no-log`, or no data directory to put it in.
    dir: Option<PathBuf>,
    config: LogConfig,
    /// Keys to take out of kept text besides what the scanner finds.
    keys: Vec<String>,
    report: std::sync::Arc<dyn Report>,
    /// Whether the warning was given: once a command, not once a turn.
    warned: AtomicBool,
}

impl Ledger {
    /// The ledger under `data` (the data directory) with config.toml's
    /// `[log]` and the keys it names (taken out of kept text); `keep`
    /// false (`--no-log`) records nothing.
    pub fn new(
        data: Option<PathBuf>,
        log: &LogConfig,
        keys: Vec<String>,
        keep: bool,
        report: std::sync::Arc<dyn Report>,
    ) -> Ledger {
        Ledger {
            dir: data.filter(|_| keep).map(|d| d.join(DIR)),
            config: log.clone(),
            keys,
            report,
            warned: AtomicBool::new(false),
        }
    }

    /// A ledger that records nothing.
    pub fn off() -> Ledger {
        Ledger {
            dir: None,
            config: LogConfig::default(),
            keys: Vec::new(),
            report: std::sync::Arc::new(axe_base::report::Stderr),
            warned: AtomicBool::new(false),
        }
    }

    /// Records nothing from now on (`--no-log`).
    pub fn stop(&mut self) {
        self.dir = None;
    }

    /// [`axe_llm::complete_observed`], recorded: the one way a command
    /// calls a model.
    #[allow(clippy::too_many_arguments)]
    pub fn complete(
        &self,
        caller: Caller,
        endpoint: &Endpoint,
        model: &str,
        conversation: &Conversation,
        options: &CallOptions,
        on_text: &mut dyn FnMut(&str) -> io::Result<()>,
        on_retry: &mut dyn FnMut(&Retry),
    ) -> Result<Reply> {
        let at = OffsetDateTime::now_utc();
        let started = Instant::now();
        let mut retries = 0;
        let result = axe_llm::complete_observed(
            endpoint,
            model,
            conversation,
            options,
            on_text,
            &mut |retry| {
                retries += 1;
                on_retry(retry);
            },
        );
        if self.dir.is_some() {
            let record = self.record(caller, endpoint, model, conversation, &result, at);
            let record = Record {
                duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
                retries,
                ..record
            };
            self.append(&record, &endpoint.api_key);
        }
        result
    }

    /// The line for a call that ended in `result`.
    fn record(
        &self,
        caller: Caller,
        endpoint: &Endpoint,
        model: &str,
        conversation: &Conversation,
        result: &Result<Reply>,
        at: OffsetDateTime,
    ) -> Record {
        let provider = endpoint.provider.name();
        let usage = result.as_ref().map(|r| r.usage).unwrap_or_default();
        let (status, exit_code) = match result {
            Ok(_) => ("ok", 0),
            Err(e) => ("error", e.exit_code()),
        };
        let text = self.config.text;
        Record {
            time: timestamp(at),
            agent: caller.agent.map(str::to_owned),
            provider: provider.to_owned(),
            model: model.to_owned(),
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            cost: usage.cost,
            cost_source: usage.cost.map(|_| CostSource::Provider),
            duration_ms: 0,
            retries: 0,
            status: status.to_owned(),
            exit_code,
            conversation: caller.conversation.map(str::to_owned),
            prompt: text
                .then(|| conversation.messages.last().map(|m| m.content.clone()))
                .flatten(),
            answer: text
                .then(|| result.as_ref().ok().map(|r| r.content.clone()))
                .flatten(),
        }
    }

    /// Appends `record` (its text redacted, `key` too), or says in one
    /// warning line why it could not.
    pub fn append(&self, record: &Record, key: &str) {
        let Some(dir) = &self.dir else {
            return;
        };
        let mut record = record.clone();
        if record.prompt.is_some() || record.answer.is_some() {
            let mut keys = self.keys.clone();
            keys.push(key.trim().to_owned());
            let secrets = Secrets::with_keys(keys);
            for text in [&mut record.prompt, &mut record.answer]
                .into_iter()
                .flatten()
            {
                *text = secrets.redact_str(text).0.into_owned();
            }
        }
        let mut line = serde_json::to_vec(&record).unwrap_or_default();
        line.push(b'\n');
        let month = record.time.get(..7).unwrap_or("unknown");
        let max = self.config.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        if let Err(e) = append_line(dir, month, max, &line)
            && !self.warned.swap(true, Ordering::Relaxed)
        {
            self.report.note(format_args!(
                "warning: the ledger was not written ({}): {}",
                dir.display(),
                axe_base::error::describe_io(&e)
            ));
        }
    }
}

/// Appends `line` to the month's file in `dir` that is under `max` bytes
/// (created with the directory when missing), whole.
fn append_line(dir: &std::path::Path, month: &str, max: u64, line: &[u8]) -> io::Result<()> {
    let root = Dir::root(dir, true)?.ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
    // How long another writer's lock is waited for: an append takes
    // microseconds, and a call is not held past this for its record.
    let wait = Wait::For(std::time::Duration::from_secs(10));
    for part in 1..=MAX_PARTS {
        let name = file_name(month, part);
        let file = open_locked(&root, &name, Open::Append, Mode::Exclusive, wait)?
            .ok_or_else(|| io::Error::from(io::ErrorKind::NotFound))?;
        // Measured under the lock, so two writers agree on which file is
        // full: the line goes on into the next.
        let len = file.metadata()?.len();
        if len > 0 && len.saturating_add(line.len() as u64) > max && part < MAX_PARTS {
            continue;
        }
        return write_whole(&root, &name, &file, line);
    }
    Ok(())
}

/// `2026-11.jsonl`, then `2026-11.2.jsonl`...
pub fn file_name(month: &str, part: u32) -> OsString {
    match part {
        1 => format!("{month}.jsonl").into(),
        n => format!("{month}.{n}.jsonl").into(),
    }
}

/// `2026-11-24T21:55:29.123Z`.
pub fn timestamp(at: OffsetDateTime) -> String {
    let at = at.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second(),
        at.millisecond()
    )
}
