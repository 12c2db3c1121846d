//! BERT's tokenizer as Hugging Face's `tokenizers` runs it from a
//! `tokenizer.json`: the BertNormalizer (clean text, space around CJK
//! characters, strip accents, lowercase), the BertPreTokenizer (split on
//! whitespace, each punctuation character a word of its own), WordPiece
//! (greedy longest match, `##` continuations, `[UNK]` for a word it cannot
//! spell or longer than its limit), then `[CLS] ... [SEP]`.

use std::collections::HashMap;

use serde::Deserialize;
use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// The tokenizer of a model folder.
pub struct Tokenizer {
    vocab: HashMap<String, u32>,
    unk: u32,
    cls: u32,
    sep: u32,
    prefix: String,
    max_word_chars: usize,
    clean_text: bool,
    chinese_chars: bool,
    strip_accents: bool,
    lowercase: bool,
}

#[derive(Deserialize)]
struct File {
    normalizer: Option<Normalizer>,
    pre_tokenizer: Option<Typed>,
    model: WordPiece,
}

#[derive(Deserialize)]
struct Typed {
    #[serde(rename = "type")]
    kind: String,
}

#[derive(Deserialize)]
struct Normalizer {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default = "yes")]
    clean_text: bool,
    #[serde(default = "yes")]
    handle_chinese_chars: bool,
    strip_accents: Option<bool>,
    #[serde(default = "yes")]
    lowercase: bool,
}

fn yes() -> bool {
    true
}

#[derive(Deserialize)]
struct WordPiece {
    #[serde(rename = "type")]
    kind: Option<String>,
    vocab: HashMap<String, u32>,
    unk_token: String,
    #[serde(default = "hashes")]
    continuing_subword_prefix: String,
    #[serde(default = "hundred")]
    max_input_chars_per_word: usize,
}

fn hashes() -> String {
    "##".into()
}

fn hundred() -> usize {
    100
}

impl Tokenizer {
    /// From a `tokenizer.json`'s text; `vocab_size` is the model's, which
    /// every id must be under. The error says what is wrong.
    pub fn from_json(text: &[u8], vocab_size: usize) -> Result<Tokenizer, String> {
        let file: File =
            serde_json::from_slice(text).map_err(|e| format!("not a tokenizer.json ({e})"))?;
        if file.model.kind.as_deref().is_some_and(|k| k != "WordPiece") {
            return Err("its model is not WordPiece (a BERT tokenizer is)".into());
        }
        if let Some(pre) = &file.pre_tokenizer
            && pre.kind != "BertPreTokenizer"
        {
            return Err(format!(
                "its pre_tokenizer is {}, not BertPreTokenizer",
                pre.kind
            ));
        }
        let (clean_text, chinese_chars, strip_accents, lowercase) = match &file.normalizer {
            Some(n) if n.kind == "BertNormalizer" => (
                n.clean_text,
                n.handle_chinese_chars,
                n.strip_accents.unwrap_or(n.lowercase),
                n.lowercase,
            ),
            Some(n) => return Err(format!("its normalizer is {}, not BertNormalizer", n.kind)),
            None => (false, false, false, false),
        };
        let vocab = file.model.vocab;
        if let Some((token, &id)) = vocab.iter().find(|&(_, &id)| id as usize >= vocab_size) {
            return Err(format!(
                "token {token:?} has id {id}, past the model's {vocab_size} embeddings"
            ));
        }
        let id = |token: &str| {
            vocab
                .get(token)
                .copied()
                .ok_or_else(|| format!("its vocabulary has no {token}"))
        };
        Ok(Tokenizer {
            unk: id(&file.model.unk_token)?,
            cls: id("[CLS]")?,
            sep: id("[SEP]")?,
            prefix: file.model.continuing_subword_prefix,
            max_word_chars: file.model.max_input_chars_per_word,
            clean_text,
            chinese_chars,
            strip_accents,
            lowercase,
            vocab,
        })
    }

