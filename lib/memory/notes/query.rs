//! A search query, as written: words, in any order and case; `word*`
//! for every word that begins so; `"two words"` for those words one after
//! the other. A section matches when it holds any of them; the ranking
//! does the rest.
//!
//! Words are split and folded as the notes are (`fold`), so what a query
//! can hold is what a note can: `blue-green` is the two words `blue` and
//! `green`, and outside quotes each is looked for on its own.
//!
//! Words such as `what`, `did` and `the` (see `stop`) are left out of a
//! query that has others, as they say nothing of what it is about: a
//! question is searched as its words of substance would be. In a phrase
//! they are kept.
//!
//! A `"` left open is an ordinary character, as any other sign: people
//! and models type questions such as `when did we deploy "billing?`, and
//! refusing them would find nothing where the words would find the note.

use super::fold;
use super::stop::is_stop;
use super::terms::Atom;
use axe_base::error::{Error, Result};

/// Atoms and phrase words a query may have: a word's matches are a bit
/// of a `u64` (`terms::Matcher`), so is a phrase's progress.
pub const MAX_WORDS: usize = 64;

/// A query ready to match.
#[derive(Debug)]
pub struct Query {
    /// Every distinct word or prefix.
    pub atoms: Vec<Atom>,
    /// What is scored: a word (one atom) or a phrase (its atoms in
    /// order), each once.
    pub clauses: Vec<Vec<usize>>,
}

/// `text` as a query; refused when it has no words or more than
/// [`MAX_WORDS`] words.
pub fn parse(text: &str) -> Result<Query> {
    let mut q = Parser::default();
    for c in text.chars() {
        if fold::fold_char(c, &mut q.word) {
            continue;
        }
        // `*` right after a word makes it a prefix; anywhere else it is
        // a space, as every other sign is.
        q.end_word(c == '*')?;
        if c == '"' {
            if q.in_phrase {
                q.end_phrase();
            }
            q.in_phrase = !q.in_phrase;
        }
    }
    q.end_word(false)?;
    // The words after a `"` never closed are words of their own.
    for atom in std::mem::take(&mut q.phrase) {
        q.clause(vec![atom]);
    }
    if q.clauses.is_empty() {
        return Err(Error::Usage("the query has no words to search for".into()));
    }
    Ok(q.without_stop_words())
}

#[derive(Default)]
struct Parser {
    atoms: Vec<Atom>,
    /// Per atom: whether every word that made it is a stop word.
    stop: Vec<bool>,
    clauses: Vec<Vec<usize>>,
    /// The word being read, folded.
    word: Vec<u8>,
    in_phrase: bool,
    phrase: Vec<usize>,
}

impl Parser {
    fn end_word(&mut self, prefix: bool) -> Result<()> {
        if self.word.is_empty() {
            return Ok(());
        }
        let atom = match prefix {
            true => Atom::prefix(&self.word),
            false => Atom::word(&self.word),
        };
        let stop = !prefix && is_stop(&self.word);
        self.word.clear();
        let index = match self.atoms.iter().position(|a| *a == atom) {
            Some(i) => {
                self.stop[i] &= stop;
                i
            }
            None if self.atoms.len() == MAX_WORDS => return Err(too_many()),
            None => {
                self.atoms.push(atom);
                self.stop.push(stop);
                self.atoms.len() - 1
            }
        };
        if !self.in_phrase {
            self.clause(vec![index]);
        } else if self.phrase.len() == MAX_WORDS {
            return Err(too_many());
        } else {
            self.phrase.push(index);
        }
        Ok(())
    }

    /// A phrase of one word is that word; of none, nothing.
    fn end_phrase(&mut self) {
        let phrase = std::mem::take(&mut self.phrase);
        if !phrase.is_empty() {
            self.clause(phrase);
        }
    }

    fn clause(&mut self, clause: Vec<usize>) {
        if !self.clauses.contains(&clause) {
            self.clauses.push(clause);
        }
    }

