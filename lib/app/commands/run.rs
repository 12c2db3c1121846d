//! `axe-run`: run an agent, with its memory.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::args::{self as target, AGENT, AGENT_REQUIRED, AGENTS_DIR, NEW};
use super::stdin::NO_STDIN;
use axe_agent::config;
use axe_agent::prompt;
use axe_agent::{AgentConfig, Agents};
use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_base::report::Stderr;
use axe_base::stderr::note;
use axe_base::timeout::Seconds;
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_llm::{Deadline, Message, Role};
use axe_memory::Wait;
use axe_memory::secrets::{self, Redaction};
use axe_memory::state::{Current, DEFAULT_TASK};
use axe_run::artifacts;
use axe_run::details::Detail;
use axe_run::injected::Injected;
use axe_run::once::Ran;
use axe_run::prepared::Overrides;
use axe_run::recall::Cut;
use axe_run::state::Recorded;
use axe_run::{Outcome, Prepared, Session, TextSink, budget, conversation, dry_run, history, once};
use axe_tools::builtin::Artifact;

pub const COMMAND: Command = Command {
    name: "axe-run",
    about: "Run an agent: build its prompt, call its model, print the answer",
    usage: &["[OPTIONS] <AGENT> [PROMPT]..."],
    args: &[
        AGENT,
        Arg {
            name: "PROMPT",
            noun: "prompt",
            help: "The task, as words joined by spaces; --prompt, else standard input when piped, follows after a blank line",
            complete: Complete::Nothing,
            many: true,
        },
    ],
    flags: &[
        PROMPT,
        NO_STDIN,
        MESSAGES,
        CONTINUE,
        CID,
        NEW,
        super::log::NO_LOG,
        AGENTS_DIR,
        SKILL,
        WORKDIR,
        MODEL,
        SYSTEM,
        TEMPERATURE,
        MAX_TOKENS,
        BUDGET_TOKENS,
        STATE_TASK,
        PHASE,
        TIMEOUT,
        DRY_RUN,
        VERBOSE,
        STREAM,
        ARTIFACT_DIR,
        KEEP_ARTIFACTS,
        JSON,
    ],
    rules: &[
        AGENT_REQUIRED,
        Rule::RequiredWith(Item::Flag(&CID), Item::Flag(&NEW)),
    ],
    description: "\
Loads <AGENT>.toml from the first agents directory that has it (--agents-dir,
then ./axe/agents, then <config>/agents; sub-agents are looked up the same
way), resolves its context files (globs in the workdir), skill, and
standard input (read when it is not a terminal and neither --prompt nor
-n is given, within --timeout, at most 16 MiB), and sends the system prompt (persona, skill, files, memory) and the user
message (the PROMPT words, then --prompt's text or else standard input
after a blank line, or \"Execute the task described in your
instructions.\" when both are empty)
to the agent's model. Prints the answer exactly; on a terminal, a newline
follows an answer that lacks one. With --json it prints one document, whose
tool_calls is how many tools the model called over the run (axe-llm's has
the same count, and the calls themselves as calls).

With sub_agents, the model may delegate through the call_agent tool; each
sub-agent runs with its own files, skill and memory, several at once unless
sub_agents_config.parallel is false. At most sub_agents_config.max_parallel
tool calls (default 8) run at once in the whole run, sub-agents included.

With tools = [...] the model may also work in the workdir (list_directory,
read_file, write_file, edit_file), run commands (run_command, inside
bubblewrap where it is installed) and reach the web (url_fetch,
web_search); paths never leave the workdir or the artifact directory.

With [[mcp_servers]], the tools of those MCP servers are offered too: stdio
servers are started for the conversation and stopped when it ends, signals
included; --dry-run lists them and starts none.

Each run keeps its turn in a conversation of the agent (credentials
redacted, bounded), as llm logs every prompt: -c goes on with the one used
last, whatever run kept it, --cid ID with a given one (an ID not kept is an
error naming those that are, unless --new), and --json says which as
conversation_id. --no-log keeps no turn (nor a ledger line); config.toml's
[log] conversations = false keeps one only when -c or --cid is given.

With [memory] enabled, the last memory.last_n entries of the agent's log
are part of the prompt, and a successful run appends an entry (task and
answer). Memory problems are warnings; they never fail the run. What
memory keeps (run log, notes, state) has credentials replaced by markers
such as [redacted: github token], unless [memory] redact = false; -v
and --json's redacted say what was taken out.",
    run: Run::Action(run),
};

