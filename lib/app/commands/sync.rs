//! `axe-sync init|run|status`: memory synced across machines over git;
//! the work is `axe_sync`'s. `merge-driver` is what git runs for a
//! user's own `git merge`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::args::{self, WAIT};
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_sync::{Kind, Options, Report, SyncError};

pub const COMMAND: Command = Command {
    name: "axe-sync",
    about: "Sync agent memory across machines over git",
    usage: &["[OPTIONS] [AGENT]...", "<COMMAND> [OPTIONS]"],
    args: &[],
    flags: &[],
    rules: &[],
    description: "\
The memory data directory (run logs, the notes workspace, state) is a git
repository; `axe-sync` (short for `axe-sync run`) commits what changed,
fetches, merges by what each file is and pushes. A word one or two edits
from a command's is taken for that command: an agent named like one needs
`axe-sync run NAME`. Run logs and daily logs are merged entry by entry
(every entry once, in time order); state files by meaning; MEMORY.md and
world topics line by line, and where two machines changed the same lines
the local text stays and the other side is written whole beside it
(MEMORY.conflict-<host>-<time>-<hash>.md): exit code 7 until that file is
removed. git never writes a memory file: every file is read and written
under the lock the memory commands use. Needs git 2.28 or newer on PATH.",
    // Bare `axe-sync` (or with agent names, or flags) is `axe-sync run`.
    run: Run::Default(&[RUN, INIT, STATUS, MERGE_DRIVER]),
};

const DIR: Flag = Flag::with_value(
    "dir",
    "DIR",
    "The repository: a memory directory other than the data directory (an agent's own notes workspace, the team directory axe-mcp --http serves)",
)
.completes(Complete::Dir);

const REMOTE: Flag = Flag::with_value(
    "remote",
    "URL",
    "Sync with the git remote at URL (a bare directory, ssh, https); joins it when it has memory already",
);

const NO_PUSH: Flag = Flag::switch("no-push", "Commit, fetch and merge, but do not push");

const DRY_RUN: Flag = Flag::switch(
    "dry-run",
    "Say what would be committed and merged; fetch, but change nothing",
);

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up on the network (fetch and push, in all) after this long [default: 120]",
)
.number();

const RUN_JSON: Flag = Flag::switch(
    "json",
    "Print {dir, remote, branch, dry_run, recovered, committed: {commit, files, removed}, merged: {from, commit, files, conflicts, secrets: [{path, kinds}]}, pushed, push_attempts, conflicts, refused: [{path, reason}]} as JSON",
);

const INIT_JSON: Flag = Flag::switch(
    "json",
    "Print {dir, created, remote, sync} as JSON, sync as axe-sync run --json prints it",
);

const STATUS_JSON: Flag = Flag::switch(
    "json",
    "Print {dir, remote, branch, head, ahead, behind, changed, conflicts, interrupted} as JSON",
);

const AGENTS: Arg = Arg {
    name: "AGENT",
    noun: "agent name",
    help: "Commit only these agents' files (and the shared world topics); everything is still merged",
    complete: Complete::Agent,
    many: true,
};

const INIT: Command = Command {
    name: "axe-sync init",
    about: "Make the memory directory a git repository and sync it once",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[REMOTE, DIR, TIMEOUT, WAIT, INIT_JSON],
    rules: &[],
    description: "\
Makes the directory a git repository on branch main (or sets up the one
there again), installs the merge drivers in its own .git/config and a
pre-commit hook that refuses conflict markers, writes .gitattributes and
.gitignore, sets the remote `origin` to --remote, and
runs one sync: what is here is committed, what the remote has is merged
in, and the result pushed. Run it on every machine, with the same URL.

A --remote that git cannot reach is refused before anything changes; an
init that fails later takes back what it made (the repository it created,
or the config, hook and files it changed), so the next init starts from
what was there. A bare remote on this machine whose HEAD names a branch
it lacks (a `git init --bare` on master) is pointed at the branch pushed,
so a `git clone` of it checks the memory out.",
    run: Run::Action(init),
};

const RUN: Command = Command {
    name: "axe-sync run",
    about: "Commit, fetch, merge and push memory",
    usage: &["[OPTIONS] [AGENT]..."],
    args: &[AGENTS],
    flags: &[NO_PUSH, DRY_RUN, DIR, TIMEOUT, WAIT, RUN_JSON],
    rules: &[],
    description: "\
Commits what changed (each file read under its lock), fetches, merges by
entry, pushes; a push the remote rejected because another machine pushed
meanwhile is fetched, merged and pushed again, up to 4 times. One sync
runs at a time per repository; another waits --wait seconds, then exits 5.
A sync cut off (a signal, kill -9, the network gone) leaves every file
whole; the next one finishes it. Exit code 7 lists conflict files left
unresolved. A path git itself refuses (a .git component in any spelling,
`..`), in the remote's tree or the work tree, is never read or written:
it is left out, named on stderr and in refused, and the sync goes on
(exit code 0); what the sync pushes no longer holds it. No ignore rule
(.gitignore, info/exclude, core.excludesFile) keeps a file from syncing.",
    run: Run::Action(run),
};

