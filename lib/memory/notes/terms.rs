//! What a query word matches in the notes: a word of the same English
//! stem (`deploys`, `deployed` and `deploying` are all `deploy`: the
//! Snowball stemmer), or, written `deploy*`, any word that begins so.
//! Both compare words folded (see `fold`).
//!
//! Most words of the notes match nothing, so [`Matcher`] turns them down
//! by their first byte before anything else; a word is stemmed only when
//! it begins as a stem's words must, and once per distinct word.
//!
//! A word longer than [`LONGEST_STEMMED`] bytes is no English word (a
//! hash, base64, a run of one letter) and is matched as it is: the
//! stemmer's time grows with the square of a word's length, and one word
//! of a million letters in a note took it minutes.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use rust_stemmers::{Algorithm, Stemmer};

use super::irregular;

/// Words remembered with what they matched; past this many the rest are
/// stemmed each time, so memory stays small whatever the notes hold.
const CACHE: usize = 1 << 16;

/// The longest word stemmed, in bytes: well past the longest English
/// words (45 letters), short enough that stemming one takes no time.
pub const LONGEST_STEMMED: usize = 64;

/// `word` (folded) as the English stemmer has it; a word with letters
/// beyond ASCII, or longer than [`LONGEST_STEMMED`], is no English word
/// and stays as it is.
pub fn stem(word: &[u8]) -> Cow<'_, [u8]> {
    // `bought` is `buy`: a past that is no ending (see `irregular`).
    let word = irregular::base(word).unwrap_or(word);
    if word.len() > LONGEST_STEMMED {
        return Cow::Borrowed(word);
    }
    match std::str::from_utf8(word) {
        Ok(w) if w.is_ascii() => match Stemmer::create(Algorithm::English).stem(w) {
            Cow::Borrowed(s) => Cow::Borrowed(s.as_bytes()),
            Cow::Owned(s) => Cow::Owned(s.into_bytes()),
        },
        _ => Cow::Borrowed(word),
    }
}

/// What every word with `stem` begins with: one of these. The stemmer
/// mostly cuts endings off, but it may end a stem with a letter of its
/// own: `e` (`hoping` → `hope`), `i` (`happy` → `happi`), `y` (`skies` →
/// `sky`), `le` (`possibly` → `possible`), or `l` where `le` was cut again
/// (`sensibility` → `sensibl`); so those are left off. Three words it
/// takes whole from a list of its own: `dying`, `lying` and `tying` are
/// `die`, `lie` and `tie`, whose other words (`dies`, `died`) begin with
/// `di`. What is left is in every word of the stem, and can be looked for
/// in the raw text. (Checked against the stemmer's own vocabulary of
/// 29,000 words; see the tests.)
fn keys(stem: &[u8]) -> Vec<Vec<u8>> {
    if matches!(stem, b"die" | b"lie" | b"tie") {
        return vec![stem[..2].to_vec(), vec![stem[0], b'y']];
    }
    let cut = if stem.ends_with(b"ble") {
        2
    } else if stem.ends_with(b"bl") || matches!(stem.last(), Some(b'e' | b'i' | b'y')) {
        1
    } else {
        0
    };
    vec![stem[..stem.len() - cut].to_vec()]
}

/// One query word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Atom {
    /// What every matching word (folded) begins with: one of these.
    keys: Vec<Vec<u8>>,
    /// The stem a word must have, or `None` for a prefix.
    stem: Option<Vec<u8>>,
    /// Whether the stem is its own stem, so the word that is the stem
    /// matches without asking the stemmer.
    fixed: bool,
}

impl Atom {
    /// A word (folded), matching every word of its stem.
    pub fn word(word: &[u8]) -> Atom {
        let stemmed = stem(word).into_owned();
        let mut keys = match word.is_ascii() {
            true => keys(&stemmed),
            false => vec![stemmed.clone()],
        };
        // `buy` finds `bought`, which does not begin as `buy`'s words do.
        for past in irregular::pasts(|base| *stem(base) == stemmed[..]) {
            if !keys.iter().any(|k| past.starts_with(k)) {
                keys.push(past.to_vec());
            }
        }
        Atom {
            keys,
            fixed: stem(&stemmed) == stemmed,
            stem: Some(stemmed),
        }
    }

    /// A prefix (folded), matching every word that begins with it.
    pub fn prefix(prefix: &[u8]) -> Atom {
        Atom {
            keys: vec![prefix.to_vec()],
            stem: None,
            fixed: false,
        }
    }

    /// What every word it matches holds one of, folded: a quick look for
    /// them in the folded text of a file rules the file out.
    pub fn keys(&self) -> &[Vec<u8>] {
        &self.keys
    }
}

/// A hash for short words, much quicker than the standard SipHash
/// (this is rustc's FxHash): the words come from the user's own notes, so
/// no one floods the table on purpose, and a short query word may send a
/// good part of the notes' words here.
#[derive(Default)]
struct Quick(u64);

