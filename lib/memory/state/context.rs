//! The "Session Memory" block: the state, most wanted first, within a
//! character budget.
//!
//! Items are taken in priority order (agentium's): the current task and
//! its pending steps, other tasks still open, unresolved errors (newest
//! first), decisions (newest first), key facts, and filled by the rule of
//! every budgeted block ([`Block`]): what does not fit is left out and
//! listed, and smaller items after it may still go in.

use std::borrow::Cow;
use std::fmt::Write;

use super::view::{ErrorView, TaskView, Text, View};
use crate::memory::block::{Block, Place};

/// The heading of the block on its own.
pub const HEAD: &str = "## Session Memory\n";

fn task_block(t: &TaskView, out: &mut String) {
    let _ = write!(out, "\n### Task: {}", &*t.id);
    if !t.phase.is_empty() {
        let _ = write!(out, " (Phase: {})", &*t.phase);
    }
    out.push('\n');
    let list = |l: &[Text]| l.iter().map(|s| &**s).collect::<Vec<&str>>().join(", ");
    let lines = [
        ("Branch", Cow::Borrowed(&*t.branch)),
        ("PR", Cow::Borrowed(&*t.pr_number)),
        ("Completed", Cow::Owned(list(&t.completed_steps))),
        ("Pending", Cow::Owned(list(&t.pending_steps))),
        ("Blocked", Cow::Borrowed(&*t.blocked_reason)),
        ("Files modified", Cow::Owned(list(&t.files_modified))),
    ];
    for (label, value) in lines {
        if !value.is_empty() {
            let _ = writeln!(out, "{label}: {value}");
        }
    }
}

/// Where the next run stands: its task, shown first, and its phase,
/// whose unresolved errors come before the others'.
#[derive(Debug, Clone, Copy, Default)]
pub struct Current<'a> {
    pub task: Option<&'a str>,
    pub phase: Option<&'a str>,
}

/// The block for `state` in `block`.
pub fn build<'a>(state: &'a View<'a>, now: Current<'a>, mut block: Block<'a>) -> Block<'a> {
    offer(state, now, HEAD, &mut block);
    block
}

