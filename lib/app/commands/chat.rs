//! `axe-chat`: talk with an agent in the terminal, turn after turn, in one
//! conversation kept as `axe-run -c` keeps it (lib/run/conversation.rs).
//!
//! Each turn is a run of the agent as `axe-run` does it (its files, skill,
//! tools, sub-agents and memory, prepared again so notes written by the
//! last turn are seen), going on from the turns before. The answer streams.
//! Ctrl-C while it comes cancels that answer and keeps the session: the
//! ending signals are held for the whole session (so a Ctrl-C never ends
//! it halfway through a memory write either) and a flag of our own says
//! one came. While a line is being typed the terminal is raw, so Ctrl-C is
//! a key there: it clears the line. Ctrl-D on an empty line or `/exit`
//! ends the session; SIGTERM and SIGHUP still end it.
//!
//! Memory: one run-log entry per turn (each turn is a run), and a turn
//! leaves the entries of the turns before out of its prompt, since the
//! conversation carries them.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use rustyline::DefaultEditor;
use rustyline::error::ReadlineError;

use super::args::{self as target, AGENT, AGENT_REQUIRED, AGENTS_DIR, NEW};
use axe_agent::config;
use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_base::report::Stderr;
use axe_base::stderr::note;
use axe_cli::{Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_llm::{Deadline, Message};
use axe_memory::Wait;
use axe_memory::state::{Current, DEFAULT_TASK};
use axe_run::conversation::{self, Owner};
use axe_run::prepared::Overrides;
use axe_run::{Session, TextSink, once};

pub const COMMAND: Command = Command {
    name: "axe-chat",
    about: "Talk with an agent in the terminal, its tools, sub-agents and memory included",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[AGENTS_DIR, MODEL, CONTINUE, CID, NEW, TIMEOUT],
    rules: &[
        AGENT_REQUIRED,
        Rule::Conflict(Item::Flag(&CONTINUE), Item::Flag(&CID)),
        Rule::RequiredWith(Item::Flag(&CID), Item::Flag(&NEW)),
    ],
    description: "\
Reads a line, sends it to <AGENT> as axe-run would (persona, skill, files,
memory, tools, sub-agents), streams the answer, and goes on: each turn
carries the ones before. A line ending in \\ goes on on the next line.
Each tool call the agent makes is shown on one line on stderr.

Ctrl-C while an answer comes cancels it (the turn is not kept) and the
session goes on; Ctrl-C while typing clears the line; Ctrl-D on an empty
line, or /exit, ends the session.

/help lists the commands; /save prints the conversation's id, for
axe-run -c or --cid and axe-chat --cid; /model shows the model, /model
PROVIDER/MODEL changes it for the turns after.

The conversation is kept as axe-run keeps it (new unless -c or --cid; a
--cid the agent has no conversation by is an error unless --new).
With [memory], each turn appends its run-log entry, and leaves the
entries of the conversation's own turns out of its prompt. The agent's
token budget bounds the whole session.",
    run: Run::Action(run),
};

const MODEL: Flag = Flag::with_value(
    "model",
    "PROVIDER/MODEL",
    "Use this model instead of the agent's (/model changes it later)",
)
.short('m')
.completes(Complete::Model);

const CONTINUE: Flag = Flag::switch(
    "continue",
    "Go on with the agent's last conversation (a new one when it has none)",
)
.short('c');

const CID: Flag = Flag::with_value(
    "cid",
    "ID",
    "Go on with the agent's conversation ID; an ID it does not have is an error unless --new",
);

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up on a turn after this long [default: the agent's timeout, else 120]",
)
.number();

const HELP: &str = "\
/help            this list
/save            print the conversation's id (axe-run -c, --cid ID)
/model           show the model; /model PROVIDER/MODEL changes it
/exit            end the session (Ctrl-D too)
A line ending in \\ goes on on the next line; Ctrl-C cancels an answer.
";

