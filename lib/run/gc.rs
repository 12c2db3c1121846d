//! `axe-gc`'s workflow (M7): the run log sent to a model for patterns, the
//! analysis shown, then the locked trim to the agent's configured size.
//! Memory problems are errors here, unlike in a run.

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use crate::agent::{self, AgentConfig};
use crate::config::{self, Endpoints};
use crate::error::{Error, Result};
use crate::llm::{self, CallOptions, Conversation, Deadline, Message};
use crate::memory::{self, Trim};
use crate::stderr::note;

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

/// How to gc.
pub struct Options<'a> {
    pub dry_run: bool,
    /// Instead of the agent's own model.
    pub model: Option<&'a str>,
    pub timeout: Duration,
    /// Text goes to stdout only without `--json`.
    pub text: bool,
    /// The most characters of entries sent to the analysis, newest first;
    /// `None`: the whole log, as Go sent it.
    pub budget: Option<usize>,
}

/// What happened to one agent; an element of the `--json` document.
#[derive(Serialize, Default)]
pub struct Report {
    pub agent: String,
    /// disabled, empty, dry_run, no_target, within, trimmed or failed.
    pub status: &'static str,
    pub entries: u64,
    pub analysis: Option<String>,
    pub kept: Option<u64>,
    pub removed: Option<u64>,
    pub error: Option<String>,
    /// With `--budget`: how many of the newest entries the analysis got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
}

/// M7 3.5: every memory-enabled agent in turn; a failure is reported and
/// the rest go on.
pub fn all(opts: &Options, out: &mut dyn Write) -> Result<Vec<Report>> {
    let mut endpoints = None;
    let agents: Vec<_> = agent::list()?
        .into_iter()
        .filter(|(_, cfg)| cfg.memory.enabled)
        .collect();
    if agents.is_empty() {
        if opts.text {
            writeln!(out, "No agents with memory enabled.").map_err(Error::Output)?;
        }
        return Ok(Vec::new());
    }
    let mut reports = Vec::with_capacity(agents.len());
    for (name, cfg) in agents {
        if opts.text {
            writeln!(out, "=== GC: {name} ===").map_err(Error::Output)?;
        }
        let mut report = Report {
            agent: name.clone(),
            ..Report::default()
        };
        if let Err(e) = agent(&name, Some(cfg), opts, &mut endpoints, &mut report, out) {
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

/// M7 3.3 for the agent `name`.
pub fn one(name: &str, opts: &Options, out: &mut dyn Write) -> Result<Report> {
    let mut report = Report {
        agent: name.to_owned(),
        ..Report::default()
    };
    agent(name, None, opts, &mut None, &mut report, out)?;
    Ok(report)
}

/// M7 3.3 for one agent; `cfg` when already loaded. Fills `report` as it
/// goes, so a failure keeps what was done before it. `endpoints` is
/// loaded from `config.toml` by the first agent that gets that far and
/// kept for the rest, so each provider's key is looked up once.
fn agent(
    name: &str,
    cfg: Option<AgentConfig>,
    opts: &Options,
    endpoints: &mut Option<Endpoints>,
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
            )
            .map_err(Error::Output)?;
        }
        report.status = "empty";
        return Ok(());
    }
    report.entries = memory::count_entries(&log);
    let sent = match opts.budget {
        Some(budget) => newest_within(&log, budget, report)?,
        None => &log[..],
    };
    if opts.text {
        writeln!(out, "Agent: {name}\nEntries: {}", report.entries).map_err(Error::Output)?;
        if let Some(n) = report.sent {
            let chars = String::from_utf8_lossy(sent).chars().count();
            writeln!(out, "Sent:    the newest {n} ({chars} characters)").map_err(Error::Output)?;
        }
        // The analysis can take minutes; show where we are.
        out.flush().map_err(Error::Output)?;
    }

    let (provider, model) = llm::parse_model(opts.model.unwrap_or(&cfg.model))?;
    let endpoint = match endpoints {
        Some(known) => known.get(provider)?,
        None => endpoints
            .insert(Endpoints::new(config::load()?))
            .get(provider)?,
    };
    let conversation = Conversation {
        model: None,
        system: ANALYSIS_PROMPT.to_owned(),
        messages: vec![Message::user(String::from_utf8_lossy(sent))],
        tools: Vec::new(),
        temperature: Some(0.3),
        max_tokens: 4096,
    };
    let options = CallOptions {
        deadline: Deadline::after(opts.timeout),
        retries: 0,
        stream: false,
    };
    let reply = llm::complete(&endpoint, &model, &conversation, &options, &mut |_| Ok(()))?;
    if opts.text {
        writeln!(out, "--- Analysis ---\n{}", reply.content).map_err(Error::Output)?;
    }
    report.analysis = Some(reply.content);

    if opts.dry_run {
        if opts.text {
            writeln!(out, "Dry run: no entries trimmed.").map_err(Error::Output)?;
        }
        report.status = "dry_run";
        return Ok(());
    }
    let Some(keep) = cfg.memory.trim_target() else {
        if opts.text {
            writeln!(out, "{}", memory::NO_TRIM_TARGET).map_err(Error::Output)?;
        }
        report.status = "no_target";
        return Ok(());
    };
    let trim = memory::trim(&path, keep, true)?;
    if opts.text {
        writeln!(out, "{}", trim.message(keep)).map_err(Error::Output)?;
    }
    (report.status, report.kept, report.removed) = match trim {
        Trim::Within { entries } => ("within", Some(entries), Some(0)),
        Trim::Trimmed { kept, removed, .. } => ("trimmed", Some(kept), removed),
    };
    Ok(())
}

/// The newest entries of `log` that fit in `budget` characters together,
/// as they are in the log: a run of the latest, so the analysis sees the
/// recent past whole. An error when not even the newest one fits.
fn newest_within<'a>(log: &'a [u8], budget: usize, report: &mut Report) -> Result<&'a [u8]> {
    // The entries run on to the end of the log, so the newest `n` are its
    // last bytes.
    let (mut start, mut used, mut sent) = (log.len(), 0, 0);
    for entry in memory::entries(log).iter().rev() {
        let chars = String::from_utf8_lossy(entry).chars().count();
        if used + chars > budget {
            break;
        }
        used += chars;
        sent += 1;
        start -= entry.len();
    }
    if sent == 0 {
        return Err(Error::Usage(format!(
            "no entry of the log fits in --budget {budget}"
        )));
    }
    report.sent = Some(sent);
    Ok(&log[start..])
}
