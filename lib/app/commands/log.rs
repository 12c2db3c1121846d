//! `axe-log`: the ledger of model calls (`axe_ledger`), listed and
//! summed; and `--no-log`, the flag of every command that calls a model.

use std::io::Write;

use serde::Serialize;
use time::OffsetDateTime;

use axe_base::error::{Error, Result};
use axe_base::stderr::{escape, note};
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_ledger::Record;
use axe_ledger::read::{self, By, Filter, Sum};
use axe_memory::Wait;
use axe_run::conversation::{self, Owner};

/// `--no-log`: the one flag of every command that calls a model.
pub const NO_LOG: Flag = Flag::switch(
    "no-log",
    "Do not record this command's model calls in the ledger (see axe-log)",
);

pub const COMMAND: Command = Command {
    name: "axe-log",
    about: "List or sum the model calls the ledger recorded, or show a conversation",
    usage: &["[OPTIONS]", "<COMMAND> [OPTIONS]"],
    args: &[],
    flags: &[],
    rules: &[],
    description: "\
Without a command word, lists the calls (axe-log list); -c shows the
conversation used last, --cid ID a given one. axe-log show ID prints a
conversation axe-run, axe-llm or axe-chat kept.",
    run: Run::Default(&[LIST, SHOW, CONVERSATIONS]),
};

const LIST: Command = Command {
    name: "axe-log list",
    about: "List or sum the model calls the ledger recorded (the default command)",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[
        AGENT,
        MODEL,
        SINCE,
        UNTIL,
        CONVERSATION,
        SUM,
        COUNT,
        CURRENT,
        CID,
        QUERY,
        JSON,
    ],
    rules: LIST_RULES,
    description: "\
Every model call of axe-run (each turn, sub-agents too), axe-llm, axe-gc
and axe-notes-consolidate is one line of the ledger, under
<data>/axe/ledger/ (one file a month, YYYY-MM.jsonl, and YYYY-MM.N.jsonl
past [log] max_bytes): time, agent, provider, model, tokens, cost,
duration, retries and status. No prompt or answer text is kept unless
config.toml says [log] text = true, and then redacted. --no-log on those
commands records nothing.

Lists the calls, newest first, one a line: time, agent (- for axe-llm),
provider/model, input and output tokens, cost in US dollars (? when
neither the provider nor [pricing] said), duration, status. --sum prints
one line per day, agent or model with the calls, tokens and cost summed
instead, saying how many calls had no price. A reported cost wins;
[pricing] is applied as the ledger is read, so a price added today prices
the calls made before it. --since and --until take a date (2026-11-01,
midnight UTC), an RFC 3339 time or an age (30m, 12h, 7d, 2w); --until is
exclusive.

As llm logs: -n N lists the newest N calls; -q TEXT only those whose kept
prompt or answer holds TEXT (kept with [log] text = true); -c prints the
conversation used last (--agent's, else anyone's), --cid ID a given one,
as axe-log show does, -n N its last N turns.",
    run: Run::Action(run),
};

/// What `-c`/`--cid` (a conversation shown) cannot go with: filters and
/// sums of calls.
const LIST_RULES: &[Rule] = &[
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&CID)),
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&SUM)),
    Rule::Conflict(Item::Flag(&CID), Item::Flag(&SUM)),
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&QUERY)),
    Rule::Conflict(Item::Flag(&CID), Item::Flag(&QUERY)),
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&CONVERSATION)),
    Rule::Conflict(Item::Flag(&CID), Item::Flag(&CONVERSATION)),
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&MODEL)),
    Rule::Conflict(Item::Flag(&CID), Item::Flag(&MODEL)),
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&SINCE)),
    Rule::Conflict(Item::Flag(&CID), Item::Flag(&SINCE)),
    Rule::Conflict(Item::Flag(&CURRENT), Item::Flag(&UNTIL)),
    Rule::Conflict(Item::Flag(&CID), Item::Flag(&UNTIL)),
    Rule::Conflict(Item::Flag(&COUNT), Item::Flag(&SUM)),
];

