//! `prune`: daily logs older than a cut-off, removed (agnx leaves them to
//! grow forever). Today's log is never removed.

use std::path::PathBuf;

use rustix::fs::FileType;

use time::{Date, Month};

use super::workspace::{Workspace, day};
use axe_base::error::Result;

/// The daily logs removed (or that would be, with `dry_run`) and how many
/// stay.
#[derive(Debug, Clone)]
pub struct Pruned {
    pub removed: Vec<PathBuf>,
    pub kept: usize,
}

/// Removes `agent`'s daily logs dated before `cutoff`. The directory is
/// reached through handles from the workspace root and the files removed
/// through its handle, so a `daily` that is (or becomes) a symlink out of
/// the workspace is refused, never walked; only regular files are logs.
pub fn prune(ws: &Workspace, agent: &str, cutoff: Date, dry_run: bool) -> Result<Pruned> {
    let path = ws.daily_dir(agent);
    let Some(dir) = ws.dir(&path, false)? else {
        return Ok(Pruned {
            removed: Vec::new(),
            kept: 0,
        });
    };
    let entries = dir
        .list()
        .map_err(|e| crate::error::io_error("", "read", &path, e))?;
    let mut dated: Vec<(Date, String)> = entries
        .into_iter()
        .filter(|(_, kind)| *kind == FileType::RegularFile)
        .filter_map(|(name, _)| {
            let name = name.into_string().ok()?;
            Some((dated(&name)?, name))
        })
        .collect();
    dated.sort();
    let (old, kept): (Vec<_>, Vec<_>) = dated.into_iter().partition(|(date, _)| *date < cutoff);
    let mut removed = Vec::new();
    for (date, name) in old {
        if !dry_run {
            dir.remove(name.as_ref()).map_err(|e| {
                crate::error::io_error(
                    format!("failed to prune {}", day(date)),
                    "remove",
                    dir.join(&name),
                    e,
                )
            })?;
        }
        removed.push(dir.join(name));
    }
    removed.extend(prune_history(ws, agent, cutoff, dry_run)?);
    Ok(Pruned {
        removed,
        kept: kept.len(),
    })
}

/// The consolidations' records (`history`) dated before `cutoff`: the
/// previous texts they keep go with the days they were made on. Their
/// entries went with the daily logs of those days, which are older still.
fn prune_history(ws: &Workspace, agent: &str, cutoff: Date, dry_run: bool) -> Result<Vec<PathBuf>> {
    let path = super::history::dir(ws, agent);
    let Some(dir) = ws.dir(&path, false)? else {
        return Ok(Vec::new());
    };
    let mut old: Vec<String> = dir
        .list()
        .map_err(|e| crate::error::io_error("", "read", &path, e))?
        .into_iter()
        .filter(|(_, kind)| *kind == FileType::RegularFile)
        .filter_map(|(name, _)| name.into_string().ok())
        .filter(|n| super::history::stamp_date(n).is_some_and(|d| d < cutoff))
        .collect();
    old.sort();
    let mut removed = Vec::new();
    for name in old {
        if !dry_run {
            dir.remove(name.as_ref()).map_err(|e| {
                crate::error::io_error("failed to prune", "remove", dir.join(&name), e)
            })?;
        }
        removed.push(dir.join(name));
    }
    Ok(removed)
}

/// The date a daily log's name gives: `2026-11-22.md`. Other files in the
/// directory are not logs and are left alone.
pub(super) fn dated(name: &str) -> Option<Date> {
    let stem = name.strip_suffix(".md")?;
    let mut parts = stem.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    // Digits only: `parse` takes a sign, so `+202-01-01.md` was year 202.
    if parts.next().is_some() || !digits(y, 4) || !digits(m, 2) || !digits(d, 2) {
        return None;
    }
    let month = Month::try_from(m.parse::<u8>().ok()?).ok()?;
    Date::from_calendar_date(y.parse().ok()?, month, d.parse().ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::dated;

    #[test]
    fn only_dated_names_are_logs() {
        assert!(dated("2026-11-22.md").is_some());
        for other in [
            "2026-13-01.md",
            "notes.md",
            "2026-11-22.txt",
            "2026-1-2.md",
            "x-2026-11-22.md",
            "+202-01-01.md",
            "-202-01-01.md",
            "2026-+1-01.md",
            "2026-11-+1.md",
        ] {
            assert!(dated(other).is_none(), "{other}");
        }
    }
}
