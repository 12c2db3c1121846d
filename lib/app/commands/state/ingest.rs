//! `axe-state-ingest`: the signals of a model's output, recorded.

use std::io::Write;

use serde::Serialize;

use super::TASK;
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::{Error, Result};
use axe_base::stderr::note;
use axe_cli::{Command, Flag, Item, Matches, Rule, Run};
use axe_memory::secrets::{self, Place, Redaction};
use axe_memory::state::DEFAULT_TASK;
use axe_memory::state::{self, Pruned, Rejected, Signal};

pub const COMMAND: Command = Command {
    name: "axe-state-ingest",
    about: "Record the AXE_MEMORY signal lines of standard input in an agent's state",
    usage: &["[OPTIONS] <AGENT> < OUTPUT"],
    args: &[AGENT],
    flags: &[TASK, PHASE, TEE, WAIT, crate::commands::args::QUIET, JSON],
    rules: &[
        crate::commands::args::AGENT_REQUIRED,
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&JSON)),
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&TEE)),
    ],
    description: "\
Reads a model's output on standard input and records each signal line,
\"AXE_MEMORY: TYPE text\" (or agentium's \"AGENTIUM_MEMORY:\"), in the
agent's state. The types: KEY_FACT (kept once), DECISION, STEP_DONE
(completes the pending step that matches, spaces and case aside),
STEP_PENDING, FILE_MODIFIED (kept once) and ERROR (an unresolved error).
Steps and files go to the task named by --task, \"main\" without it.

A line that starts like a signal but has an unknown type or no text is
not recorded and is reported: a line on stderr each, and in --json. With
--tee the input passes through to standard output without its signal
lines, so the command can sit in a pipeline. The state is changed under
its lock and replaced atomically.",
    run: Run::Action(run),
};

const PHASE: Flag = Flag::with_value("phase", "P", "The task's phase, set on it");

const TEE: Flag = Flag::switch(
    "tee",
    "Pass standard input through to standard output, signal lines removed",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, path, recorded, rejected, pruned, redacted} as JSON (not with --tee)",
);

#[derive(Serialize)]
struct Json<'a> {
    agent: &'a str,
    path: String,
    recorded: &'a [Signal],
    rejected: &'a [Rejected],
    pruned: Pruned,
    redacted: Vec<Redaction>,
}

/// `axe-state-ingest`'s command line, read before standard input or any
/// file is.
struct Args<'m> {
    agent: &'m str,
    wait: axe_memory::Wait,
    tee: bool,
    json: bool,
    task: &'m str,
    phase: Option<&'m str>,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        let args = Args {
            agent: crate::commands::args::required_agent(m)?,
            wait: crate::commands::args::wait(m)?,
            tee: m.flag(&TEE),
            json: m.flag(&JSON),
            task: m.string(&TASK)?.unwrap_or(DEFAULT_TASK),
            phase: m.string(&PHASE)?,
        };
        if args.tee && args.json {
            return Err(Error::Usage("cannot use --tee with --json".into()));
        }
        Ok(args)
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let Args {
        agent,
        wait,
        tee,
        json,
        task,
        phase,
    } = Args::read(m)?;
    let mut sink = std::io::sink();
    let out = crate::commands::args::report_to(m, out, &mut sink);
    let t = super::open(agent)?;
    let input = crate::commands::stdin::read_stdin()?;
    let parsed = state::parse(&input);
    let saved = state::update(
        &t.path,
        t.cfg.max_entries.as_usize(),
        &t.secrets,
        wait,
        |s| {
            if phase.is_some() {
                s.task(task, phase);
            }
            s.apply(&parsed.signals, task, phase);
        },
    )?;
    for r in &parsed.rejected {
        note(format_args!(
            "axe-state-ingest: line {}: {}: {}",
            r.line, r.reason, r.text
        ));
    }
    let redacted = secrets::at(Place::State, &saved.redacted);
    crate::commands::args::tell(&redacted);
    if json {
        return axe_cli::write_json(
            out,
            &Json {
                agent: &t.agent,
                path: t.path.to_string_lossy().into_owned(),
                recorded: &parsed.signals,
                rejected: &parsed.rejected,
                pruned: saved.pruned,
                redacted,
            },
        );
    }
    if tee {
        out.write_all(parsed.rest.as_bytes())
            .map_err(Error::Output)?;
    }
    Ok(())
}
