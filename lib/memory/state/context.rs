//! The "Session Memory" block: the state, most wanted first, within a
//! character budget.
//!
//! Items are taken in priority order (agentium's): the current task and
//! its pending steps, other tasks still open, unresolved errors (newest
//! first), decisions (newest first), key facts. Each goes in if it fits
//! with whatever section heading it needs; one that does not is left out
//! and the next, smaller ones may still go in, so nothing is hidden just
//! because something larger came before it. The block never passes the
//! budget by a character, and every item left out is listed.

use super::data::{State, Task};

const HEAD: &str = "## Session Memory\n";

/// One item of the block.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part {
    /// `task`, `error`, `decision` or `fact`.
    pub kind: &'static str,
    pub text: String,
    /// The characters it adds (or would have added) where it came.
    pub chars: usize,
}

/// The block and what went in and what did not.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Built {
    /// Empty when nothing fits or there is nothing to say.
    pub text: String,
    pub included: Vec<Part>,
    pub left_out: Vec<Part>,
}

fn chars(s: &str) -> usize {
    s.chars().count()
}

fn task_block(t: &Task) -> String {
    let mut b = format!("\n### Task: {}", t.id);
    if !t.phase.is_empty() {
        b.push_str(&format!(" (Phase: {})", t.phase));
    }
    b.push('\n');
    let lines = [
        ("Branch", t.branch.clone()),
        ("PR", t.pr_number.clone()),
        ("Completed", t.completed_steps.join(", ")),
        ("Pending", t.pending_steps.join(", ")),
        ("Blocked", t.blocked_reason.clone()),
        ("Files modified", t.files_modified.join(", ")),
    ];
    for (label, value) in lines {
        if !value.is_empty() {
            b.push_str(&format!("{label}: {value}\n"));
        }
    }
    b
}

/// The block for `state` within `budget` characters; `task` is the
/// current task, shown first.
pub fn build(state: &State, task: Option<&str>, budget: usize) -> Built {
    // (kind, section heading, line) in priority order.
    let mut items: Vec<(&'static str, &'static str, String)> = Vec::new();
    let current = task.and_then(|id| state.tasks.get(id));
    if let Some(t) = current {
        items.push(("task", "", task_block(t)));
    }
    for t in state.tasks.values() {
        let open = !t.pending_steps.is_empty() || !t.blocked_reason.is_empty();
        if open && Some(t.id.as_str()) != task {
            items.push(("task", "", task_block(t)));
        }
    }
    for e in state.errors.iter().rev().filter(|e| !e.resolved) {
        let phase = if e.phase.is_empty() {
            String::new()
        } else {
            format!(", {}", e.phase)
        };
        items.push((
            "error",
            "\n### Unresolved Errors\n",
            format!("- [Iteration {}{phase}] {}\n", e.iteration, e.error),
        ));
    }
    for d in state.decisions.iter().rev() {
        items.push((
            "decision",
            "\n### Key Decisions\n",
            format!("- {}\n", d.description),
        ));
    }
    for f in &state.key_facts {
        items.push(("fact", "\n### Key Facts\n", format!("- {f}\n")));
    }

    let mut built = Built::default();
    let mut used = 0;
    let mut heading_done: Vec<&str> = Vec::new();
    for (kind, heading, line) in items {
        let mut piece = String::new();
        if built.text.is_empty() {
            piece.push_str(HEAD);
        }
        if !heading.is_empty() && !heading_done.contains(&heading) {
            piece.push_str(heading);
        }
        piece.push_str(&line);
        let cost = chars(&piece);
        let part = Part {
            kind,
            text: line.trim().to_owned(),
            chars: cost,
        };
        if used + cost <= budget {
            used += cost;
            built.text.push_str(&piece);
            if !heading.is_empty() {
                heading_done.push(heading);
            }
            built.included.push(part);
        } else {
            built.left_out.push(part);
        }
    }
    built
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::state::data::{Decision, ErrorRecord};

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
        let b = build(&sample(), Some("42"), 10_000);
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
        let b = build(&s, Some("42"), 260);
        assert!(b.text.chars().count() <= 260);
        assert_eq!(b.left_out.len(), 1, "{:?}", b.left_out);
        assert_eq!(b.left_out[0].kind, "decision");
        assert!(b.text.contains("- Go 1.19"), "{}", b.text);
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
            let b = build(&s, Some("t0"), budget);
            let shown = b.text.chars().count();
            assert!(shown <= budget, "{shown} > {budget}");
            assert_eq!(b.included.iter().map(|p| p.chars).sum::<usize>(), shown);
            // Each item left out would not have fitted in the room left at
            // its turn (its cost never shrinks later: headings only add).
            for p in &b.left_out {
                assert!(p.chars > budget - shown, "{p:?} fits in {}", budget - shown);
            }
        }
    }
}
