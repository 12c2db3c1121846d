//! Dates a question names: `in May`, `last March`, `May 2026`, `3 May`,
//! `on 2026-05-03`. Each day's log is named for its day, so an entry of
//! a log of that month (or day) is the more likely answer: `search`
//! ranks it higher. A month is read as one only where it reads as a
//! date (after `in`, `during`, `last`, before a year, beside a day):
//! `may` is a verb too, and `march` and `august` are words of their own.
//!
//! `last March` is any March: the logs are named for days, not for what
//! was "last" when an entry was written.

/// A day, a month or a month of a year named in a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct When {
    year: Option<u16>,
    month: u8,
    day: Option<u8>,
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// Words before a month that make it one.
const BEFORE: &[&str] = &[
    "in", "during", "last", "this", "next", "early", "late", "mid", "since", "until", "of",
    "before", "after", "by", "on", "from", "through",
];

impl When {
    /// Whether the log of the day `name` (`YYYY-MM-DD`, a daily log's
    /// file stem) falls in it.
    pub fn holds(&self, name: &str) -> bool {
        let Some((year, month, day)) = iso(name.as_bytes()) else {
            return false;
        };
        month == self.month
            && self.year.is_none_or(|y| y == year)
            && self.day.is_none_or(|d| d == day)
    }
}

/// The dates `query` names, in order, and the query without the words
/// that named them (blanked, so what is left keeps its quotes and `*`s):
/// a date is matched against the logs' days, and the words would find
/// every `# 2026-05-03` title and every "may" of the notes. When nothing
/// else is left, the query stays whole.
pub fn named(query: &str) -> (Vec<When>, String) {
    let lower = query.to_ascii_lowercase();
    let mut words: Vec<(usize, &str)> = Vec::new();
    let mut start = None;
    for (i, c) in lower.char_indices().chain([(lower.len(), ' ')]) {
        let part = c.is_ascii_alphanumeric() || c == '-';
        match (part, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                words.push((s, &lower[s..i]));
                start = None;
            }
            _ => {}
        }
    }
    let word = |i: usize| words.get(i).map(|w| w.1);
    let (mut found, mut used) = (Vec::new(), Vec::new());
    for (i, &(_, w)) in words.iter().enumerate() {
        if let Some((year, month, day)) = iso(w.as_bytes()) {
            found.push(When {
                year: Some(year),
                month,
                day: Some(day),
            });
            used.push(i);
            continue;
        }
        let Some(month) = month(w) else {
            continue;
        };
        let prev = i.checked_sub(1).and_then(word);
        let next = word(i + 1);
        let of_year = next.and_then(year);
        let after = next.and_then(day);
        let before = prev.and_then(day);
        let led = prev.is_some_and(|p| BEFORE.contains(&p));
        if of_year.is_none() && after.is_none() && before.is_none() && !led {
            continue;
        }
        let later_year = after.and(word(i + 2).and_then(year));
        used.push(i);
        if of_year.is_some() || after.is_some() {
            used.push(i + 1);
        }
        if later_year.is_some() {
            used.push(i + 2);
        }
        if before.is_some() && after.is_none() {
            used.push(i - 1);
        }
        found.push(When {
            year: of_year.or(later_year),
            month,
            day: after.or(before),
        });
    }
    let mut left = query.as_bytes().to_vec();
    for &i in &used {
        let (at, w) = words[i];
        left[at..at + w.len()].fill(b' ');
    }
    let left = String::from_utf8(left).unwrap_or_else(|_| query.to_owned());
    match left.chars().any(|c| c.is_alphanumeric()) {
        true => (found, left),
        false => (found, query.to_owned()),
    }
}

/// A month's number (1-12) for its name or its first three letters
/// (`sept` too).
fn month(word: &str) -> Option<u8> {
    let i = MONTHS.iter().position(|m| {
        *m == word
            || (word.len() == 3 && m.starts_with(word))
            || (word == "sept" && *m == "september")
    })?;
    Some(i as u8 + 1)
}