/// The session's settings and what it has said so far.
struct Chat<'s> {
    session: &'s Session,
    name: &'s str,
    id: String,
    model: String,
    timeout: Duration,
    /// The conversation so far, as sent.
    messages: Vec<Message>,
    /// The run-log entries its turns wrote: left out of the next prompt.
    forget: Vec<String>,
    interrupted: Arc<AtomicBool>,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = target::agents(m)?;
    let name = target::required_agent(m)?;
    let given_model = m.string(&MODEL)?;
    let cid = m.string(&CID)?.map(conversation::check_id).transpose()?;
    let asked = conversation::Asked {
        last: m.flag(&CONTINUE),
        cid,
        new: m.flag(&NEW),
    };
    let given_timeout = target::given_timeout(m, &TIMEOUT)?;
    let mut cfg = agents.load(name)?;
    if let Some(model) = given_model {
        cfg.model = model.to_owned();
    }
    axe_llm::parse_model(&cfg.model)?;
    let timeout = given_timeout.unwrap_or_else(|| match cfg.timeout.get() {
        0 => target::DEFAULT_TIMEOUT,
        seconds => Duration::from_secs(seconds),
    });
    let owner = Owner::Agent(name);
    let wait = Wait::default();
    let earlier = conversation::pick(agents.dirs(), owner, asked, wait)?.unwrap_or_default();
    let id = match earlier.id.is_empty() {
        true => conversation::new_id(),
        false => earlier.id.clone(),
    };
    let config = config::load(&agents)?;
    let config_dir = agents.dirs().config()?;
    let mut session = Session::new(config, (config_dir, agents, wait), &cfg, false);
    session.conversation = Some(id.clone());
    // A missing key is said before the first line is typed.
    let (provider, model) = axe_llm::parse_model(&cfg.model)?;
    session.endpoint_for(provider, &model)?;

    // The ending signals are held for the whole session, so a Ctrl-C
    // never ends it, only cancels (our own flag says one came). SIGTERM
    // and SIGHUP still end it: a thread waits for them and lets the hold
    // go, and the process dies of the signal then (once a memory write
    // under way, which holds too, is whole). Otherwise the hold is never
    // let go: that would deliver a Ctrl-C noted earlier.
    let hold = axe_base::signals::hold();
    let interrupted = Arc::new(AtomicBool::new(false));
    let catch = |e: io::Error| Error::Input(format!("failed to catch signals: {e}"));
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&interrupted))
        .map_err(catch)?;
    let mut ending = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ])
    .map_err(catch)?;
    std::thread::spawn(move || {
        if ending.forever().next().is_some() {
            drop(hold);
        }
    });
    // What was typed, for the editor's history (Up, Ctrl-R).
    let mut typed = Vec::new();

    let mut chat = Chat {
        session: &session,
        name,
        id,
        model: cfg.model.clone(),
        timeout,
        messages: earlier.messages,
        forget: earlier.run_log,
        interrupted,
    };
    let said = |out: &mut dyn Write, text: &str| -> Result<()> {
        out.write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(Error::Output)
    };
    let carried = match chat.messages.len() {
        0 => String::new(),
        n => format!(", going on after {n} messages"),
    };
    said(
        out,
        &format!(
            "axe chat with {} ({}){carried}. /help for commands, Ctrl-D or /exit to end.\n",
            chat.name, chat.model
        ),
    )?;
    while let Some(line) = read_input(&mut typed)? {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let (word, rest) = trimmed.split_once(' ').unwrap_or((trimmed, ""));
        match word {
            "/exit" | "/quit" => break,
            "/help" => said(out, HELP)?,
            "/save" => said(out, &format!("conversation: {}\n", chat.id))?,
            "/model" if rest.trim().is_empty() => said(out, &format!("model: {}\n", chat.model))?,
            "/model" => match axe_llm::parse_model(rest.trim()) {
                Ok(_) => {
                    rest.trim().clone_into(&mut chat.model);
                    said(out, &format!("model: {}\n", chat.model))?;
                }
                Err(e) => note(format_args!("{e}")),
            },
            w if w.starts_with('/') && !w.contains(char::is_whitespace) && w.len() > 1 => {
                note(format_args!("unknown command {w}: /help lists them"));
            }
            _ => chat.turn(&line, out)?,
        }
    }
    Ok(())
}

