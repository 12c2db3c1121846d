//! One pass over a notes file for a query: its sections, and in each how
//! often every clause of the query (a word, or a phrase) appears in its
//! heading and in its body. A section is a heading line and what follows
//! it up to the next heading (so each `## HH:MM` entry of a daily log is
//! one), or the text before a file's first heading. A world topic's name
//! is a third field, counted once for the file ([`Scanner::topic`]).
//!
//! A word of the body that begins a line and ends at a `:` is a label
//! (`Maya: I bought a car`, `Decision: ...`): it says who spoke, or what
//! the line is, so it is counted as a word of the heading.
//!
//! A phrase is its words one after the other in one field, whatever is
//! between them that is not a word (`"blue green"` is in `blue-green`),
//! across lines too; a heading and the body below it do not join.

use std::time::Instant;

use super::fold;
use super::query::Query;
use super::terms::Matcher;

/// How many bytes [`Scanner::scan`] reads between looks at the clock: a
/// fraction of a millisecond of scanning.
const CHECK_EVERY: usize = 1 << 16;

/// The fields of a section: where its counts are in [`Section::counts`].
pub const TOPIC: usize = 0;
pub const HEADING: usize = 1;
pub const BODY: usize = 2;
pub const FIELDS: usize = 3;

/// One section, counted.
#[derive(Debug, Default, PartialEq)]
pub struct Section {
    /// Its length in bytes: BM25's document length.
    pub len: usize,
    /// The 1-based number of its first line.
    pub start: usize,
    /// Field by field, how often each clause appears: `counts[field *
    /// clauses + clause]`. The topic's are left for the caller.
    pub counts: Vec<u32>,
    /// The 1-based number of its first line with a match in the body, or
    /// else the heading's: the line worth showing (the heading is named
    /// anyway).
    pub first_hit: Option<usize>,
}

/// Bytes that are part of a word: ASCII letters and digits, and every byte
/// above ASCII (sorted out by `fold::words`).
pub const WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b >= 0x80;
        b += 1;
    }
    table
};

/// Counts a query's clauses in the files given to it, one at a time.
pub struct Scanner<'q> {
    query: &'q Query,
    matcher: Matcher,
    /// The section being read, and its first lines with a match in its
    /// heading and in its body.
    section: Section,
    first_heading: Option<usize>,
    first_body: Option<usize>,
    /// Per clause: which of a phrase's words the last words matched, as
    /// shift-and does (bit `j`: the phrase's first `j + 1` words end at
    /// the last word). Words (one atom) keep 0.
    progress: Vec<u64>,
    /// Whether any of `progress` is not 0.
    in_phrase: bool,
    /// Words that matched anything, and the lines of the last 64: where a
    /// phrase found began.
    words: usize,
    lines: [usize; 64],
    /// Room to fold a word and a file into.
    word: Vec<u8>,
    folded: Vec<u8>,
}