/// A year beside a month: four digits from 1900 to 2199.
fn year(word: &str) -> Option<u16> {
    let y: u16 = (word.len() == 4).then(|| word.parse().ok()).flatten()?;
    (1900..2200).contains(&y).then_some(y)
}

/// A day of the month beside it: `3`, `03`, `3rd`, `21st`.
fn day(word: &str) -> Option<u8> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if digits.is_empty() || digits.len() > 2 || !matches!(suffix, "" | "st" | "nd" | "rd" | "th") {
        return None;
    }
    let d: u8 = digits.parse().ok()?;
    (1..=31).contains(&d).then_some(d)
}

/// `YYYY-MM-DD`, as the daily logs are named.
fn iso(s: &[u8]) -> Option<(u16, u8, u8)> {
    let digits = |r: &[u8]| -> Option<u16> {
        r.iter().try_fold(0u16, |n, &b| {
            b.is_ascii_digit().then(|| n * 10 + u16::from(b - b'0'))
        })
    };
    if s.len() != 10 || s[4] != b'-' || s[7] != b'-' {
        return None;
    }
    let (y, m, d) = (digits(&s[..4])?, digits(&s[5..7])?, digits(&s[8..])?);
    ((1..=12).contains(&m) && (1..=31).contains(&d)).then_some((y, m as u8, d as u8))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn when(year: Option<u16>, month: u8, day: Option<u8>) -> When {
        When { year, month, day }
    }

    fn dates(query: &str) -> Vec<When> {
        named(query).0
    }

    #[test]
    fn the_words_of_a_date_are_taken_out_of_the_query() {
        let blank = |n| " ".repeat(n);
        let left = |q| named(q).1;
        assert_eq!(
            left("where did Tom go in May 2026?"),
            format!("where did Tom go in {}?", blank(8))
        );
        assert_eq!(
            left("\"canary\" 3rd May deploy*"),
            format!("\"canary\" {} deploy*", blank(7))
        );
        assert_eq!(left("on 2026-05-03"), format!("on {}", blank(10)));
        assert_eq!(left("Zürich in May"), format!("Zürich in {}", blank(3)));
        // Nothing left: the query as it was.
        assert_eq!(left("2026-05-03"), "2026-05-03");
    }

    #[test]
    fn months_read_as_dates_only_where_they_are_dates() {
        assert_eq!(dates("what did we ship in May?"), [when(None, 5, None)]);
        assert_eq!(dates("Where did Tom go last March"), [when(None, 3, None)]);
        assert_eq!(
            dates("the rollback of May 2026"),
            [when(Some(2026), 5, None)]
        );
        assert_eq!(dates("deploy on 3rd May"), [when(None, 5, Some(3))]);
        assert_eq!(
            dates("deploy on Sept 14, 2025"),
            [when(Some(2025), 9, Some(14))]
        );
        assert_eq!(
            dates("what broke on 2026-05-03?"),
            [when(Some(2026), 5, Some(3))]
        );
        assert_eq!(
            dates("in jan and in feb."),
            [when(None, 1, None), when(None, 2, None)]
        );
        // A verb, a word, a date that is none.
        assert!(dates("may I ask what march means").is_empty());
        assert!(dates("we may deploy; august company; 2026-13-01").is_empty());
    }

    #[test]
    fn a_date_holds_the_logs_of_its_days() {
        let may = when(None, 5, None);
        assert!(may.holds("2026-05-01") && may.holds("2025-05-31"));
        assert!(!may.holds("2026-06-01") && !may.holds("MEMORY") && !may.holds("2026-05"));
        let day = when(Some(2026), 5, Some(3));
        assert!(day.holds("2026-05-03") && !day.holds("2026-05-04") && !day.holds("2025-05-03"));
    }
}