/// One input: a line, and the lines after it while each ends in `\`.
/// `None` at Ctrl-D on an empty line; Ctrl-C clears the line. The editor
/// lives only as long as the input: rustyline takes SIGINT over while
/// one lives, and during the answer it must come to us.
fn read_input(typed: &mut Vec<String>) -> Result<Option<String>> {
    let failed = |e: ReadlineError| Error::Input(format!("failed to read a line: {e}"));
    let mut editor = DefaultEditor::new().map_err(failed)?;
    for line in typed.iter() {
        editor.add_history_entry(line.as_str()).map_err(failed)?;
    }
    let mut done = |text: String| {
        typed.push(text.clone());
        Ok(Some(text))
    };
    let mut text = String::new();
    loop {
        let prompt = if text.is_empty() { "> " } else { "... " };
        match editor.readline(prompt) {
            Ok(line) => match line.strip_suffix('\\') {
                Some(head) => {
                    text.push_str(head);
                    text.push('\n');
                }
                None => {
                    text.push_str(&line);
                    return done(text);
                }
            },
            Err(ReadlineError::Interrupted) => text.clear(),
            Err(ReadlineError::Eof) if text.is_empty() => return Ok(None),
            Err(ReadlineError::Eof) => return done(text),
            Err(e) => return Err(failed(e)),
        }
    }
}

/// What the turn's thread tells the session: a piece of the answer, or
/// how the turn ended. The session writes the pieces: its output is
/// the command's, held by the main thread.
enum Said {
    /// A piece, and how many tool calls were done before it came: those
    /// are shown first, the ones done after it after it.
    Piece(String, usize),
    Answered(Box<once::Ran>),
    Failed(Error),
}

impl Chat<'_> {
    /// Sends `text` as the next turn and shows the answer as it comes.
    /// A failed turn is a line on stderr; the session goes on.
    fn turn(&mut self, text: &str, out: &mut dyn Write) -> Result<()> {
        let session = self.session;
        let given = Overrides {
            model: Some(self.model.clone()),
            forget: self.forget.clone(),
            ..Overrides::default()
        };
        let prepared = session.agents.load(self.name).and_then(|mut cfg| {
            given.apply(&mut cfg);
            once::prepare(session, self.name, cfg, &given).map_err(|(_, e)| e)
        });
        let agent = match prepared {
            Ok(agent) => agent,
            Err(e) => {
                note(format_args!("Error: {e}"));
                return Ok(());
            }
        };
        self.interrupted.store(false, Ordering::SeqCst);
        let cancelled = AtomicBool::new(false);
        let deadline = Deadline::after(self.timeout);
        let history = self.messages.clone();
        let mut shown = Shown {
            calls: calls_done(session),
            at_line_start: true,
            after_call: false,
        };
        // The key resolved by now: the conversation keeps none of it.
        let secrets = session.secrets(&agent.cfg);
        let (done, ended) = mpsc::channel();
        std::thread::scope(|scope| {
            let (agent, cancelled) = (&agent, &cancelled);
            let pieces = done.clone();
            scope.spawn(move || {
                let now = Current {
                    task: Some(DEFAULT_TASK),
                    phase: None,
                };
                let begun = once::begin(agent, text, now, false, &Stderr);
                let mut show = |piece: &str| -> io::Result<()> {
                    if cancelled.load(Ordering::SeqCst) {
                        return Err(io::Error::new(io::ErrorKind::Interrupted, "cancelled"));
                    }
                    pieces
                        .send(Said::Piece(piece.to_owned(), calls_done(session)))
                        .map_err(|_| io::Error::new(io::ErrorKind::Interrupted, "cancelled"))
                };
                let sink: TextSink = &mut show;
                let ran = begun.finish(session, 0, deadline, history, Some(sink), &Stderr);
                let _ = done.send(match ran {
                    Ok(ran) => Said::Answered(Box::new(ran)),
                    Err(e) => Said::Failed(e),
                });
            });
            // Waits for the turn, showing each tool call as it is done and
            // noticing a Ctrl-C; the answer streams meanwhile. A call is
            // shown in its place among the pieces, on a line of its own.
            loop {
                // Counted before the wait: when the wait then finds no
                // piece, every piece sent before those calls were done is
                // written already, so they can be shown now.
                let done_before = calls_done(session);
                match ended.recv_timeout(Duration::from_millis(50)) {
                    Ok(Said::Piece(piece, calls)) => {
                        shown.calls_up_to(session, calls, out)?;
                        // The blank line that sets a turn's text apart
                        // from the last's: a call's line does that already.
                        let piece = match shown.after_call {
                            true => piece.trim_start_matches('\n'),
                            false => &piece,
                        };
                        if !cancelled.load(Ordering::SeqCst) && !piece.is_empty() {
                            shown.at_line_start = piece.ends_with('\n');
                            shown.after_call = false;
                            out.write_all(piece.as_bytes())
                                .and_then(|()| out.flush())
                                .map_err(Error::Output)?;
                        }
                    }
                    Ok(end) => {
                        shown.calls_up_to(session, usize::MAX, out)?;
                        return self.ended(end, cancelled, &secrets);
                    }
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        shown.calls_up_to(session, done_before, out)?;
                    }
                }
                if self.interrupted.swap(false, Ordering::SeqCst)
                    && !cancelled.swap(true, Ordering::SeqCst)
                {
                    // On a line of its own, after what the answer said.
                    let _ = out.write_all(b"\n").and_then(|()| out.flush());
                    shown.at_line_start = true;
                    note(format_args!("(answer cancelled)"));
                }
            }
        })?;
        if !shown.at_line_start && !cancelled.load(Ordering::SeqCst) {
            out.write_all(b"\n")
                .and_then(|()| out.flush())
                .map_err(Error::Output)?;
        }
        Ok(())
    }

    /// Keeps an answered turn; says why one was not.
    fn ended(
        &mut self,
        end: Said,
        cancelled: &AtomicBool,
        secrets: &axe_memory::secrets::Secrets,
    ) -> Result<()> {
        if cancelled.load(Ordering::SeqCst) {
            return Ok(());
        }
        let ran = match end {
            Said::Answered(ran) => ran,
            Said::Failed(e) => {
                note(format_args!("Error: {e}"));
                return Ok(());
            }
            Said::Piece(..) => return Ok(()),
        };
        if let Some((used, max)) = ran.outcome.exceeded {
            note(format_args!("Error: {}", Error::Budget { used, max }));
            return Ok(());
        }
        let turn = &ran.outcome.messages[self.messages.len()..];
        let logged = ran.logged.as_ref().map(|cut| cut.timestamp.as_str());
        let session = self.session;
        if let Err(e) = conversation::append(
            session.agents.dirs(),
            Owner::Agent(self.name),
            &self.id,
            turn,
            logged,
            (secrets, session.wait),
        ) {
            note(format_args!("Warning: {e}"));
        }
        if let Some(at) = logged {
            self.forget.push(at.to_owned());
        }
        self.messages = ran.outcome.messages;
        Ok(())
    }
}

