//! Folding text for search, so that `Zürich`, `ZURICH` and `zurich` are
//! one word, and splitting it into words.
//!
//! What is folded: every letter to lower case; the Latin letters with
//! diacritics of Unicode's Latin-1 Supplement and Latin Extended-A blocks
//! (the Western, Central and Northern European, Turkish and Baltic
//! alphabets) and Romanian's `ș` and `ț` to their base letters, with
//! `ß` → `ss`, `æ` → `ae`, `œ` → `oe`, `þ` → `th`, `ĳ` → `ij`; and
//! combining accents (typed apart from their letter) dropped, so `u` and
//! U+0308 is `u` as `ü` is. Other letters (Greek, Cyrillic, Vietnamese's
//! stacked accents, CJK, ...) are lower-cased only.
//!
//! A word is a run of letters and digits; combining accents inside it do
//! not split it, everything else does (an apostrophe or a dash too, so
//! `blue-green` is two words). Bytes that are not UTF-8 split words.

use std::ops::Range;

/// U+00C0 to U+00FF folded; `""` for the two signs among them (× and ÷).
const LATIN_1: [&str; 64] = [
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", //
    "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "ss", //
    "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i", "i", //
    "d", "n", "o", "o", "o", "o", "o", "", "o", "u", "u", "u", "u", "y", "th", "y",
];

/// U+0100 to U+017F folded: capital and small letters in turn, but for
/// `ĸ` (U+0138) and `ŉ` (U+0149), which have no capital.
const EXTENDED_A: [&str; 128] = [
    "a", "a", "a", "a", "a", "a", "c", "c", "c", "c", "c", "c", "c", "c", "d", "d", //
    "d", "d", "e", "e", "e", "e", "e", "e", "e", "e", "e", "e", "g", "g", "g", "g", //
    "g", "g", "g", "g", "h", "h", "h", "h", "i", "i", "i", "i", "i", "i", "i", "i", //
    "i", "i", "ij", "ij", "j", "j", "k", "k", "k", "l", "l", "l", "l", "l", "l", "l", //
    "l", "l", "l", "n", "n", "n", "n", "n", "n", "n", "n", "n", "o", "o", "o", "o", //
    "o", "o", "oe", "oe", "r", "r", "r", "r", "r", "r", "s", "s", "s", "s", "s", "s", //
    "s", "s", "t", "t", "t", "t", "t", "t", "u", "u", "u", "u", "u", "u", "u", "u", //
    "u", "u", "u", "u", "w", "w", "y", "y", "y", "z", "z", "z", "z", "z", "z", "s",
];

/// Appends `c` folded to `out` and says whether it is part of a word: a
/// letter or digit (appended), or a combining accent (part of the word
/// before it, and dropped). Nothing is appended for anything else.
pub fn fold_char(c: char, out: &mut Vec<u8>) -> bool {
    if c.is_ascii() {
        let alphanumeric = c.is_ascii_alphanumeric();
        if alphanumeric {
            out.push((c as u8).to_ascii_lowercase());
        }
        return alphanumeric;
    }
    let table = match c {
        '\u{C0}'..='\u{FF}' => Some(LATIN_1[c as usize - 0xC0]),
        '\u{100}'..='\u{17F}' => Some(EXTENDED_A[c as usize - 0x100]),
        'Ș' | 'ș' => Some("s"),
        'Ț' | 'ț' => Some("t"),
        _ => None,
    };
    if let Some(folded) = table {
        out.extend_from_slice(folded.as_bytes());
        return !folded.is_empty();
    }
    if combining(c) {
        return true;
    }
    if !c.is_alphanumeric() {
        return false;
    }
    // Only letters and digits of the lower case: `İ` outside the table
    // would add a combining dot, and so split the word in two.
    let mut buf = [0; 4];
    for l in c.to_lowercase().filter(|l| l.is_alphanumeric()) {
        out.extend_from_slice(l.encode_utf8(&mut buf).as_bytes());
    }
    true
}

/// Whether `c` is in one of Unicode's blocks of combining diacritical
/// marks: accents that belong to the letter before them.
pub fn combining(c: char) -> bool {
    matches!(
        c,
        '\u{0300}'..='\u{036F}'
            | '\u{1AB0}'..='\u{1AFF}'
            | '\u{1DC0}'..='\u{1DFF}'
            | '\u{20D0}'..='\u{20FF}'
            | '\u{FE20}'..='\u{FE2F}'
    )
}