impl Hasher for Quick {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        for &b in chunks.remainder() {
            self.add(u64::from(b));
        }
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl Quick {
    fn add(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

/// Whether `word` is `folded` (both as long), any ASCII capital in `word`
/// taken as small when `ANY_CASE`.
#[inline(always)]
fn same<const ANY_CASE: bool>(word: &[u8], folded: &[u8]) -> bool {
    match ANY_CASE {
        true => {
            word.len() == folded.len()
                && word
                    .iter()
                    .zip(folded)
                    .all(|(w, f)| w.to_ascii_lowercase() == *f)
        }
        false => word == folded,
    }
}

/// Which of up to 64 atoms each word matches, as a bit set.
pub struct Matcher {
    atoms: Vec<Atom>,
    /// By a word's first byte (folded): the atoms it may match.
    first: [u64; 256],
    /// Words seen that begin as a stem's words do: the stems they match.
    stems: HashMap<Box<[u8]>, u64, BuildHasherDefault<Quick>>,
    /// Room to fold a word into.
    lower: Vec<u8>,
}

impl Matcher {
    /// At most 64 atoms: the query checks.
    pub fn new(atoms: &[Atom]) -> Matcher {
        let mut first = [0u64; 256];
        for (i, atom) in atoms.iter().enumerate() {
            for key in &atom.keys {
                match key.first() {
                    Some(&b) => first[usize::from(b)] |= 1 << i,
                    // An empty key (the stem `e`): any word may match.
                    None => first.iter_mut().for_each(|f| *f |= 1 << i),
                }
            }
        }
        Matcher {
            atoms: atoms.to_vec(),
            first,
            stems: HashMap::default(),
            lower: Vec::new(),
        }
    }

    /// The atoms an ASCII word (any case, not empty) matches. Most words
    /// are turned down here, by their first byte, inlined in the caller's
    /// loop.
    #[inline(always)]
    pub fn ascii(&mut self, word: &[u8]) -> u64 {
        let may = self.first[usize::from(word[0].to_ascii_lowercase())];
        match may {
            0 => 0,
            _ => self.ascii_may(word, may),
        }
    }

    fn ascii_may(&mut self, word: &[u8], may: u64) -> u64 {
        let (found, stems) = self.begins::<true>(word, may);
        if stems == 0 {
            return found;
        }
        let mut lower = std::mem::take(&mut self.lower);
        lower.clear();
        lower.extend(word.iter().map(u8::to_ascii_lowercase));
        let found = found | self.stems_of(&lower) & stems;
        self.lower = lower;
        found
    }

    /// The atoms a folded word (not empty) matches.
    pub fn folded(&mut self, word: &[u8]) -> u64 {
        let may = self.first[usize::from(word[0])];
        if may == 0 {
            return 0;
        }
        let (found, stems) = self.begins::<false>(word, may);
        match stems {
            0 => found,
            _ => found | self.stems_of(word) & stems,
        }
    }

    /// Of the atoms `may`, those `word` matches for sure, and the stems
    /// it begins as but must be stemmed to tell; `ANY_CASE` when `word`
    /// may have ASCII capitals. A word that is its atom's stem, one
    /// the stemmer leaves as it is, matches without the stemmer: most
    /// often the word as the query wrote it.
    #[inline]
    fn begins<const ANY_CASE: bool>(&self, word: &[u8], may: u64) -> (u64, u64) {
        let same = same::<ANY_CASE>;
        let (mut found, mut stems) = (0, 0);
        let mut left = may;
        while left != 0 {
            let i = left.trailing_zeros() as usize;
            let bit = 1u64 << i;
            left &= left - 1;
            let atom = &self.atoms[i];
            let begins = |key: &Vec<u8>| word.len() >= key.len() && same(&word[..key.len()], key);
            if !atom.keys.iter().any(begins) {
                continue;
            }
            match &atom.stem {
                None => found |= bit,
                Some(stem) if atom.fixed && word.len() == stem.len() && same(word, stem) => {
                    found |= bit
                }
                Some(_) => stems |= bit,
            }
        }
        (found, stems)
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

    #[test]
    fn a_word_past_the_longest_stemmed_is_matched_as_it_is() {
        let at_limit = format!("{}walking", "x".repeat(LONGEST_STEMMED - 7));
        assert_eq!(stemmed(&at_limit), at_limit[..LONGEST_STEMMED - 3]);
        let past = format!("{}walking", "x".repeat(LONGEST_STEMMED - 6));
        assert_eq!(stemmed(&past), past);
        // Each end: a query of the long word finds it, and only it.
        let long = format!("deploy{}", "y".repeat(1 << 20));
        let atoms = [Atom::word(long.as_bytes()), Atom::word(b"deploy")];
        let mut m = Matcher::new(&atoms);
        assert_eq!(m.ascii(long.as_bytes()), 0b01);
        assert_eq!(m.ascii(&long.as_bytes()[..long.len() - 1]), 0);
        assert_eq!(m.ascii(b"deploys"), 0b10);
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
                keys(&s).iter().any(|k| word.as_bytes().starts_with(k)),
                "{word} -> {}",
                String::from_utf8_lossy(&s)
            );
        }
        assert_eq!(keys(b"die"), [b"di", b"dy"]);
        assert_eq!(keys(b"possibl"), [b"possib"]);
        assert_eq!(keys(b"deploy"), [b"deplo"]);
        assert_eq!(keys(b"rollback"), [b"rollback"]);
    }

    #[test]
    fn a_verb_finds_its_irregular_past_and_the_past_its_verb() {
        let atoms = [
            Atom::word(b"buy"),
            Atom::word(b"went"),
            Atom::word(b"taking"),
        ];
        let mut m = Matcher::new(&atoms);
        assert_eq!(m.ascii(b"Bought"), 0b001);
        assert_eq!(m.ascii(b"buys"), 0b001);
        assert_eq!(m.ascii(b"go"), 0b010);
        assert_eq!(m.ascii(b"going"), 0b010);
        assert_eq!(m.ascii(b"gone"), 0b010);
        assert_eq!(m.ascii(b"took"), 0b100);
        assert_eq!(m.ascii(b"taken"), 0b100);
        assert_eq!(m.ascii(b"bough"), 0);
        assert_eq!(m.ascii(b"tookie"), 0);
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