const STATUS: Command = Command {
    name: "axe-sync status",
    about: "Show what a sync would do, without fetching",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[DIR, STATUS_JSON],
    rules: &[],
    description: "\
Prints the remote, the branch, commits ahead of and behind the remote as
of the last fetch, files changed since the last sync, and unresolved
conflict files (exit code 7 when there are any).",
    run: Run::Action(status),
};

const KIND: Arg = Arg {
    name: "KIND",
    noun: "kind",
    help: "runlog, daily, state or lines",
    complete: Complete::Nothing,
    many: false,
};

/// A file argument of the merge driver.
const fn file(name: &'static str, help: &'static str) -> Arg {
    Arg {
        name,
        noun: "file",
        help,
        complete: Complete::File,
        many: false,
    }
}

const BASE: Arg = file("BASE", "The common ancestor's version (git's %O)");
const OURS: Arg = file(
    "OURS",
    "Our version, where the result is written (git's %A)",
);
const THEIRS: Arg = file("THEIRS", "Their version (git's %B)");
const PATH: Arg = file("PATH", "The file's path in the repository (git's %P)");

const MERGE_DRIVER: Command = Command {
    name: "axe-sync merge-driver",
    about: "Merge one memory file for git (set up by init)",
    usage: &["<KIND> <BASE> <OURS> <THEIRS> <PATH>"],
    args: &[KIND, BASE, OURS, THEIRS, PATH],
    flags: &[],
    rules: &[
        Rule::Required(Item::Arg(&KIND)),
        Rule::Required(Item::Arg(&BASE)),
        Rule::Required(Item::Arg(&OURS)),
        Rule::Required(Item::Arg(&THEIRS)),
        Rule::Required(Item::Arg(&PATH)),
    ],
    description: "\
What git runs, through the merge drivers `axe-sync init` puts in the
repository's config, when a user runs `git merge` or `git pull`
themselves: the file is merged as axe-sync merges it, and a line conflict
keeps our text and writes theirs beside the file, as axe-sync does.",
    run: Run::Action(merge_driver),
};

/// `--dir`, else the memory data directory; absolute, since git runs in
/// the directory with `GIT_DIR` beneath it.
fn dir(m: &Matches) -> Result<PathBuf> {
    let dir = match m.value(&DIR) {
        Some(d) if d.is_empty() => return Err(Error::Usage("--dir must not be empty".into())),
        Some(d) => PathBuf::from(d),
        None => axe_sync::default_dir(&Dirs::from_env())?,
    };
    std::path::absolute(&dir)
        .map_err(|e| Error::caused(Error::Config(format!("{}: {e}", dir.display())), e))
}

fn deadline(m: &Matches) -> Result<Instant> {
    Ok(Instant::now() + args::timeout(m, &TIMEOUT)?)
}

/// The command line that runs `axe-sync` from a merge driver: this
/// executable, and `sync` after it when it is `axe` running the command
/// in process (`axe sync init`).
fn program() -> Result<Vec<String>> {
    let exe = std::env::current_exe().map_err(|e| {
        Error::caused(
            Error::Child(format!("cannot find axe-sync's own path: {e}")),
            e,
        )
    })?;
    let mut words = vec![exe.to_string_lossy().into_owned()];
    if exe.file_name().is_some_and(|n| n == "axe") {
        words.push("sync".to_owned());
    }
    Ok(words)
}

fn init(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let wait = args::wait(m)?;
    let deadline = deadline(m)?;
    let remote = m.string(&REMOTE)?;
    if remote.is_some_and(str::is_empty) {
        return Err(Error::Usage("--remote must not be empty".into()));
    }
    let done = axe_sync::init(
        &dir(m)?,
        remote,
        deadline,
        axe_agent::config::secrets(&super::args::env_agents(), None),
        &program()?,
        wait,
    )?;
    say_refused(&done.sync);
    if m.flag(&INIT_JSON) {
        axe_cli::write_json(out, &done)?;
    } else {
        let verb = if done.created { "Made" } else { "Set up" };
        writeln!(out, "{verb} the memory repository {}", done.dir).map_err(Error::Output)?;
        say(&done.sync, out)?;
    }
    unresolved(&done.sync.conflicts)
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    // The flags first, as cobra parsed them: a malformed --timeout is the
    // error even beside a name that is not one. The clock starts here
    // either way: nothing between takes time.
    let wait = args::wait(m)?;
    let deadline = deadline(m)?;
    let agents = m
        .args()
        .iter()
        .map(|a| {
            a.to_str()
                .filter(|a| !a.is_empty() && !a.contains('/') && *a != "." && *a != "..")
                .map(str::to_owned)
                .ok_or_else(|| {
                    Error::InvalidAgentName(format!(
                        "invalid agent name \"{}\"",
                        a.to_string_lossy()
                    ))
                })
        })
        .collect::<Result<Vec<_>>>()?;
    let report = axe_sync::sync(&Options {
        dir: dir(m)?,
        agents,
        push: !m.flag(&NO_PUSH),
        dry_run: m.flag(&DRY_RUN),
        deadline,
        wait,
        secrets: axe_agent::config::secrets(&super::args::env_agents(), None),
    })?;
    say_refused(&report);
    if m.flag(&RUN_JSON) {
        axe_cli::write_json(out, &report)?;
    } else {
        say(&report, out)?;
    }
    arrived(&report);
    unresolved(&report.conflicts)
}

