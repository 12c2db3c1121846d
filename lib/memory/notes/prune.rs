//! `prune`: daily logs older than a cut-off, removed (agnx leaves them to
//! grow forever). Today's log is never removed.

use std::fs;
use std::io;
use std::path::PathBuf;

use time::{Date, Month};

use super::workspace::{Workspace, day};
use crate::error::{Error, Result};

/// The daily logs removed (or that would be, with `dry_run`) and how many
/// stay.
#[derive(Debug, Clone)]
pub struct Pruned {
    pub removed: Vec<PathBuf>,
    pub kept: usize,
}

/// Removes `agent`'s daily logs dated before `cutoff`.
pub fn prune(ws: &Workspace, agent: &str, cutoff: Date, dry_run: bool) -> Result<Pruned> {
    let dir = ws.daily_dir(agent);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(Pruned {
                removed: Vec::new(),
                kept: 0,
            });
        }
        Err(e) => return Err(Error::memory("", "read", &dir, &e)),
    };
    let mut dated: Vec<(Date, PathBuf)> = entries
        .filter_map(|e| {
            let name = e.ok()?.file_name().into_string().ok()?;
            Some((dated(&name)?, dir.join(name)))
        })
        .collect();
    dated.sort();
    let (old, kept): (Vec<_>, Vec<_>) = dated.into_iter().partition(|(date, _)| *date < cutoff);
    let mut removed = Vec::new();
    for (date, path) in old {
        if !dry_run {
            fs::remove_file(&path).map_err(|e| {
                Error::memory(
                    &format!("failed to prune {}", day(date)),
                    "remove",
                    &path,
                    &e,
                )
            })?;
        }
        removed.push(path);
    }
    Ok(Pruned {
        removed,
        kept: kept.len(),
    })
}

/// The date a daily log's name gives: `2026-11-22.md`. Other files in the
/// directory are not logs and are left alone.
fn dated(name: &str) -> Option<Date> {
    let stem = name.strip_suffix(".md")?;
    let mut parts = stem.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
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
        ] {
            assert!(dated(other).is_none(), "{other}");
        }
    }
}