/// Offers the items of `state` to `block` under the heading `section`, in
/// priority order.
pub fn offer<'a>(
    state: &'a View<'a>,
    now: Current<'a>,
    section: &'static str,
    block: &mut Block<'a>,
) {
    let at = |group| Place { section, group };
    let task = now.task;
    let current = task.and_then(|id| state.tasks.get(&Text(Cow::Borrowed(id))));
    let open = state.tasks.values().filter(|t| {
        let open = !t.pending_steps.is_empty() || !t.blocked_reason.is_empty();
        open && Some(&*t.id) != task
    });
    let mut scratch = String::new();
    for t in current.into_iter().chain(open) {
        scratch.clear();
        task_block(t, &mut scratch);
        block.offer(at(""), "task", Cow::Borrowed(&*t.id), &[&scratch]);
    }
    // The errors of the phase the run is in first: what it is about to
    // meet again.
    let in_phase = |e: &ErrorView| now.phase.is_some_and(|p| e.phase.eq_ignore_ascii_case(p));
    let unresolved = || state.errors.iter().rev().filter(|e| !e.resolved);
    let errors = unresolved()
        .filter(|e| in_phase(e))
        .chain(unresolved().filter(|e| !in_phase(e)));
    for e in errors {
        scratch.clear();
        let _ = write!(scratch, "{}", e.iteration);
        let comma = if e.phase.is_empty() { "" } else { ", " };
        let line = [
            "- [Iteration ",
            &scratch,
            comma,
            &e.phase,
            "] ",
            &e.error,
            "\n",
        ];
        block.offer(
            at("\n### Unresolved Errors\n"),
            "error",
            Cow::Borrowed(&e.error),
            &line,
        );
    }
    for d in state.decisions.iter().rev() {
        let text = &d.description;
        let line = ["- ", text, "\n"];
        block.offer(
            at("\n### Key Decisions\n"),
            "decision",
            Cow::Borrowed(text),
            &line,
        );
    }
    for f in &state.key_facts {
        block.offer(
            at("\n### Key Facts\n"),
            "fact",
            Cow::Borrowed(f),
            &["- ", f, "\n"],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::state::data::{Decision, ErrorRecord, State};

    fn now(task: &str) -> Current<'_> {
        Current {
            task: Some(task),
            phase: None,
        }
    }

    fn sample() -> State {
        let mut s = State::default();
        let t = s.task("42", Some("TEST"));
        t.branch = "fix-login".into();
        t.completed_steps = vec!["Created branch".into()];
        t.pending_steps = vec!["Fix failing test".into(), "Create PR".into()];
        s.errors.push(ErrorRecord {
            iteration: 2,
            phase: "TEST".into(),
            error: "TestTokenExpiry failed".into(),
            ..ErrorRecord::default()
        });
        s.decisions.push(Decision {
            description: "Mock the clock".into(),
            ..Decision::default()
        });
        s.key_facts.push("Go 1.19".into());
        s
    }

    #[test]
    fn the_layout_is_agentiums() {
        let s = sample();
        let v = s.view();
        let b = build(&v, now("42"), Block::listing(10_000));
        assert_eq!(
            b.text,
            "## Session Memory\n\n### Task: 42 (Phase: TEST)\nBranch: fix-login\nCompleted: Created branch\n\
             Pending: Fix failing test, Create PR\n\n### Unresolved Errors\n- [Iteration 2, TEST] TestTokenExpiry failed\n\
             \n### Key Decisions\n- Mock the clock\n\n### Key Facts\n- Go 1.19\n"
        );
        assert!(b.left_out.is_empty());
    }

    #[test]
    fn a_large_item_left_out_does_not_hide_smaller_ones() {
        let mut s = sample();
        s.decisions.push(Decision {
            description: "x".repeat(500),
            ..Decision::default()
        });
        let v = s.view();
        let b = build(&v, now("42"), Block::listing(260));
        assert!(b.text.chars().count() <= 260);
        assert_eq!(b.left_out.len(), 1, "{:?}", b.left_out);
        assert_eq!(b.left_out[0].kind, "decision");
        assert!(b.text.contains("- Go 1.19"), "{}", b.text);
    }

    #[test]
    fn the_errors_of_the_current_phase_come_first() {
        let mut s = sample();
        s.errors.push(ErrorRecord {
            iteration: 3,
            phase: "BUILD".into(),
            error: "link failed".into(),
            ..ErrorRecord::default()
        });
        let v = s.view();
        let errors = |phase| {
            let now = Current {
                task: Some("42"),
                phase,
            };
            let b = build(&v, now, Block::listing(10_000));
            b.included
                .iter()
                .filter(|p| p.kind == "error")
                .map(|p| p.item.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(errors(None), ["link failed", "TestTokenExpiry failed"]);
        assert_eq!(
            errors(Some("test")),
            ["TestTokenExpiry failed", "link failed"]
        );
    }

    /// A small random generator, so the property needs no crate.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
        fn text(&mut self) -> String {
            let len = self.next(80) as usize;
            (0..len)
                .map(|_| (b'a' + self.next(26) as u8) as char)
                .collect::<String>()
                + "é"
        }
    }

    #[test]
    fn never_over_budget_and_nothing_left_out_that_would_fit() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..2000 {
            let mut s = State::default();
            for t in 0..rng.next(3) {
                let id = format!("t{t}");
                let task = s.task(&id, Some("P"));
                for _ in 0..rng.next(4) {
                    task.pending_steps.push(rng.text());
                }
            }
            for _ in 0..rng.next(6) {
                s.errors.push(ErrorRecord {
                    error: rng.text(),
                    resolved: rng.next(2) == 0,
                    ..ErrorRecord::default()
                });
                s.decisions.push(Decision {
                    description: rng.text(),
                    ..Decision::default()
                });
                s.key_facts.push(rng.text());
            }
            let budget = rng.next(900) as usize;
            let v = s.view();
            let b = build(&v, now("t0"), Block::listing(budget));
            let shown = b.text.chars().count();
            assert!(shown <= budget, "{shown} > {budget}");
            assert_eq!(
                b.included.iter().map(|p| p.chars.unwrap()).sum::<usize>(),
                shown
            );
            // Each item left out would not have fitted in the room left at
            // its turn (its cost never shrinks later: headings only add).
            for p in &b.left_out {
                assert!(
                    p.chars.unwrap() > budget - shown,
                    "{p:?} fits in {}",
                    budget - shown
                );
            }
        }
    }
}