const PROMPT: Flag = Flag::with_value(
    "prompt",
    "TEXT",
    "Send TEXT in place of standard input, which is then not read; blank TEXT counts as not given",
)
.short('p');

const MESSAGES: Flag = Flag::with_value(
    "messages",
    "FILE",
    "Go on with this conversation, a JSON array of messages (- reads standard input); the prompt, when given, is sent after it; --json then gives the whole conversation back as messages",
)
.completes(Complete::File);

const CONTINUE: Flag = Flag::switch(
    "continue",
    "Go on with the agent's conversation used last, whatever run kept it (a new one when it has none); the prompt is its next turn",
)
.short('c');

const CID: Flag = Flag::with_value(
    "cid",
    "ID",
    "Go on with the agent's conversation ID (--json's conversation_id); an ID it does not have is an error unless --new",
);

const SKILL: Flag = Flag::with_value(
    "skill",
    "PATH",
    "Use this skill file instead of the agent's",
)
.completes(Complete::File);

const WORKDIR: Flag =
    Flag::with_value("workdir", "DIR", "Resolve the agent's files in DIR").completes(Complete::Dir);

const MODEL: Flag = Flag::with_value(
    "model",
    "PROVIDER/MODEL",
    "Use this model instead of the agent's",
)
.short('m')
.completes(Complete::Model);

const SYSTEM: Flag = Flag::with_value(
    "system",
    "TEXT",
    "Use this persona instead of the agent's system_prompt (skill, files and memory still follow)",
)
.short('s');

const TEMPERATURE: Flag = Flag::with_value(
    "temperature",
    "T",
    "Sampling temperature for this run, sent even when 0 [default: the agent's]",
)
.number();

const MAX_TOKENS: Flag = Flag::with_value(
    "max-tokens",
    "N",
    "Longest answer in tokens for this run; 0 is not sent [default: the agent's]",
)
.int();

const BUDGET_TOKENS: Flag = Flag::with_value(
    "budget-tokens",
    "N",
    "Stop once the run, sub-agents included, has used N tokens (input and output): the partial answer is printed, nothing remembered, exit 4; 0 is no limit [default: the agent's budget.max_tokens]",
)
.int();

const STATE_TASK: Flag = Flag::with_value(
    "task",
    "ID",
    "With [state]: the task this run works on, whose state is shown and recorded [default: main]",
);

const PHASE: Flag = Flag::with_value("phase", "P", "With [state]: the task's phase now");

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up after this long, sub-agents included [default: the agent's timeout, else 120]",
)
.number();

const DRY_RUN: Flag = Flag::switch(
    "dry-run",
    "Show the resolved context and stop: no call, no memory entry",
);

const VERBOSE: Flag =
    Flag::switch("verbose", "Print what is sent and received on stderr").short('v');

const STREAM: Flag = Flag::switch(
    "stream",
    "Print the answer as it arrives (also with stream = true in the agent); with --json, stream the call and print the document at the end",
);

const ARTIFACT_DIR: Flag = Flag::with_value(
    "artifact-dir",
    "DIR",
    "Put the agents' artifacts in DIR, which is kept [default: the agent's [artifacts] dir, else a directory for this run]",
)
.completes(Complete::Dir);

const KEEP_ARTIFACTS: Flag = Flag::switch(
    "keep-artifacts",
    "Keep the run's own artifact directory when it ends, and say where it is",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {model, content, input_tokens, output_tokens, stop_reason, duration_ms, tool_calls, retry_attempts, tool_call_details, artifacts, redacted, conversation_id} as JSON (conversation_id null when the turn was not kept), with cache and cost figures when reported, budget_* with a budget, messages with --messages, truncated and task_truncated when the run log got an entry, refused when the answer reads as a refusal",
);