const COUNT: Flag = Flag::with_value(
    "count",
    "N",
    "Only the newest N calls, 0 for all [default: all]; with -c or --cid, the conversation's last N turns",
)
.short('n')
.int();

const CURRENT: Flag = Flag::switch(
    "current",
    "Print the conversation used last instead of calls (--agent's, else any agent's or axe-llm's); with --json {agent, conversation_id, messages}",
)
.short('c');

const CID: Flag = Flag::with_value(
    "cid",
    "ID",
    "Print conversation ID instead of calls, as axe-log show ID; with --json {agent, conversation_id, messages}",
);

const QUERY: Flag = Flag::with_value(
    "query",
    "TEXT",
    "Only calls whose kept prompt or answer contains TEXT, case aside (config.toml's [log] text = true keeps them)",
)
.short('q');

const AGENT: Flag =
    Flag::with_value("agent", "NAME", "Only this agent's calls").completes(Complete::Agent);

const SHOW: Command = Command {
    name: "axe-log show",
    about: "Print a conversation: each message as role: text, a tool call as -> name(arguments)",
    usage: &["[OPTIONS] <ID>"],
    args: &[ID],
    flags: &[OWNER],
    rules: &[Rule::Required(Item::Arg(&ID))],
    description: "\
ID is the conversation_id --json reported (axe-run -c or --cid, axe-llm
-c, axe-chat's /save). Without --agent, the conversation is the one of the
agent whose calls the ledger records under that id, else axe-llm's.",
    run: Run::Action(show),
};

const CONVERSATIONS: Command = Command {
    name: "axe-log conversations",
    about: "List the conversations kept, the newest used first",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[OWNER, CONVERSATIONS_JSON],
    rules: &[],
    description: "\
One a line: the agent (- for axe-llm's), the id, when it was last used,
its size in bytes. Each agent (and axe-llm) keeps its 200 conversations
used last; an older one goes as a new one starts.",
    run: Run::Action(conversations),
};

const CONVERSATIONS_JSON: Flag = Flag::switch(
    "json",
    "Print {conversations: [{agent, id, modified, bytes}]} as JSON",
);

#[derive(Serialize)]
struct Kept {
    /// `null`: axe-llm's.
    agent: Option<String>,
    id: String,
    modified: String,
    bytes: u64,
    #[serde(skip)]
    at: std::time::SystemTime,
}

/// The conversations kept, `agent`'s or everyone's (every agent's and
/// axe-llm's), newest use first.
fn kept(dirs: &axe_base::dirs::Dirs, agent: Option<&str>) -> Result<Vec<Kept>> {
    let owners: Vec<Option<String>> = match agent {
        Some(agent) => vec![Some(agent.to_owned())],
        None => conversation::agents(dirs)?
            .into_iter()
            .map(Some)
            .chain([None])
            .collect(),
    };
    let mut kept = Vec::new();
    for agent in owners {
        let owner = Owner::of(agent.as_deref());
        for l in conversation::list(dirs, owner)? {
            let modified = OffsetDateTime::from(l.modified)
                .format(&time::format_description::well_known::Rfc3339)
                .unwrap_or_default();
            kept.push(Kept {
                agent: agent.clone(),
                id: l.id,
                modified,
                bytes: l.bytes,
                at: l.modified,
            });
        }
    }
    kept.sort_by_key(|k| std::cmp::Reverse(k.at));
    Ok(kept)
}

fn conversations(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::env_agents();
    let kept = kept(agents.dirs(), m.string(&OWNER)?)?;
    if m.flag(&CONVERSATIONS_JSON) {
        #[derive(Serialize)]
        struct All {
            conversations: Vec<Kept>,
        }
        return axe_cli::write_json(
            out,
            &All {
                conversations: kept,
            },
        );
    }
    let mut text = String::new();
    for k in kept {
        let row = format!(
            "{}\t{}\t{}\t{}",
            k.agent.as_deref().unwrap_or("-"),
            k.id,
            k.modified,
            k.bytes
        );
        text.push_str(&escape(&row));
        text.push('\n');
    }
    out.write_all(text.as_bytes()).map_err(Error::Output)
}