impl<'q> Scanner<'q> {
    pub fn new(query: &'q Query) -> Scanner<'q> {
        Scanner {
            query,
            matcher: Matcher::new(&query.atoms),
            section: Section::default(),
            first_heading: None,
            first_body: None,
            progress: vec![0; query.clauses.len()],
            in_phrase: false,
            words: 0,
            lines: [0; 64],
            word: Vec::new(),
            folded: Vec::new(),
        }
    }

    /// How often each clause appears in a topic's name; `None` when none
    /// does.
    pub fn topic(&mut self, name: &str) -> Option<Vec<u32>> {
        self.start(1);
        let mut word = std::mem::take(&mut self.word);
        fold::words(name.as_bytes(), &mut word, |w, _| {
            let found = self.matcher.folded(w);
            self.counted(found, TOPIC, 1);
        });
        self.word = word;
        let n = self.query.clauses.len();
        let counts = self.section.counts[TOPIC * n..(TOPIC + 1) * n].to_vec();
        counts.iter().any(|&c| c > 0).then_some(counts)
    }

    /// Whether `text` may hold a clause: a key of each of its words is in
    /// the text folded (a yes may be part of a longer word, or of words
    /// apart). Much quicker than [`Scanner::scan`], and most files hold
    /// none of a query's words.
    pub fn may_match(&mut self, text: &[u8]) -> bool {
        fold::fold_text(text, &mut self.folded);
        let atoms = &self.query.atoms;
        let folded = &self.folded;
        self.query.clauses.iter().any(|clause| {
            clause.iter().all(|&a| {
                atoms[a]
                    .keys()
                    .iter()
                    .any(|k| memchr::memmem::find(folded, k).is_some())
            })
        })
    }

    /// Where the first word of `line` that matches a query word begins.
    pub fn first_match(&mut self, line: &str) -> Option<usize> {
        let mut at = None;
        let mut word = std::mem::take(&mut self.word);
        fold::words(line.as_bytes(), &mut word, |w, range| {
            if at.is_none() && self.matcher.folded(w) != 0 {
                at = Some(range.start);
            }
        });
        self.word = word;
        at
    }

    /// Hands each section of `text` to `done`, and says whether it got to
    /// the end: past `until`, it stops where it is (with the sections so
    /// far handed over). One pass over the bytes: this loop is most of a
    /// search's time, so it is written for speed.
    pub fn scan(
        &mut self,
        text: &[u8],
        until: Option<Instant>,
        mut done: impl FnMut(Section),
    ) -> bool {
        let (mut started, mut line, mut line_start, mut from) = (false, 1usize, true, 0);
        let mut field = BODY;
        self.start(1);
        let mut word = std::mem::take(&mut self.word);
        let mut i = 0;
        // The clock is read once per stretch of text, not per word.
        let mut check = CHECK_EVERY;
        while i < text.len() {
            if i >= check {
                check = i + CHECK_EVERY;
                if until.is_some_and(|until| Instant::now() >= until) {
                    self.word = word;
                    return false;
                }
            }
            let b = text[i];
            if line_start {
                if b == b'#' {
                    if started {
                        self.section.len = i - from;
                        from = i;
                        done(self.start(line));
                    }
                    field = HEADING;
                }
                started = true;
                line_start = false;
            }
            if b == b'\n' {
                if field == HEADING {
                    field = BODY;
                    self.break_phrases();
                }
                line += 1;
                line_start = true;
                i += 1;
            } else if WORD[usize::from(b)] {
                let start = i;
                let mut high = 0;
                while i < text.len() && WORD[usize::from(text[i])] {
                    high |= text[i];
                    i += 1;
                }
                let w = &text[start..i];
                // A label, `Maya:` or `Decision:` at a line's start, says
                // who spoke or what the line is: it counts as a heading.
                // Asked only of a word that matched.
                let label = || match field == BODY
                    && text.get(i) == Some(&b':')
                    && (start == 0 || text[start - 1] == b'\n')
                {
                    true => HEADING,
                    false => field,
                };
                if high < 0x80 {
                    let found = self.matcher.ascii(w);
                    let field = if found != 0 { label() } else { field };
                    self.counted(found, field, line);
                } else {
                    fold::words(w, &mut word, |w, _| {
                        let found = self.matcher.folded(w);
                        let field = if found != 0 { label() } else { field };
                        self.counted(found, field, line);
                    });
                }
            } else {
                i += 1;
            }
        }
        self.word = word;
        if started {
            self.section.len = text.len() - from;
            done(self.start(line));
        }
        true
    }

    /// Starts a section at line `start`, handing back the one before.
    fn start(&mut self, start: usize) -> Section {
        self.break_phrases();
        let fresh = Section {
            start,
            counts: vec![0; FIELDS * self.query.clauses.len()],
            ..Section::default()
        };
        let mut done = std::mem::replace(&mut self.section, fresh);
        let (body, heading) = (self.first_body.take(), self.first_heading.take());
        done.first_hit = body.or(heading);
        done
    }

    #[inline(always)]
    fn break_phrases(&mut self) {
        if self.in_phrase {
            self.progress.fill(0);
            self.in_phrase = false;
        }
    }

    /// Counts a word of `field` on `line` that matched the atoms `found`
    /// (most words match none: that is all this does for them).
    #[inline(always)]
    fn counted(&mut self, found: u64, field: usize, line: usize) {
        if found == 0 {
            self.break_phrases();
            return;
        }
        self.matched(found, field, line);
    }

    fn matched(&mut self, found: u64, field: usize, line: usize) {
        // Only words that match are numbered: any other ends every phrase,
        // so a phrase's words are numbered one after the other still.
        self.words = self.words.wrapping_add(1);
        self.lines[self.words % 64] = line;
        let n = self.query.clauses.len();
        let mut in_phrase = false;
        for (c, clause) in self.query.clauses.iter().enumerate() {
            let began = match clause[..] {
                [atom] => (found & 1 << atom != 0).then_some(line),
                _ => {
                    let mut next = 0u64;
                    for (j, &atom) in clause.iter().enumerate() {
                        if found & 1 << atom != 0 {
                            next |= 1 << j;
                        }
                    }
                    let progress = (self.progress[c] << 1 | 1) & next;
                    self.progress[c] = progress;
                    in_phrase |= progress != 0;
                    let len = clause.len();
                    (progress & 1 << (len - 1) != 0)
                        .then(|| self.lines[self.words.wrapping_sub(len - 1) % 64])
                }
            };
            if let Some(began) = began {
                self.section.counts[field * n + c] += 1;
                let first = match field {
                    BODY => &mut self.first_body,
                    _ => &mut self.first_heading,
                };
                let first = first.get_or_insert(began);
                *first = (*first).min(began);
            }
        }
        self.in_phrase = in_phrase;
    }
}

/// How many sections [`Scanner::scan`] would find in `text`.
pub fn count_sections(text: &[u8]) -> usize {
    if text.is_empty() {
        return 0;
    }
    1 + memchr::memmem::find_iter(&text[..text.len() - 1], b"\n#").count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::notes::query;

    fn sections(text: &str, q: &str) -> Vec<(usize, usize, Vec<u32>, Option<usize>)> {
        let q = query::parse(q).unwrap();
        let mut s = Scanner::new(&q);
        let mut out = Vec::new();
        assert!(s.scan(text.as_bytes(), None, |s| {
            out.push((s.len, s.start, s.counts, s.first_hit));
        }));
        out
    }

    #[test]
    fn a_label_at_a_lines_start_counts_as_the_heading() {
        let text = "## 10:00\n\nZoë: the car\nsaid zoë: no\nCar: blue car\n car: no\n";
        assert_eq!(
            sections(text, "zoe car"),
            [(text.len(), 1, vec![0, 0, 1, 1, 1, 3], Some(3))]
        );
    }

    #[test]
    fn sections_split_at_headings_and_count_by_field() {
        let text =
            "intro words\n## 10:00 Blue\n\nDeploys are Blue-green.\n## 11:00\n\nnothing here\n";
        assert_eq!(
            sections(text, "blue deployed"),
            [
                (12, 1, vec![0, 0, 0, 0, 0, 0], None),
                (39, 2, vec![0, 0, 1, 0, 1, 1], Some(4)),
                (23, 5, vec![0, 0, 0, 0, 0, 0], None),
            ]
        );
        // Only the heading: its line.
        assert_eq!(sections("# Blue\nnothing\n", "blue")[0].3, Some(1));
        assert_eq!(count_sections(text.as_bytes()), 3);
        assert_eq!(count_sections(b"## a\nb\n## c"), 2);
        assert_eq!(count_sections(b""), 0);
    }

    #[test]
    fn phrases_are_words_in_a_row_within_a_field() {
        let text = "# Blue\ngreen deploy\nblue-green\ndeploys. Blue, then green\n";
        // One in the body, across a line; the heading does not join.
        assert_eq!(
            sections(text, "\"blue green deploy\""),
            [(text.len(), 1, vec![0, 0, 1], Some(3))]
        );
        // Overlapping and repeated words: shift-and keeps every start.
        assert_eq!(
            sections("very very very good", "\"very very good\"")[0].2,
            [0, 0, 1]
        );
        assert_eq!(sections("a b a b a b", "\"a b a\"")[0].2, [0, 0, 2]);
        assert_eq!(sections("blue x green", "\"blue green\"")[0].3, None);
    }

    #[test]
    fn accents_case_and_other_scripts_match_folded() {
        let text = "Zürich Zurich ZU\u{308}RICH zurichs Straße STRASSEN мир Мира МИР";
        // `zurichs` is a plural of `zurich`, `strassen` no form of
        // `strasse` but a word that begins so.
        assert_eq!(sections(text, "ZÜRICH")[0].2, [0, 0, 4]);
        assert_eq!(sections(text, "strasse")[0].2, [0, 0, 1]);
        assert_eq!(sections(text, "straß*")[0].2, [0, 0, 2]);
        assert_eq!(sections(text, "Мир")[0].2, [0, 0, 2]);
        assert_eq!(sections(text, "мир*")[0].2, [0, 0, 3]);
    }

    #[test]
    fn the_quick_look_never_rules_out_a_match() {
        for (text, q) in [
            ("The Canaries sang", "canary"),
            ("She was dying", "die"),
            ("Zu\u{308}rich", "ZÜRICH"),
            ("ÆON", "aeon"),
            ("STRASSE", "straße"),
            ("green\nBLUE", "\"blue\" green*"),
        ] {
            let parsed = query::parse(q).unwrap();
            let mut s = Scanner::new(&parsed);
            assert!(s.may_match(text.as_bytes()), "{q} in {text}");
            let mut hit = false;
            s.scan(text.as_bytes(), None, |s| hit |= s.first_hit.is_some());
            assert!(hit, "{q} in {text}");
        }
        let parsed = query::parse("\"blue green\" red").unwrap();
        let mut s = Scanner::new(&parsed);
        assert!(!s.may_match(b"blue sky, RED"[..8].as_ref()));
        assert!(s.may_match(b"Green and blue"));
        assert!(s.may_match(b"RED"));
    }

    #[test]
    fn a_scan_past_its_deadline_stops_and_says_so() {
        let q = query::parse("blue").unwrap();
        let mut s = Scanner::new(&q);
        let text = "## a\nblue\n".repeat(CHECK_EVERY / 4);
        let mut sections = 0;
        let past = Some(Instant::now());
        assert!(!s.scan(text.as_bytes(), past, |_| sections += 1));
        assert!(sections > 0 && sections < CHECK_EVERY / 4, "{sections}");
        // A short text is read whole whatever the clock says, and the
        // scanner is as good as new for the next.
        sections = 0;
        assert!(s.scan(b"# blue\n", past, |_| sections += 1));
        assert_eq!(sections, 1);
        let later = Some(Instant::now() + std::time::Duration::from_secs(3600));
        assert!(s.scan(text.as_bytes(), later, |_| {}));
    }

    #[test]
    fn topic_names_count_as_their_own_field() {
        let q = query::parse("deploy process rollback").unwrap();
        let mut s = Scanner::new(&q);
        assert_eq!(s.topic("deploy-processes"), Some(vec![1, 1, 0]));
        assert_eq!(s.topic("people"), None);
        assert_eq!(s.first_match("We roll back: Rollbacks, deploys"), Some(14));
        assert_eq!(s.first_match("nothing"), None);
    }
}