/// What `--json` adds to the answer: the model's tool calls (how many, and
/// each one), retries, artifacts, the budget, with `[state]` the signals
/// recorded and rejected, and with `--messages` the whole conversation.
#[derive(Serialize)]
struct More<'a> {
    tool_calls: u64,
    /// Calls made again under `[retry]`.
    retry_attempts: u64,
    /// The top-level agent's tool calls, in the order they were made.
    tool_call_details: Vec<Detail>,
    /// What the agents wrote to the artifact directory.
    artifacts: Vec<Artifact>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    budget: Option<Budget>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<Recorded>,
    #[serde(skip_serializing_if = "Option::is_none")]
    messages: Option<&'a [Message]>,
    /// The conversation this run's turn was kept in; always said, `null`
    /// when none was (`--no-log`, `[log] conversations = false`, a turn
    /// over the bounds or the budget).
    conversation_id: Option<&'a str>,
    /// The secrets its memory writes took out.
    redacted: Vec<Redaction>,
    /// What the run log's entry cut, as `axe-mem-append` says it; only
    /// when an entry was written.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    logged: Option<Cut>,
    /// The answer reads as a refusal (Go 1.8's heuristic, `run::refusal`);
    /// only when it does, as every other field that says something is so.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    refused: bool,
}

/// The run's token budget: its tokens over the whole tree of agents.
#[derive(Serialize)]
struct Budget {
    budget_max_tokens: u64,
    budget_used_tokens: u64,
    budget_exceeded: bool,
}

/// `axe-run`'s command line as typed values, read before anything is
/// loaded or read: a malformed flag is reported before any file is
/// touched, and what the flags set of the agent is one [`Overrides`].
struct Args<'m> {
    agent: &'m str,
    /// The words after the agent: the task.
    words: Option<String>,
    timeout: Option<std::time::Duration>,
    dry_run: bool,
    verbose: bool,
    json: bool,
    stream: bool,
    /// Takes standard input's place, as in Go; blank is absent.
    prompt: Option<&'m str>,
    messages: Option<&'m str>,
    /// `-c`: the agent's last conversation.
    go_on: bool,
    cid: Option<&'m str>,
    /// `--new`: `--cid` of an id not kept starts it.
    new: bool,
    no_stdin: bool,
    overrides: Overrides,
    artifact_dir: Option<&'m std::path::Path>,
    keep_artifacts: bool,
    now: Current<'m>,
    /// Record the calls in the ledger (off: `--no-log`).
    log: bool,
}

