//! The words that say nothing of what a question is about: `what`,
//! `did`, `the`. People and models ask in sentences ("what car did Maya
//! buy?"), and each of these words is in most sections of a conversation,
//! so it ranked small talk full of them above the one entry that holds
//! the words of substance, and cost the scan of every section.
//!
//! The list is the usual English one (NLTK's), with the modal verbs it
//! lacks; `may` is left out, as it is also the month, and `won` (NLTK's
//! for "won't"), as it is the past of `win`. A query of these
//! words alone searches for them (see `query`), and in a phrase they
//! are kept: `"the who"` is what it says.

/// Sorted, one space apart; read once per query word.
const WORDS: &str = "\
    a about above after again against ain all am an and any are aren as at be \
    because been before being below between both but by can could couldn d did didn \
    do does doesn doing don down during each few for from further had hadn has hasn \
    have haven having he her here hers herself him himself his how i if in into is \
    isn it its itself just ll m ma me might mightn more most must mustn my myself \
    needn no nor not now o of off on once only or other our ours ourselves out over \
    own re s same shall shan she should shouldn so some such t than that the their \
    theirs them themselves then there these they this those through to too under \
    until up ve very was wasn we were weren what when where which while who whom \
    why will with would wouldn y you your yours yourself yourselves";

/// Whether `word` (folded) is one of them.
pub fn is_stop(word: &[u8]) -> bool {
    WORDS.split(' ').any(|w| w.as_bytes() == word)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_sorted_and_finds_its_words() {
        let words: Vec<&str> = WORDS.split(' ').collect();
        assert!(words.windows(2).all(|w| w[0] < w[1]), "{words:?}");
        for w in ["what", "did", "the", "a", "yourselves", "would"] {
            assert!(is_stop(w.as_bytes()), "{w}");
        }
        for w in ["may", "won", "car", "canary", "whatever", ""] {
            assert!(!is_stop(w.as_bytes()), "{w}");
        }
    }
}
