//! `axe-gc`'s workflow, the Go `axe`'s: the run log sent to a model for patterns, the
//! analysis shown, then the locked trim to the agent's configured size.
//! Memory problems are errors here, unlike in a run. Nothing here prints:
//! what happens is told to the caller as [`Event`]s, in order, and what
//! happened to each agent is its [`Report`].

use std::time::Duration;

use serde::Serialize;

use axe_agent::config::{self, Endpoints};
use axe_agent::{AgentConfig, Agents};
use axe_base::error::{Error, Result};
use axe_ledger::{Caller, Ledger};
use axe_llm::{CallOptions, Conversation, Deadline, Message};
use axe_memory::Wait;
use axe_memory::log::{self, Trim};

/// The analysis prompt, the Go `axe`'s word for word, fixed on purpose:
/// not configurable.
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
    /// The agents, and the directories their memory is in.
    pub agents: &'a Agents,
    /// How long a log's lock is waited for.
    pub wait: Wait,
    pub dry_run: bool,
    /// Instead of the agent's own model.
    pub model: Option<&'a str>,
    pub timeout: Duration,
    /// The most characters of entries sent to the analysis, newest first;
    /// `None`: the whole log, as Go sent it.
    pub budget: Option<usize>,
    /// Record the calls in the ledger (off: `--no-log`).
    pub log: bool,
}

/// How gc ended for one agent.
#[derive(Serialize, Default, Debug, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Memory is off for the agent: skipped.
    Disabled,
    /// The log holds nothing.
    Empty,
    /// Analysed, not trimmed (`--dry-run`).
    DryRun,
    /// Analysed; the agent sets no size to trim to.
    NoTarget,
    /// Analysed; the log was within its size already.
    Within,
    Trimmed,
    /// Until an agent's gc finishes, it has failed.
    #[default]
    Failed,
}