impl<'m> Args<'m> {
    fn read(m: &'m Matches) -> Result<Args<'m>> {
        let string = |flag| m.string(flag).map(|s| s.map(str::to_owned));
        let args = Args {
            agent: target::required_agent(m)?,
            words: target::words_after_agent(m),
            timeout: target::given_timeout(m, &TIMEOUT)?,
            dry_run: m.flag(&DRY_RUN),
            verbose: m.flag(&VERBOSE),
            json: m.flag(&JSON),
            stream: m.flag(&STREAM),
            prompt: m.string(&PROMPT)?.filter(|text| !text.trim().is_empty()),
            messages: m.string(&MESSAGES)?,
            go_on: m.flag(&CONTINUE),
            cid: m.string(&CID)?,
            new: m.flag(&NEW),
            no_stdin: m.flag(&NO_STDIN),
            overrides: Overrides {
                model: string(&MODEL)?,
                skill: string(&SKILL)?,
                system_prompt: string(&SYSTEM)?,
                temperature: m.number::<f64>(&TEMPERATURE)?,
                max_tokens: m.number::<u64>(&MAX_TOKENS)?,
                budget_tokens: m.number::<u64>(&BUDGET_TOKENS)?,
                workdir: m.value(&WORKDIR).map(PathBuf::from),
                allowed_hosts: Vec::new(),
                forget: Vec::new(),
            },
            artifact_dir: m.value(&ARTIFACT_DIR).map(std::path::Path::new),
            keep_artifacts: m.flag(&KEEP_ARTIFACTS),
            log: !m.flag(&super::log::NO_LOG),
            now: Current {
                task: Some(m.string(&STATE_TASK)?.unwrap_or(DEFAULT_TASK)),
                phase: m.string(&PHASE)?,
            },
        };
        if args.no_stdin && args.messages == Some("-") {
            return Err(Error::Usage(
                "--messages - reads standard input, which -n leaves unread: give a file".into(),
            ));
        }
        if args.messages.is_some() && (args.go_on || args.cid.is_some()) {
            return Err(Error::Usage(
                "--messages gives the conversation itself: not with -c or --cid".into(),
            ));
        }
        if args.go_on && args.cid.is_some() {
            return Err(Error::Usage(
                "-c goes on with the last conversation, --cid with a given one: not both".into(),
            ));
        }
        if let Some(id) = args.cid {
            conversation::check_id(id)?;
        }
        Ok(args)
    }
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = target::agents(m)?;
    let mut args = Args::read(m)?;
    let (dry, verbose, json) = (args.dry_run, args.verbose, args.json);
    let name = args.agent;

    // The order of the Go `axe`, so the same mistake gets the same error.
    let mut cfg = agents.load(name)?;
    // --timeout when given, else the agent's `timeout` when set, else 120 s.
    let timeout = args.timeout.unwrap_or_else(|| match cfg.timeout.get() {
        0 => target::DEFAULT_TIMEOUT,
        seconds => std::time::Duration::from_secs(seconds),
    });
    // The run's deadline starts now: reading standard input is part of
    // the run. Memory locks too: a process stopped while holding one
    // cannot hold the run past it.
    let deadline = Deadline::after(timeout);
    let wait = Wait::Until(deadline.at);
    let (prompt, messages) = (args.prompt, args.messages);
    // Standard input is read from now on, beside what comes next, so
    // time spent on the rest (a memory lock waited for) leaves input that
    // has ended in hand: it holds the messages, or else the prompt.
    let mut piped = start_stdin(&args);
    let stream = args.stream || cfg.stream;
    // The conversation gone on with, read before the agent is prepared:
    // the run-log entries its turns wrote stay out of the prompt.
    let owner = conversation::Owner::Agent(name);
    let asked = conversation::Asked {
        last: args.go_on,
        cid: args.cid,
        new: args.new,
    };
    // A --cid the agent has no conversation by is refused, naming those
    // it has, unless --new starts one by that name.
    let earlier = conversation::pick(agents.dirs(), owner, asked, wait)?;
    if let Some(c) = &earlier {
        args.overrides.forget.clone_from(&c.run_log);
    }
    args.overrides.apply(&mut cfg);
    let went_on = (asked, earlier.as_ref());
    let mut session = open_session(agents, &cfg, went_on, args.log, (wait, verbose))?;
    let agent = once::prepare(&session, name, cfg, &args.overrides).map_err(|(_, e)| e)?;
    let words = args.words;
    let Input {
        history,
        stdin,
        task,
        kept_before,
    } = read_input(
        (messages, prompt, words.as_deref()),
        &mut piped,
        deadline,
        earlier.map(|c| c.messages),
    )?;
    let now = args.now;
    // The run log keeps the task as given; the model also gets the memory
    // block (the state's, or the one over every kind).
    let user = prompt::user_message(&task);
    let begun = once::begin(&agent, user, now, dry || verbose, &Stderr);

    if dry {
        let shown = dry_run::Shown {
            timeout: Seconds(timeout),
            // With --messages the task may be the last message's.
            task: match &history {
                Some(_) => Some(task.as_str()),
                None => words.as_deref(),
            },
            stdin: &stdin,
            memory: &begun.injected,
            history: history.as_deref(),
        };
        let dry_run = dry_run::DryRun::new(&session, &agent, &shown);
        return match json {
            true => dry_run.json(out),
            false => dry_run.text(out),
        };
    }

    check_before_calling(&session, &agent, history.as_deref(), &begun.sent)?;
    session.artifacts =
        artifacts::open(&agent.cfg.artifacts, args.artifact_dir, &agent.workdir)?.map(Arc::new);
    if verbose {
        print_context(&agent, Seconds(timeout), &stdin, &begun.injected);
        if let Some(a) = &session.artifacts {
            note(format_args!("Artifacts: {}", a.dir.display()));
        }
    }
    let started = Instant::now();
    let mut show = |text: &str| -> io::Result<()> {
        // With --json the one document comes at the end instead; the
        // stream still keeps a long answer's connection alive.
        if !json {
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
        Ok(())
    };
    let on_text: Option<TextSink> = if stream { Some(&mut show) } else { None };
    let given = history.is_some();
    let ran = begun.finish(
        &session,
        0,
        deadline,
        history.unwrap_or_default(),
        on_text,
        &Stderr,
    );
    let duration_ms = started.elapsed().as_millis();
    let artifacts = close_artifacts(&session, args.keep_artifacts);
    if verbose {
        note(format_args!("Duration: {duration_ms}ms"));
    }
    let ran = ran?;
    if verbose {
        print_totals(&ran.outcome, &session);
        print_memory(&ran);
    }
    let outcome = &ran.outcome;
    let exceeded = outcome.exceeded;
    let kept = match exceeded {
        // As memory: a run over its budget keeps nothing.
        Some(_) => None,
        None => keep_turn(
            &session,
            &agent,
            &outcome.messages[kept_before..],
            ran.logged.as_ref(),
        ),
    };
    if json {
        let ended = Ended {
            duration_ms,
            artifacts,
            given,
            kept,
        };
        write_json(out, &session, ran, ended)?;
    } else {
        super::answer::write_text(out, &outcome.reply.content, stream)?;
    }
    out.flush().map_err(Error::Output)?;
    if exceeded.is_none() && !json {
        // After the answer is out: a consolidation due now never holds
        // it back, and never fails the run. Not with --json: its document
        // is all the run spent (a consolidation's tokens would be missing
        // from it) and a program reading it waits on no call after it.
        axe_run::consolidate::after_run(
            &session.agents,
            name,
            &agent.cfg,
            (verbose, args.log),
            session.report(),
        );
    }
    match exceeded {
        Some((used, max)) => Err(Error::Budget { used, max }),
        None => Ok(()),
    }
}

/// The run's session: config.toml read (once the model is checked, as
/// in Go), the conversation the turn is kept in (`asked`, the one gone
/// on with, `earlier`, if any), the ledger unless `log` is off.
fn open_session(
    agents: Agents,
    cfg: &AgentConfig,
    (asked, earlier): (conversation::Asked<'_>, Option<&conversation::Loaded>),
    log: bool,
    (wait, verbose): (Wait, bool),
) -> Result<Session> {
    // The model is checked before the config is read, as in Go.
    axe_llm::parse_model(&cfg.model)?;
    let config = config::load(&agents)?;
    // Every run keeps its turn, as `llm` logs every prompt, so `-c` goes
    // on from the last run whatever started it; `[log] conversations =
    // false` keeps only a run that names one, and --no-log none at all.
    let keep = log && (config.log.conversations || asked.any());
    let config_dir = agents.dirs().config()?;
    let mut session = Session::new(config, (config_dir, agents, wait), cfg, verbose);
    session.conversation =
        keep.then(|| earlier.map_or_else(conversation::new_id, |c| c.id.clone()));
    if !log {
        session.ledger.stop();
    }
    Ok(session)
}

/// Standard input's reading, started; none when `--prompt` or
/// `--no-stdin` takes its place.
fn start_stdin(args: &Args<'_>) -> Option<super::stdin::Reading> {
    match (args.messages, args.prompt) {
        (Some("-"), _) => Some(super::stdin::Reading::start(axe_base::read::REQUEST_LIMIT)),
        (_, Some(_)) => None,
        _ if args.no_stdin => None,
        _ => super::stdin::piped(super::stdin::PROMPT_LIMIT),
    }
}

/// What a run is given: the turns before it, standard input, and the
/// task they make.
struct Input {
    /// `--messages`', or the conversation gone on with.
    history: Option<Vec<Message>>,
    stdin: String,
    task: String,
    /// How many messages the kept conversation held (0 with
    /// `--messages`, whose file is its conversation).
    kept_before: usize,
}

/// Reads the run's input: `--messages` (from `piped` when `-`), the
/// prompt or standard input, after the `words`; `kept`, the messages of
/// the conversation gone on with.
fn read_input(
    (messages, prompt, words): (Option<&str>, Option<&str>, Option<&str>),
    piped: &mut Option<super::stdin::Reading>,
    deadline: Deadline,
    kept: Option<Vec<Message>>,
) -> Result<Input> {
    let history = messages
        .map(|source| history::read(source, |what| take(piped)?.text(deadline, what)))
        .transpose()?;
    let stdin = match prompt {
        Some(text) => text.to_owned(),
        None => match piped.take() {
            Some(reading) => reading.text(deadline, "standard input")?,
            None => String::new(),
        },
    };
    let task = super::stdin::words_then(words, &stdin);
    // A conversation --new starts has no messages yet: the run is a
    // first turn, as a plain one is.
    let history = history.or_else(|| kept.filter(|messages| !messages.is_empty()));
    let kept_before = match messages {
        Some(_) => 0,
        None => history.as_ref().map_or(0, Vec::len),
    };
    // A kept conversation ends with an answer: the next turn must be given.
    if kept_before > 0 && task.trim().is_empty() {
        return Err(Error::Usage(
            "-c/--cid: no prompt: give the next turn as PROMPT, --prompt or standard input".into(),
        ));
    }
    let (history, task) = go_on_from(history, task)?;
    Ok(Input {
        history,
        stdin,
        task,
        kept_before,
    })
}

/// What must hold before the first call: a key and a response format the
/// provider can give, and a prompt that alone would not overrun the
/// budget (else nothing is sent at all).
fn check_before_calling(
    session: &Session,
    agent: &Prepared,
    history: Option<&[Message]>,
    sent: &str,
) -> Result<()> {
    // A missing key, or a response format the provider cannot give,
    // fails before anything else is said or sent.
    session.endpoint_for(agent.provider, &agent.model)?;
    if let Some(format) = agent.cfg.params.response_format() {
        agent.provider.check_response_format(&format)?;
    }
    // A prompt that alone would overrun the budget is not sent at all.
    let earlier = history.unwrap_or_default();
    budget::check(session.budget, &agent.system, earlier, sent)
}

/// What the agents wrote to the artifact directory; the run's own
/// directory goes, whichever way the run ended, unless `keep`.
fn close_artifacts(session: &Session, keep: bool) -> Vec<Artifact> {
    let artifacts = session
        .artifacts
        .as_ref()
        .map(|a| a.written())
        .unwrap_or_default();
    // Whichever way the run ended, its own directory goes unless kept.
    if let Some(kept) = session.artifacts.as_ref().and_then(|a| a.finish(keep)) {
        note(format_args!("artifacts preserved: {}", kept.display()));
    }
    artifacts
}

/// `-v`'s lines on what the run's memory writes took out or cut.
fn print_memory(ran: &Ran) {
    for line in secrets::lines(&ran.redacted) {
        note(format_args!("Memory:   {line}"));
    }
    if let Some(line) = ran.logged.as_ref().and_then(Cut::line) {
        note(format_args!("Memory:   {line}"));
    }
}

/// How a run ended, besides its answer, for `--json`.
struct Ended<'s> {
    duration_ms: u128,
    artifacts: Vec<Artifact>,
    /// The run was given a conversation (`--messages`): it is said whole.
    given: bool,
    /// The conversation the turn was kept in.
    kept: Option<&'s str>,
}

/// The answer as `--json`'s one document.
fn write_json(out: &mut dyn Write, session: &Session, ran: Ran, ended: Ended<'_>) -> Result<()> {
    let outcome = &ran.outcome;
    let spent = session.spent();
    // The tokens are this agent's turns; the cost is what the whole
    // run cost, sub-agents included.
    let usage = axe_llm::Usage {
        cost: spent.cost,
        ..outcome.usage
    };
    let details = std::mem::take(&mut *session.details.lock().recover());
    let more = More {
        tool_calls: outcome.tool_calls,
        retry_attempts: outcome.retry_attempts,
        tool_call_details: details,
        artifacts: ended.artifacts,
        budget: session.budget.map(|max| Budget {
            budget_max_tokens: max,
            budget_used_tokens: spent.tokens(),
            budget_exceeded: outcome.exceeded.is_some(),
        }),
        state: ran.state,
        messages: ended.given.then_some(&outcome.messages[..]),
        conversation_id: ended.kept,
        redacted: ran.redacted,
        logged: ran.logged,
        refused: axe_run::refusal::refused(&outcome.reply.content),
    };
    super::answer::write_answer(out, &outcome.reply, &usage, ended.duration_ms, more)
}

/// Appends the run's turn (`turn`: its messages from the user's on, or
/// the whole conversation a `--messages` run started from) to the
/// session's conversation; says the id, or warns and says none when it
/// could not be kept.
fn keep_turn<'s>(
    session: &'s Session,
    agent: &Prepared,
    turn: &[Message],
    logged: Option<&Cut>,
) -> Option<&'s str> {
    let id = session.conversation.as_deref()?;
    let secrets = session.secrets(&agent.cfg);
    let run_log = logged.map(|cut| cut.timestamp.as_str());
    match conversation::append(
        session.agents.dirs(),
        conversation::Owner::Agent(&agent.name),
        id,
        turn,
        run_log,
        (&secrets, session.wait),
    ) {
        Ok(_) => Some(id),
        Err(e) => {
            note(format_args!("Warning: {e}"));
            None
        }
    }
}