/// Calls `each` with every word of `text`, folded, and where it is in
/// `text`; `word` is room to fold into, kept between calls.
pub fn words(text: &[u8], word: &mut Vec<u8>, mut each: impl FnMut(&[u8], Range<usize>)) {
    let mut start = None;
    let mut at = 0;
    word.clear();
    for chunk in text.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            if fold_char(c, word) {
                start.get_or_insert(at + i);
                continue;
            }
            if let Some(s) = start.take() {
                if !word.is_empty() {
                    each(word, s..at + i);
                }
                word.clear();
            }
        }
        at += chunk.valid().len();
        // Bytes that are not UTF-8 end a word as a space would.
        if !chunk.invalid().is_empty() {
            if let Some(s) = start.take() {
                if !word.is_empty() {
                    each(word, s..at);
                }
                word.clear();
            }
            at += chunk.invalid().len();
        }
    }
    if let Some(s) = start
        && !word.is_empty()
    {
        each(word, s..at);
    }
}

/// `text` folded into `out`, for a quick look for words: each word of
/// `text` folded is in `out` (anything between words may differ).
pub fn fold_text(text: &[u8], out: &mut Vec<u8>) {
    out.clear();
    // Most notes are ASCII: then a byte at a time, which the compiler
    // makes fast.
    if text.is_ascii() {
        out.extend(text.iter().map(u8::to_ascii_lowercase));
        return;
    }
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            if !fold_char(c, out) {
                out.push(b' ');
            }
        }
        if !chunk.invalid().is_empty() {
            out.push(b' ');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(text: &str) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        words(text.as_bytes(), &mut Vec::new(), |w, r| {
            out.push((String::from_utf8(w.to_vec()).unwrap(), &text[r]));
        });
        out
    }

    #[test]
    fn latin_letters_lose_their_accents_and_case() {
        let folded = |s: &str| {
            let mut out = Vec::new();
            fold_text(s.as_bytes(), &mut out);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(folded("ÀÉÎÕÜÝàéîõüýÿ"), "aeiouyaeiouyy");
        assert_eq!(
            folded("Straße Æsir Œuvre Þing Ĳssel"),
            "strasse aesir oeuvre thing ijssel"
        );
        assert_eq!(
            folded("Łódź İstanbul ığdır Şişli țară"),
            "lodz istanbul igdir sisli tara"
        );
        assert_eq!(folded("ČĎĚŇŘŠŤŮŽ čďěňřšťůž ſ"), "cdenrstuz cdenrstuz s");
        // Other scripts are lower-cased only.
        assert_eq!(folded("МИР Ελλάδα"), "мир ελλάδα");
        // Signs in the table are not letters: they split words.
        assert_eq!(all("2×3"), [("2".into(), "2"), ("3".into(), "3")]);
    }

    #[test]
    fn words_split_at_what_is_not_a_letter_or_digit() {
        assert_eq!(
            all("Blue-green, don’t—Zu\u{308}rich!"),
            [
                ("blue".into(), "Blue"),
                ("green".into(), "green"),
                ("don".into(), "don"),
                ("t".into(), "t"),
                ("zurich".into(), "Zu\u{308}rich"),
            ]
        );
        // Bytes that are not UTF-8 split too; a lone accent is no word.
        let mut out = Vec::new();
        words(b"ab\xffcd \xcc\x88 e", &mut Vec::new(), |w, r| {
            out.push((w.to_vec(), r))
        });
        assert_eq!(
            out,
            [
                (b"ab".to_vec(), 0..2),
                (b"cd".to_vec(), 3..5),
                (b"e".to_vec(), 9..10)
            ]
        );
    }

    #[test]
    fn each_word_folded_is_in_the_folded_text() {
        let text = "Ünïcode Café—naïve ÆON x\u{301}y Ωmega";
        let mut folded = Vec::new();
        fold_text(text.as_bytes(), &mut folded);
        for (word, _) in all(text) {
            assert!(
                memchr::memmem::find(&folded, word.as_bytes()).is_some(),
                "{word}"
            );
        }
    }
}
