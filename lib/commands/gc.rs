//! `axe-gc`: ask a model for patterns in an agent's run log, print them,
//! then trim the log to its configured size (M7).

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use super::target::{self, AGENT};
use crate::agent::{self, AgentConfig};
use crate::cli::{Command, Complete, Flag, Matches, Run};
use crate::config;
use crate::error::{Error, Result};
use crate::llm::{self, CallOptions, Conversation, Deadline, Message};
use crate::memory::{self, Trim};
use crate::stderr::note;

pub const COMMAND: Command = Command {
    name: "axe-gc",
    about: "Analyze and trim agent memory",
    usage: &["[OPTIONS] <AGENT>", "[OPTIONS] --all"],
    args: &[AGENT],
    flags: &[ALL, DRY_RUN, MODEL, TIMEOUT, JSON],
    description: "\
Sends the whole log to the model with a fixed prompt asking for three
sections (Patterns Found, Repeated Work, Recommendations), prints the
answer, then keeps only the last memory.last_n entries (or max_entries when
last_n is 0; no trim when both are 0).

The trim replaces the log atomically under its lock, so a run appending
while gc works never loses its entry. Memory problems are errors here.
With --all, a failing agent is reported and the others still run.

A local model can take minutes over a long log: raise --timeout.

Exit codes: 1 bad arguments, a memory error, or some agents failed under
--all; 2 agent or config error; 3 API error.",
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
.completes(Complete::Model);

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up on an analysis after this long [default: 120]",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agents: [{agent, status, entries, analysis, kept, removed, error}], failed} as JSON",
);

/// The analysis prompt (M7 4.1), fixed on purpose: not configurable.
pub const ANALYSIS_PROMPT: &str = "You are a memory analyst for an AI agent. You will receive a log of the agent's past tasks and results. Analyze the entries and provide a structured report.

Your report MUST contain exactly these three sections with these exact headings:

## Patterns Found
Identify recurring themes, common task types, or behavioral patterns across the entries. If no patterns exist, state \"No clear patterns detected.\"

## Repeated Work
Identify any tasks that appear to be duplicated or that the agent has done multiple times with the same or similar inputs. If no repetition is found, state \"No repeated work detected.\"

## Recommendations
Based on the patterns and repetitions found, suggest concrete actions the user could take to improve the agent's configuration, skill, or workflow. If no recommendations apply, state \"No specific recommendations.\"

Be concise. Reference specific entries by their timestamps when relevant.";

struct Options<'a> {
    dry_run: bool,
    model: Option<&'a str>,
    timeout: Duration,
    /// Text goes to stdout only without `--json`.
    text: bool,
}

/// What happened to one agent; an element of the `--json` document.
#[derive(Serialize, Default)]
struct Report {
    agent: String,
    /// disabled, empty, dry_run, no_target, within, trimmed or failed.
    status: &'static str,
    entries: u64,
    analysis: Option<String>,
    kept: Option<u64>,
    removed: Option<u64>,
    error: Option<String>,
}