    /// `[CLS]`, the text's tokens, `[SEP]`: at most `max` ids (the text's
    /// tokens cut, the two markers kept).
    pub fn encode(&self, text: &str, max: usize) -> Vec<u32> {
        let keep = max.saturating_sub(2);
        let mut ids = vec![self.cls];
        let normal = self.normalize(text);
        'words: for word in pre_tokenize(&normal) {
            for id in self.word_piece(word) {
                if ids.len() > keep {
                    break 'words;
                }
                ids.push(id);
            }
        }
        ids.push(self.sep);
        ids
    }

    fn normalize(&self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if self.clean_text {
                if c == '\0' || c == '\u{fffd}' || is_control(c) {
                    continue;
                }
                if is_whitespace(c) {
                    out.push(' ');
                    continue;
                }
            }
            if self.chinese_chars && is_chinese(c) {
                out.push(' ');
                out.push(c);
                out.push(' ');
            } else {
                out.push(c);
            }
        }
        if self.strip_accents {
            out = out
                .nfd()
                .filter(|&c| get_general_category(c) != GeneralCategory::NonspacingMark)
                .collect();
        }
        if self.lowercase {
            out = out.chars().flat_map(char::to_lowercase).collect();
        }
        out
    }

    fn word_piece(&self, word: &str) -> Vec<u32> {
        if word.chars().count() > self.max_word_chars {
            return vec![self.unk];
        }
        let mut ids = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str(&self.prefix);
                }
                piece.push_str(&word[start..end]);
                if let Some(&id) = self.vocab.get(&piece) {
                    found = Some(id);
                    break;
                }
                // One char shorter.
                end = word[..end]
                    .char_indices()
                    .next_back()
                    .map_or(start, |(i, _)| i);
            }
            match found {
                Some(id) => ids.push(id),
                None => return vec![self.unk],
            }
            start = end;
        }
        ids
    }
}

/// Words: runs of non-space, each punctuation character apart.
fn pre_tokenize(text: &str) -> Vec<&str> {
    let mut words = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
        } else if is_punctuation(c) {
            if let Some(s) = start.take() {
                words.push(&text[s..i]);
            }
            words.push(&text[i..i + c.len_utf8()]);
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        words.push(&text[s..]);
    }
    words
}

fn is_whitespace(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r') || c.is_whitespace()
}

/// Category C* (control, format, unassigned, private use, surrogate), but
/// not the three whitespace controls.
fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        Control | Format | Unassigned | PrivateUse | Surrogate
    )
}

/// BERT's `_is_punctuation`: every ASCII non-letter non-digit symbol, and
/// category P*.
fn is_punctuation(c: char) -> bool {
    if c.is_ascii_punctuation() {
        return true;
    }
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        ConnectorPunctuation
            | DashPunctuation
            | OpenPunctuation
            | ClosePunctuation
            | InitialPunctuation
            | FinalPunctuation
            | OtherPunctuation
    )
}

/// The CJK Unified Ideographs blocks BERT puts spaces around.
fn is_chinese(c: char) -> bool {
    matches!(c as u32,
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B920..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokenizer(words: &[&str]) -> Tokenizer {
        let mut vocab: HashMap<String, u32> = HashMap::new();
        for (i, w) in ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
            .iter()
            .chain(words)
            .enumerate()
        {
            vocab.insert((*w).into(), i as u32);
        }
        let json = serde_json::json!({
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                "continuing_subword_prefix": "##", "max_input_chars_per_word": 10,
                "vocab": vocab},
        });
        Tokenizer::from_json(json.to_string().as_bytes(), 100).unwrap()
    }

    #[test]
    fn words_pieces_punctuation_accents_and_cjk() {
        let t = tokenizer(&[
            "hike", "##s", "on", "sunday", ",", "cafe", "中", "!", "##day",
        ]);
        // [CLS] hike ##s on sunday , cafe 中 ! [SEP]
        assert_eq!(
            t.encode("Hikes on SUNDAY,café中!", 64),
            [2, 4, 5, 6, 7, 8, 9, 10, 11, 3]
        );
        // A word it cannot spell, and one past the limit, are [UNK].
        assert_eq!(t.encode("hikex onononononon", 64), [2, 1, 1, 3]);
        // Cut to the limit, markers kept.
        assert_eq!(t.encode("on on on on", 4), [2, 6, 6, 3]);
        // Control and format characters go; whitespace of every kind splits.
        assert_eq!(t.encode("o\u{200b}n\u{7}\ton", 64), [2, 6, 6, 3]);
        assert_eq!(t.encode("", 64), [2, 3]);
    }

    #[test]
    fn a_bad_tokenizer_is_an_error() {
        assert!(Tokenizer::from_json(b"{}", 10).is_err());
        assert!(Tokenizer::from_json(b"[1,2", 10).is_err());
        let json = serde_json::json!({"model": {"vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 99}, "unk_token": "[UNK]"}});
        let err = Tokenizer::from_json(json.to_string().as_bytes(), 10)
            .err()
            .unwrap();
        assert!(err.contains("past the model's 10 embeddings"), "{err}");
    }
}
