//! The state as the context builder reads it: its strings borrowed from
//! the file's bytes where they hold no escapes, its unknown fields
//! skipped. A block is built on every run from a state that may hold
//! thousands of items; parsing it into the owned [`State`] (every string
//! copied, unknown fields kept for the next save) cost more than twice as
//! much, and a reader has nothing to save. The shape and the parser are
//! the owned state's ([`super::doc`]), so both take the same files.
//!
//! [`State`]: super::data::State

use std::borrow::Cow;

use super::data::State;
pub use super::doc::Text;
use super::doc::{DecisionOf, ErrorOf, Skipped, StateOf, TaskOf};

fn text(s: &str) -> Text<'_> {
    Text(Cow::Borrowed(s))
}

fn texts(list: &[String]) -> Vec<Text<'_>> {
    list.iter().map(|s| text(s)).collect()
}

/// A state as the block reads it: every field the owned [`State`] knows,
/// checked as it checks them; unknown fields checked to be JSON, not kept.
pub type View<'a> = StateOf<Text<'a>, Skipped>;
pub type TaskView<'a> = TaskOf<Text<'a>, Skipped>;
pub type DecisionView<'a> = DecisionOf<Text<'a>, Skipped>;
pub type ErrorView<'a> = ErrorOf<Text<'a>, Skipped>;

impl State {
    /// The view of a state in memory (what the tests and `axe-state-show`
    /// build from).
    pub fn view(&self) -> View<'_> {
        View {
            version: self.version,
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
                        unknown: Skipped,
                    };
                    (text(k), task)
                })
                .collect(),
            decisions: self
                .decisions
                .iter()
                .map(|d| DecisionView {
                    iteration: d.iteration,
                    task_id: text(&d.task_id),
                    description: text(&d.description),
                    rationale: text(&d.rationale),
                    unknown: Skipped,
                })
                .collect(),
            errors: self
                .errors
                .iter()
                .map(|e| ErrorView {
                    iteration: e.iteration,
                    task_id: text(&e.task_id),
                    phase: text(&e.phase),
                    error: text(&e.error),
                    resolution: text(&e.resolution),
                    resolved: e.resolved,
                    unknown: Skipped,
                })
                .collect(),
            key_facts: texts(&self.key_facts),
            last_checkpoint: self.last_checkpoint.as_deref().map(text),
            unknown: Skipped,
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

    /// The view and the state take the same files and refuse the same
    /// files with the same error: a block is never built from a file a
    /// save would refuse, nor a save made to one the block refuses.
    #[test]
    fn the_view_and_the_state_take_and_refuse_the_same_files() {
        let deep = |n: usize| "[".repeat(n) + &"]".repeat(n);
        let mut docs: Vec<String> = [
            "{}",
            "[]",
            "null",
            "{\"iteration\": 1, \"iteration\": 2}",
            "{\"iter\\u0061tion\": 5}",
            "{\"future\": 1, \"future\": [2]}",
            "{\"iteration\": null}",
            "{\"last_checkpoint\": null}",
            "{\"last_checkpoint\": 5}",
            "{\"version\": -1}",
            "{\"iteration\": 1.0}",
            "{\"future\": 1e400, \"tasks\": {\"t\": {\"x\": -1e400}}}",
            "{\"future\": 01}",
            "{\"tasks\": {\"t\": []}}",
            "{\"tasks\": {\"t\": {\"pr_number\": 7}}}",
            "{\"decisions\": [[\"d\"]]}",
            "{\"decisions\": [{\"iteration\": -1}]}",
            "{\"decisions\": [{\"rationale\": false}]}",
            "{\"errors\": [{\"task_id\": 1}]}",
            "{\"errors\": [{\"resolved\": \"yes\"}]}",
            "{\"key_facts\": [\"a\", 1]}",
            "{\"iteration\": 1} trailing",
        ]
        .map(str::to_owned)
        .into();
        for n in [127, 128, 129, 10_000] {
            docs.push(format!("{{\"future\": {}}}", deep(n)));
            docs.push(format!("{{\"tasks\": {{\"t\": {{\"x\": {}}}}}}}", deep(n)));
        }
        for doc in &docs {
            let state = serde_json::from_str::<State>(doc).map(|_| ());
            let view = serde_json::from_str::<View>(doc).map(|_| ());
            let message =
                |r: &Result<(), serde_json::Error>| r.as_ref().err().map(|e| e.to_string());
            assert_eq!(message(&state), message(&view), "{doc}");
        }
    }
}
