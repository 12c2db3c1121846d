//! `axe-notes-prune`: old daily logs, removed.

use std::io::Write;

use serde::Serialize;
use time::{Duration, OffsetDateTime};

use super::AGENT;
use axe_base::error::{Error, Result};
use axe_base::stderr::note;
use axe_cli::{Command, Flag, Item, Matches, Rule, Run};
use axe_memory::notes;

pub const COMMAND: Command = Command {
    name: "axe-notes-prune",
    about: "Remove an agent's daily logs older than a given age",
    usage: &["[OPTIONS] --older-than <AGE> <AGENT>"],
    args: &[AGENT],
    flags: &[OLDER_THAN, DRY_RUN, JSON],
    rules: &[
        crate::commands::args::AGENT_REQUIRED,
        Rule::Required(Item::Flag(&OLDER_THAN)),
    ],
    description: "\
Removes the agent's daily logs dated more than AGE before today (UTC) and
prints each removed file's path. AGE is days (90, 90d) or weeks (12w); 0
takes every log before today's. Today's log is never removed, whatever
AGE. The records axe-notes-consolidate kept in agents/<AGENT>/history/
go with the days they were made on. World topics and MEMORY.md are never
touched. --dry-run prints what
would go and removes nothing, and says so on stderr when nothing would.",
    run: Run::Action(run),
};

const OLDER_THAN: Flag = Flag::with_value(
    "older-than",
    "AGE",
    "Remove the logs dated more than AGE before today: days (90, 90d) or weeks (12w); 0: all but today's",
);

const DRY_RUN: Flag = Flag::switch("dry-run", "Print what would be removed; remove nothing");

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, removed: [paths], kept, dry_run} as JSON",
);

#[derive(Serialize)]
struct Json<'a> {
    agent: &'a str,
    removed: Vec<String>,
    kept: usize,
    dry_run: bool,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let age = m.string(&OLDER_THAN)?.unwrap_or_default();
    let days = age_in_days(age)?;
    let target = super::of_agent(m)?;
    let today = OffsetDateTime::now_utc().date();
    let cutoff = today
        .checked_sub(Duration::days(days))
        .unwrap_or(time::Date::MIN)
        .min(today);
    let dry_run = m.flag(&DRY_RUN);
    let pruned = notes::prune(&target.ws, target.agent(), cutoff, dry_run)?;
    let paths: Vec<String> = pruned
        .removed
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if m.flag(&JSON) {
        return axe_cli::write_json(
            out,
            &Json {
                agent: target.agent(),
                removed: paths,
                kept: pruned.kept,
                dry_run,
            },
        );
    }
    // A dry run is a question; an empty answer would look like no
    // answer. stdout stays the list of paths, for `| xargs`.
    if dry_run && paths.is_empty() {
        note(format_args!(
            "nothing to remove: no daily log of \"{}\" is dated before {cutoff} ({} kept)",
            target.agent(),
            pruned.kept
        ));
    }
    for path in paths {
        writeln!(out, "{path}").map_err(Error::Output)?;
    }
    Ok(())
}

/// `90`, `90d` or `12w` as days. 0 is every day before today: the cut-off
/// is never later than today, so today's log always stays.
fn age_in_days(age: &str) -> Result<i64> {
    let bad = || {
        Error::Usage(format!(
            "error parsing flag --older-than: \"{age}\" is not an age such as 90d or 12w"
        ))
    };
    let (number, unit) = match age.trim().strip_suffix(['d', 'w']) {
        Some(n) => (n, if age.trim().ends_with('w') { 7 } else { 1 }),
        None => (age.trim(), 1),
    };
    let n: i64 = number.parse().map_err(|_| bad())?;
    if n < 0 {
        return Err(bad());
    }
    // Beyond any log's age; also keeps the date arithmetic in range.
    Ok(n.saturating_mul(unit).min(3_660_000))
}

#[cfg(test)]
mod tests {
    use super::age_in_days;

    #[test]
    fn ages() {
        assert_eq!(age_in_days("90").unwrap(), 90);
        assert_eq!(age_in_days("90d").unwrap(), 90);
        assert_eq!(age_in_days("2w").unwrap(), 14);
        assert_eq!(age_in_days("0").unwrap(), 0);
        assert_eq!(age_in_days("0w").unwrap(), 0);
        for bad in ["-3d", "-0x", "1y", "d", "", "9999999999999999999999"] {
            assert!(age_in_days(bad).is_err(), "{bad}");
        }
    }
}
