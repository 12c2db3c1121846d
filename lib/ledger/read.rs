//! Reading the ledger back, for `axe-log`: every whole line of its files,
//! filtered, listed newest first or summed.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::io::{self, BufRead, BufReader, Read as _};
use std::path::Path;

use serde::Serialize;
use time::OffsetDateTime;

use super::settings::Price;
use super::{CostSource, Record, timestamp};
use axe_base::beneath::{self, Dir, Open};
use axe_memory::append::whole_len;

/// Which records to take. Times compare as the records write them
/// ([`timestamp`]: fixed width, UTC), so as text.
#[derive(Debug, Default)]
pub struct Filter {
    pub agent: Option<String>,
    /// `provider/model` or the model alone.
    pub model: Option<String>,
    pub since: Option<String>,
    /// Exclusive.
    pub until: Option<String>,
    pub conversation: Option<String>,
    /// Lowercase: only records whose kept prompt or answer holds it,
    /// case aside (`axe-log -q`).
    pub query: Option<String>,
}

impl Filter {
    fn takes(&self, r: &Record) -> bool {
        let model_is = |m: &str| m == r.model || m == format!("{}/{}", r.provider, r.model);
        self.agent
            .as_deref()
            .is_none_or(|a| r.agent.as_deref() == Some(a))
            && self.model.as_deref().is_none_or(model_is)
            && self.since.as_deref().is_none_or(|s| r.time.as_str() >= s)
            && self.until.as_deref().is_none_or(|u| r.time.as_str() < u)
            && self
                .conversation
                .as_deref()
                .is_none_or(|c| r.conversation.as_deref() == Some(c))
            && self.query.as_deref().is_none_or(|q| {
                [&r.prompt, &r.answer]
                    .into_iter()
                    .flatten()
                    .any(|text| text.to_lowercase().contains(q))
            })
    }

    /// Whether a month's file (`2026-11`) can hold a record taken.
    fn month(&self, month: &str) -> bool {
        self.since.as_deref().is_none_or(|s| month >= &s[..7])
            && self.until.as_deref().is_none_or(|u| month <= &u[..7])
    }
}

/// What was read.
#[derive(Debug, Default)]
pub struct Read {
    /// Oldest first.
    pub records: Vec<Record>,
    /// Lines that are no record (written by hand, by a newer axe).
    pub unreadable: usize,
}

/// The records of the ledger under `data` that `filter` takes; none when
/// there is no ledger.
pub fn read(data: &Path, filter: &Filter) -> io::Result<Read> {
    let mut read = Read::default();
    let Some(dir) = Dir::root(&data.join(super::DIR), false)? else {
        return Ok(read);
    };
    let mut files: Vec<(String, u32, std::ffi::OsString)> = Vec::new();
    for (name, kind) in dir.list()? {
        let Some(text) = name.to_str() else { continue };
        let Some(stem) = text.strip_suffix(".jsonl") else {
            continue;
        };
        let (month, part) = match stem.split_once('.') {
            Some((month, n)) => match n.parse::<u32>() {
                Ok(n) => (month, n),
                Err(_) => continue,
            },
            None => (stem, 1),
        };
        if kind.is_file() && month.len() == 7 && filter.month(month) {
            files.push((month.to_owned(), part, name.clone()));
        }
    }
    files.sort();
    for (_, _, name) in files {
        read_file(&dir, &name, filter, &mut read)?;
    }
    // Files hold their month's records in the order they were appended;
    // calls that overlapped are put in the order they began.
    read.records.sort_by(|a, b| a.time.cmp(&b.time));
    Ok(read)
}

/// The longest line read as a record: past it a line is passed over
/// unread, as one that is no record. A record is a few hundred bytes; with
/// `[log] text = true` it holds a prompt and an answer.
const MAX_LINE: u64 = 64 << 20;

/// The records in the ledger file `name` that `filter` takes, read a line
/// at a time: a month's file has no size bound (`[log] max_bytes` has
/// none), so it is never read into memory whole.
fn read_file(dir: &Dir, name: &OsStr, filter: &Filter, read: &mut Read) -> io::Result<()> {
    let Some(file) = dir.open(name, Open::Read)? else {
        return Ok(());
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(beneath::not_regular());
    }
    // Only whole lines, up to the length when opened: an append under way
    // is not read half.
    let whole = whole_len(dir, name, &file, meta.len());
    let mut lines = BufReader::with_capacity(1 << 16, file.take(whole));
    let mut line = Vec::new();
    loop {
        line.clear();
        (&mut lines).take(MAX_LINE).read_until(b'\n', &mut line)?;
        if line.last() != Some(&b'\n') {
            if line.len() as u64 == MAX_LINE {
                lines.skip_until(b'\n')?;
                read.unreadable += 1;
                continue;
            }
            // The end, or a last line an append has not finished.
            return Ok(());
        }
        let text = &line[..line.len() - 1];
        if text.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Record>(text) {
            Ok(r) if filter.takes(&r) => read.records.push(r),
            Ok(_) => {}
            Err(_) => read.unreadable += 1,
        }
    }
}