const ID: Arg = Arg {
    name: "ID",
    noun: "conversation",
    help: "The conversation's id",
    complete: Complete::Nothing,
    many: false,
};

const OWNER: Flag = Flag::with_value("agent", "NAME", "The agent whose conversation it is")
    .completes(Complete::Agent);

/// `axe-log show ID`: the conversation, `--agent`'s or found by its id.
fn show(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let id = m
        .args()
        .first()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = conversation::check_id(&id)?;
    let agents = super::args::env_agents();
    let agent = owner_of(agents.dirs(), id, m.string(&OWNER)?)?;
    conversation::show(agents.dirs(), Owner::of(agent.as_deref()), id, out)
}

/// Whose conversation `id` is: `named`'s when given; else the one owner
/// that keeps an id so; among several, the agent the ledger last recorded
/// a call of it for, else the one used last (a conversation id is unique
/// per agent, not overall). None keeps it: the error names the nearest
/// id kept and those used last.
fn owner_of(dirs: &axe_base::dirs::Dirs, id: &str, named: Option<&str>) -> Result<Option<String>> {
    if let Some(agent) = named {
        return Ok(Some(agent.to_owned()));
    }
    let all = kept(dirs, None)?;
    let holders: Vec<&Kept> = all.iter().filter(|k| k.id == id).collect();
    match holders.as_slice() {
        [] => {
            let ids: Vec<String> = all.iter().map(|k| k.id.clone()).collect();
            Err(conversation::unknown_among(
                id,
                "any agent or axe-llm",
                &ids,
                "",
            ))
        }
        [one] => Ok(one.agent.clone()),
        [newest, ..] => {
            let filter = Filter {
                conversation: Some(id.to_owned()),
                ..Filter::default()
            };
            // An unreadable ledger only loses the hint.
            let recorded = read::read(&dirs.data()?, &filter)
                .ok()
                .and_then(|found| found.records.into_iter().next_back())
                .map(|r| r.agent);
            Ok(match recorded {
                Some(agent) if holders.iter().any(|k| k.agent == agent) => agent,
                _ => newest.agent.clone(),
            })
        }
    }
}

/// `axe-log -c` and `axe-log --cid ID`, as `llm logs -c`/`--cid`: the
/// conversation used last or the one named, printed as `axe-log show`
/// does (its last `-n` turns), or as JSON.
fn shown(m: &Matches, cid: Option<&str>, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::env_agents();
    let dirs = agents.dirs();
    let named = m.string(&AGENT)?;
    let (agent, id) = match cid {
        Some(id) => {
            let id = conversation::check_id(id)?;
            (owner_of(dirs, id, named)?, id.to_owned())
        }
        None => match kept(dirs, named)?.into_iter().next() {
            Some(k) => (k.agent, k.id),
            None => {
                let whose = named.map_or("any agent or axe-llm".to_owned(), |a| {
                    format!("agent \"{a}\"")
                });
                return Err(Error::Usage(format!(
                    "-c: no conversation of {whose} is kept"
                )));
            }
        },
    };
    let loaded = conversation::load(dirs, Owner::of(agent.as_deref()), &id, Wait::default())?;
    let turns = m.number::<usize>(&COUNT)?.unwrap_or(0);
    let messages = conversation::last_turns(&loaded.messages, turns);
    if m.flag(&JSON) {
        #[derive(Serialize)]
        struct Shown<'a> {
            agent: Option<String>,
            conversation_id: String,
            messages: &'a [axe_llm::Message],
        }
        return axe_cli::write_json(
            out,
            &Shown {
                agent,
                conversation_id: id,
                messages,
            },
        );
    }
    conversation::print(messages, out)
}