/// The earlier turns and the task of a run given `--messages`: the prompt
/// when there is one, else the last message, which must then be the
/// user's. Without `--messages`, no turns and the prompt.
fn go_on_from(
    history: Option<Vec<Message>>,
    task: String,
) -> Result<(Option<Vec<Message>>, String)> {
    let Some(mut history) = history else {
        return Ok((None, task));
    };
    if !task.trim().is_empty() {
        return Ok((Some(history), task));
    }
    match history.pop() {
        Some(last) if last.role == Role::User => Ok((Some(history), last.content)),
        _ => Err(Error::Usage(
            "--messages: the conversation does not end with a user message: give a prompt to send next".into(),
        )),
    }
}

/// The `--verbose` lines before the call.
fn print_context(agent: &Prepared, timeout: Seconds, stdin: &str, injected: &Injected) {
    let cfg = &agent.cfg;
    let skill = if cfg.skill.is_empty() {
        "(none)"
    } else {
        &cfg.skill
    };
    note(format_args!("Model:    {}", agent.model_string()));
    note(format_args!("Workdir:  {}", agent.workdir.display()));
    note(format_args!("Skill:    {skill}"));
    note(format_args!("Files:    {} file(s)", agent.files.len()));
    for line in &agent.files_converted {
        note(format_args!("Converted: {line}"));
    }
    for line in &agent.files_left_out {
        note(format_args!("Left out: {line}"));
    }
    let piped = if stdin.trim().is_empty() { "no" } else { "yes" };
    note(format_args!("Stdin:    {piped}"));
    note(format_args!("Timeout:  {timeout}s"));
    note(format_args!("Params:   {}", agent.params_line()));
    if !cfg.tools.is_empty() {
        note(format_args!("Tools:    {}", cfg.tools.join(", ")));
    }
    if let Some(sandbox) = &agent.sandbox {
        note(format_args!("Sandbox:  {}", sandbox.describe()));
    }
    if let Some(r) = &agent.recall {
        match &r.path {
            Some(path) if r.loaded > 0 => note(format_args!(
                "Memory:   {} entries loaded from {}",
                r.loaded,
                path.display()
            )),
            _ => note(format_args!("Memory:   0 entries (no memory file)")),
        }
    }
    if let Injected::Context(c) = injected {
        note(format_args!(
            "Context:  {} of {} characters ({}), {} item(s) left out",
            c.chars,
            c.budget,
            c.kinds.join(", "),
            c.left_out.len()
        ));
    }
}

