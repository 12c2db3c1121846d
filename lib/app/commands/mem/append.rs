//! `axe-mem-append`: add an entry to an agent's run log.

use std::fs;
use std::io::{self, IsTerminal, Read, Write};

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::{Base, FILE};
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_cli::{Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::secrets::{self, Place, Redaction};

pub const COMMAND: Command = Command {
    name: "axe-mem-append",
    about: "Append an entry to an agent's memory log",
    usage: &[
        "[OPTIONS] --task <TEXT> <AGENT>",
        "[OPTIONS] --task <TEXT> --file <PATH>",
        "[OPTIONS] --task-file <PATH> <AGENT>",
    ],
    args: &[AGENT],
    flags: &[
        TASK,
        TASK_FILE,
        RESULT,
        TIMESTAMP,
        FILE,
        WAIT,
        crate::commands::args::QUIET,
        JSON,
    ],
    rules: &[
        super::NOT_BOTH,
        super::ONE,
        Rule::Conflict(Item::Flag(&TASK), Item::Flag(&TASK_FILE)),
        TASK_NEEDED,
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&JSON)),
    ],
    description: "\
Writes the entry axe-run writes after a successful run:

  ## <UTC time>
  **Task:** <task>
  **Result:** <result>

An empty task or result is stored as (none); a task or a result longer
than 1000 characters is cut and ends in \"...\". The result is stored
exactly as given, so `echo` adds a trailing newline where `printf %s` does
not. Result lines starting with \"## \" get one leading space, which
renders the same in markdown but does not start a new entry.

The entry is written in one piece under an exclusive lock, so runs and
trims working on the same log at the same time never tear or lose it.
Credentials in the task or the result (the configured providers' keys,
sk-... keys, AWS keys, bearer tokens, private keys, GitHub and other
tokens) are replaced by a marker such as [redacted: github token], and a
line on stderr says so, unless [memory] redact = false in the agent file
or config.toml.

Prints nothing unless --json is given.",
    run: Run::Action(run),
};

const TASK_NEEDED: Rule = Rule::Either(Item::Flag(&TASK), Item::Flag(&TASK_FILE));

const TASK: Flag = Flag::with_value(
    "task",
    "TEXT",
    "What the agent was asked (required; newlines become spaces)",
);

const TASK_FILE: Flag = Flag::with_value(
    "task-file",
    "PATH",
    "Read the task from PATH, byte for byte (a shell's $(...) drops trailing newlines)",
)
.completes(Complete::File);

const RESULT: Flag = Flag::with_value(
    "result",
    "TEXT",
    "What it answered [default: standard input, when it is not a terminal]",
);

const TIMESTAMP: Flag = Flag::with_value(
    "timestamp",
    "TIME",
    "Date the entry at this RFC 3339 time instead of now",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, path, timestamp, bytes, truncated, task_truncated, redacted} as JSON",
);

#[derive(Serialize)]
struct Json {
    #[serde(flatten)]
    base: Base,
    timestamp: String,
    bytes: u64,
    truncated: bool,
    task_truncated: bool,
    redacted: Vec<Redaction>,
}

/// `axe-mem-append`'s command line, read before any file is touched: a
/// malformed --timestamp is the error even when the agent is broken.
struct Args<'m> {
    log: super::Given<'m>,
    wait: axe_memory::Wait,
    task: &'m std::ffi::OsStr,
    /// `--task-file`: `task` is a path to read.
    task_file: bool,
    at: OffsetDateTime,
    result: Option<&'m std::ffi::OsStr>,
    json: bool,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        // The rules see to exactly one of --task and --task-file.
        let (task, task_file) = match (m.value(&TASK), m.value(&TASK_FILE)) {
            (Some(task), _) => (task, false),
            (None, Some(path)) => (path, true),
            (None, None) => return Err(Error::Usage(TASK_NEEDED.message())),
        };
        Ok(Args {
            wait: crate::commands::args::wait(m)?,
            log: super::Given::read(m)?,
            task,
            task_file,
            at: match m.string(&TIMESTAMP)? {
                Some(t) => OffsetDateTime::parse(t, &Rfc3339)
                    .ok()
                    // Stored in UTC, which must still be a year RFC 3339 can write.
                    .and_then(|at| at.checked_to_offset(time::UtcOffset::UTC))
                    .filter(|at| (0..=9999).contains(&at.year()))
                    .ok_or_else(|| {
                        Error::Usage(format!(
                            "error parsing flag --timestamp: \"{t}\" is not an RFC 3339 time such as 2026-02-28T15:04:05Z"
                        ))
                    })?,
                None => OffsetDateTime::now_utc(),
            },
            result: m.value(&RESULT),
            json: m.flag(&JSON),
        })
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let Args {
        log,
        wait,
        task,
        task_file,
        at,
        result,
        json,
    } = Args::read(m)?;
    let mut sink = std::io::sink();
    let out = crate::commands::args::report_to(m, out, &mut sink);
    let target = log.resolve()?;
    let task = match task_file {
        false => task.as_encoded_bytes().to_vec(),
        true => fs::File::open(task)
            .and_then(|file| read_kept(file, axe_memory::log::TASK_LIMIT))
            .map_err(|e| {
                Error::caused(
                    Error::Input(format!(
                        "failed to read task file {}: {}",
                        task.to_string_lossy(),
                        axe_base::error::describe_io(&e)
                    )),
                    e,
                )
            })?,
    };
    let result = match result {
        Some(r) => r.as_encoded_bytes().to_vec(),
        None if io::stdin().is_terminal() => Vec::new(),
        None => read_kept(io::stdin().lock(), axe_memory::log::RESULT_LIMIT)
            .map_err(|e| Error::stdin(&e))?,
    };
    let redact = target.run_log.as_ref().and_then(|m| m.redact);
    let appended = axe_memory::log::append(
        &target.path,
        &task,
        &result,
        at,
        &axe_agent::config::secrets(&target.agents, redact),
        wait,
    )?;
    let redacted = secrets::at(Place::RunLog, &appended.redacted);
    crate::commands::args::tell(&redacted);
    if json {
        return axe_cli::write_json(
            out,
            &Json {
                base: target.base(),
                timestamp: appended.timestamp,
                bytes: appended.bytes,
                truncated: appended.truncated,
                task_truncated: appended.task_truncated,
                redacted,
            },
        );
    }
    Ok(())
}

/// Reads `input`, keeping only as much as the stored entry can hold of
/// `limit` characters, but reading to the end so the writer of a pipe
/// never sees it closed early.
fn read_kept(mut input: impl Read, limit: usize) -> io::Result<Vec<u8>> {
    // Four bytes per character at most, plus one character to tell "longer".
    let keep = (limit as u64 + 1) * 4;
    let mut kept = Vec::new();
    (&mut input).take(keep).read_to_end(&mut kept)?;
    io::copy(&mut input, &mut io::sink())?;
    Ok(kept)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_input_is_read_to_the_end_but_kept_short() {
        let input = "€".repeat(100_000);
        let mut reader = io::Cursor::new(input.as_bytes());
        let kept = read_kept(&mut reader, axe_memory::log::RESULT_LIMIT).unwrap();
        assert_eq!(reader.position() as usize, input.len());
        assert!(kept.len() <= 4004);
        assert!(memory_cut(&kept), "still longer than the limit");
    }

    fn memory_cut(bytes: &[u8]) -> bool {
        String::from_utf8_lossy(bytes).chars().count() > axe_memory::log::RESULT_LIMIT
    }
}
