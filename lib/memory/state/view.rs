//! The state as the context builder reads it: only the fields the block
//! shows, their strings borrowed from the file's bytes where they hold no
//! escapes. A block is built on every run from a state that may hold
//! thousands of items; parsing it into the owned [`State`] (every string
//! copied, unknown fields kept for the next save) cost more than twice as
//! much, and a reader has nothing to save.
//!
//! [`State`]: super::data::State

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, Visitor};

use super::data::State;

/// A string of the state, borrowed when the file holds it unescaped.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Text<'a>(pub Cow<'a, str>);

impl std::ops::Deref for Text<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Text<'a>, D::Error> {
        struct V<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
            type Value = Text<'a>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Borrowed(s)))
            }
            fn visit_str<E>(self, s: &str) -> Result<Text<'a>, E> {
                Ok(Text(Cow::Owned(s.to_owned())))
            }
        }
        d.deserialize_str(V(std::marker::PhantomData))
    }
}

fn text(s: &str) -> Text<'_> {
    Text(Cow::Borrowed(s))
}

fn texts(list: &[String]) -> Vec<Text<'_>> {
    list.iter().map(|s| text(s)).collect()
}

/// What the block shows of a state. Unknown fields are skipped unread.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct View<'a> {
    pub iteration: u64,
    #[serde(borrow)]
    pub tasks: BTreeMap<Text<'a>, TaskView<'a>>,
    #[serde(borrow)]
    pub decisions: Vec<DecisionView<'a>>,
    #[serde(borrow)]
    pub errors: Vec<ErrorView<'a>>,
    #[serde(borrow)]
    pub key_facts: Vec<Text<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TaskView<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(borrow)]
    pub phase: Text<'a>,
    #[serde(borrow)]
    pub branch: Text<'a>,
    #[serde(borrow)]
    pub pr_number: Text<'a>,
    #[serde(borrow)]
    pub completed_steps: Vec<Text<'a>>,
    #[serde(borrow)]
    pub pending_steps: Vec<Text<'a>>,
    #[serde(borrow)]
    pub blocked_reason: Text<'a>,
    #[serde(borrow)]
    pub files_modified: Vec<Text<'a>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct DecisionView<'a> {
    #[serde(borrow)]
    pub description: Text<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ErrorView<'a> {
    pub iteration: u64,
    #[serde(borrow)]
    pub phase: Text<'a>,
    #[serde(borrow)]
    pub error: Text<'a>,
    pub resolved: bool,
}

impl State {
    /// The view of a state in memory (what the tests and `axe-state-show`
    /// build from).
    pub fn view(&self) -> View<'_> {
        View {
            iteration: self.iteration,
            tasks: self
                .tasks
                .iter()
                .map(|(k, t)| {
                    let task = TaskView {
                        id: text(&t.id),
                        phase: text(&t.phase),
                        branch: text(&t.branch),
                        pr_number: text(&t.pr_number),
                        completed_steps: texts(&t.completed_steps),
                        pending_steps: texts(&t.pending_steps),
                        blocked_reason: text(&t.blocked_reason),
                        files_modified: texts(&t.files_modified),
                    };
                    (text(k), task)
                })
                .collect(),
            decisions: self
                .decisions
                .iter()
                .map(|d| DecisionView {
                    description: text(&d.description),
                })
                .collect(),
            errors: self
                .errors
                .iter()
                .map(|e| ErrorView {
                    iteration: e.iteration,
                    phase: text(&e.phase),
                    error: text(&e.error),
                    resolved: e.resolved,
                })
                .collect(),
            key_facts: texts(&self.key_facts),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_reads_the_same_as_the_state_it_holds() {
        let json = r#"{"version": 3, "future": {"x": [1, 2]}, "iteration": 7,
            "tasks": {"b": {"id": "b", "phase": "P", "pending_steps": ["s\u00e9", "t"], "extra": 1},
                      "a": {"id": "a", "branch": "br", "pr_number": "9"}},
            "decisions": [{"description": "quote \" in", "rationale": "r"}],
            "errors": [{"iteration": 2, "phase": "TEST", "error": "e", "resolved": true}],
            "key_facts": ["f"]}"#;
        let state: State = serde_json::from_str(json).unwrap();
        let view: View = serde_json::from_str(json).unwrap();
        let from_state = state.view();
        assert_eq!(format!("{view:?}"), format!("{from_state:?}"));
        assert!(matches!(view.key_facts[0].0, Cow::Borrowed(_)));
        assert_eq!(&*view.decisions[0].description, "quote \" in");
    }
}
