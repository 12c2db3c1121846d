//! English verbs whose past is no ending: `bought` is `buy`, `went` is
//! `go`. A question asks with the verb's base ("what did Maya buy?",
//! "when did they go?") and a note tells with its past ("I bought a
//! car", "we went camping"); the stemmer only cuts endings, so without
//! these the question's verb never met the note's.
//!
//! Common verbs only, and not those whose past is more often another
//! word (`bit`, as in "a bit"; `lay`). Some kept are other words too
//! (`left`, `saw`, `found`): in notes of what people did, the verb is
//! the more common.

/// `(past, base)`: a past form and the base it is a form of.
const FORMS: &[(&str, &str)] = &[
    ("ate", "eat"),
    ("eaten", "eat"),
    ("became", "become"),
    ("began", "begin"),
    ("begun", "begin"),
    ("bought", "buy"),
    ("broke", "break"),
    ("broken", "break"),
    ("brought", "bring"),
    ("built", "build"),
    ("came", "come"),
    ("caught", "catch"),
    ("chose", "choose"),
    ("chosen", "choose"),
    ("drank", "drink"),
    ("drew", "draw"),
    ("drawn", "draw"),
    ("driven", "drive"),
    ("drove", "drive"),
    ("fell", "fall"),
    ("fallen", "fall"),
    ("felt", "feel"),
    ("flew", "fly"),
    ("flown", "fly"),
    ("forgot", "forget"),
    ("forgotten", "forget"),
    ("fought", "fight"),
    ("found", "find"),
    ("gave", "give"),
    ("given", "give"),
    ("gone", "go"),
    ("got", "get"),
    ("gotten", "get"),
    ("grew", "grow"),
    ("grown", "grow"),
    ("heard", "hear"),
    ("held", "hold"),
    ("hung", "hang"),
    ("kept", "keep"),
    ("knew", "know"),
    ("known", "know"),
    ("led", "lead"),
    ("left", "leave"),
    ("lost", "lose"),
    ("made", "make"),
    ("met", "meet"),
    ("paid", "pay"),
    ("ran", "run"),
    ("rode", "ride"),
    ("ridden", "ride"),
    ("said", "say"),
    ("sang", "sing"),
    ("sung", "sing"),
    ("sat", "sit"),
    ("saw", "see"),
    ("seen", "see"),
    ("sent", "send"),
    ("slept", "sleep"),
    ("sold", "sell"),
    ("spent", "spend"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("stole", "steal"),
    ("stolen", "steal"),
    ("stood", "stand"),
    ("swam", "swim"),
    ("taught", "teach"),
    ("thought", "think"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("told", "tell"),
    ("took", "take"),
    ("taken", "take"),
    ("understood", "understand"),
    ("went", "go"),
    ("woke", "wake"),
    ("won", "win"),
    ("wore", "wear"),
    ("worn", "wear"),
    ("wrote", "write"),
    ("written", "write"),
];

/// The base of `word` (folded) when it is one of the past forms.
pub fn base(word: &[u8]) -> Option<&'static [u8]> {
    FORMS
        .iter()
        .find(|(past, _)| past.as_bytes() == word)
        .map(|(_, base)| base.as_bytes())
}

/// The past forms of the verbs whose base `is` (e.g. the base's stem)
/// says yes to.
pub fn pasts(mut is: impl FnMut(&[u8]) -> bool) -> impl Iterator<Item = &'static [u8]> {
    FORMS
        .iter()
        .filter(move |(_, base)| is(base.as_bytes()))
        .map(|(past, _)| past.as_bytes())
}
