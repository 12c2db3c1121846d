//! `axe-state-record`: a run's outcome, recorded as an iteration.

use std::io::Write;

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::TASK;
use crate::commands::args::AGENT;
use crate::commands::args::WAIT;
use axe_base::error::Result;
use axe_cli::{Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::secrets::{self, Place, Redaction};
use axe_memory::state::{self, Outcome};

pub const COMMAND: Command = Command {
    name: "axe-state-record",
    about: "Record the outcome of a run on a task in an agent's state",
    usage: &["[OPTIONS] --task <ID> (--success | --failure) <AGENT>"],
    args: &[AGENT],
    flags: &[
        TASK,
        PHASE,
        SUCCESS,
        FAILURE,
        ERROR,
        MODIFIED_FILE,
        BRANCH,
        PR,
        WAIT,
        crate::commands::args::QUIET,
        JSON,
    ],
    rules: &[
        crate::commands::args::AGENT_REQUIRED,
        Rule::Required(Item::Flag(&TASK)),
        Rule::Conflict(Item::Flag(&SUCCESS), Item::Flag(&FAILURE)),
        Rule::Either(Item::Flag(&SUCCESS), Item::Flag(&FAILURE)),
        Rule::Conflict(Item::Flag(&crate::commands::args::QUIET), Item::Flag(&JSON)),
    ],
    description: "\
Counts one more iteration and records its outcome on the task: its phase,
branch, pull request and the files it modified. A success sets the last
checkpoint and marks the task's unresolved errors resolved; a failure
records --error (or \"iteration N failed\") as an unresolved error. The
state is changed under its lock and replaced atomically; beyond the
agent's state.max_entries, the oldest decisions and resolved errors go.",
    run: Run::Action(run),
};

const PHASE: Flag = Flag::with_value("phase", "P", "The task's phase now");
const SUCCESS: Flag = Flag::switch("success", "The run succeeded");
const FAILURE: Flag = Flag::switch("failure", "The run failed");
const ERROR: Flag = Flag::with_value("error", "TEXT", "What went wrong, with --failure");
const MODIFIED_FILE: Flag =
    Flag::with_value("file", "PATH", "A file the run modified (may be repeated)")
        .completes(Complete::File);
const BRANCH: Flag = Flag::with_value("branch", "B", "The task's branch");
const PR: Flag = Flag::with_value("pr", "PR", "The task's pull request");
const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, path, iteration, pruned, redacted} as JSON",
);

#[derive(serde::Serialize)]
struct Json<'a> {
    agent: &'a str,
    path: String,
    iteration: u64,
    pruned: state::Pruned,
    redacted: Vec<Redaction>,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    // Every flag is read before the agent is: a malformed one is the
    // error even when the agent is broken, as cobra parsed flags first.
    let agent = crate::commands::args::required_agent(m)?;
    let wait = crate::commands::args::wait(m)?;
    let mut sink = std::io::sink();
    let out = crate::commands::args::report_to(m, out, &mut sink);
    // The rules see to exactly one of --success and --failure, and --task.
    let success = m.flag(&SUCCESS);
    let task = m.string(&TASK)?.unwrap_or_default().to_owned();
    let (phase, error) = (m.string(&PHASE)?, m.string(&ERROR)?);
    let (branch, pr) = (m.string(&BRANCH)?, m.string(&PR)?);
    let t = super::open(agent)?;
    let files: Vec<String> = m
        .values(&MODIFIED_FILE)
        .iter()
        .map(|f| f.to_string_lossy().into_owned())
        .collect();
    let now = OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_default();
    let outcome = Outcome {
        success,
        error,
        files: &files,
        branch,
        pr,
        at: now,
    };
    let saved = state::update(
        &t.path,
        t.cfg.max_entries.as_usize(),
        &t.secrets,
        wait,
        |s| s.record(&task, phase, &outcome),
    )?;
    let redacted = secrets::at(Place::State, &saved.redacted);
    crate::commands::args::tell(&redacted);
    if m.flag(&JSON) {
        return axe_cli::write_json(
            out,
            &Json {
                agent: &t.agent,
                path: t.path.to_string_lossy().into_owned(),
                iteration: saved.state.iteration,
                pruned: saved.pruned,
                redacted,
            },
        );
    }
    Ok(())
}