/// `-q`'s search finds only text the ledger kept: with `[log] text` off
/// (the default) calls are recorded without it, which is said once.
fn warn_text_off() {
    let text_on = axe_agent::config::load_quietly(super::args::env_agents().dirs())
        .map(|(config, _)| config.log.text)
        .unwrap_or(true);
    if !text_on {
        note(format_args!(
            "warning: [log] text is off in config.toml: calls are recorded without their prompt and answer, so -q finds only those made while it was on"
        ));
    }
}

const MODEL: Flag = Flag::with_value(
    "model",
    "MODEL",
    "Only calls to this model: provider/model, or the model alone",
)
.completes(Complete::Model);

const SINCE: Flag = Flag::with_value(
    "since",
    "WHEN",
    "Only calls from WHEN on: a date, an RFC 3339 time or an age (7d)",
);

const UNTIL: Flag = Flag::with_value(
    "until",
    "WHEN",
    "Only calls before WHEN: a date, an RFC 3339 time or an age (7d)",
);

const CONVERSATION: Flag =
    Flag::with_value("conversation", "ID", "Only the calls of this conversation");

const SUM: Flag = Flag::with_value(
    "sum",
    "BY",
    "Sum calls, tokens and cost by day, agent or model",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {calls: [records]} (newest first), or with --sum {sum, groups: [{key, calls, input_tokens, output_tokens, cache_read_tokens, cost, cost_unknown}]}, as one JSON document",
);

#[derive(Serialize)]
struct Calls<'a> {
    calls: Vec<&'a Record>,
}

#[derive(Serialize)]
struct Sums<'a> {
    sum: &'a str,
    groups: Vec<Sum>,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    if m.flag(&CURRENT) {
        return shown(m, None, out);
    }
    if let Some(id) = m.string(&CID)? {
        return shown(m, Some(id), out);
    }
    let now = OffsetDateTime::now_utc();
    let time = |flag: &Flag| -> Result<Option<String>> {
        m.string(flag)?
            .map(|text| {
                read::when(text, now).ok_or_else(|| {
                    Error::Usage(format!(
                        "error parsing flag --{}: \"{text}\" is not a date (2026-11-01), an RFC 3339 time or an age such as 7d",
                        flag.long
                    ))
                })
            })
            .transpose()
    };
    let by = match m.string(&SUM)? {
        Some(name) => Some(By::parse(name).ok_or_else(|| {
            Error::Usage(format!(
                "error parsing flag --sum: \"{name}\" is not one of {}",
                By::NAMES.join(", ")
            ))
        })?),
        None => None,
    };
    let filter = Filter {
        agent: m.string(&AGENT)?.map(str::to_owned),
        model: m.string(&MODEL)?.map(str::to_owned),
        since: time(&SINCE)?,
        until: time(&UNTIL)?,
        conversation: m.string(&CONVERSATION)?.map(str::to_owned),
        query: m.string(&QUERY)?.map(str::to_lowercase),
    };
    if filter.query.is_some() {
        warn_text_off();
    }
    let agents = super::args::env_agents();
    let data = agents.dirs().data()?;
    let mut found = read::read(&data, &filter).map_err(|e| {
        Error::caused(
            Error::Memory(format!(
                "failed to read the ledger in {}: {}",
                data.join(axe_ledger::DIR).display(),
                axe_base::error::describe_io(&e)
            )),
            e,
        )
    })?;
    if found.unreadable > 0 {
        note(format_args!(
            "warning: {} line(s) of the ledger are no record and were left out",
            found.unreadable
        ));
    }
    // Prices as config.toml has them now. One that cannot be read only
    // leaves the costs it would have given unknown: the calls are listed.
    let pricing = match axe_agent::config::load(&agents) {
        Ok(config) => config.pricing,
        Err(e) => {
            note(format_args!(
                "warning: {e}; costs are shown without [pricing]"
            ));
            Default::default()
        }
    };
    read::price(&mut found.records, &pricing);
    let json = m.flag(&JSON);
    if !json {
        unpriced_hint(&found.records);
    }
    let write = |out: &mut dyn Write, text: String| -> Result<()> {
        out.write_all(text.as_bytes()).map_err(Error::Output)
    };
    if let Some(by) = by {
        let groups = read::sum(&found.records, by);
        if json {
            let sum = By::NAMES[by as usize];
            return axe_cli::write_json(out, &Sums { sum, groups });
        }
        let mut text = String::from("KEY\tCALLS\tINPUT\tOUTPUT\tCOST\n");
        for g in groups {
            let row = format!(
                "{}\t{}\t{}\t{}\t{}",
                g.key,
                g.calls,
                g.input_tokens,
                g.output_tokens,
                summed(&g)
            );
            text.push_str(&escape(&row));
            text.push('\n');
        }
        return write(out, text);
    }
    // -n N: the newest N; 0 or none, all.
    let count = match m.number::<usize>(&COUNT)? {
        Some(0) | None => usize::MAX,
        Some(n) => n,
    };
    let newest_first = found.records.iter().rev().take(count);
    if json {
        return axe_cli::write_json(
            out,
            &Calls {
                calls: newest_first.collect(),
            },
        );
    }
    let mut text = String::new();
    for r in newest_first {
        let tokens = |n: Option<u64>| n.map_or("-".to_owned(), |n| n.to_string());
        // The ledger is a file anyone with the data directory can edit:
        // its text is shown escaped, a line a record.
        let row = format!(
            "{}\t{}\t{}/{}\t{}\t{}\t{}\t{}ms\t{}",
            r.time,
            r.agent.as_deref().unwrap_or("-"),
            r.provider,
            r.model,
            tokens(r.input_tokens),
            tokens(r.output_tokens),
            dollars(r.cost),
            r.duration_ms,
            r.status
        );
        text.push_str(&escape(&row));
        text.push('\n');
    }
    write(out, text)
}