    /// The query without its stop words standing alone, when it has
    /// other clauses; as it is when it has none (`"the who"` unquoted
    /// still searches for those words).
    fn without_stop_words(mut self) -> Query {
        let alone = |c: &Vec<usize>| c.len() == 1 && self.stop[c[0]];
        if self.clauses.iter().all(alone) {
            return Query {
                atoms: self.atoms,
                clauses: self.clauses,
            };
        }
        self.clauses.retain(|c| !alone(c));
        // The atoms still used, renumbered in their order.
        let mut index = vec![usize::MAX; self.atoms.len()];
        let mut atoms = Vec::new();
        for clause in &mut self.clauses {
            for a in clause.iter_mut() {
                if index[*a] == usize::MAX {
                    index[*a] = atoms.len();
                    atoms.push(self.atoms[*a].clone());
                }
                *a = index[*a];
            }
        }
        Query {
            atoms,
            clauses: self.clauses,
        }
    }
}

fn too_many() -> Error {
    Error::Usage(format!(
        "the query has more than {MAX_WORDS} words: search for fewer"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(q: &Query) -> Vec<String> {
        q.atoms
            .iter()
            .map(|a| String::from_utf8_lossy(&a.keys()[0]).into_owned())
            .collect()
    }

    #[test]
    fn words_prefixes_and_phrases() {
        let q = parse("Deploys deploy* \"Blue-green  ROLLBACK\" deployed \"x\" \"\" *").unwrap();
        assert_eq!(
            keys(&q),
            ["deplo", "deploy", "blu", "green", "rollback", "x"]
        );
        assert_eq!(q.atoms[0], Atom::word(b"deploy"));
        assert_eq!(q.atoms[1], Atom::prefix(b"deploy"));
        // `deployed` is `deploys` again; a phrase of one word is a word.
        assert_eq!(q.clauses, [vec![0], vec![1], vec![2, 3, 4], vec![5]]);
        let q = parse("Zürich straße").unwrap();
        assert_eq!(keys(&q), ["zurich", "strass"]);
    }

    #[test]
    fn a_quote_left_open_is_an_ordinary_character() {
        let q = parse("when did we deploy \"billing to prod?").unwrap();
        assert_eq!(keys(&q), ["deplo", "bill", "prod"]);
        assert_eq!(q.clauses, (0..3).map(|i| vec![i]).collect::<Vec<_>>());
        // A phrase closed before it stays one; a word of both is once.
        let q = parse("\"blue green\" red \"green").unwrap();
        assert_eq!(keys(&q), ["blu", "green", "red"]);
        assert_eq!(q.clauses, [vec![0, 1], vec![2], vec![1]]);
    }

    #[test]
    fn stop_words_are_left_out_unless_they_are_all_or_in_a_phrase() {
        let q = parse("What car did Maya buy?").unwrap();
        assert_eq!(keys(&q), ["car", "maya", "bu"]);
        assert_eq!(q.clauses, [vec![0], vec![1], vec![2]]);
        // Alone, they are the query.
        let q = parse("the who").unwrap();
        assert_eq!(keys(&q), ["th", "who"]);
        // In a phrase they count; a prefix is never one.
        let q = parse("\"the who\" live in* what").unwrap();
        assert_eq!(keys(&q), ["th", "who", "liv", "in"]);
        assert_eq!(q.clauses, [vec![0, 1], vec![2], vec![3]]);
        // `wills` is no stop word though `will` is, and both are one stem.
        let q = parse("will wills").unwrap();
        assert_eq!(q.clauses, [vec![0]]);
    }

    #[test]
    fn bad_queries_are_refused_with_a_reason() {
        let err = |q: &str| parse(q).unwrap_err().to_string();
        assert_eq!(err(" * -- \"\" "), "the query has no words to search for");
        assert_eq!(err(" \" "), "the query has no words to search for");
        let many: Vec<String> = (0..65).map(|i| format!("w{i}")).collect();
        assert!(err(&many.join(" ")).starts_with("the query has more than 64 words"));
        let long = format!("\"{}\"", ["very"; 65].join(" "));
        assert!(err(&long).starts_with("the query has more than 64 words"));
        assert!(parse(&["very"; 65].join(" ")).is_ok());
    }
}
