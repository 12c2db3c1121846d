//! `axe-notes-search`: notes ranked against a query.

use std::io::Write;
use std::time::Instant;

use serde::Serialize;

use super::{AGENT_FLAG, WORKSPACE};
use axe_base::error::{Error, Result};
use axe_base::stderr::note;
use axe_base::timeout::Seconds;
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::notes::Scope;
use axe_search::{self as search, Found, Mode};

/// `n` files, in words.
fn files(n: usize) -> String {
    match n {
        1 => "1 file".to_owned(),
        n => format!("{n} files"),
    }
}

const QUERY: Arg = Arg {
    name: "QUERY",
    noun: "a query",
    help: "Words to look for in any order, case or form; word* for a prefix, \"two words\" for a phrase",
    complete: Complete::Nothing,
    many: true,
};

pub const COMMAND: Command = Command {
    name: "axe-notes-search",
    about: "Search the notes of a workspace, best matches first",
    usage: &["[OPTIONS] <QUERY>..."],
    args: &[QUERY],
    flags: &[AGENT_FLAG, WORKSPACE, LIMIT, MODE, TIMEOUT, REINDEX, JSON],
    rules: &[
        Rule::Either(Item::Arg(&QUERY), Item::Flag(&REINDEX)),
        Rule::Conflict(Item::Flag(&AGENT_FLAG), Item::Flag(&WORKSPACE)),
    ],
    description: "\
Ranks the sections of every notes file (world topics, MEMORY.md files,
daily logs; a section is a heading and the text up to the next one) by
BM25F against the query, and prints the best as path:line: [heading]
snippet, the line being the section's first with a match. A word matches
in any case, with or without accents, and in any English form: deploy
finds deploys, deployed and deployments, and buy finds bought (the
irregular pasts of common verbs). deploy* finds every word that
begins so; '\"blue green\"' (a phrase in double quotes, inside the
shell's) finds those words one after the other. A word in a topic's name counts most, then
one in a heading (or a label such as Maya: at a line's start), then one
in the text.

A question is searched as its words of substance: stop words (what, did,
the) are left out when it has others. A month or day it names (in May,
May 2026, on 2026-05-03) ranks the entries of that month's or day's daily
logs higher.

--agent searches the world topics and that agent's own files;
--workspace DIR, or without either <data>/axe/notes, searches every
agent's.

With --timeout, the search stops then: what the files searched so far
hold is printed, and the files left unsearched are counted on stderr
(in --json, as unsearched). A word longer than 64 bytes (a hash, base64)
is matched as it is, in no other form.

Search reads through an index kept under <cache>/axe/notes-index (one
directory per workspace, never inside it): a cache of which files hold
which words, so only the files that may match are read. It is brought up
to date by each search (a file whose size, times or inode changed is read
again) and rebuilt when missing or damaged; the results are the same with
or without it. --reindex rebuilds it whole first (alone, it only
rebuilds); in --json, index says whether it was used and how fresh it was.

With an embedding model (AXE_EMBEDDINGS=DIR, or embeddings = \"DIR\"
under [search] in config.toml: a local sentence-transformers folder such
as all-MiniLM-L6-v2), search is hybrid by default: the sections found by
words and those nearest the query in meaning are fused (reciprocal rank
fusion), so a question that shares no word with its answer still finds
it. Each section is embedded once and kept beside the index; the first
search embeds them all. --mode lexical, hybrid or vector chooses; hybrid
and vector without a model are an error. In --json, mode says which ran
and vectors how many sections were embedded now and how many were cached.

Like grep, it exits 1 with nothing on stderr when nothing matches (with
--json after printing an empty list); an error exits 1 or 2 with a line on
stderr.",
    run: Run::Action(run),
};

const LIMIT: Flag = Flag::with_value("limit", "N", "Print the best N [default: 10]").int();

const MODE: Flag = Flag::with_value(
    "mode",
    "MODE",
    "Rank by lexical (words), vector (meaning) or hybrid (both) [default: hybrid with an embedding model, else lexical]",
);

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Stop searching after this long and print what was found [default: no limit]",
)
.number();

const REINDEX: Flag = Flag::switch(
    "reindex",
    "Rebuild the workspace's search index from the notes first",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {query, mode, results: [{path, line, text, score, heading, snippet}], index, vectors} as JSON",
);