/// Says, once (the merge that brought it), that what arrived holds what
/// looks like a secret: it is on the remote already, so it is not refused
/// here; taking it out, or rotating it, is for a person.
fn arrived(r: &Report) {
    for a in &r.merged.secrets {
        let kinds: Vec<&str> = a.kinds.iter().map(|k| k.name()).collect();
        axe_base::stderr::note(format_args!(
            "axe-sync: {} arrived from another machine holding what looks like a secret ({}); it is on the remote already: take it out there or rotate it",
            a.path,
            kinds.join(", ")
        ));
    }
}

/// A sync's report in words, one line a step.
fn say(r: &Report, out: &mut dyn Write) -> Result<()> {
    let short = |id: &Option<String>| {
        id.as_deref()
            .map_or(String::new(), |i| format!(" ({})", &i[..i.len().min(10)]))
    };
    let would = if r.dry_run { "would be " } else { "" };
    let mut lines = Vec::new();
    let (files, removed) = (r.committed.files.len(), r.committed.removed.len());
    if files + removed > 0 {
        lines.push(format!(
            "Committed: {files} changed, {removed} removed{}{}",
            short(&r.committed.commit),
            if r.dry_run {
                " (dry run: nothing committed)"
            } else {
                ""
            }
        ));
    }
    if r.recovered {
        lines.push("Finished a sync that was cut off".to_owned());
    }
    if r.merged.from.is_some() {
        lines.push(format!(
            "Merged {} files {would}from {}{}",
            r.merged.files.len(),
            r.remote.as_deref().unwrap_or("the remote"),
            short(&r.merged.commit)
        ));
    }
    if r.pushed {
        lines.push(format!(
            "Pushed to {}",
            r.remote.as_deref().unwrap_or("the remote")
        ));
    }
    if r.remote.is_none() {
        lines.push(
            "No remote: committed here only (axe-sync init --remote URL sets one)".to_owned(),
        );
    }
    if lines.is_empty() {
        lines.push("Nothing to sync".to_owned());
    }
    for line in lines {
        writeln!(out, "{line}").map_err(Error::Output)?;
    }
    Ok(())
}

/// A line on stderr for each path left out, with or without `--json`:
/// the sync itself succeeded. The name is quoted and escaped, as it came
/// from a tree anyone could push.
fn say_refused(r: &Report) {
    for x in &r.refused {
        axe_base::stderr::note(format_args!(
            "axe-sync: refused {:?}: {}; left out, the rest synced",
            x.path, x.reason
        ));
    }
}

/// Exit code 7 while conflict files are left.
fn unresolved(conflicts: &[String]) -> Result<()> {
    if conflicts.is_empty() {
        return Ok(());
    }
    Err(SyncError::Unresolved(conflicts.to_vec()).into())
}

fn status(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let s = axe_sync::status(&dir(m)?)?;
    if m.flag(&STATUS_JSON) {
        axe_cli::write_json(out, &s)?;
    } else {
        let w = |out: &mut dyn Write, line: String| writeln!(out, "{line}").map_err(Error::Output);
        w(out, format!("Repository: {} (branch {})", s.dir, s.branch))?;
        match &s.remote {
            Some(url) => w(
                out,
                format!(
                    "Remote: {url}, {} ahead, {} behind as of the last fetch",
                    s.ahead, s.behind
                ),
            )?,
            None => w(out, "Remote: none".to_owned())?,
        }
        w(
            out,
            format!("Changed since the last sync: {}", s.changed.len()),
        )?;
        for f in &s.changed {
            w(out, format!("  {f}"))?;
        }
        if s.interrupted {
            w(
                out,
                "A sync was cut off mid-merge; the next axe-sync run finishes it".to_owned(),
            )?;
        }
    }
    unresolved(&s.conflicts)
}

fn merge_driver(m: &Matches, _: &mut dyn Write) -> Result<()> {
    let a = m.args();
    let [kind, base, ours, theirs, path] = a else {
        return Err(Error::Usage(
            "usage: axe-sync merge-driver <KIND> <BASE> <OURS> <THEIRS> <PATH>".into(),
        ));
    };
    let kind = kind.to_str().and_then(Kind::named).ok_or_else(|| {
        Error::Usage(format!(
            "unknown kind \"{}\": runlog, daily, state or lines",
            kind.to_string_lossy()
        ))
    })?;
    let rel = path.to_string_lossy();
    if let Some(side) = axe_sync::merge_driver(
        kind,
        Path::new(base),
        Path::new(ours),
        Path::new(theirs),
        &rel,
    )? {
        axe_base::stderr::note(format_args!(
            "axe-sync: {rel}: both sides changed the same lines; ours kept, theirs written to {side}"
        ));
    }
    Ok(())
}
