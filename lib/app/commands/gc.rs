//! `axe-gc`: ask a model for patterns in an agent's run log, print them,
//! then trim the log to its configured size; the workflow is
//! `run::gc`.

use std::io::Write;

use serde::Serialize;

use super::args::{self as target, AGENT};
use super::args::{AGENTS_DIR, WAIT};
use super::stdin::NO_STDIN;
use axe_base::error::{Error, Result};
use axe_base::stderr::note;
use axe_cli::{Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_run::gc::{self, Event, Options, Report, Status};

/// The prompt of the analysis, part of what `axe-gc` promises.
pub use axe_run::gc::ANALYSIS_PROMPT;

pub const COMMAND: Command = Command {
    name: "axe-gc",
    about: "Analyze and trim agent memory",
    usage: &["[OPTIONS] <AGENT>", "[OPTIONS] --all"],
    args: &[AGENT],
    flags: &[
        ALL,
        DRY_RUN,
        MODEL,
        TIMEOUT,
        BUDGET,
        AGENTS_DIR,
        WAIT,
        NO_STDIN,
        JSON,
        super::log::NO_LOG,
    ],
    rules: &[Rule::Conflict(Item::Flag(&ALL), Item::Arg(&AGENT)), ONE],
    description: "\
Sends the whole log to the model with a fixed prompt asking for three
sections (Patterns Found, Repeated Work, Recommendations), prints the
answer, then keeps only the last memory.last_n entries (or max_entries when
last_n is 0; no trim when both are 0).

The trim replaces the log atomically under its lock, so a run appending
while gc works never loses its entry. Memory problems are errors here.
With --all, a failing agent is reported and the others still run.
With --json, stderr is JSON too, one object a line: {agent, warning} for
an agent without memory, {agent, error} for one that failed, and
{error, exit_code} when gc ends in error.

A local model can take minutes over a long log: raise --timeout, or send
only the newest entries that fit in --budget N characters (the analysis
then sees the recent past whole, and the trim is unchanged).

For an agent whose [notes] consolidate_every is set, gc then consolidates
its notes when that is due, as axe-run does after a run (not with
--dry-run or --json), and says so on stderr.

Standard input is never read; -n (as axe-run's and axe-llm's) is taken so
one line of a `while read` loop can call each of them alike.",
    run: Run::Action(run),
};

const ALL: Flag = Flag::switch(
    "all",
    "Run on every agent that has memory.enabled = true, one after another",
);

const DRY_RUN: Flag = Flag::switch(
    "dry-run",
    "Analyze and print suggestions without trimming the memory file",
);

const MODEL: Flag = Flag::with_value(
    "model",
    "PROVIDER/MODEL",
    "Use this model for the analysis instead of the agent's",
)
.short('m')
.completes(Complete::Model);

/// An agent or `--all`.
const ONE: Rule = Rule::Either(Item::Arg(&AGENT), Item::Flag(&ALL));

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up on an analysis after this long [default: 120]",
)
.number();

const BUDGET: Flag = Flag::with_value(
    "budget",
    "N",
    "Send the analysis only the newest entries that fit in N characters [default: the whole log]",
)
.int();

const JSON: Flag = Flag::switch(
    "json",
    "Print {agents: [{agent, status, entries, analysis, kept, removed, error, sent}], failed} as JSON",
);

#[derive(Serialize)]
struct Json<'a> {
    agents: &'a [Report],
    failed: usize,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let wait = super::args::wait(m)?;
    let agents = super::args::agents(m)?;
    let all = m.flag(&ALL);
    let name = target::agent_arg(m)?;
    let json = m.flag(&JSON);
    let opts = Options {
        agents: &agents,
        wait,
        dry_run: m.flag(&DRY_RUN),
        model: m.string(&MODEL)?,
        timeout: target::timeout(m, &TIMEOUT)?,
        budget: m.number::<usize>(&BUDGET)?,
        log: !m.flag(&super::log::NO_LOG),
    };
    let mut on = |event: Event| show(event, json, out);
    // The rules see to --all or a name, not both.
    let reports = match (all, name) {
        (false, Some(name)) => vec![gc::one(name, &opts, &mut on)?],
        (true, None) => gc::all(&opts, &mut on)?,
        _ => return Err(Error::Usage(ONE.message())),
    };
    if !opts.dry_run && !json {
        consolidate(&agents, &reports, opts.log);
    }
    let failed = reports
        .iter()
        .filter(|r| r.status == Status::Failed)
        .count();
    if json {
        axe_cli::write_json(
            out,
            &Json {
                agents: &reports,
                failed,
            },
        )?;
    }
    if failed > 0 {
        return Err(Error::Agent(format!(
            "gc completed with errors: {failed} of {} agents failed",
            reports.len()
        )));
    }
    Ok(())
}

/// The notes' consolidation `axe-run` makes after a run, for each agent
/// gc did not fail on whose `[notes] consolidate_every` says it is due;
/// what it did (or why not) on stderr. Not with `--json`, whose stderr is
/// JSON, nor `--dry-run`, which changes nothing.
fn consolidate(agents: &axe_agent::Agents, reports: &[Report], log: bool) {
    for r in reports.iter().filter(|r| r.status != Status::Failed) {
        if let Ok(cfg) = agents.load(&r.agent) {
            let report = agents.report();
            axe_run::consolidate::after_run(agents, &r.agent, &cfg, (true, log), report);
        }
    }
}

/// Shows one step of gc: the Go `axe`'s lines on stdout (none with
/// `--json`), warnings and failures on stderr, there as JSON objects with
/// `--json` (`{agent, warning}`, `{agent, error}`), so that everything on
/// stderr is JSON, the final `{error, exit_code}` included.
fn show(event: Event, json: bool, out: &mut dyn Write) -> Result<()> {
    let text = match event {
        Event::Disabled(agent) => {
            let warning = format!("agent \"{agent}\" does not have memory enabled. Skipping.");
            if json {
                let line = serde_json::json!({"agent": agent, "warning": warning});
                note(format_args!("{line}"));
            } else {
                note(format_args!("Warning: {warning}"));
            }
            return Ok(());
        }
        Event::Failed { agent, error } => {
            // The same text as the agent's `error` in the document.
            if json {
                let line = serde_json::json!({"agent": agent, "error": error.to_string()});
                note(format_args!("{line}"));
            } else {
                note(format_args!(
                    "Error: gc failed for agent \"{agent}\": {error}"
                ));
            }
            return Ok(());
        }
        _ if json => return Ok(()),
        Event::NoAgents => "No agents with memory enabled.".to_owned(),
        Event::Agent(name) => format!("=== GC: {name} ==="),
        Event::Empty(name) => format!("No memory entries for agent \"{name}\". Nothing to do."),
        Event::Sending {
            agent,
            entries,
            sent,
        } => {
            let mut text = format!("Agent: {agent}\nEntries: {entries}");
            if let Some((n, chars)) = sent {
                text.push_str(&format!("\nSent:    the newest {n} ({chars} characters)"));
            }
            text
        }
        Event::Analysis(text) => format!("--- Analysis ---\n{text}"),
        Event::DryRun => "Dry run: no entries trimmed.".to_owned(),
        Event::NoTarget => axe_memory::log::NO_TRIM_TARGET.to_owned(),
        Event::Trimmed { trim, keep } => trim.message(keep),
    };
    writeln!(out, "{text}").map_err(Error::Output)?;
    // The analysis can take minutes: show where we are before it.
    out.flush().map_err(Error::Output)
}