#[derive(Serialize)]
struct Json<'a> {
    agents: &'a [Report],
    failed: usize,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let all = m.flag(&ALL);
    let name = target::agent_arg(m)?;
    let json = m.flag(&JSON);
    let opts = Options {
        dry_run: m.flag(&DRY_RUN),
        model: m.string(&MODEL)?,
        timeout: target::timeout(m, &TIMEOUT)?,
        text: !json,
    };
    let reports = match (all, name) {
        (true, Some(_)) => {
            return Err(Error::Usage(
                "cannot specify both --all and an agent name".into(),
            ));
        }
        (false, None) => {
            return Err(Error::Usage("agent name is required (or use --all)".into()));
        }
        (false, Some(name)) => {
            let mut report = Report {
                agent: name.to_owned(),
                ..Report::default()
            };
            gc_agent(name, None, &opts, &mut report, out)?;
            vec![report]
        }
        (true, None) => gc_all(&opts, out)?,
    };
    let failed = reports.iter().filter(|r| r.status == "failed").count();
    if json {
        crate::cli::write_json(
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

/// M7 3.5: every memory-enabled agent in turn; a failure is reported and
/// the rest go on.
fn gc_all(opts: &Options, out: &mut dyn Write) -> Result<Vec<Report>> {
    let agents: Vec<_> = agent::list()?
        .into_iter()
        .filter(|(_, cfg)| cfg.memory.enabled)
        .collect();
    if agents.is_empty() {
        if opts.text {
            writeln!(out, "No agents with memory enabled.")?;
        }
        return Ok(Vec::new());
    }
    let mut reports = Vec::with_capacity(agents.len());
    for (name, cfg) in agents {
        if opts.text {
            writeln!(out, "=== GC: {name} ===")?;
        }
        let mut report = Report {
            agent: name.clone(),
            ..Report::default()
        };
        if let Err(e) = gc_agent(&name, Some(cfg), opts, &mut report, out) {
            // Our own output failing is not the agent's fault: stop.
            if let Error::Output(_) = e {
                return Err(e);
            }
            note(format_args!("Error: gc failed for agent \"{name}\": {e}"));
            report.status = "failed";
            report.error = Some(e.to_string());
        }
        reports.push(report);
    }
    Ok(reports)
}

/// M7 3.3 for one agent; `cfg` when already loaded. Fills `report` as it
/// goes, so a failure keeps what was done before it.
fn gc_agent(
    name: &str,
    cfg: Option<AgentConfig>,
    opts: &Options,
    report: &mut Report,
    out: &mut dyn Write,
) -> Result<()> {
    let cfg = match cfg {
        Some(c) => c,
        None => agent::load(name)?,
    };
    if !cfg.memory.enabled {
        note(format_args!(
            "Warning: agent \"{name}\" does not have memory enabled. Skipping."
        ));
        report.status = "disabled";
        return Ok(());
    }
    let path = memory::file_path(name, &cfg.memory.path)?;
    // One snapshot for the prompt and the count, so they agree.
    let log = memory::load(&path, 0)?;
    if log.is_empty() {
        if opts.text {
            writeln!(
                out,
                "No memory entries for agent \"{name}\". Nothing to do."
            )?;
        }
        report.status = "empty";
        return Ok(());
    }
    report.entries = memory::count_entries(&log);
    if opts.text {
        writeln!(out, "Agent: {name}\nEntries: {}", report.entries)?;
        // The analysis can take minutes; show where we are.
        out.flush()?;
    }

    let (provider, model) = llm::parse_model(opts.model.unwrap_or(&cfg.model))?;
    let config = config::load()?;
    let endpoint = config.endpoint(provider)?;
    let conversation = Conversation {
        model: None,
        system: ANALYSIS_PROMPT.to_owned(),
        messages: vec![Message::user(String::from_utf8_lossy(&log))],
        tools: Vec::new(),
        temperature: 0.3,
        max_tokens: 4096,
    };
    let options = CallOptions {
        deadline: Deadline::after(opts.timeout),
        retries: 0,
        stream: false,
    };
    let reply = llm::complete(&endpoint, &model, &conversation, &options, &mut |_| Ok(()))?;
    if opts.text {
        writeln!(out, "--- Analysis ---\n{}", reply.content)?;
    }
    report.analysis = Some(reply.content);

    if opts.dry_run {
        if opts.text {
            writeln!(out, "Dry run: no entries trimmed.")?;
        }
        report.status = "dry_run";
        return Ok(());
    }
    let Some(keep) = cfg.memory.trim_target() else {
        if opts.text {
            writeln!(
                out,
                "No trim target configured (last_n and max_entries are both 0). Skipping trim."
            )?;
        }
        report.status = "no_target";
        return Ok(());
    };
    match memory::trim(&path, keep, true)? {
        Trim::Within { entries } => {
            if opts.text {
                writeln!(
                    out,
                    "No trimming needed: {entries} entries within limit ({keep})."
                )?;
            }
            report.status = "within";
            report.kept = Some(entries);
            report.removed = Some(0);
        }
        Trim::Trimmed { kept, removed, .. } => {
            let removed = removed.unwrap_or_default();
            if opts.text {
                writeln!(
                    out,
                    "Trimmed: {removed} entries removed, {kept} entries kept."
                )?;
            }
            report.status = "trimmed";
            report.kept = Some(kept);
            report.removed = Some(removed);
        }
    }
    Ok(())
}