/// Each record's cost as it reads now, by `pricing` (config.toml's
/// `[pricing]` as it is today):
/// - what the provider reported wins: it is what was billed (routing,
///   discounts and free tiers included), where a price is an estimate
///   from the tokens;
/// - else `pricing`'s price for its provider and model, with its tokens;
/// - else a cost an older axe wrote without saying whence (most often
///   `[pricing]`'s of its day), when above zero: its zero may be a price
///   of 0 as well as nothing known, so it is no known $0;
/// - else unknown: `None`, never 0.
pub fn price(records: &mut [Record], pricing: &BTreeMap<String, Price>) {
    for r in records {
        if r.cost_source == Some(CostSource::Provider) && r.cost.is_some() {
            continue;
        }
        let usage = axe_llm::Usage {
            input_tokens: r.input_tokens,
            output_tokens: r.output_tokens,
            cache_read_tokens: r.cache_read_tokens,
            cache_write_tokens: r.cache_write_tokens,
            cost: None,
        };
        let priced = pricing
            .get(&format!("{}/{}", r.provider, r.model))
            .and_then(|p| p.cost(&usage));
        let older = r.cost.filter(|c| *c > 0.0 && c.is_finite());
        (r.cost, r.cost_source) = match (priced, older) {
            (Some(c), _) => (Some(c), Some(CostSource::Pricing)),
            (None, Some(c)) => (Some(c), Some(CostSource::Recorded)),
            (None, None) => (None, None),
        };
    }
}

/// What `--sum` groups by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Day,
    Agent,
    Model,
}

impl By {
    pub const NAMES: [&'static str; 3] = ["day", "agent", "model"];

    pub fn parse(name: &str) -> Option<By> {
        match name {
            "day" => Some(By::Day),
            "agent" => Some(By::Agent),
            "model" => Some(By::Model),
            _ => None,
        }
    }

    fn key(self, r: &Record) -> String {
        match self {
            By::Day => r.time.get(..10).unwrap_or("").to_owned(),
            // axe-llm's calls have no agent.
            By::Agent => r.agent.clone().unwrap_or_else(|| "-".to_owned()),
            By::Model => format!("{}/{}", r.provider, r.model),
        }
    }
}

/// One group's totals. A cost is summed over the calls that have one:
/// `cost_unknown` says how many had none, and with none known the cost
/// is unknown too (`None`), not 0.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sum {
    pub key: String,
    pub calls: u64,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cost: Option<f64>,
    pub cost_unknown: u64,
}

/// The records summed by `by`, in the order of their keys.
pub fn sum(records: &[Record], by: By) -> Vec<Sum> {
    let mut groups: BTreeMap<String, Sum> = BTreeMap::new();
    for r in records {
        let key = by.key(r);
        let s = groups.entry(key.clone()).or_insert_with(|| Sum {
            key,
            ..Sum::default()
        });
        s.calls += 1;
        s.input_tokens = s.input_tokens.saturating_add(r.input_tokens.unwrap_or(0));
        s.output_tokens = s.output_tokens.saturating_add(r.output_tokens.unwrap_or(0));
        s.cache_read_tokens = s
            .cache_read_tokens
            .saturating_add(r.cache_read_tokens.unwrap_or(0));
        match r.cost {
            Some(c) => s.cost = Some(s.cost.unwrap_or(0.0) + c),
            None => s.cost_unknown += 1,
        }
    }
    groups.into_values().collect()
}

/// A `--since`/`--until` value as the records' time: a date
/// (`2026-11-01`, its midnight UTC), a time in RFC 3339, or an age before
/// `now` (`7d`, `12h`, `2w`, `30m`). `None`: none of those.
pub fn when(text: &str, now: OffsetDateTime) -> Option<String> {
    let text = text.trim();
    if let Some(unit) = text.chars().last().filter(|c| "mhdw".contains(*c))
        && let Ok(n) = text[..text.len() - 1].parse::<u32>()
    {
        let minutes = match unit {
            'm' => 1,
            'h' => 60,
            'd' => 24 * 60,
            _ => 7 * 24 * 60,
        };
        let age = time::Duration::minutes(i64::from(n) * minutes);
        return Some(timestamp(now.checked_sub(age)?));
    }
    let rfc = time::format_description::well_known::Rfc3339;
    if let Ok(at) = OffsetDateTime::parse(text, &rfc) {
        return Some(timestamp(at));
    }
    let mut parts = text.splitn(3, '-').map(str::parse::<u16>);
    let (Some(Ok(year)), Some(Ok(month)), Some(Ok(day))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let month = time::Month::try_from(u8::try_from(month).ok()?).ok()?;
    let date =
        time::Date::from_calendar_date(i32::from(year), month, u8::try_from(day).ok()?).ok()?;
    Some(timestamp(date.midnight().assume_utc()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn when_reads_dates_times_and_ages() {
        let now = OffsetDateTime::parse(
            "2026-11-24T12:00:00Z",
            &time::format_description::well_known::Rfc3339,
        )
        .unwrap();
        assert_eq!(when("7d", now).unwrap(), "2026-11-17T12:00:00.000Z");
        assert_eq!(when("2w", now).unwrap(), "2026-11-10T12:00:00.000Z");
        assert_eq!(when("90m", now).unwrap(), "2026-11-24T10:30:00.000Z");
        assert_eq!(when("2026-11-01", now).unwrap(), "2026-11-01T00:00:00.000Z");
        assert_eq!(
            when("2026-11-01T10:00:00+01:00", now).unwrap(),
            "2026-11-01T09:00:00.000Z"
        );
        for bad in ["", "d", "-1d", "7y", "2026-13-01", "yesterday"] {
            assert_eq!(when(bad, now), None, "{bad}");
        }
    }
}
