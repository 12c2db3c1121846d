//! `axe-notes-consolidate`: an agent's daily logs folded into its
//! MEMORY.md and world topics by its model (see `consolidate_job`).

use std::io::Write;

use super::AGENT;
use super::consolidate_diff::unified;
use axe_base::error::{Error, Result};
use axe_base::stderr::note;
use axe_cli::{Command, Flag, Item, Matches, Rule, Run};
use axe_memory::Wait;
use axe_memory::notes::Workspace;
use axe_run::consolidate::{self as job, Options};

pub const COMMAND: Command = Command {
    name: "axe-notes-consolidate",
    about: "Fold an agent's new daily-log entries into its MEMORY.md and world topics",
    usage: &["[OPTIONS] <AGENT>"],
    args: &[AGENT],
    flags: &[DRY_RUN, JSON, UNDO, crate::commands::log::NO_LOG],
    rules: &[
        crate::commands::args::AGENT_REQUIRED,
        Rule::Conflict(Item::Flag(&UNDO), Item::Flag(&DRY_RUN)),
    ],
    description: "\
Runs the agent once with a built-in consolidation task: its model is shown
MEMORY.md whole, the world topics MEMORY.md names and the daily-log
entries no consolidation took in yet (and its run log and state, where it
keeps them), and rewrites MEMORY.md and topics through its notes tools
(reflect, learn_fact), within their caps, redacted, under their locks. A
file changed by someone else after it was shown is not overwritten: the
command exits 6 and the entries stay new. Daily logs are never removed.

The previous text of every file it rewrites is kept in
agents/<AGENT>/history/ with the entries it took in, so a second run
with nothing new asks no model; axe-notes-prune removes old records with
the daily logs. --undo restores the last consolidation's files and makes
its entries new again, unless a file changed since (exit 6, nothing
written). --dry-run asks the model the same, writes nothing, and prints a
unified diff of every file it would change.",
    run: Run::Action(run),
};

const DRY_RUN: Flag = Flag::switch(
    "dry-run",
    "Ask the model, write nothing; print the diff of every file it would change",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, dry_run, model_called, entries, entries_left, files: [{path, sha256_before, sha256_after}], history, usage, answer, conflicts} as JSON",
);

const UNDO: Flag = Flag::switch(
    "undo",
    "Restore the files of the last consolidation, unless one changed since",
);

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let (dry_run, json, undo) = (m.flag(&DRY_RUN), m.flag(&JSON), m.flag(&UNDO));
    let name = crate::commands::args::required_agent(m)?;
    let agents = crate::commands::args::env_agents();
    let cfg = agents.load(name)?;
    if undo {
        return run_undo(&agents, name, &cfg, json, out);
    }
    let opts = Options {
        dry_run,
        verbose: false,
        timeout: match cfg.timeout.get() {
            0 => crate::commands::args::DEFAULT_TIMEOUT,
            seconds => std::time::Duration::from_secs(seconds),
        },
        wait: None,
        log: !m.flag(&crate::commands::log::NO_LOG),
    };
    let done = job::consolidate(agents, name, cfg, &opts)?;
    if json {
        axe_cli::write_json(out, &done)?;
    } else {
        report(&done, out)?;
    }
    match done.conflicts.first() {
        Some(first) => Err(Error::Conflict(format!(
            "the consolidation of \"{name}\" lost a rewrite to a concurrent one ({first}); its entries stay new for the next"
        ))),
        None => Ok(()),
    }
}

/// What a consolidation did, for people: a dry run's diff on stdout, else
/// the files written; a line on stderr for the rest.
fn report(done: &job::Done, out: &mut dyn Write) -> Result<()> {
    let agent = &done.agent;
    if !done.model_called {
        note(format_args!(
            "nothing new to consolidate for \"{agent}\": every daily-log entry was taken in already (no model was asked)"
        ));
        return Ok(());
    }
    for f in &done.files {
        if done.dry_run {
            let text = |there: bool, bytes: &[u8]| {
                there.then(|| String::from_utf8_lossy(bytes).into_owned())
            };
            let old = text(f.sha256_before.is_some(), &f.before);
            let new = text(f.sha256_after.is_some(), &f.after);
            out.write_all(unified(&f.path, old.as_deref(), new.as_deref()).as_bytes())
                .map_err(Error::Output)?;
        } else {
            writeln!(out, "{}", f.path).map_err(Error::Output)?;
        }
    }
    let n = done.entries.len();
    let left = match done.entries_left {
        0 => String::new(),
        k => format!("; {k} left for the next"),
    };
    let what = match (done.dry_run, done.files.is_empty()) {
        (true, true) => "would change no file".to_owned(),
        (true, false) => format!("would change {} file(s)", done.files.len()),
        (false, true) => "changed no file".to_owned(),
        (false, false) => format!("changed {} file(s)", done.files.len()),
    };
    note(format_args!(
        "consolidated {n} entr{} of \"{agent}\": {what}{left}",
        if n == 1 { "y" } else { "ies" }
    ));
    // What the model said it kept, merged and dropped: the one account
    // of why the files read as they do (stdout keeps the paths or diff).
    let answer = done.answer.trim();
    if !answer.is_empty() {
        note(format_args!("the model's answer:"));
        for line in answer.lines() {
            match line.trim_end() {
                "" => note(format_args!("")),
                line => note(format_args!("  {line}")),
            }
        }
    }
    // Marked as taken in though nothing was written: said, since the
    // next consolidation will not show the model these entries again.
    if !done.dry_run && done.files.is_empty() && n > 0 && done.history.is_some() {
        let (entries, them) = match n {
            1 => ("the 1 entry counts".to_owned(), "it"),
            _ => (format!("the {n} entries count"), "them"),
        };
        note(format_args!(
            "{entries} as consolidated though no file changed: axe-notes-consolidate --undo {agent} makes {them} new again"
        ));
    }
    Ok(())
}

fn run_undo(
    agents: &axe_agent::Agents,
    name: &str,
    cfg: &axe_agent::AgentConfig,
    json: bool,
    out: &mut dyn Write,
) -> Result<()> {
    let ws = Workspace::of(agents.dirs(), &cfg.memory.notes)?;
    let secrets = axe_agent::config::secrets(agents, cfg.memory.log.redact);
    let undone = job::undo(&ws, name, &secrets, Wait::default())?;
    if json {
        return axe_cli::write_json(out, &undone);
    }
    for path in &undone.restored {
        writeln!(out, "{path}").map_err(Error::Output)?;
    }
    for path in &undone.left {
        note(format_args!(
            "left {path} as it is: {} is an older record, which cannot tell a topic it created from one it rewrote",
            undone.history
        ));
    }
    note(format_args!(
        "undid the consolidation {} of \"{name}\": {} file(s) restored, {} entr{} new again",
        undone.history,
        undone.restored.len(),
        undone.entries,
        if undone.entries == 1 { "y" } else { "ies" }
    ));
    Ok(())
}