/// `$0.000138`: enough places for a call of a few tokens; `?` unknown.
fn dollars(cost: Option<f64>) -> String {
    match cost {
        Some(c) => format!("${c:.6}"),
        None => "?".to_owned(),
    }
}

/// A group's cost and how many of its calls had none: `$0.25`,
/// `$0.25 + 1 unpriced`, `? (2 unpriced)`.
fn summed(g: &Sum) -> String {
    match (g.cost, g.cost_unknown) {
        (cost, 0) => dollars(cost),
        (None, n) => format!("? ({n} unpriced)"),
        (cost, n) => format!("{} + {n} unpriced", dollars(cost)),
    }
}

/// Says, when some calls have no cost, how to give them one: the first
/// day with a local server has nothing but such calls.
fn unpriced_hint(records: &[Record]) {
    // Borrowed pairs, joined only for the line: a year's ledger is some
    // 100,000 records, and a name made for each was 3% of `--sum`.
    let mut unpriced: Vec<(&str, &str)> = Vec::new();
    let mut calls = 0;
    for r in records.iter().filter(|r| r.cost.is_none()) {
        calls += 1;
        let pair = (r.provider.as_str(), r.model.as_str());
        if !unpriced.contains(&pair) {
            unpriced.push(pair);
        }
    }
    if calls == 0 {
        return;
    }
    let models: Vec<String> = unpriced.iter().map(|(p, m)| format!("{p}/{m}")).collect();
    // A few names are a hint; a ledger of many models would be a list.
    let shown = match models.len() {
        n if n > 3 => format!("{} and {} more", models[..3].join(", "), n - 3),
        _ => models.join(", "),
    };
    note(format_args!(
        "note: {calls} call(s) have no price: set one for {shown} under [pricing.\"PROVIDER/MODEL\"] in config.toml (it prices past calls too)"
    ));
}