/// What gc tells its caller as it goes, in order: enough to show progress
/// during an analysis that may take minutes.
pub enum Event<'a> {
    /// `--all` found no agent with memory.
    NoAgents,
    /// `--all` starts on this agent.
    Agent(&'a str),
    /// The agent has memory off and is skipped.
    Disabled(&'a str),
    /// The agent's log is empty: nothing to do.
    Empty(&'a str),
    /// The analysis is about to be asked for: the log's entries, and with
    /// a budget how many of the newest went (and their characters).
    Sending {
        agent: &'a str,
        entries: u64,
        sent: Option<(u64, usize)>,
    },
    Analysis(&'a str),
    /// `--dry-run`: the trim is skipped.
    DryRun,
    /// The agent sets no size to trim to.
    NoTarget,
    /// The trim to `keep` entries did this.
    Trimmed {
        trim: Trim,
        keep: u64,
    },
    /// Under `--all`, this agent failed; the rest go on.
    Failed {
        agent: &'a str,
        error: &'a Error,
    },
}

/// Receives the [`Event`]s; an error from it (our output failing) stops gc.
pub type Observer<'a> = dyn FnMut(Event) -> Result<()> + 'a;

/// What happened to one agent; an element of the `--json` document.
#[derive(Serialize, Default)]
pub struct Report {
    pub agent: String,
    pub status: Status,
    pub entries: u64,
    pub analysis: Option<String>,
    pub kept: Option<u64>,
    pub removed: Option<u64>,
    pub error: Option<String>,
    /// With `--budget`: how many of the newest entries the analysis got.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sent: Option<u64>,
}

/// `axe-gc --all`: every memory-enabled agent in turn; a failure is
/// reported and the rest go on.
pub fn all(opts: &Options, on: &mut Observer) -> Result<Vec<Report>> {
    let mut endpoints = None;
    let agents: Vec<_> = opts
        .agents
        .list()?
        .into_iter()
        .filter(|(_, cfg)| cfg.memory.log.enabled)
        .collect();
    if agents.is_empty() {
        on(Event::NoAgents)?;
        return Ok(Vec::new());
    }
    let mut reports = Vec::with_capacity(agents.len());
    for (name, cfg) in agents {
        on(Event::Agent(&name))?;
        let mut report = Report {
            agent: name.clone(),
            ..Report::default()
        };
        if let Err(e) = agent(&name, Some(cfg), opts, &mut endpoints, &mut report, on) {
            // Our own output failing is not the agent's fault: stop.
            if let Error::Output(_) = e {
                return Err(e);
            }
            on(Event::Failed {
                agent: &name,
                error: &e,
            })?;
            report.status = Status::Failed;
            report.error = Some(e.to_string());
        }
        reports.push(report);
    }
    Ok(reports)
}

/// `axe-gc AGENT` for the agent `name`.
pub fn one(name: &str, opts: &Options, on: &mut Observer) -> Result<Report> {
    let mut report = Report {
        agent: name.to_owned(),
        ..Report::default()
    };
    agent(name, None, opts, &mut None, &mut report, on)?;
    Ok(report)
}

/// One agent's analysis and trim; `cfg` when already loaded. Fills `report` as it
/// goes, so a failure keeps what was done before it. `endpoints` is
/// loaded from `config.toml` by the first agent that gets that far and
/// kept for the rest, so each provider's key is looked up once.
fn agent(
    name: &str,
    cfg: Option<AgentConfig>,
    opts: &Options,
    endpoints: &mut Option<Endpoints>,
    report: &mut Report,
    on: &mut Observer,
) -> Result<()> {
    let cfg = match cfg {
        Some(c) => c,
        None => opts.agents.load(name)?,
    };
    if !cfg.memory.log.enabled {
        on(Event::Disabled(name))?;
        report.status = Status::Disabled;
        return Ok(());
    }
    let path = log::file_path(opts.agents.dirs(), name, &cfg.memory.log.path)?;
    // One snapshot for the prompt and the count, so they agree.
    let log = log::load(&path, 0, opts.wait)?;
    if log.is_empty() {
        on(Event::Empty(name))?;
        report.status = Status::Empty;
        return Ok(());
    }
    report.entries = log::count_entries(&log);
    let sent = match opts.budget {
        Some(budget) => newest_within(&log, budget, report)?,
        None => &log[..],
    };
    on(Event::Sending {
        agent: name,
        entries: report.entries,
        sent: report
            .sent
            .map(|n| (n, String::from_utf8_lossy(sent).chars().count())),
    })?;

    let (provider, model) = axe_llm::parse_model(opts.model.unwrap_or(&cfg.model))?;
    let endpoint = match endpoints {
        Some(known) => known.get_for(provider, &model)?,
        None => endpoints
            .insert(Endpoints::new(config::load(opts.agents)?))
            .get_for(provider, &model)?,
    };
    let conversation = Conversation {
        model: None,
        system: ANALYSIS_PROMPT.to_owned(),
        messages: vec![Message::user(String::from_utf8_lossy(sent))],
        tools: Vec::new(),
        temperature: Some(0.3),
        max_tokens: 4096,
        ..Conversation::default()
    };
    let options = CallOptions {
        deadline: Deadline::after(opts.timeout),
        retry: axe_llm::RetryPolicy::default(),
        stream: false,
        client: axe_net::Client::from_env(),
    };
    let ledger = match endpoints {
        Some(known) => Ledger::new(
            opts.agents.dirs().data().ok(),
            &known.config().log,
            known.config().keys(),
            opts.log,
            opts.agents.reporter(),
        ),
        None => Ledger::off(),
    };
    let caller = Caller {
        agent: Some(name),
        conversation: None,
    };
    let reply = ledger.complete(
        caller,
        &endpoint,
        &model,
        &conversation,
        &options,
        &mut |_| Ok(()),
        &mut |_| {},
    )?;
    on(Event::Analysis(&reply.content))?;
    report.analysis = Some(reply.content);

    if opts.dry_run {
        on(Event::DryRun)?;
        report.status = Status::DryRun;
        return Ok(());
    }
    let Some(keep) = cfg.memory.log.trim_target() else {
        on(Event::NoTarget)?;
        report.status = Status::NoTarget;
        return Ok(());
    };
    let trim = log::trim(&path, keep, true, opts.wait)?;
    on(Event::Trimmed { trim, keep })?;
    (report.status, report.kept, report.removed) = match trim {
        Trim::Within { entries } => (Status::Within, Some(entries), Some(0)),
        Trim::Trimmed { kept, removed, .. } => (Status::Trimmed, Some(kept), removed),
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
    for entry in log::entries(log).iter().rev() {
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