#[derive(Serialize)]
struct Json<'a> {
    query: &'a str,
    results: &'a [Found],
    /// Only when something could not be read.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unreadable: Vec<super::Skipped>,
    /// Only when `--timeout` stopped the search: the files not searched.
    #[serde(skip_serializing_if = "is_zero")]
    unsearched: usize,
    /// Whether the index was used, and how fresh it was.
    index: &'a search::IndexUsed,
    /// How it ranked: lexical, hybrid or vector.
    mode: Option<Mode>,
    /// With meaning: what was embedded now and what was cached.
    #[serde(skip_serializing_if = "Option::is_none")]
    vectors: Option<&'a search::VectorsUsed>,
}

/// `--reindex` alone, in `--json`.
#[derive(Serialize)]
struct Reindexed<'a> {
    index: &'a search::IndexUsed,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let query: Vec<String> = m
        .args()
        .iter()
        .map(|w| w.to_string_lossy().into_owned())
        .collect();
    let query = query.join(" ");
    if m.flag(&REINDEX) && m.args().is_empty() {
        let target = super::of_flags(m, &AGENT_FLAG, &WORKSPACE)?;
        let used = search::reindex(&target.ws);
        return reindexed(m, out, &used);
    }
    if query.trim().is_empty() {
        // Words that are all blank: as if none were given.
        return Err(Error::Usage(Rule::Required(Item::Arg(&QUERY)).message()));
    }
    let limit = m.number::<usize>(&LIMIT)?.unwrap_or(10);
    // 0 would print nothing and exit 1 as if nothing matched.
    if limit == 0 {
        return Err(Error::Usage(
            "error parsing flag --limit: 0 would print nothing (give 1 or more)".into(),
        ));
    }
    // Every flag is read before the agent is, as cobra parsed flags
    // first: a malformed --timeout is the error even when the agent file
    // is broken.
    let timeout = crate::commands::args::given_timeout(m, &TIMEOUT)?;
    let mode = match m.string(&MODE)? {
        None => None,
        Some(name) => Some(Mode::parse(name).ok_or_else(|| {
            Error::Usage(format!(
                "invalid argument \"{name}\" for \"--mode\" flag: give lexical, hybrid or vector"
            ))
        })?),
    };
    let mut target = super::of_flags(m, &AGENT_FLAG, &WORKSPACE)?;
    target.ws = target
        .ws
        .with_meaning(axe_agent::config::embeddings(target.agents.dirs())?);
    let scope = match &target.agent {
        Some(agent) => Scope::Agent(agent),
        None => Scope::All,
    };
    let until = timeout.map(|t| Instant::now() + t);
    if m.flag(&REINDEX) {
        let used = search::reindex(&target.ws);
        if let Some(why) = &used.why {
            note(format_args!("axe-notes-search: no index: {why}"));
        }
    }
    let searched = search::search_mode(&target.ws, scope, &query, limit, until, mode)?;
    let found = &searched.found;
    // Said first, so that it is seen whatever the exit code.
    for u in &searched.unreadable {
        note(format_args!(
            "axe-notes-search: could not read {}: {}",
            target.ws.relative(&u.path),
            u.why
        ));
    }
    if let (n @ 1.., Some(timeout)) = (searched.unsearched, timeout) {
        note(format_args!(
            "axe-notes-search: stopped at --timeout {} s: {} not searched",
            Seconds(timeout),
            files(n)
        ));
    }
    if m.flag(&JSON) {
        axe_cli::write_json(
            out,
            &Json {
                query: &query,
                results: found,
                unreadable: super::skipped(&target.ws, &searched.unreadable),
                unsearched: searched.unsearched,
                index: &searched.index,
                mode: searched.mode,
                vectors: searched.vectors.as_ref(),
            },
        )?;
    } else {
        for f in found {
            writeln!(out, "{f}").map_err(Error::Output)?;
        }
    }
    if found.is_empty() {
        return Err(Error::NoMatch);
    }
    Ok(())
}

/// What `--reindex` alone says: nothing but an error, or in `--json` the
/// index's state.
fn reindexed(m: &Matches, out: &mut dyn Write, used: &search::IndexUsed) -> Result<()> {
    if m.flag(&JSON) {
        return axe_cli::write_json(out, &Reindexed { index: used });
    }
    match &used.why {
        Some(why) => Err(Error::Usage(format!("no index to rebuild: {why}"))),
        None => Ok(()),
    }
}