/// The `--verbose` lines after the call.
fn print_totals(outcome: &Outcome, session: &Session) {
    let usage = &outcome.usage;
    let looped = match session.budget {
        Some(max) => format!(" (cumulative, budget: {}/{max})", session.spent().tokens()),
        None if outcome.tools_offered => " (cumulative)".to_owned(),
        None => String::new(),
    };
    note(format_args!(
        "Tokens:   {} input, {} output{looped}",
        known(usage.input_tokens),
        known(usage.output_tokens)
    ));
    if usage.cache_read_tokens.is_some() || usage.cache_write_tokens.is_some() {
        note(format_args!(
            "Cache:    {} read, {} written",
            usage.cache_read_tokens.unwrap_or(0),
            usage.cache_write_tokens.unwrap_or(0)
        ));
    }
    note(format_args!("Stop:     {}", outcome.reply.stop_reason));
}

/// A count the server may not have given.
fn known(n: Option<u64>) -> String {
    n.map_or_else(|| "unknown".to_owned(), |n| n.to_string())
}

/// Standard input's reading, which `--messages -` made sure was started.
fn take(piped: &mut Option<super::stdin::Reading>) -> Result<super::stdin::Reading> {
    piped
        .take()
        .ok_or_else(|| Error::Input("standard input was already read".into()))
}
