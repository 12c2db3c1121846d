//! Whether an answer is a refusal: `axe-run --json`'s `refused`, by the
//! Go `axe` 1.8's heuristic (its docs/src/cli/refusal-detection.md): the
//! answer says one of its phrases, case aside, or "as an AI" with words
//! that limit what it can do. A signal for scripts, not a verdict: a
//! refusal in other words is missed, and an answer that quotes a phrase
//! ("the docs say I cannot...") counts.

/// The phrases, lower case, apostrophes straight.
const PHRASES: [&str; 9] = [
    "i cannot",
    "i can't",
    "i'm unable to",
    "i am unable to",
    "i'm not able to",
    "i am not able to",
    "i must decline",
    "i don't have the ability",
    "i do not have the ability",
];

/// What "as an AI" must come with to count.
const LIMITING: [&str; 8] = [
    "cannot",
    "can't",
    "unable",
    "not able",
    "don't have",
    "do not have",
    "won't",
    "will not",
];

/// Whether `answer` reads as the model declining the task.
pub fn refused(answer: &str) -> bool {
    // Models write typographic apostrophes as often as straight ones.
    let text = answer.to_lowercase().replace(['\u{2019}', '\u{2018}'], "'");
    let said = |p: &&str| text.contains(*p);
    PHRASES.iter().any(said) || (text.contains("as an ai") && LIMITING.iter().any(said))
}

#[cfg(test)]
mod tests {
    use super::refused;

    #[test]
    fn the_go_phrases_and_no_others() {
        for yes in [
            "I cannot help with that.",
            "Sorry, I can\u{2019}t do this.",
            "I'm unable to access the file.",
            "I am not able to comply.",
            "I must decline.",
            "I DON'T HAVE THE ABILITY to browse.",
            "As an AI, I won't write that.",
            "As an AI language model I do not have feelings.",
        ] {
            assert!(refused(yes), "{yes}");
        }
        for no in [
            "Done: the tests pass.",
            "As an AI assistant, here is the summary.",
            "You cannot divide by zero.",
            "",
        ] {
            assert!(!refused(no), "{no}");
        }
    }
}
