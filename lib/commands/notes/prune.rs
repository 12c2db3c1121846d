//! `axe-notes-prune`: old daily logs, removed.

use std::io::Write;

use serde::Serialize;
use time::{Duration, OffsetDateTime};

use super::AGENT;
use crate::cli::{Command, Flag, Item, Matches, Rule, Run};
use crate::error::{Error, Result};
use crate::memory::notes;

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
prints each removed file's path. AGE is days (90, 90d) or weeks (12w);
today's log is never removed, whatever AGE. World topics and MEMORY.md are
never touched. --dry-run prints what would go and removes nothing.",
    run: Run::Action(run),
};

const OLDER_THAN: Flag = Flag::with_value(
    "older-than",
    "AGE",
    "Remove the logs dated more than AGE before today: days (90, 90d) or weeks (12w)",
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
        return crate::cli::write_json(
            out,
            &Json {
                agent: target.agent(),
                removed: paths,
                kept: pruned.kept,
                dry_run,
            },
        );
    }
    for path in paths {
        writeln!(out, "{path}").map_err(Error::Output)?;
    }
    Ok(())
}

/// `90`, `90d` or `12w` as days; at least 1, so today's log always stays.
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
    if n < 1 {
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
        for bad in ["0", "-3d", "1y", "d", "", "9999999999999999999999"] {
            assert!(age_in_days(bad).is_err(), "{bad}");
        }
    }
}