/// How many tool calls the top-level agent has done.
fn calls_done(session: &Session) -> usize {
    session.details.lock().recover().len()
}

/// What a turn has shown so far: the tool calls, and whether the answer's
/// text ended its line (a call's line goes to stderr, which shares the
/// terminal: it must not start in the middle of a line of the answer).
struct Shown {
    calls: usize,
    at_line_start: bool,
    /// Whether the last thing shown was a call's line.
    after_call: bool,
}

impl Shown {
    /// Shows the tool calls up to the `upto`-th that are not shown yet,
    /// each on a line of its own.
    fn calls_up_to(&mut self, session: &Session, upto: usize, out: &mut dyn Write) -> Result<()> {
        let done = calls_done(session).min(upto);
        if done <= self.calls {
            return Ok(());
        }
        if !self.at_line_start {
            out.write_all(b"\n")
                .and_then(|()| out.flush())
                .map_err(Error::Output)?;
            self.at_line_start = true;
        }
        self.calls = show_calls(session, self.calls, done);
        self.after_call = true;
        Ok(())
    }
}

/// Prints the top-level agent's tool calls from the `shown`-th to the
/// `upto`-th, one line each; says how many are shown now.
fn show_calls(session: &Session, shown: usize, upto: usize) -> usize {
    let details = session.details.lock().recover();
    let upto = upto.min(details.len());
    for d in details.iter().take(upto).skip(shown) {
        let mut args = serde_json::Value::Object(d.input.clone()).to_string();
        if args.len() > 80 {
            let cut = (0..=77)
                .rev()
                .find(|&i| args.is_char_boundary(i))
                .unwrap_or(0);
            args.truncate(cut);
            args.push_str("...");
        }
        let failed = if d.is_error { " (failed)" } else { "" };
        note(format_args!("  [tool] {}{args}{failed}", d.name));
    }
    upto.max(shown)
}
